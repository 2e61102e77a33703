import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP upload: builds the request, sends a file from disk by streaming or bytes from memory,
/// and turns the answer into a size or a ``FlowStandardOpError``.
struct UploadRequest: Sendable {
    let method: UploadFileOp.Method
    let headers: [String: String]
    let timeout: Double

    /// One session for every upload in the process, so connections to a server are reused.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.timeoutIntervalForResource = 7 * 24 * 3600
        return URLSession(configuration: configuration)
    }()

    /// Uploads the file and returns how many bytes of it were sent.
    func send(_ input: FileInput, to url: URL) async throws -> Int {
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        request.timeoutInterval = timeout
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let action = "upload of \(input.name) to \(url.absoluteString) failed"

        let answer: (Data, URLResponse)
        let size: Int
        switch (method, input) {
        case (.put, .path(let path, _)):
            size = try ReadableFile(path: path).size
            answer = try await perform(action) { try await Self.session.upload(for: request, fromFile: URL(fileURLWithPath: path)) }
        case (.put, .bytes(let bytes, _, _)):
            size = bytes.count
            answer = try await perform(action) { try await Self.session.upload(for: request, from: bytes) }
        case (.post, .path(let path, let name)):
            let body = MultipartFormBody(fieldName: "file", fileName: name)
            request.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
            let (fileSize, bodyFile) = try await BlockingWork.run {
                let file = try ReadableFile(path: path)
                return (file.size, try body.writeTemporaryFile(copying: file))
            }
            size = fileSize
            defer { try? FileManager.default.removeItem(at: bodyFile) }
            answer = try await perform(action) { try await Self.session.upload(for: request, fromFile: bodyFile) }
        case (.post, .bytes(let bytes, let name, _)):
            size = bytes.count
            let body = MultipartFormBody(fieldName: "file", fileName: name)
            request.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
            answer = try await perform(action) { try await Self.session.upload(for: request, from: body.data(with: bytes)) }
        }

        guard let response = answer.1 as? HTTPURLResponse else {
            throw FlowStandardOpError(.transport, "\(action): the answer is not HTTP")
        }
        guard (200..<300).contains(response.statusCode) else {
            throw FlowStandardOpError(.httpStatus, "\(action): HTTP \(response.statusCode)" + Self.bodyExcerpt(answer.0))
        }
        return size
    }

    /// Runs the request, turning URLSession's errors into ones that say what failed.
    private func perform(_ action: String, _ request: () async throws -> (Data, URLResponse)) async throws -> (Data, URLResponse) {
        do {
            return try await request()
        } catch {
            try Task.checkCancellation()
            if (error as NSError).domain == NSURLErrorDomain && (error as NSError).code == NSURLErrorTimedOut {
                throw FlowStandardOpError(.timeLimitExceeded, "\(action): time limit of \(DurationText.limit(timeout)) s exceeded")
            }
            throw FlowStandardOpError(.transport, "\(action): \(Self.describe(error))")
        }
    }

    /// `: ` and the first 200 bytes of a response body on one line, or nothing for an empty body.
    static func bodyExcerpt(_ body: Data) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
            .split(whereSeparator: \.isNewline).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? " (empty body)" : ": " + text + (body.count > 200 ? "…" : "")
    }

    /// URLSession's error in words: on Linux the useful text sits in the underlying error.
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
           let text = underlying.userInfo[NSLocalizedDescriptionKey] as? String {
            return text
        }
        if let text = nsError.userInfo[NSLocalizedDescriptionKey] as? String { return text }
        return nsError.domain == NSURLErrorDomain ? "URL error \(nsError.code)" : String(describing: error)
    }
}
