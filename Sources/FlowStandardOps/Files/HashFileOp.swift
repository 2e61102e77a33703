import Crypto
public import Flow
import Foundation

/// Computes the SHA-256 of a file, reading it in 1 MB chunks so memory does not grow with the
/// file's size.
///
/// - Primary input `file`: the file's path on the machine running the op (or the map
///   `{"name", "path", "bytes"}` that ``UploadFileSource`` builds, whose bytes are hashed).
/// - Primary output `sha256`: the digest as 64 lowercase hex digits.
///
/// Parameters: none.
///
/// A missing or unreadable file fails the op with an error naming the path. A serial step reads
/// and writes the same keys in the flow's bucket.
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class HashFileOp: FlowAsyncOperation, FlowOperationCreator, @unchecked Sendable {
    /// Creates the op.
    public override init() {}

    public static func create() -> FlowOperation {
        HashFileOp()
    }

    public override var primaryInputParamKey: String { "file" }
    public override var primaryOutputParamKey: String { "sha256" }
    /// It only reads the file: a dry run runs it.
    public override var dryRunRole: FlowDryRunRole { .readsOnly }

    public override func run() async throws {
        let input = try FileInput(bucketValue: try value(primaryInputParamKey, as: Any.self), key: primaryInputParamKey)
        let started = Date()
        do {
            let (digest, size) = try await BlockingWork.run { try Self.digest(of: input, isCancelled: { self.isCancelled }) }
            try Task.checkCancellation()
            log(message: "sha256 of \(input.name) (\(size) bytes) in \(DurationText.elapsed(since: started)) s")
            set(primaryOutputParamKey, digest)
        } catch let error as FlowStandardOpError {
            log(message: error.message)
            throw error
        }
    }

    /// The lowercase hex SHA-256 of a file and its size.
    static func digest(of input: FileInput, isCancelled: () -> Bool = { false }) throws -> (String, Int) {
        var hasher = SHA256()
        switch input {
        case .bytes(let data, _, _):
            hasher.update(data: data)
            return (hex(hasher.finalize()), data.count)
        case .path(let path, _):
            let file = try ReadableFile(path: path)
            try file.forEachChunk { chunk in
                hasher.update(bufferPointer: chunk)
                return !isCancelled()
            }
            return (hex(hasher.finalize()), file.size)
        }
    }

    /// A digest as lowercase hex, as `sha256sum` prints it.
    static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(SHA256.Digest.byteCount * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension HashFileOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] { [:] }
}
