/// Why a received message was rejected.
///
/// The ``code`` says what kind of problem it is (tests and the cluster layer switch on it); the
/// ``description`` says precisely what and where, for the log line the spec requires. The code is
/// an opaque struct rather than an enum so later protocol versions can add codes without breaking
/// callers.
package struct WireDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case wrongProtocol = "wrong protocol"
            case unsupportedVersion = "unsupported version"
            case missingFrame = "missing frame"
            case extraFrames = "extra frames"
            case invalidCommandFrame = "invalid command frame"
            case unknownCommand = "unknown command"
            case truncated = "truncated body"
            case trailingBytes = "trailing bytes"
            case lengthExceedsBody = "length exceeds body"
            case invalidVarint = "invalid varint"
            case invalidUTF8 = "invalid UTF-8"
            case unknownValueTag = "unknown value tag"
            case nestingTooDeep = "nesting too deep"
            case invalidMap = "invalid map"
            case emptyBatch = "empty batch"
            case invalidField = "invalid field"
            case overLimit = "over limit"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Frame 0 is not a `FLOW` protocol signature at all.
        package static let wrongProtocol = Code(.wrongProtocol)
        /// Frame 0 is `FLOWnn` with a version other than `01`; the peer MAY answer DISCONNECT.
        package static let unsupportedVersion = Code(.unsupportedVersion)
        /// A required frame (protocol, command or body) is absent.
        package static let missingFrame = Code(.missingFrame)
        /// The message has more frames than its command allows.
        package static let extraFrames = Code(.extraFrames)
        /// Frame 1 is not exactly one byte long.
        package static let invalidCommandFrame = Code(.invalidCommandFrame)
        /// Frame 1 holds a byte that is no command of this version.
        package static let unknownCommand = Code(.unknownCommand)
        /// The body ends inside a field.
        package static let truncated = Code(.truncated)
        /// The body has bytes left after its last field.
        package static let trailingBytes = Code(.trailingBytes)
        /// A declared length or element count cannot fit in the bytes that remain.
        package static let lengthExceedsBody = Code(.lengthExceedsBody)
        /// A varint is longer than 10 bytes, overflows 64 bits, or is not in its shortest form.
        package static let invalidVarint = Code(.invalidVarint)
        /// A string's bytes are not valid UTF-8.
        package static let invalidUTF8 = Code(.invalidUTF8)
        /// A value starts with a tag byte this version does not define.
        package static let unknownValueTag = Code(.unknownValueTag)
        /// Arrays and maps nest deeper than ``WireLimits/maximumValueDepth``.
        package static let nestingTooDeep = Code(.nestingTooDeep)
        /// Map keys are not in strictly increasing byte order, or two keys are equal.
        package static let invalidMap = Code(.invalidMap)
        /// A TASK or RESULT batch holds no element.
        package static let emptyBatch = Code(.emptyBatch)
        /// A field holds a value the spec forbids (reserved bits, zero slots, unknown code, …).
        package static let invalidField = Code(.invalidField)
        /// A string or list is longer than the protocol allows it to be (a READY's names, §7.1).
        package static let overLimit = Code(.overLimit)

        package var description: String { base.rawValue }
    }

    /// The kind of problem.
    package let code: Code
    /// The byte offset in the body frame (frame 2) where the problem is, when it is in the body.
    package let offset: Int?
    /// What is wrong, precisely enough to act on from a log line.
    package let description: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of problem.
    ///   - offset: where in the body frame, if the problem is in the body.
    ///   - description: what is wrong; the body offset is appended when given.
    package init(_ code: Code, offset: Int? = nil, _ description: String) {
        self.code = code
        self.offset = offset
        if let offset {
            self.description = "\(description) (body offset \(offset))"
        } else {
            self.description = description
        }
    }
}
