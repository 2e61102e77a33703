import Foundation
import NIOHTTP1

/// Reads what an S3-compatible store answers: an XML error's `Code` and `Message`, and the few
/// values the upload needs (`UploadId`, `ETag`).
///
/// S3's answers are small, flat and machine-written, so a search for `<Name>…</Name>` reads them
/// reliably; no XML library (FoundationXML would pull in libxml2) is needed.
enum S3ErrorResponse {
    /// The error in an answer, or `nil` when it succeeded: a status outside 200–299, or a 200 whose
    /// body is an `<Error>` (S3 can answer `CompleteMultipartUpload` so).
    ///
    /// The error's message is `ACTION: HTTP 403 SignatureDoesNotMatch: The request signature …`;
    /// only the `Code` and `Message` are taken, never the rest of the XML (which can echo the
    /// access key id and the string that was signed).
    static func error(in answer: FileUpload.Answer, action: String) -> FlowStandardOpError? {
        let status = Int(answer.status.code)
        let text = String(decoding: answer.excerpt, as: UTF8.self)
        let isErrorBody = text.contains("<Error>") || text.contains("<Error ")
        guard !(200..<300).contains(status) || isErrorBody else { return nil }
        let code = isErrorBody ? value(of: "Code", in: text) : nil
        let message = isErrorBody ? value(of: "Message", in: text) : nil
        var words = "\(action): HTTP \(status)"
        if let code { words += " \(code)" }
        if let message, !message.isEmpty {
            words += ": " + String(message.prefix(300))
        } else if code == nil {
            words += answer.excerpt.isEmpty ? " (empty body)" : UploadRequest.bodyExcerpt(answer.excerpt)
        }
        let retryAfter = answer.headers.first(name: "Retry-After").flatMap(UploadRequest.retryAfter)
        // A 200 with an error body is still an error; judge it by its code alone.
        return FlowStandardOpError(.s3, words, status: (200..<300).contains(status) ? nil : status, retryAfter: retryAfter,
                                   serviceCode: code)
    }

    /// The text of the first `<name>…</name>` element, unescaped, or `nil`.
    static func value(of name: String, in text: String) -> String? {
        contents(of: name, in: text, all: false).first.map(unescaped)
    }

    /// The contents of the first (or, with `all`, every) `<name>…</name>` element of `text`, in
    /// order, found in its UTF-8 bytes (`memchr`, `memcmp`). `String.range(of:)` went through Foundation
    /// (`CFStringFindWithOptionsAndLocale`, `NSString.getCharacters`): 22% and 8% of the
    /// coordinator's CPU while it listed 20,000 objects from a Ceph gateway (perf), which bounded
    /// the listing, not the gateway.
    static func contents(of name: String, in text: String, all: Bool) -> [String] {
        let open = Array("<\(name)>".utf8)
        let close = Array("</\(name)>".utf8)
        var text = text
        return text.withUTF8 { bytes in
            var found: [String] = []
            var from = 0
            while let start = find(open, in: bytes, from: from), let end = find(close, in: bytes, from: start + open.count) {
                found.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + open.count)..<end]), as: UTF8.self))
                guard all else { break }
                from = end + close.count
            }
            return found
        }
    }

    /// Where `needle` (not empty) first starts in `bytes` at or after `from`: `memchr` to each
    /// place its first byte is, `memcmp` there.
    private static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        return needle.withUnsafeBufferPointer { wanted in
            var at = from
            while at + wanted.count <= bytes.count {
                guard let hit = memchr(base + at, Int32(wanted[0]), bytes.count - wanted.count + 1 - at) else { return nil }
                at = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if memcmp(base + at, wanted.baseAddress!, wanted.count) == 0 { return at }
                at += 1
            }
            return nil
        }
    }

    /// XML's five entities and numeric references back to characters.
    static func unescaped(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            guard let semi = rest[amp...].firstIndex(of: ";") else { break }
            result += rest[..<amp]
            let entity = rest[rest.index(after: amp)..<semi]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                if entity.hasPrefix("#x"), let code = UInt32(entity.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code) {
                    result.unicodeScalars.append(scalar)
                } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                    result.unicodeScalars.append(scalar)
                } else {
                    result += rest[amp...semi]
                }
            }
            rest = rest[rest.index(after: semi)...]
        }
        return result + rest
    }

    /// `&`, `<`, `>` and `"` as entities, for values written into a request's XML.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
