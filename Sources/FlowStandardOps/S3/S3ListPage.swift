import Foundation

/// One answer of `ListObjectsV2` (`GET /BUCKET?list-type=2`): the objects of one page, the
/// common prefixes (the "folders") a delimiter gathered, and where the next page starts.
///
/// An answer of 1,000 keys is about 300 KB of flat, machine-written XML, read with the element
/// searches the upload's answers use (``S3Upload/elements(_:in:)``,
/// ``S3ErrorResponse/value(of:in:)``, both searching bytes): no XML library.
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
        let text = String(decoding: xml, as: UTF8.self)
        guard text.contains("<ListBucketResult") else {
            throw FlowStandardOpError(.s3, "\(action): the store's answer is not a ListObjectsV2 result"
                                      + UploadRequest.bodyExcerpt(xml))
        }
        let urlEncoded = S3ErrorResponse.value(of: "EncodingType", in: text) == "url"
        func decoded(_ raw: String) -> String { urlEncoded ? Self.urlDecoded(raw) : raw }
        for block in S3Upload.elements("Contents", in: text) {
            guard let key = S3ErrorResponse.value(of: "Key", in: block) else { continue }
            let etag = S3ErrorResponse.value(of: "ETag", in: block) ?? ""
            objects.append(S3ObjectEntry(key: decoded(key), size: S3ErrorResponse.value(of: "Size", in: block).flatMap { Int64($0) } ?? 0,
                                         etag: etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")),
                                         lastModified: S3ErrorResponse.value(of: "LastModified", in: block) ?? ""))
        }
        commonPrefixes = S3Upload.elements("CommonPrefixes", in: text).compactMap { S3ErrorResponse.value(of: "Prefix", in: $0) }.map(decoded)
        if S3ErrorResponse.value(of: "IsTruncated", in: text) == "true" {
            guard let token = S3ErrorResponse.value(of: "NextContinuationToken", in: text), !token.isEmpty else {
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
