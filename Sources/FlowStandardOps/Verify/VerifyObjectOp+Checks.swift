import Flow
import Foundation
import NIOCore

/// The checks of ``VerifyObjectOp``: on S3 with signed requests, on HTTP with plain ones.
extension VerifyObjectOp {
    /// Checks an `s3://BUCKET/KEY` target: a `HEAD` with checksum mode, or with `deep` a `GET`
    /// hashed as it streams.
    func checkS3(_ entry: UploadManifestEntry) async throws -> ObjectCheck {
        let rest = entry.target.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        let key = String(rest.dropFirst(bucket.count + 1))
        var given: [String: FlowValue] = ["url": .string("s3://\(bucket)")]
        given["endpoint"] = s3Parameters["endpoint"] ?? entry.endpoint.map(FlowValue.string)
        given["region"] = s3Parameters["region"] ?? entry.region.map(FlowValue.string)
        given["pathStyle"] = s3Parameters["pathStyle"]
        let target = try S3Target(parameters: FlowParameters(given, operation: "VerifyObjectOp"))
        let credentials: S3Credentials
        do {
            credentials = try S3CredentialChain().resolve()
        } catch {
            throw FlowStandardOpError(.missingCredentials, "checking \(entry.target) failed: \(error.description)")
        }
        let client = S3Client(target: target, signer: SigV4Signer(credentials: credentials, region: target.region), objectHeaders: [],
                              timeout: timeout.seconds, tls: try tlsConfiguration())
        let deadline = NIODeadline.now() + .milliseconds(Int64(timeout.seconds * 1000))
        let algorithm = UploadChecksum(rawValue: entry.algorithm) ?? .none
        if deep {
            let hash = StreamedHash(entry)
            let head = try await client.get(key: key, deadline: deadline, action: "reading \(entry.target) failed") { hash.consume($0) }
            return try verdict(entry, head: head, read: hash)
        }
        let head = try await client.head(key: key, checksumMode: algorithm.s3Name != nil, deadline: deadline,
                                         action: "checking \(entry.target) failed")
        return try verdict(entry, head: head, size: head.size, checksum: head.checksum(algorithm))
    }

    /// Checks an http(s) target: a `HEAD`, or with `deep` a `GET` hashed as it streams.
    func checkHTTP(_ entry: UploadManifestEntry) async throws -> ObjectCheck {
        guard let url = URL(string: entry.target), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) else {
            throw FlowStandardOpError(.invalidName, "\(entry.target) is neither an http(s):// URL nor s3://BUCKET/KEY")
        }
        let request = UploadRequest(method: .put, headers: headers, timeout: timeout.seconds, tls: try tlsConfiguration())
        let algorithm = UploadChecksum(rawValue: entry.algorithm) ?? .none
        if deep {
            let hash = StreamedHash(entry)
            let head = try await request.get(url) { hash.consume($0) }
            return try verdict(entry, head: head, read: hash)
        }
        let head = try await request.head(of: url)
        return try verdict(entry, head: head, size: head.size, checksum: head.checksum(algorithm))
    }
}
