#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One answer of `ListObjectsV2` (`GET /BUCKET?list-type=2`): the objects of one page, the
/// common prefixes (the "folders") a delimiter gathered, and where the next page starts.
///
/// An answer of 1,000 keys is about 300 KB of flat, machine-written XML, read here by searching
/// its bytes for the few elements Flow uses (as ``S3ErrorResponse`` reads the smaller answers): no
/// XML library, one pass per element.
struct S3ListPage: Sendable, Equatable {
    /// The page's objects, in the store's order (by key).
    var objects: [S3ObjectEntry] = []
    /// The common prefixes, each ending with the delimiter.
    var commonPrefixes: [String] = []
    /// The token that asks for the next page, `nil` on the last page.
    var nextContinuationToken: String?

    /// Reads an answer's body.
    ///
    /// Keys and prefixes are decoded when the store says it URL-encoded them
    /// (`<EncodingType>url</EncodingType>`, answering `encoding-type=url`), as the AWS tools ask
    /// so that a key with characters XML cannot carry still lists.
    ///
    /// - Throws: ``FlowStandardOpError`` when the body is not a `ListBucketResult`, or says it is
    ///   truncated without a continuation token.
    init(xml: Data, action: String) throws {
        let bytes = [UInt8](xml)
        let text = XMLBytes(bytes)
        guard text.find("<ListBucketResult", from: 0) != nil else {
            throw FlowStandardOpError(.s3, "\(action): the store's answer is not a ListObjectsV2 result"
                                      + UploadRequest.bodyExcerpt(xml))
        }
        let urlEncoded = text.value(of: "EncodingType", in: 0..<bytes.count) == "url"
        func decoded(_ raw: String) -> String { urlEncoded ? Self.urlDecoded(raw) : raw }
        var position = 0
        while let block = text.element("Contents", from: position) {
            position = block.upperBound
            guard let key = text.value(of: "Key", in: block) else { continue }
            let size = text.value(of: "Size", in: block).flatMap { Int64($0) } ?? 0
            let etag = text.value(of: "ETag", in: block) ?? ""
            objects.append(S3ObjectEntry(key: decoded(key), size: size, etag: etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")),
                                         lastModified: text.value(of: "LastModified", in: block) ?? ""))
        }
        position = 0
        while let block = text.element("CommonPrefixes", from: position) {
            position = block.upperBound
            if let prefix = text.value(of: "Prefix", in: block) { commonPrefixes.append(decoded(prefix)) }
        }
        let everything = 0..<bytes.count
        if text.value(of: "IsTruncated", in: everything) == "true" {
            guard let token = text.value(of: "NextContinuationToken", in: everything), !token.isEmpty else {
                throw FlowStandardOpError(.s3, "\(action): the store said the listing goes on but gave no NextContinuationToken")
            }
            nextContinuationToken = token
        }
    }

    /// A key or prefix the store URL-encoded: `+` is a space, `%XX` a byte (as botocore decodes
    /// them). Text that is not valid percent-encoding is kept as it came.
    static func urlDecoded(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}

/// One object of a listing.
struct S3ObjectEntry: Sendable, Equatable {
    /// The object's whole key.
    var key: String
    /// Its size in bytes.
    var size: Int64
    /// Its ETag, without the quotes S3 puts around it.
    var etag: String
    /// When it was last written, as the store says it (ISO 8601, `2026-11-29T09:30:00.000Z`).
    var lastModified: String

    /// `{key, size, etag, lastModified}`: the element of `ListObjectsOp`'s output, in the plain
    /// types a bucket holds (as `ListFilesOp`'s maps).
    var element: [String: Any] {
        ["key": key, "size": Int(size), "etag": etag, "lastModified": lastModified]
    }
}

/// Searches the bytes of an XML answer.
private struct XMLBytes {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Where `needle` first starts at or after `start`, `nil` when it does not: `memchr` to each
    /// place its first byte is, `memcmp` there.
    func find(_ needle: String, from start: Int) -> Int? {
        let pattern = Array(needle.utf8)
        let count = bytes.count
        guard let first = pattern.first, start >= 0, start + pattern.count <= count else { return nil }
        return bytes.withUnsafeBufferPointer { haystack -> Int? in
            pattern.withUnsafeBufferPointer { wanted -> Int? in
                let base = haystack.baseAddress!
                var at = start
                while at + wanted.count <= count {
                    guard let hit = memchr(base + at, Int32(first), count - wanted.count + 1 - at) else { return nil }
                    at = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                    if memcmp(base + at, wanted.baseAddress!, wanted.count) == 0 { return at }
                    at += 1
                }
                return nil
            }
        }
    }

    /// The range of the next `<name>…</name>` element's content at or after `start`.
    func element(_ name: String, from start: Int) -> Range<Int>? {
        guard let open = find("<\(name)>", from: start) else { return nil }
        let contentStart = open + name.utf8.count + 2
        guard let close = find("</\(name)>", from: contentStart) else { return nil }
        return contentStart..<close
    }

    /// The unescaped text of the first `<name>…</name>` within `range`, `nil` when there is none.
    func value(of name: String, in range: Range<Int>) -> String? {
        guard let content = element(name, from: range.lowerBound), content.upperBound <= range.upperBound else { return nil }
        return S3ErrorResponse.unescaped(String(decoding: bytes[content], as: UTF8.self))
    }
}
