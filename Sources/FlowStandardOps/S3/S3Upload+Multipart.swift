import Flow
import Foundation
import NIOCore
import NIOHTTP1

/// A multipart upload: started or continued, its parts sent, completed, and aborted only when the
/// element is over for good.
extension S3Upload {
    /// A part as the store took it.
    struct SentPart: Sendable, Equatable {
        var etag: String
        /// Its checksum in base64, `nil` without one (or with `md5`, sent as `Content-MD5`).
        var checksum: String?
    }

    /// Most parts for which each stored part gets a log line of its own: a 4 GiB file in 64 MiB
    /// parts has 64; a file of thousands of small parts says only how many at the end.
    static let partLinesLimit = 100

    /// Uploads `source` in parts of `partSize`, continuing an unfinished upload of the key when an
    /// earlier try left one that fits (`S3Upload+Resume.swift`).
    func uploadInParts(_ source: PartSource, partSize: Int, deadline: NIODeadline, action: String) async throws -> Outcome {
        let size = source.size
        let partCount = Int((size + Int64(partSize) - 1) / Int64(partSize))
        // Held from the start until completed, aborted or left: a process told to stop while the
        // op unwinds its cancellation waits for the abort (FlowPendingWork).
        let hold = FlowPendingWork.hold()
        defer { FlowPendingWork.release(hold) }
        var unfinished = try await uploadToContinue(source, partSize: partSize, deadline: deadline)
        if let done = unfinished?.completed { return done }
        var startedAgain = false
        while true {
            let uploadID: String
            if let unfinished {
                uploadID = unfinished.uploadID
                log("resuming multipart upload \(uploadID) of \(objectURI): \(unfinished.parts.count) of \(partCount) parts already on the store")
            } else {
                uploadID = try await create(deadline: deadline, action: action)
            }
            let stored = unfinished?.parts ?? [:]
            let saved = startRecord(uploadID: uploadID, partSize: partSize, size: size, modified: source.modified, stored: stored)
            do {
                try Task.checkCancellation()
                let parts = try await uploadParts(source, count: partCount, partSize: partSize, uploadID: uploadID, stored: stored,
                                                  saved: saved, deadline: deadline, action: action)
                var outcome = try await complete(uploadID: uploadID, parts: parts, deadline: deadline, action: action)
                outcome.size = size
                outcome.partSize = partSize
                outcome.partsAlreadyStored = stored.count
                return outcome
            } catch let error as FlowStandardOpError where error.serviceCode == "NoSuchUpload" && !startedAgain && !Task.isCancelled {
                // Expired, aborted by a lifecycle rule or another client, or completed by an
                // earlier try that was still running: what is on the store cannot be used.
                log("multipart upload \(uploadID) of \(objectURI) cannot be continued: the store no longer has it (NoSuchUpload: "
                    + "expired, or aborted by a lifecycle rule or another client); starting the upload again")
                unfinished = nil
                startedAgain = true
            } catch let error as FlowStandardOpError
                        where error.serviceCode == "InvalidPart" && !stored.isEmpty && !startedAgain && !Task.isCancelled {
                // A continued upload whose completion names a part the store holds otherwise: a
                // part the lost try still had on its way landed after the listing (moto answered
                // the second of two such PUTs with an ETag of neither). Start afresh, once.
                log("multipart upload \(uploadID) of \(objectURI) cannot be completed as continued (InvalidPart: a part sent by the "
                    + "earlier try arrived meanwhile); aborting it and starting the upload again")
                await abort(uploadID: uploadID)
                unfinished = nil
                startedAgain = true
            } catch {
                if abortsAfter(error) {
                    await abort(uploadID: uploadID)
                } else {
                    log("left multipart upload \(uploadID) of \(objectURI) on the store for the next try to continue: "
                        + (Task.isCancelled || error is CancellationError ? "the run was interrupted, not cancelled"
                            : "the failure is transient and the step has tries left"))
                }
                throw error
            }
        }
    }

    /// Whether a failure ends the element for good, so that its upload is aborted: a permanent
    /// error, a transient one on the last try, or the run's own cancellation.
    func abortsAfter(_ error: any Error) -> Bool {
        if Task.isCancelled || error is CancellationError { return abortsWhenCancelled() }
        if let error = error as? FlowStandardOpError, !error.isPermanent { return isFinalTry }
        return true
    }

    /// Starts a multipart upload and returns its id.
    private func create(deadline: NIODeadline, action: String) async throws -> String {
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
        return uploadID
    }

    /// Completes the upload with every part, in order.
    private func complete(uploadID: String, parts: [SentPart], deadline: NIODeadline, action: String) async throws -> Outcome {
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
        // An empty `<ETag></ETag>` (Ceph RGW 16) is no ETag: verify computes one from the parts'.
        let etag = S3ErrorResponse.value(of: "ETag", in: answer).flatMap { UploadManifestEntry.unquoted($0) == nil ? nil : $0 }
        return Outcome(size: 0, parts: parts.count, checksum: objectChecksum, etag: etag, uploadID: uploadID, completedParts: parts)
    }

    /// Sends every part the store does not have, `partConcurrency` at once, and returns all the
    /// parts' ETags and checksums in order. A stored part whose checksum the listing did not give
    /// is read from disk and hashed here (not sent): the completion names every part's checksum.
    private func uploadParts(_ source: PartSource, count: Int, partSize: Int, uploadID: String, stored: [Int: StoredPart],
                             saved: SavedUpload?, deadline: NIODeadline, action: String) async throws -> [SentPart] {
        let logsEachPart = count <= Self.partLinesLimit
        let needsChecksum = checksum.s3Name != nil
        return try await withThrowingTaskGroup(of: (Int, SentPart).self) { group in
            var sent = [SentPart](repeating: SentPart(etag: "", checksum: nil), count: count)
            var next = 1
            var saved = saved
            var pacer = CheckpointPacer()
            func start(_ number: Int) {
                let offset = Int64(number - 1) * Int64(partSize)
                let length = Int(min(Int64(partSize), source.size - offset))
                if let part = stored[number] {
                    group.addTask {
                        guard needsChecksum, part.checksum == nil else { return (number, SentPart(etag: part.etag, checksum: part.checksum)) }
                        let (_, _, value) = try await source.read(at: offset, count: length, checksum: checksum)
                        return (number, SentPart(etag: part.etag, checksum: value))
                    }
                    return
                }
                group.addTask {
                    let part = try await uploadPart(number, of: count, from: source, offset: offset, length: length, uploadID: uploadID,
                                                    deadline: deadline, action: action)
                    if logsEachPart { log("part \(number) of \(count) stored: ETag \(part.etag)") }
                    return (number, part)
                }
            }
            while next <= min(count, client.target.partConcurrency) {
                start(next)
                next += 1
            }
            while let (number, part) = try await group.next() {
                sent[number - 1] = part
                if saved != nil, stored[number] == nil {
                    saved?.parts[number] = part
                    if let saved, pacer.isDue(partsDone: saved.parts.count) { saveCheckpoint(saved.value) }
                }
                if next <= count {
                    start(next)
                    next += 1
                }
            }
            return sent
        }
    }

    /// Reads, hashes and sends one part, trying it again alone after a transient failure.
    private func uploadPart(_ number: Int, of count: Int, from source: PartSource, offset: Int64, length: Int, uploadID: String,
                            deadline: NIODeadline, action: String) async throws -> SentPart {
        let (bytes, hash, value) = try await source.read(at: offset, count: length, checksum: checksum)
        let headers = Self.checksumHeaders(checksum, value: value)
        let partAction = "\(action): part \(number) of \(count)"
        // The one "try, wait, try again" loop (FlowRetryPolicy.retrying): a transient failure of
        // this part alone is tried again; NoSuchUpload (the upload is gone) never is.
        return try await retry.retrying(isTransient: { error in
            guard let error = error as? FlowStandardOpError else { return false }
            return !error.isPermanent && error.serviceCode != "NoSuchUpload"
        }, retryAfter: { ($0 as? FlowStandardOpError)?.retryAfter }) { _ in
            // Held to the group's bytes budget (a part in memory goes as a whole: its bytes are
            // counted, in chunks, before it is sent).
            try await Self.reportProgress(bytes.readableBytes)
            // Each part's PUT (tries again included) is one more request of the group's budget (§15).
            try await FlowProgress.sink?.requested()
            let answer = try await explainingChecksum(action: partAction) {
                try await client.expectSuccess(.PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                                               headers: headers, body: .hashedBytes(bytes, sha256: hash), deadline: deadline,
                                               action: partAction)
            }
            guard let etag = answer.headers.first(name: "ETag"), !etag.isEmpty else {
                throw FlowStandardOpError(.s3, "\(partAction): the store's answer has no ETag")
            }
            return SentPart(etag: etag, checksum: checksum == .md5 ? nil : value)
        } beforeWait: { error, tried, wait in
            let message = (error as? FlowStandardOpError)?.message ?? String(describing: error)
            let reason = message.hasPrefix(partAction + ": ") ? String(message.dropFirst(partAction.count + 2)) : message
            log("part \(number) of \(count) failed (try \(tried) of \(retry.attempts)): \(reason); retrying in \(wait.shortText)")
        }
    }

    /// Reports `count` bytes about to be sent to the task's progress sink (its group's bytes
    /// budget), a megabyte at a time, so that other tasks' chunks interleave with a large part's.
    static func reportProgress(_ count: Int) async throws {
        guard let sink = FlowProgress.sink else { return }
        var left = count
        while left > 0 {
            let chunk = min(left, FileUpload.chunkSize)
            try await sink.sent(bytes: chunk)
            left -= chunk
        }
    }

    /// How an abort is tried again after a transient failure: 5 tries, 0.2 s doubling, at most
    /// 5 s apart (a `Retry-After` is honoured within that).
    static let abortRetry = FlowRetryPolicy(attempts: 5, delay: .milliseconds(200), maxDelay: .seconds(5), jitter: false)

    /// Aborts a multipart upload so that none of its parts stay stored. It runs even when the op
    /// was cancelled or ran out of time, with a fresh limit of its own; a failure is logged with
    /// what to do.
    func abort(uploadID: String) async {
        let client = client
        let key = key
        // Not cancelled with the op, and waited for before a Flow program exits. Tried again on a
        // transient failure: a store may refuse an abort while a part is still arriving (S3 says
        // an abort may have to be repeated then; moto answered 500 in about one run in five).
        let failure: String? = await FlowPendingWork.run {
            let deadline = NIODeadline.now() + .seconds(30)
            var tried = 1
            do {
                try await Self.abortRetry.retrying(isTransient: { error in
                    (error as? FlowStandardOpError).map { !$0.isPermanent } ?? false
                }, retryAfter: { ($0 as? FlowStandardOpError)?.retryAfter }) { number in
                    tried = number
                    do {
                        _ = try await client.expectSuccess(.DELETE, key: key, query: [("uploadId", uploadID)], body: .empty,
                                                           deadline: deadline, action: "aborting the multipart upload")
                    } catch let error as FlowStandardOpError where error.serviceCode == "NoSuchUpload" {
                        // Already gone: what an abort is for.
                    }
                }
                return nil
            } catch {
                return String(describing: error) + (tried > 1 ? " (tried \(tried) times)" : "")
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
}

extension PartSource {
    /// When the file was last modified (whole seconds, as S3 lists times), `nil` for bytes the
    /// coordinator sent: their parts are never taken from an earlier try.
    var modified: Date? {
        guard case .file(let file, _) = self else { return nil }
        var info = stat()
        guard stat(file.path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
    }
}
