import AsyncHTTPClient
import Flow
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// One HTTP upload on the process's shared ``HTTPUploadClient``: builds the request, streams a file
/// from disk (or sends bytes from memory), and turns the answer into a size or a
/// ``FlowStandardOpError`` that says whether trying again could help.
struct UploadRequest: Sendable {
    let method: UploadFileOp.Method
    let headers: [String: String]
    let timeout: Double
    /// TLS settings other than the client's (``CertificateAuthorityFile``), `nil` for its own.
    var tls: TLSConfiguration? = nil
    /// The checksum computed while the file is read, recorded (not sent: an HTTP server has no
    /// standard header to check it against a streamed body).
    var checksum: UploadChecksum = .none

    /// What an upload sent.
    struct Sent: Sendable {
        /// Bytes of the file sent.
        var size: Int
        /// The file's ``checksum`` in base64, `nil` for none.
        var checksum: String?
        /// The server's `ETag`, `nil` when it sent none.
        var etag: String?
    }

    /// Uploads the file and returns how many bytes of it were sent.
    ///
    /// A file on disk is streamed from it (``FileUpload``); bytes already in memory go as they are.
    func send(_ input: FileInput, to url: URL) async throws -> Int {
        try await sendRecording(input, to: url).size
    }

    /// Uploads the file and returns its size, its checksum (computed as it was read) and the ETag.
    func sendRecording(_ input: FileInput, to url: URL) async throws -> Sent {
        var headers = HTTPHeaders()
        for (name, value) in self.headers { headers.replaceOrAdd(name: name, value: value) }
        let action = "upload of \(input.name) to \(url.absoluteString) failed"
        let deadline = NIODeadline.now() + .milliseconds(Int64(timeout * 1000))

        let size: Int64
        let answer: FileUpload.Answer
        var value: String?
        let recorder = checksum == .none ? nil : UploadChecksumRecorder(checksum)
        do {
            switch input {
            case .path(let path, let name):
                let file = try OpenFile(path: path)
                size = file.size
                var prefix: ByteBuffer?
                var suffix: ByteBuffer?
                if method == .post {
                    let form = MultipartFormBody(fieldName: "file", fileName: name)
                    headers.replaceOrAdd(name: "Content-Type", value: form.contentType)
                    (prefix, suffix) = (ByteBuffer(bytes: form.head), ByteBuffer(bytes: form.tail))
                }
                var body = FileUpload(file: file, size: size, prefix: prefix, suffix: suffix)
                body.checksum = recorder
                answer = try await body.send(url: url.absoluteString, method: httpMethod, headers: headers,
                                             on: HTTPUploadClient.shared, tls: tls, deadline: deadline)
                value = recorder?.value
            case .bytes(let bytes, let name, _):
                size = Int64(bytes.count)
                value = checksum.base64(of: bytes)
                var body = ByteBuffer(bytes: bytes)
                if method == .post {
                    let form = MultipartFormBody(fieldName: "file", fileName: name)
                    headers.replaceOrAdd(name: "Content-Type", value: form.contentType)
                    body = ByteBuffer(bytes: form.data(with: bytes))
                }
                answer = try await execute(url: url, headers: headers, body: body, deadline: deadline)
            }
        } catch {
            throw Self.failure(error, action: action, timeout: timeout)
        }
        guard (200..<300).contains(Int(answer.status.code)) else {
            let status = Int(answer.status.code)
            throw FlowStandardOpError(.httpStatus, "\(action): HTTP \(status)" + Self.bodyExcerpt(answer.excerpt), status: status,
                                      retryAfter: answer.headers.first(name: "Retry-After").flatMap(Self.retryAfter))
        }
        return Sent(size: Int(size), checksum: value, etag: answer.headers.first(name: "ETag"))
    }

    private var httpMethod: HTTPMethod { method == .put ? .PUT : .POST }

    /// The object's head: a `HEAD` with the op's headers, its status and headers whatever they
    /// are (a server that refuses `HEAD` answers 405, and the file is sent).
    ///
    /// - Throws: what sending would throw for a connection that fails or a time limit.
    func head(of url: URL) async throws -> ObjectHead {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .HEAD
        request.tlsConfiguration = tls
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        HTTPUploadClient.stamp(&request.headers)
        do {
            let response = try await HTTPUploadClient.shared.execute(request, deadline: .now() + .milliseconds(Int64(timeout * 1000)))
            for try await _ in response.body {}
            return ObjectHead(status: Int(response.status.code), headers: response.headers)
        } catch {
            throw Self.failure(error, action: "checking whether \(url.absoluteString) exists failed", timeout: timeout)
        }
    }

    /// Reads the object with a `GET` (the op's headers sent), handing each part of its body to
    /// `consume` as it arrives (nothing is kept), and returns its head; a status other than 2xx
    /// returns its head without calling `consume`.
    func get(_ url: URL, consume: (ByteBuffer) throws -> Void) async throws -> ObjectHead {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        request.tlsConfiguration = tls
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        HTTPUploadClient.stamp(&request.headers)
        do {
            let response = try await HTTPUploadClient.shared.execute(request, deadline: .now() + .milliseconds(Int64(timeout * 1000)))
            let head = ObjectHead(status: Int(response.status.code), headers: response.headers)
            for try await part in response.body where head.exists {
                try consume(part)
            }
            return head
        } catch {
            throw Self.failure(error, action: "reading \(url.absoluteString) failed", timeout: timeout)
        }
    }

    /// Sends bytes from memory through the async API and reads the answer to its end (so the
    /// connection can be reused), keeping its start.
    private func execute(url: URL, headers: HTTPHeaders, body: ByteBuffer, deadline: NIODeadline) async throws
        -> FileUpload.Answer {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = httpMethod
        request.headers = headers
        request.tlsConfiguration = tls
        request.body = .bytes(body)
        return try await HTTPUploadClient.execute(request, length: body.readableBytes, deadline: deadline, keeping: 200)
    }

    /// A transport failure in words, as a time limit when the deadline passed; cancellation and
    /// the op's own errors pass through.
    static func failure(_ error: any Error, action: String, timeout: Double) -> any Error {
        if error is CancellationError || error is FlowStandardOpError { return error }
        if let clientError = error as? HTTPClientError {
            if clientError == .deadlineExceeded || clientError == .readTimeout || clientError == .writeTimeout {
                return FlowStandardOpError(.timeLimitExceeded, "\(action): time limit of \(DurationText.limit(timeout)) s exceeded")
            }
            if clientError == .cancelled { return CancellationError() }
        }
        if let certificate = certificateProblem(error) { return FlowStandardOpError(.untrustedCertificate, "\(action): \(certificate)") }
        return FlowStandardOpError(.transport, "\(action): \(describe(error))")
    }

    /// What is wrong with an HTTPS server's certificate, in words with what to do, when `error`
    /// is its rejection; `nil` for any other error. NIOSSL keeps BoringSSL's reason only in its
    /// errors' descriptions (`…:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at …`).
    static func certificateProblem(_ error: any Error) -> String? {
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's TLS certificate is not trusted on this machine (self-signed, expired, or from an "
                + "authority it does not know); fix the server's certificate, or add its authority to this machine's "
                + "trust store (Debian: copy it into /usr/local/share/ca-certificates and run update-ca-certificates) "
                + "or name it in the op's caFile parameter"
        }
        return nil
    }

    /// The longest wait a `Retry-After` is read as: a day. A step's `maxDelay` caps the wait
    /// again; this bound only keeps an absurd header (`99999999999999999`) a plain number.
    static let longestRetryAfter = Duration.seconds(86_400)

    /// `Retry-After` as a wait: delay-seconds, or an HTTP date; at most ``longestRetryAfter``.
    static func retryAfter(_ value: String) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isWholeNumber }) {
            // Digits past Int's range are a wait past any bound, not an unreadable header.
            return min(Int(text).map { .seconds($0) } ?? longestRetryAfter, longestRetryAfter)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return min(.milliseconds(max(0, FlowSaturating.int64(date.timeIntervalSinceNow * 1000))), longestRetryAfter)
    }

    /// `: ` and the first 200 bytes of a response body on one line, or ` (empty body)`.
    static func bodyExcerpt(_ body: Data) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
            .split(whereSeparator: \.isNewline).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? " (empty body)" : ": " + text + (body.count >= 200 ? "…" : "")
    }

    /// A client or connection error in words.
    static func describe(_ error: any Error) -> String {
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .remoteConnectionClosed: return "the server closed the connection"
            case .connectTimeout: return "connecting timed out"
            default: return String(describing: clientError)
            }
        }
        let text = String(describing: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        if text.contains("connectionReset") || text.contains("Connection reset") { return "connection reset by the server" }
        if let reason = text.firstMatch(of: /handshakeFailed\(.*OPENSSL_internal:([A-Z0-9_]+)/)?.1 {
            let hint = reason == "WRONG_VERSION_NUMBER" ? "; does the server speak HTTPS on this port?" : ""
            return "the TLS handshake failed (\(reason))\(hint)"
        }
        return text
    }
}
