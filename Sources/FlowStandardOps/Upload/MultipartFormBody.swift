#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A `multipart/form-data` body holding one file field, built in memory for bytes already in
/// memory, or written to a temporary file by a chunked copy for a file on disk (so a large file
/// never sits in memory whole).
struct MultipartFormBody {
    /// The form field's name.
    let fieldName: String
    /// The file name sent in `Content-Disposition`.
    let fileName: String
    /// The part separator; random so it cannot occur in the file by accident.
    let boundary = "flow-boundary-" + UUID().uuidString

    /// The request's `Content-Type`.
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    private var head: Data {
        let quotedName = Self.quoted(fileName)
        return Data(("--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"\(Self.quoted(fieldName))\"; filename=\"\(quotedName)\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n").utf8)
    }

    private var tail: Data { Data("\r\n--\(boundary)--\r\n".utf8) }

    /// The whole body around `content`.
    func data(with content: Data) -> Data {
        head + content + tail
    }

    /// Writes the body around `file`'s content to a new temporary file and returns its location;
    /// the caller removes it.
    ///
    /// - Throws: ``FlowStandardOpError`` for a read error (naming the source) or a write error
    ///   (naming the temporary file).
    func writeTemporaryFile(copying file: ReadableFile) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("flow-upload-\(UUID().uuidString).multipart")
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.writeFailure(url, errno) }
        var finished = false
        defer {
            close(descriptor)
            if !finished { unlink(url.path) }
        }
        try head.withUnsafeBytes { try Self.writeAll($0, to: descriptor, url: url) }
        try file.forEachChunk { chunk in
            try Self.writeAll(chunk, to: descriptor, url: url)
            return true
        }
        try tail.withUnsafeBytes { try Self.writeAll($0, to: descriptor, url: url) }
        finished = true
        return url
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, url: URL) throws {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw writeFailure(url, errno)
            }
            offset += written
        }
    }

    private static func writeFailure(_ url: URL, _ code: Int32) -> FlowStandardOpError {
        FlowStandardOpError(.temporaryFile, "cannot write temporary file \(url.path): \(String(cString: strerror(code)))")
    }

    /// A header parameter value with the characters that would end it replaced.
    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "\r", with: " ")
            .replacingOccurrences(of: "\n", with: " ")
    }
}
