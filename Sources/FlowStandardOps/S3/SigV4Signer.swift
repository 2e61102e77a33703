import Crypto
public import Foundation

/// AWS credentials: an access key id, its secret, and for temporary credentials a session token.
///
/// Their printed form never shows the secret or the token, so a credential that reaches a log
/// line, an error or a summary by mistake leaks nothing.
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The access key id (`AKIA…`, `ASIA…`).
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials, `nil` for long-term ones.
    public var sessionToken: String?

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String { "S3Credentials(\(accessKeyID), secret: <redacted>\(sessionToken == nil ? "" : ", session token: <redacted>"))" }

    /// `dump` and debuggers see the key id only.
    public var customMirror: Mirror { Mirror(self, children: ["accessKeyID": accessKeyID], displayStyle: .struct) }
}

/// Signs S3 requests with AWS Signature Version 4 (header form), as every S3-compatible store
/// requires: HMAC-SHA256 from swift-crypto over a canonical form of the request.
///
/// The signer never sees the body: the caller gives its SHA-256 in hex, or
/// ``unsignedPayload`` for a body streamed from disk that must not be read twice (S3 then checks
/// only what the signature covers: method, path, query, headers).
///
/// ```swift
/// let signer = SigV4Signer(credentials: credentials, region: "eu-west-1")
/// let headers = signer.sign(method: "PUT", host: "127.0.0.1:9000", path: SigV4Signer.encodePath("/photos/a b.jpg"),
///                           query: [], headers: [("Content-Length", "1024")], payloadHash: SigV4Signer.unsignedPayload, date: Date())
/// ```
///
/// Checked against AWS's published examples and against botocore's signer on generated requests
/// (`S3SigV4Tests`).
public struct SigV4Signer: Sendable {
    /// The payload hash that leaves the body out of the signature.
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The payload hash of an `aws-chunked` body sent unsigned with a trailer (its checksum), as
    /// the AWS SDKs stream uploads.
    public static let streamingUnsignedPayloadTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    /// The SHA-256 of an empty body.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// Whose credentials sign.
    public var credentials: S3Credentials
    /// The region, `us-east-1` for most S3-compatible stores.
    public var region: String
    /// The service name in the scope: `s3`.
    public var service: String

    /// Creates a signer.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers that sign a request: `Authorization`, `x-amz-date`, `x-amz-content-sha256`,
    /// and `x-amz-security-token` for temporary credentials. Send them with `headers`.
    ///
    /// - Parameters:
    ///   - method: `GET`, `PUT`, `POST`, `HEAD`, `DELETE`.
    ///   - host: the `Host` header as sent (with the port when it is not the scheme's default).
    ///   - path: the path as sent, already percent-encoded (``encodePath(_:)``); S3 signs it as it is.
    ///   - query: the query parameters, not encoded; the signer encodes and sorts them.
    ///   - headers: the other headers sent (except `User-Agent` and `Expect`, which are not signed).
    ///   - payloadHash: the body's SHA-256 in lowercase hex, or ``unsignedPayload``.
    ///   - date: the time of signing; S3 refuses a request more than 15 minutes off.
    public func sign(method: String, host: String, path: String, query: [(String, String)], headers: [(String, String)],
                     payloadHash: String, date: Date) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(date)
        var added = [("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }

        // Canonical headers: lowercase names, values trimmed with inner runs of spaces made one,
        // sorted by name; the same name twice is joined with commas.
        var byName: [String: [String]] = ["host": [host]]
        for (name, value) in headers + added {
            let lower = name.lowercased()
            guard !Self.unsignedHeaders.contains(lower), lower != "host" else { continue }
            byName[lower, default: []].append(Self.trimmed(value))
        }
        let names = byName.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(byName[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let canonicalQuery = Self.canonicalQuery(query)
        let canonicalRequest = [method, path.isEmpty ? "/" : path, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash]
            .joined(separator: "\n")

        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return [("Authorization", authorization)] + added
    }

    /// A path percent-encoded as S3 wants it signed and sent: every byte but `A–Z a–z 0–9 - _ . ~`
    /// and `/` as `%XX` (a space is `%20`, never `+`).
    public static func encodePath(_ path: String) -> String {
        encode(path, keepingSlash: true)
    }

    /// A query string in SigV4's canonical form, which is also a valid one to send: each name and
    /// value percent-encoded, `name=value` (`uploads=` for a bare name), sorted by name then value.
    public static func canonicalQuery(_ query: [(String, String)]) -> String {
        // Encoded, then sorted by name and value (all ASCII by then: byte order).
        let encoded: [(name: String, value: String)] = query.map { pair in
            (encode(pair.0, keepingSlash: false), encode(pair.1, keepingSlash: false))
        }
        let sorted = encoded.sorted { left, right in
            left.name == right.name ? left.value < right.value : left.name < right.name
        }
        return sorted.map { pair in pair.name + "=" + pair.value }.joined(separator: "&")
    }

    /// Headers that proxies may change, so they are never signed (as botocore does).
    static let unsignedHeaders: Set<String> = ["user-agent", "expect", "x-amzn-trace-id", "authorization"]

    static func encode(_ text: String, keepingSlash: Bool) -> String {
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                encoded.append("/")
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    static func timestamps(_ date: Date) -> (amzDate: String, day: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
        return (day + String(format: "T%02d%02d%02dZ", c.hour!, c.minute!, c.second!), day)
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
