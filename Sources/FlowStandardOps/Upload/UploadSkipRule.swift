import Flow

/// When `UploadFileOp` leaves a file alone because the server or store already has it: its
/// `skipExisting` parameter, compared against a `HEAD` of the object before anything is sent.
///
/// - ``size``: the stored object has the file's size (`Content-Length`), as `rclone copy
///   --size-only` does.
/// - ``modtime``: the same size, and the file's modification time stored on upload as
///   `x-amz-meta-mtime` (seconds since the epoch with a fraction, as rclone stores it) is the
///   file's; an object without it is sent (and gets it).
/// - ``checksum``: the same size, and the store's checksum of the op's `checksum` algorithm
///   (`x-amz-checksum-ALG`, asked for with `x-amz-checksum-mode: ENABLED` on S3) is the file's;
///   the file is read once to compute it, so this costs a read of every file whose size matches.
public enum UploadSkipRule: String, Sendable, CaseIterable {
    /// Everything is sent (`skipExisting: false`, the default).
    case off
    /// Same size (`skipExisting: true` or `size`).
    case size
    /// Same size and modification time.
    case modtime
    /// Same size and checksum.
    case checksum

    /// Why a file is skipped, as the summary, the manifest and the dry run's plan say it:
    /// `same size`, `same modtime`, `same checksum`.
    public var reason: String { "same \(rawValue)" }

    /// The value the op sends to workers: a Boolean for `off` and `size`, as before, the word
    /// otherwise.
    var flowValue: FlowValue {
        switch self {
        case .off: return .bool(false)
        case .size: return .bool(true)
        case .modtime, .checksum: return .string(rawValue)
        }
    }

    /// Reads `skipExisting`: absent or `false` is ``off``, `true` is ``size``, and the words
    /// `size`, `modtime`, `checksum` (in any case, `true` and `false` too).
    ///
    /// - Throws: `FlowParameterError` naming the values allowed for anything else.
    init(parameters: FlowParameters, key: String = "skipExisting") throws {
        guard let value = parameters[key] else {
            self = .off
            return
        }
        if let flag = value.boolValue {
            self = flag ? .size : .off
            return
        }
        let text = value.stringValue?.lowercased() ?? ""
        switch text {
        case "true": self = .size
        case "false": self = .off
        case "size": self = .size
        case "modtime": self = .modtime
        case "checksum": self = .checksum
        default:
            throw FlowParameterError(operation: parameters.operation, parameter: key, message:
                "must be size, modtime or checksum (true is size, false sends everything), not \(value.typeName) \(value)")
        }
    }
}
