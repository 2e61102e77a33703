import Flow
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Stores that refuse the trailing-checksum form of a single `PUT` (`aws-chunked` with
/// `STREAMING-UNSIGNED-PAYLOAD-TRAILER`): Ceph RGW before Squid takes the words for the payload's
/// hash and answers `XAmzContentSHA256Mismatch`; others answer `NotImplemented`, 501, or an
/// `InvalidArgument`/`InvalidRequest` naming the header or the encoding. The AWS SDKs met the same
/// wall when they turned trailing checksums on by default.
///
/// With `checksum: auto` (the default) such a refusal sends the object again at once as a signed
/// `PUT` with `Content-MD5` and the payload's SHA-256 (the file, at most a part's size, read into
/// memory), and the endpoint is remembered for the rest of the process's life (a run's local
/// workers, a pool's standing workers), said once per endpoint. An explicit `checksum:` the store
/// cannot take fails the element at once, permanently, naming the store's refusal and what works.
extension S3Upload {
    /// The endpoints that refused the trailer form, for this process's life.
    static let trailerRefused = Mutex<Set<String>>([])

    /// Whether the store at `endpoint` is known to refuse trailing checksums.
    static func refusesTrailer(_ endpoint: String) -> Bool { trailerRefused.withLock { $0.contains(endpoint) } }

    /// Remembers that `endpoint` refuses trailing checksums; `true` the first time.
    static func rememberTrailerRefused(_ endpoint: String) -> Bool { trailerRefused.withLock { $0.insert(endpoint).inserted } }

    /// The endpoints that refused checksum headers on a multipart upload (B2), for this process's
    /// life: apart from ``trailerRefused``, since a store may refuse the trailer form and take the
    /// headers (Ceph RGW 16 takes, and ignores, a part's checksum).
    static let checksumHeadersRefused = Mutex<Set<String>>([])

    /// Whether `error`, the answer to a `PUT` in the trailer form, says the store does not take
    /// that form (rather than that the bytes changed: the form carries no payload hash to mismatch).
    static func isTrailerRefusal(_ error: FlowStandardOpError) -> Bool {
        if error.status == 501 { return true }
        switch error.serviceCode {
        case "XAmzContentSHA256Mismatch", "NotImplemented": return true
        case "InvalidArgument", "InvalidRequest", "InvalidEncoding", "InvalidDigest":
            let text = error.message.lowercased()
            return ["trailer", "aws-chunked", "content-encoding", "x-amz-content-sha256", "streaming", "x-amz-checksum",
                    "x-amz-sdk-checksum", "chunk"].contains { text.contains($0) }
        default: return false
        }
    }

    /// The endpoint as said in messages and remembered: scheme, host and port.
    var endpointName: String { client.target.endpoint.absoluteString }

    /// Sends the whole file in the trailer form, or, where the store refuses it and the op's
    /// checksum is `auto`, in the signed form; an explicit checksum the store refuses fails for good.
    func putWholeTrailing(_ file: OpenFile, size: Int64, source: PartSource, deadline: NIODeadline, action: String) async throws -> Outcome {
        if fallsBackFromTrailer, Self.refusesTrailer(endpointName) {
            return try await putWholeSigned(source, deadline: deadline, action: action)
        }
        do {
            return try await putWholeStreamed(file, size: size, source: source, deadline: deadline, action: action)
        } catch let error as FlowStandardOpError where Self.isTrailerRefusal(error) {
            let reason = error.message.hasPrefix(action + ": ") ? String(error.message.dropFirst(action.count + 2)) : error.message
            guard fallsBackFromTrailer else {
                throw FlowStandardOpError(.storeRefusedChecksum, """
                    \(action): the store at \(endpointName) does not take trailing checksums (it answered \(reason)), so \
                    checksum: \(checksum.rawValue) cannot be sent there; leave checksum out (auto sends Content-MD5 and a signed \
                    payload to such a store), or give checksum: md5 or none
                    """, status: error.status, serviceCode: error.serviceCode)
            }
            if Self.rememberTrailerRefused(endpointName) {
                log("the store at \(endpointName) does not take trailing checksums; sending Content-MD5 and a signed payload instead")
            }
            return try await putWholeSigned(source, deadline: deadline, action: action)
        }
    }

    /// A multipart upload with the op's checksum, or, where the store refuses checksum headers
    /// (Backblaze B2 answers `InvalidArgument: Unsupported header 'x-amz-sdk-checksum-algorithm'`
    /// to a part) and the checksum is `auto`, with `Content-MD5` on each part instead: the refused
    /// upload was aborted as a permanent failure aborts it, and a new one starts at once.
    func uploadInPartsFallingBack(_ source: PartSource, partSize: Int, deadline: NIODeadline, action: String) async throws -> Outcome {
        guard fallsBackFromTrailer, checksum.s3Name != nil else {
            return try await uploadInParts(source, partSize: partSize, deadline: deadline, action: action)
        }
        let endpoint = endpointName
        if !Self.checksumHeadersRefused.withLock({ $0.contains(endpoint) }) {
            do {
                return try await uploadInParts(source, partSize: partSize, deadline: deadline, action: action)
            } catch let error as FlowStandardOpError where Self.isTrailerRefusal(error) {
                if Self.checksumHeadersRefused.withLock({ $0.insert(endpoint).inserted }) {
                    log("the store at \(endpointName) does not take checksum headers on multipart uploads; sending Content-MD5 instead")
                }
            }
        }
        var plain = self
        plain.checksum = .md5
        plain.fallsBackFromTrailer = false
        var outcome = try await plain.uploadInParts(source, partSize: partSize, deadline: deadline, action: action)
        outcome.algorithm = .md5
        return outcome
    }

    /// Sends the whole file, read into memory, as a signed `PUT` with `Content-MD5`: the form every
    /// S3-compatible store takes. Its checksum is recorded as MD5 (what such a store keeps, as the
    /// ETag of a single `PUT`).
    func putWholeSigned(_ source: PartSource, deadline: NIODeadline, action: String) async throws -> Outcome {
        let (bytes, hash, md5) = try await source.read(at: 0, count: Int(source.size), checksum: .md5)
        try await Self.reportProgress(bytes.readableBytes)
        let headers = client.objectHeaders + Self.checksumHeaders(.md5, value: md5)
        let answer = try await explainingChecksum(action: action) {
            try await client.expectSuccess(.PUT, key: key, headers: headers, body: .hashedBytes(bytes, sha256: hash), deadline: deadline,
                                           action: action)
        }
        return Outcome(size: source.size, parts: 0, checksum: md5, etag: answer.headers.first(name: "ETag"), algorithm: .md5)
    }
}
