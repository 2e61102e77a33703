import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// Signed requests to one S3 target on the process's shared ``HTTPUploadClient``: what
/// ``S3Upload`` is built from.
///
/// Every request is signed with SigV4 in header form. A body in memory (a part, the
/// `CompleteMultipartUpload` list, a file the coordinator sent) is signed with its SHA-256, so the
/// store checks every byte; a file streamed from disk in one `PUT` is signed `UNSIGNED-PAYLOAD`
/// (`STREAMING-UNSIGNED-PAYLOAD-TRAILER` when its checksum follows it in a trailer), so
/// it is read once and never held whole (see ``S3Upload``).
struct S3Client: Sendable {
    /// A request body.
    enum Body: Sendable {
        case empty
        /// Bytes in memory, signed with their SHA-256 computed here.
        case bytes(ByteBuffer)
        /// Bytes in memory whose SHA-256 (hex) the caller computed.
        case hashedBytes(ByteBuffer, sha256: String)
        /// A file streamed from disk, signed `UNSIGNED-PAYLOAD`, or
        /// `STREAMING-UNSIGNED-PAYLOAD-TRAILER` when it goes `aws-chunked` with its checksum in a
        /// trailer (``FileUpload/awsChunked``).
        case file(FileUpload)
    }

    /// How many bytes of an answer are kept: enough for every XML answer S3 sends to the requests
    /// made here (an error, an upload id, a completion).
    static let answerLimit = 64 * 1024

    let target: S3Target
    let signer: SigV4Signer
    /// Extra headers for object-creating requests (`Content-Type`, `x-amz-storage-class`, …).
    let objectHeaders: [(String, String)]
    /// For time-limit messages.
    let timeout: Double
    /// TLS settings other than the client's (``CertificateAuthorityFile``), `nil` for its own.
    var tls: TLSConfiguration? = nil

    /// Sends one signed request and returns the answer, whatever its status.
    ///
    /// - Parameters:
    ///   - key: the object key, `nil` for the bucket.
    ///   - query: the query parameters, not encoded.
    ///   - headers: headers to send and sign.
    ///   - deadline: when the request is given up.
    ///   - limit: how many bytes of the answer's body are kept (``answerLimit``; a listing keeps more).
    /// - Throws: a transport failure or time limit as ``FlowStandardOpError``; cancellation.
    func send(_ method: HTTPMethod, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [], body: Body,
              deadline: NIODeadline, action: String, keeping limit: Int = Self.answerLimit) async throws -> FileUpload.Answer {
        let location = target.location(key: key)
        let payloadHash: String
        // The body sent from memory (`nil`: none, or the streamed file).
        var inMemory: ByteBuffer?
        switch body {
        case .empty:
            payloadHash = SigV4Signer.emptyPayloadHash
            if method == .PUT || method == .POST { inMemory = ByteBuffer() }
        case .bytes(let buffer):
            payloadHash = SigV4Signer.hex(buffer.withUnsafeReadableBytes { SHA256.hash(data: $0) })
            inMemory = buffer
        case .hashedBytes(let buffer, let hash):
            payloadHash = hash
            inMemory = buffer
        case .file(let upload):
            payloadHash = upload.awsChunked ? SigV4Signer.streamingUnsignedPayloadTrailer : SigV4Signer.unsignedPayload
        }
        var sent = headers
        if case .file(let upload) = body {
            sent.append(("Content-Length", String(upload.length)))
            if upload.awsChunked { sent.append(("x-amz-decoded-content-length", String(upload.size))) }
        } else if let inMemory {
            sent.append(("Content-Length", String(inMemory.readableBytes)))
        }
        let signature = signer.sign(method: method.rawValue, host: location.host, path: location.path, query: query, headers: sent,
                                    payloadHash: payloadHash, date: Date())
        var httpHeaders = HTTPHeaders()
        httpHeaders.add(name: "Host", value: location.host)
        // Content-Length is signed but set by the client from the body, so it is never sent twice.
        for (name, value) in sent + signature where name.lowercased() != "content-length" {
            httpHeaders.add(name: name, value: value)
        }
        var url = location.url.absoluteString
        if !query.isEmpty { url += "?" + SigV4Signer.canonicalQuery(query) }
        do {
            if case .file(let upload) = body {
                return try await upload.send(url: url, method: method, headers: httpHeaders, on: HTTPUploadClient.shared, tls: tls,
                                             deadline: deadline, keeping: limit)
            }
            var request = HTTPClientRequest(url: url)
            request.method = method
            request.headers = httpHeaders
            request.tlsConfiguration = tls
            if let inMemory { request.body = .bytes(inMemory) }
            return try await HTTPUploadClient.execute(request, length: inMemory?.readableBytes ?? 0, deadline: deadline,
                                                      keeping: limit)
        } catch {
            throw UploadRequest.failure(error, action: action, timeout: timeout)
        }
    }

    /// Sends a request and fails unless the answer is 2xx and not an XML error (S3 can answer
    /// `CompleteMultipartUpload` with 200 and an error in the body).
    func expectSuccess(_ method: HTTPMethod, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
                       body: Body, deadline: NIODeadline, action: String) async throws -> FileUpload.Answer {
        let answer = try await send(method, key: key, query: query, headers: headers, body: body, deadline: deadline, action: action)
        if let error = S3ErrorResponse.error(in: answer, action: action) { throw error }
        return answer
    }
}
