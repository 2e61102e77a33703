public import Flow
import Foundation
import NIOCore
import Synchronization

/// `UploadFileOp` in a dry run (`run --dry-run`): it sends nothing. It finds the file's size, and
/// with `skipExisting` asks the server or store with the same `HEAD` a real run makes; then notes
/// for the plan that the file would be sent (its bytes, and the `PUT`, `POST` or multipart
/// requests not made) or skipped and why. Its output is the object's URL, as in a real run.
extension UploadFileOp: FlowDryRunRehearsing {
    /// Does what a dry run may: the size and the `skipExisting` `HEAD`, nothing that writes.
    ///
    /// - Parameter rehearsal: the op standing in for this one, with its bucket.
    public func rehearse(in rehearsal: FlowAsyncOperation) async throws {
        let input = try fileInput(try rehearsal.value(primaryInputParamKey, as: Any.self))
        do {
            let size = try Self.size(of: input)
            let element = try? rehearsal.value(primaryInputParamKey, as: Any.self)
            let target: String
            let existing: ExistingCopy?
            var made: [String: Int] = [:]
            if let s3Target {
                let (client, key) = try s3Client(for: input, to: s3Target)
                target = s3Target.objectURI(key: key)
                let deadline = NIODeadline.now() + .milliseconds(Int64(timeout.seconds * 1000))
                let asked = Mutex(false)
                existing = try await existingCopy(of: input, element: element) {
                    try await self.storedHead(key: key, client: client, checksumMode: self.skipRule == .checksum, deadline: deadline,
                                              action: "checking whether \(target) exists failed") { asked.withLock { $0 = true } }
                }
                if asked.withLock({ $0 }) { made["HEAD"] = 1 }
            } else {
                let objectURL = try Self.objectURL(base: baseURL, name: input.name)
                target = objectURL.absoluteString
                let request = UploadRequest(method: method, headers: headers, timeout: timeout.seconds, tls: try tlsConfiguration())
                existing = try await existingCopy(of: input, element: element) { try await request.head(of: objectURL) }
                if skipsExisting { made["HEAD"] = 1 }
            }
            rehearsal.set(primaryOutputParamKey, target)
            if let existing {
                let reason = existing.planReason(at: target, algorithm: checksum)
                rehearsal.log(message: "dry run: would skip \(input.name): it \(reason)")
                rehearsal.noteDryRun(FlowDryRunNote(item: input.name, action: .skip(reason: reason), bytes: size, requestsMade: made))
                return
            }
            rehearsal.log(message: "dry run: would upload \(input.name) (\(size) bytes) -> \(target)")
            rehearsal.noteDryRun(FlowDryRunNote(item: input.name, action: .send, bytes: size, requestsMade: made, requestsNotMade: requestsNotMade(size: size)))
        } catch let error as FlowStandardOpError {
            let error = Self.withWhereItWasRead(error, input)
            rehearsal.log(message: error.message)
            throw error
        }
    }

    /// What a real run would send for a file of `size` bytes: one `PUT` or `POST`, or on S3 above
    /// the part size a multipart upload (`POST` to create and complete, a `PUT` a part).
    func requestsNotMade(size: Int64) -> [String: Int] {
        guard let s3Target else { return [method.rawValue: 1] }
        let partSize = S3Upload.partSize(for: size, preferred: s3Target.partSize)
        guard size > Int64(partSize) else { return ["PUT": 1] }
        return ["POST": 2, "PUT": Int((size + Int64(partSize) - 1) / Int64(partSize))]
    }

    /// The file's size, read here (a path) or as it came (the coordinator's bytes).
    static func size(of input: FileInput) throws -> Int64 {
        switch input {
        case .path(let path, _): return try OpenFile(path: path).size
        case .bytes(let bytes, _, _): return Int64(bytes.count)
        }
    }

    /// The S3 client and key a real run would use, for its `HEAD` only: credentials found on this
    /// machine.
    private func s3Client(for input: FileInput, to target: S3Target) throws -> (S3Client, String) {
        let key = target.key(forFileNamed: try ObjectName(input.name).text)
        let credentials: S3Credentials
        do {
            credentials = try S3CredentialChain().resolve()
        } catch {
            throw FlowStandardOpError(.missingCredentials, "dry run of \(input.name) to s3://\(target.bucket) failed: \(error.description)")
        }
        let client = S3Client(target: target, signer: SigV4Signer(credentials: credentials, region: target.region),
                              objectHeaders: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, timeout: timeout.seconds,
                              tls: try tlsConfiguration())
        return (client, key)
    }
}
