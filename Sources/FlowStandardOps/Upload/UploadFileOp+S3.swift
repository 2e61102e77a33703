import Flow
import Foundation
import NIOCore

/// `UploadFileOp` to S3-compatible storage (`url: s3://BUCKET/PREFIX`): what its parameters may
/// not hold, and the upload with credentials found on the machine that runs the op.
extension UploadFileOp {
    /// Refuses, for an S3 target, what would put a credential in a flow file or fight the
    /// signature: parameters named like credentials, signing headers, and `method: POST`. The
    /// messages never repeat the values.
    static func refuseCredentials(in parameters: FlowParameters) throws {
        let where_ = "credentials are read on the machine that runs the op: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and "
            + "AWS_SESSION_TOKEN, or AWS_PROFILE with ~/.aws/credentials; remove it from the flow file"
        for name in parameters.values.keys.sorted() {
            let lower = name.lowercased()
            if ["secret", "accesskey", "access_key", "credential", "password", "token"].contains(where: lower.contains) {
                throw parameters.error(name, "cannot be given for an s3:// target: \(where_)")
            }
        }
        if let method = parameters["method"], method.stringValue?.uppercased() != "PUT" {
            throw parameters.error("method", "must be PUT (or left out) for an s3:// target: S3 takes objects by PUT")
        }
        if case .map(let headers) = parameters["headers"] {
            for name in headers.keys.sorted() {
                if ["authorization", "host", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"].contains(name.lowercased()) {
                    throw parameters.error("headers", "cannot set \(name) for an s3:// target: requests are signed with the \(where_)")
                }
            }
        }
    }

    /// Uploads to S3 with credentials found on this machine.
    func upload(_ input: FileInput, to target: S3Target, started: Date) async throws {
        do {
            let key = target.key(forFileNamed: try ObjectName(input.name).text)
            let credentials: S3Credentials
            do {
                credentials = try S3CredentialChain().resolve()
            } catch {
                throw FlowStandardOpError(.missingCredentials, "upload of \(input.name) to s3://\(target.bucket) failed: \(error.description)")
            }
            let element = try? value(primaryInputParamKey, as: Any.self)
            let objectHeaders = headers.merging(modificationTimeHeaders(of: input, element: element)) { given, _ in given }
            let client = S3Client(target: target, signer: SigV4Signer(credentials: credentials, region: target.region),
                                  objectHeaders: objectHeaders.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, timeout: timeout.seconds,
                                  tls: try tlsConfiguration())
            var upload = S3Upload(client: client, key: key, checksum: checksum, retry: retryPolicy) { [weak self] line in
                guard let self, !self.isCancelled else {
                    // The op has already reported, cancelled: its summary takes no more lines, so
                    // what its cleanup did (an abort, or the command to run when it failed) goes
                    // to the process's standard error, which the coordinator shows.
                    FileHandle.standardError.write(Data("UploadFileOp, after it was cancelled: \(line)\n".utf8))
                    return
                }
                self.log(message: line)
            }
            upload.fallsBackFromTrailer = checksumIsAuto
            let deadline = NIODeadline.now() + .milliseconds(Int64(timeout.seconds * 1000))
            let validates = validatesStoredChecksums
            let head = { try await self.storedHead(key: key, client: client, checksumMode: self.skipRule == .checksum && validates,
                                                   deadline: deadline, action: "checking whether \(upload.objectURI) exists failed") }
            if let copy = try await existingCopy(of: input, element: element, head: head) {
                log(message: "skipped \(input.name): the store has it already (\(copy.detail)) at \(upload.objectURI)")
                log(message: copy.manifestEntry(target: upload.objectURI, algorithm: checksum, s3: target).logLine)
                set(primaryOutputParamKey, upload.objectURI)
                return
            }
            let outcome = try await withAbortPolicy(upload).upload(input, deadline: deadline)
            let kept = outcome.partsAlreadyStored > 0 ? ", \(outcome.partsAlreadyStored) already on the store" : ""
            let parts = outcome.parts > 0 ? " (\(outcome.parts) parts\(kept))" : ""
            log(message: "uploaded \(input.name) (\(outcome.size) bytes) -> \(upload.objectURI) in \(DurationText.elapsed(since: started)) s\(parts)")
            var entry = UploadManifestEntry(target: upload.objectURI, size: outcome.size, algorithm: outcome.algorithm ?? checksum,
                                            checksum: outcome.checksum,
                                            etag: outcome.etag)
            entry.record(target)
            entry.record(multipart: outcome)
            log(message: entry.logLine)
            set(primaryOutputParamKey, upload.objectURI)
        } catch let error as FlowStandardOpError {
            let error = Self.withWhereItWasRead(error, input)
            log(message: error.message)
            throw error
        }
    }
}
