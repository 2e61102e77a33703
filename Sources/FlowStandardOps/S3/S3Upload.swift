import Crypto
import Flow
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// One file's upload to S3: a single `PUT` up to the target's part size, a multipart upload above
/// it, and the `HEAD` that `skipExisting` asks first.
///
/// **Payload hashes.** A single `PUT` of a file on disk is streamed with backpressure and signed
/// `UNSIGNED-PAYLOAD` (`STREAMING-UNSIGNED-PAYLOAD-TRAILER` with its checksum in a trailer, see
/// `S3Upload+Checksum.swift`): signing its SHA-256 would mean reading the whole file once to hash it and
/// again to send it (or holding it in memory), and the signature still covers the method, key,
/// headers and length. Multipart parts are read into memory anyway (at most `partConcurrency` of
/// them at once), so each is signed with its real SHA-256 and the store checks every byte of it;
/// so are bodies the coordinator sent and the completion list.
///
/// **Multipart.** Create (or continue an unfinished upload of the same key that an earlier try
/// left, `S3Upload+Resume.swift`), then the parts with `partConcurrency` in flight (each read from
/// disk with `pread` on NIO's blocking pool, hashed there, sent, and let go), then complete. A
/// failed part is tried again alone under the step's `retry` (its transient failures only). The
/// upload is aborted, so no parts stay stored (and billed) behind it, when the element fails for
/// good (a permanent error, or a transient one on its last try) or the run is cancelled; a
/// transient failure with tries left, a lost worker or an interrupted run leaves it for the next
/// try, or `resume`, to continue (`S3Upload+Multipart.swift`). Memory stays within
/// `partConcurrency × partSize` whatever the file's size. A file needing more than 10,000 parts
/// gets larger parts, as the AWS CLI does.
struct S3Upload: Sendable {
    /// What was done.
    struct Outcome: Sendable {
        /// The file's size in bytes.
        var size: Int64
        /// Parts sent, 0 for a single `PUT`.
        var parts: Int
        /// The object's checksum in base64 as the store keeps it (`-N` after a composite one of
        /// N parts), `nil` without one or when the store did not say it.
        var checksum: String? = nil
        /// The object's ETag as the store answered it, `nil` when it sent none.
        var etag: String? = nil
        /// The multipart upload's id, `nil` for a single `PUT`.
        var uploadID: String? = nil
        /// The part size of a multipart upload, `nil` for a single `PUT`.
        var partSize: Int? = nil
        /// Every part of a multipart upload as completed, in order.
        var completedParts: [SentPart] = []
        /// Parts an earlier try had left on the store, not sent again.
        var partsAlreadyStored = 0
        /// The algorithm of ``checksum`` when it is not the upload's own: MD5 for an object sent
        /// in the signed form to a store that refused the trailer (`S3Upload+TrailerFallback.swift`).
        var algorithm: UploadChecksum? = nil
    }

    let client: S3Client
    let key: String
    /// The checksum sent with the body (and each part) for the store to check.
    var checksum: UploadChecksum = .none
    /// Whether the flow left the checksum to Flow (`checksum: auto`): a store that refuses the
    /// trailer form then gets the signed form instead of a failure.
    var fallsBackFromTrailer = false
    /// The step's `retry`, applied to each part.
    let retry: FlowRetryPolicy
    /// Writes a log line of the op.
    let log: @Sendable (String) -> Void
    /// Whether a transient failure ends the element for good (its last try): only then is the
    /// multipart upload aborted; otherwise it is left for the next try to continue.
    var isFinalTry = true
    /// Whether a cancellation is the run's own (Ctrl-C, `cancel`), which aborts the multipart
    /// upload, rather than an interruption the run resumes from (the coordinator gone), which keeps
    /// it for `resume` to continue.
    var abortsWhenCancelled: @Sendable () -> Bool = { true }
    /// What an earlier try of the op saved (``FlowOperation/savedCheckpoint``): the multipart
    /// upload to continue (`S3Upload+Checkpoint.swift`).
    var savedCheckpoint: FlowValue?
    /// Saves the op's checkpoint (``FlowOperation/saveCheckpoint(_:)``).
    var saveCheckpoint: @Sendable (FlowValue) -> Void = { _ in }

    /// The largest object S3 stores.
    static let maximumObjectSize: Int64 = 5 << 40

    var objectURI: String { client.target.objectURI(key: key) }

    /// The object's size when the store has it with `input`'s size (a `HEAD` answered 200 with the
    /// same `Content-Length`), else `nil`: the file is to be sent.
    func existingSize(of input: FileInput, deadline: NIODeadline) async throws -> Int64? {
        let size = try PartSource(input).size
        let answer = try await client.send(.HEAD, key: key, body: .empty, deadline: deadline,
                                           action: "checking whether \(objectURI) exists failed")
        guard answer.status == .ok, let length = answer.headers.first(name: "Content-Length").flatMap({ Int64($0) }),
              length == size else { return nil }
        return size
    }

    /// Uploads the file: in one `PUT` up to the part size, in parts above it.
    func upload(_ input: FileInput, deadline: NIODeadline) async throws -> Outcome {
        let source = try PartSource(input)
        let size = source.size
        let action = "upload of \(input.name) to \(objectURI) failed"
        guard size <= Self.maximumObjectSize else {
            throw FlowStandardOpError(.unreadableFile, "\(action): \(input.origin) has \(size) bytes, more than S3's 5 TiB object limit")
        }
        let partSize = Self.partSize(for: size, preferred: client.target.partSize)
        guard size > Int64(partSize) else {
            return try await putWhole(source, deadline: deadline, action: action)
        }
        return try await uploadInPartsFallingBack(source, partSize: partSize, deadline: deadline, action: action)
    }

    /// The part size for a file: the preferred one, larger when 10,000 parts would not hold the
    /// file (rounded up to whole MiB).
    static func partSize(for size: Int64, preferred: Int) -> Int {
        let needed = (size + Int64(S3Target.maximumPartCount) - 1) / Int64(S3Target.maximumPartCount)
        guard needed > Int64(preferred) else { return preferred }
        let mebibyte: Int64 = 1 << 20
        return Int((needed + mebibyte - 1) / mebibyte * mebibyte)
    }
}

/// Where a file's bytes come from: a file on disk, read part by part, or bytes the coordinator sent.
enum PartSource: Sendable {
    case file(OpenFile, size: Int64)
    case bytes(Data)

    init(_ input: FileInput) throws {
        switch input {
        case .path(let path, _):
            let file = try OpenFile(path: path)
            self = .file(file, size: file.size)
        case .bytes(let bytes, _, _):
            self = .bytes(bytes)
        }
    }

    var size: Int64 {
        switch self {
        case .file(_, let size): return size
        case .bytes(let bytes): return Int64(bytes.count)
        }
    }

    /// The bytes at `offset`, their SHA-256 in hex and their `checksum` in base64 (`nil` for
    /// none), read and hashed on NIO's blocking pool.
    func read(at offset: Int64, count: Int, checksum: UploadChecksum = .none) async throws -> (ByteBuffer, String, String?) {
        try await NIOThreadPool.singleton.runIfActive {
            let buffer: ByteBuffer
            switch self {
            case .file(let file, _):
                buffer = try file.read(at: offset, count: count)
                guard buffer.readableBytes == count else {
                    throw FlowStandardOpError(.unreadableFile, "\(file.path) became shorter while it was sent (\(offset + Int64(buffer.readableBytes)) of \(size) bytes)")
                }
            case .bytes(let bytes):
                let start = bytes.startIndex + Int(offset)
                buffer = ByteBuffer(bytes: bytes[start..<(start + count)])
            }
            let value = checksum.makeHasher().map { hasher in
                var hasher = hasher
                buffer.withUnsafeReadableBytes { hasher.update($0) }
                return hasher.base64
            }
            return (buffer, SigV4Signer.hex(buffer.withUnsafeReadableBytes { SHA256.hash(data: $0) }), value)
        }
    }
}
