import Foundation
import NIOHTTP1

/// What a `HEAD` (or the head of a `GET`) of an object said: its status and headers, read for its
/// size, ETag, stored checksum and stored modification time.
struct ObjectHead: Sendable {
    var status: Int
    var headers: HTTPHeaders

    /// Whether the object is there (2xx).
    var exists: Bool { (200..<300).contains(status) }

    /// `Content-Length`, `nil` without one.
    var size: Int64? { headers.first(name: "Content-Length").flatMap { Int64($0) } }

    /// The ETag as sent (quotes kept), `nil` without one.
    var etag: String? { headers.first(name: "ETag") }

    /// The modification time stored on upload (`x-amz-meta-mtime`), `nil` without one.
    var modificationTime: FileModificationTime? {
        headers.first(name: FileModificationTime.header).flatMap(FileModificationTime.init(text:))
    }

    /// The stored checksum of `algorithm` in base64: `x-amz-checksum-ALG` (S3 sends it to a
    /// `HEAD` with `x-amz-checksum-mode: ENABLED`); for `md5` a `Content-MD5`, else an ETag that
    /// is the hex MD5 of a single-part object. `nil` when the answer holds none (a composite
    /// checksum of a multipart upload keeps its `-N`: it is not the whole file's).
    func checksum(_ algorithm: UploadChecksum) -> String? {
        switch algorithm {
        case .none: return nil
        case .md5:
            if let value = headers.first(name: "Content-MD5") { return value }
            guard let etag = etag?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")), etag.count == 32,
                  let bytes = Self.bytes(hex: etag) else { return nil }
            return Data(bytes).base64EncodedString()
        default:
            return algorithm.s3Header.flatMap { headers.first(name: $0) }
        }
    }

    /// The bytes of an even number of hex digits, `nil` for anything else.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
