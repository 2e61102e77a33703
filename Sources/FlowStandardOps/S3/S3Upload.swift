import Crypto
import Flow
import Foundation
import NIOCore
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
/// **Multipart.** Create, then the parts with `partConcurrency` in flight (each read from disk
/// with `pread` on NIO's blocking pool, hashed there, sent, and let go), then complete. A failed
/// part is tried again alone under the step's `retry` (its transient failures only). When
/// anything fails, the time limit passes or the op is cancelled, the upload is aborted, so no
/// parts stay stored (and billed) behind it. Memory stays within `partConcurrency × partSize`
/// whatever the file's size. A file needing more than 10,000 parts gets larger parts, as the
/// AWS CLI does.
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
    }

    let client: S3Client
    let key: String
    /// The checksum sent with the body (and each part) for the store to check.
    var checksum: UploadChecksum = .none
    /// The step's `retry`, applied to each part.
    let retry: FlowRetryPolicy
    /// Writes a log line of the op.
    let log: @Sendable (String) -> Void

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
        let partCount = Int((size + Int64(partSize) - 1) / Int64(partSize))
        // Held from the start until completed or aborted: a process told to stop while the op
        // unwinds its cancellation waits for the abort (FlowPendingWork).
        let hold = FlowPendingWork.hold()
        defer { FlowPendingWork.release(hold) }
        // The start is not cancelled half-way: the store may have made the upload before its
        // answer arrives, and only with the answer's id can it be aborted. A cancellation meanwhile
        // is seen right after, and aborts it.
        let (client, key) = (client, key)
        // The parts' checksum algorithm, named at the start as the SDKs do: COMPOSITE for CRC32C
        // and SHA-256, FULL_OBJECT for CRC64NVME (the store's defaults for each).
        let createHeaders = client.objectHeaders + (checksum.s3Name.map { [("x-amz-checksum-algorithm", $0)] } ?? [])
        let starting = await FlowPendingWork.run { () -> Result<FileUpload.Answer, any Error> in
            do {
                return .success(try await client.expectSuccess(.POST, key: key, query: [("uploads", "")], headers: createHeaders,
                                                               body: .empty, deadline: deadline,
                                                               action: "\(action): starting a multipart upload"))
            } catch {
                return .failure(error)
            }
        }
        let created = try starting.get()
        guard let uploadID = S3ErrorResponse.value(of: "UploadId", in: String(decoding: created.excerpt, as: UTF8.self)),
              !uploadID.isEmpty else {
            throw FlowStandardOpError(.s3, "\(action): the store answered the multipart upload's start without an UploadId")
        }
        do {
            try Task.checkCancellation()
            let parts = try await uploadParts(source, count: partCount, partSize: partSize, uploadID: uploadID, deadline: deadline,
                                              action: action)
            var list = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            let element = checksum.s3Name.map { "Checksum" + $0 }
            for (index, part) in parts.enumerated() {
                list += "<Part>"
                if let element, let value = part.checksum { list += "<\(element)>\(value)</\(element)>" }
                list += "<ETag>\(S3ErrorResponse.escaped(part.etag))</ETag><PartNumber>\(index + 1)</PartNumber></Part>"
            }
            list += "</CompleteMultipartUpload>"
            let completed = try await client.expectSuccess(.POST, key: key, query: [("uploadId", uploadID)],
                                                           headers: [("Content-Type", "application/xml")],
                                                           body: .bytes(ByteBuffer(string: list)), deadline: deadline,
                                                           action: "\(action): completing the multipart upload")
            let answer = String(decoding: completed.excerpt, as: UTF8.self)
            let objectChecksum = element.flatMap { S3ErrorResponse.value(of: $0, in: answer) }
                ?? Self.compositeChecksum(checksum, parts: parts.compactMap(\.checksum))
            return Outcome(size: size, parts: partCount, checksum: objectChecksum, etag: S3ErrorResponse.value(of: "ETag", in: answer))
        } catch {
            await abort(uploadID: uploadID)
            throw error
        }
    }

    /// A part as the store took it.
    struct SentPart: Sendable {
        var etag: String
        /// Its checksum in base64, `nil` without one (or with `md5`, sent as `Content-MD5`).
        var checksum: String?
    }

    /// Sends every part, `partConcurrency` at once, and returns their ETags and checksums in order.
    private func uploadParts(_ source: PartSource, count: Int, partSize: Int, uploadID: String, deadline: NIODeadline,
                             action: String) async throws -> [SentPart] {
        try await withThrowingTaskGroup(of: (Int, SentPart).self) { group in
            var etags = [SentPart](repeating: SentPart(etag: "", checksum: nil), count: count)
            var next = 1
            func start(_ number: Int) {
                group.addTask {
                    let offset = Int64(number - 1) * Int64(partSize)
                    let length = Int(min(Int64(partSize), source.size - offset))
                    let etag = try await uploadPart(number, of: count, from: source, offset: offset, length: length, uploadID: uploadID,
                                                    deadline: deadline, action: action)
                    return (number, etag)
                }
            }
            while next <= min(count, client.target.partConcurrency) {
                start(next)
                next += 1
            }
            while let (number, etag) = try await group.next() {
                etags[number - 1] = etag
                if next <= count {
                    start(next)
                    next += 1
                }
            }
            return etags
        }
    }

    /// Reads, hashes and sends one part, trying it again alone after a transient failure.
    private func uploadPart(_ number: Int, of count: Int, from source: PartSource, offset: Int64, length: Int, uploadID: String,
                            deadline: NIODeadline, action: String) async throws -> SentPart {
        let (bytes, hash, value) = try await source.read(at: offset, count: length, checksum: checksum)
        let headers = Self.checksumHeaders(checksum, value: value)
        let partAction = "\(action): part \(number) of \(count)"
        var generator = SystemRandomNumberGenerator()
        var tried = 1
        while true {
            do {
                let answer = try await explainingChecksum(action: partAction) {
                    try await client.expectSuccess(.PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                                                   headers: headers, body: .hashedBytes(bytes, sha256: hash), deadline: deadline,
                                                   action: partAction)
                }
                guard let etag = answer.headers.first(name: "ETag"), !etag.isEmpty else {
                    throw FlowStandardOpError(.s3, "\(partAction): the store's answer has no ETag")
                }
                return SentPart(etag: etag, checksum: checksum == .md5 ? nil : value)
            } catch let error as FlowStandardOpError where !error.isPermanent && tried < retry.attempts {
                let wait = retry.wait(after: tried, retryAfter: error.retryAfter, using: &generator)
                let reason = error.message.hasPrefix(partAction + ": ") ? String(error.message.dropFirst(partAction.count + 2)) : error.message
                log("part \(number) of \(count) failed (try \(tried) of \(retry.attempts)): \(reason); retrying in \(wait.shortText)")
                try await Task.sleep(for: wait)
                tried += 1
            }
        }
    }

    /// How an abort is tried again after a transient failure: 5 tries, 0.2 s doubling, at most
    /// 5 s apart (a `Retry-After` is honoured within that).
    static let abortRetry = FlowRetryPolicy(attempts: 5, delay: .milliseconds(200), maxDelay: .seconds(5), jitter: false)

    /// Aborts a multipart upload so that none of its parts stay stored. It runs even when the op
    /// was cancelled or ran out of time, with a fresh limit of its own; a failure is logged with
    /// what to do.
    private func abort(uploadID: String) async {
        let client = client
        let key = key
        // Not cancelled with the op, and waited for before a Flow program exits. Tried again on a
        // transient failure: a store may refuse an abort while a part is still arriving (S3 says
        // an abort may have to be repeated then; moto answered 500 in about one run in five).
        let failure: String? = await FlowPendingWork.run {
            let deadline = NIODeadline.now() + .seconds(30)
            var generator = SystemRandomNumberGenerator()
            var tried = 1
            while true {
                do {
                    _ = try await client.expectSuccess(.DELETE, key: key, query: [("uploadId", uploadID)], body: .empty,
                                                       deadline: deadline, action: "aborting the multipart upload")
                    return nil
                } catch let error as FlowStandardOpError where error.serviceCode == "NoSuchUpload" {
                    // Already gone: what an abort is for.
                    return nil
                } catch let error as FlowStandardOpError where !error.isPermanent && tried < Self.abortRetry.attempts {
                    try? await Task.sleep(for: Self.abortRetry.wait(after: tried, retryAfter: error.retryAfter, using: &generator))
                    tried += 1
                } catch {
                    return String(describing: error) + (tried > 1 ? " (tried \(tried) times)" : "")
                }
            }
        }
        if let outcome = failure {
            log("""
                could not abort multipart upload \(uploadID) of \(objectURI): \(outcome); its parts stay stored until it is aborted \
                (aws s3api abort-multipart-upload --bucket \(client.target.bucket) --key '\(key)' --upload-id \(uploadID)) \
                or a lifecycle rule removes them
                """)
        } else {
            log("aborted multipart upload \(uploadID) of \(objectURI): no parts stay stored")
        }
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
