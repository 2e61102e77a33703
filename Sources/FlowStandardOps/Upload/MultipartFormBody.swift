import Foundation

/// A `multipart/form-data` body holding one file field: its head and tail, sent around the file's
/// bytes (streamed from disk by ``FileUpload``, so a large file never sits in memory whole).
struct MultipartFormBody {
    /// The form field's name.
    let fieldName: String
    /// The file name sent in `Content-Disposition`.
    let fileName: String
    /// The part separator; random so it cannot occur in the file by accident.
    let boundary = "flow-boundary-" + UUID().uuidString

    /// The request's `Content-Type`.
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    var head: Data {
        let quotedName = Self.quoted(fileName)
        return Data(("--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"\(Self.quoted(fieldName))\"; filename=\"\(quotedName)\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n").utf8)
    }

    var tail: Data { Data("\r\n--\(boundary)--\r\n".utf8) }

    /// The whole body around `content`.
    func data(with content: Data) -> Data {
        head + content + tail
    }

    /// A header parameter value with the characters that would end it replaced.
    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "\r", with: " ")
            .replacingOccurrences(of: "\n", with: " ")
    }
}
