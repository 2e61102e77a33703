public import Flow
public import Foundation

/// Where `UploadFileOp` puts files in S3-compatible object storage, from its parameters:
///
/// ```yaml
/// with:
///   url: s3://photos/2026/           # bucket, then an optional key prefix
///   endpoint: http://127.0.0.1:9000  # optional: MinIO, R2, Ceph, … (default: AWS for the region)
///   region: eu-west-1                # optional
///   pathStyle: true                  # optional: bucket in the path, not the host name
///   partSize: 16MiB                  # optional: multipart part size (and threshold)
///   partConcurrency: 4               # optional: parts of one file in flight at once
/// ```
///
/// Defaults follow the AWS tools: `region` from `AWS_REGION` / `AWS_DEFAULT_REGION`, else
/// `us-east-1`; `endpoint` from `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, else
/// `https://s3.REGION.amazonaws.com`; path style on when an endpoint is given.
public struct S3Target: Sendable, Hashable {
    /// The bucket.
    public var bucket: String
    /// What every object key starts with (`2026/`), possibly empty.
    public var keyPrefix: String
    /// The service's base URL (scheme, host, port).
    public var endpoint: URL
    /// The signing region.
    public var region: String
    /// Whether the bucket goes in the path (`endpoint/bucket/key`) rather than the host name.
    public var pathStyle: Bool
    /// Files larger than this go up in parts of this size.
    public var partSize: Int
    /// How many parts of one file are in flight at once.
    public var partConcurrency: Int

    /// S3's limits: parts of 5 MiB to 5 GiB (the last may be smaller), at most 10,000 of them.
    public static let minimumPartSize = 5 << 20
    public static let maximumPartSize = 5 << 30
    public static let maximumPartCount = 10_000

    /// Whether `url` names an S3 target (`s3://…`).
    public static func isS3(_ url: String) -> Bool { url.lowercased().hasPrefix("s3://") }

    /// Reads the target from an op's parameters.
    ///
    /// - Parameters:
    ///   - parameters: the op's parameters.
    ///   - environment: where the defaults come from.
    /// - Throws: `FlowParameterError` naming the parameter.
    public init(parameters: FlowParameters, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let url = try parameters.string("url")
        let operation = parameters.operation
        func bad(_ parameter: String, _ message: String) -> FlowParameterError {
            FlowParameterError(operation: operation, parameter: parameter, message: message)
        }
        guard Self.isS3(url) else { throw bad("url", "must start with s3:// for an S3 target, got '\(url)'") }
        let rest = url.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        guard Self.isValidBucket(bucket) else {
            throw bad("url", "'\(bucket)' is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens): s3://BUCKET/PREFIX")
        }
        self.bucket = bucket
        keyPrefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })

        func setting(_ names: [String]) -> String? {
            names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        }
        region = try parameters.string("region", default: setting(["AWS_REGION", "AWS_DEFAULT_REGION"]) ?? "us-east-1")
        let givenEndpoint = try parameters.values["endpoint"].map { _ in try parameters.string("endpoint") }
            ?? setting(["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"])
        if let givenEndpoint {
            guard let parsed = URL(string: givenEndpoint), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  parsed.host != nil else {
                throw bad("endpoint", "must be an http:// or https:// URL, got '\(givenEndpoint)'")
            }
            endpoint = parsed
        } else {
            endpoint = URL(string: "https://s3.\(region).amazonaws.com")!
        }
        pathStyle = try parameters.bool("pathStyle", default: givenEndpoint != nil)
        if !pathStyle, bucket.contains("."), endpoint.scheme == "https" {
            throw bad("pathStyle", "must be true for bucket '\(bucket)': a dotted bucket in the host name fails TLS")
        }
        let size: Int
        if let value = parameters.values["partSize"] {
            guard let parsed = Self.byteCount(value) else {
                throw bad("partSize", "must be a size like 16MiB, 512KiB, 1GiB or a number of bytes, got \(value)")
            }
            size = parsed
        } else {
            size = 16 << 20
        }
        guard (Self.minimumPartSize...Self.maximumPartSize).contains(size) else {
            throw bad("partSize", "must be between 5MiB and 5GiB (S3's limits), got \(size) bytes")
        }
        partSize = size
        partConcurrency = try parameters.integer("partConcurrency", default: 4)
        guard (1...64).contains(partConcurrency) else { throw bad("partConcurrency", "must be 1 to 64, got \(partConcurrency)") }
    }

    /// The object key of a file: the prefix (with a `/` after it when it has none) and the name.
    public func key(forFileNamed name: String) -> String {
        guard !keyPrefix.isEmpty else { return name }
        return keyPrefix.hasSuffix("/") ? keyPrefix + name : keyPrefix + "/" + name
    }

    /// The element's output for an object: `s3://BUCKET/KEY`.
    public func objectURI(key: String) -> String { "s3://\(bucket)/\(key)" }

    /// Host header and encoded path of a request for `key` (`nil`: the bucket itself).
    public func location(key: String?) -> (host: String, path: String, url: URL) {
        var host = endpoint.host ?? ""
        if let port = endpoint.port { host += ":\(port)" }
        let base = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
        let keyPath = key.map { "/" + SigV4Signer.encodePath($0) } ?? "/"
        let path: String
        if pathStyle {
            path = base + "/" + SigV4Signer.encodePath(bucket) + (key == nil ? "" : keyPath)
        } else {
            host = bucket + "." + host
            path = base + keyPath
        }
        let scheme = endpoint.scheme ?? "https"
        return (host, path, URL(string: "\(scheme)://\(host)\(path)")!)
    }

    /// `16MiB`, `512KiB`, `1GiB`, `5MB` (decimal) or plain bytes.
    static func byteCount(_ value: FlowValue) -> Int? {
        if let integer = value.integerValue { return integer }
        guard case .string(let text) = value else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Int)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("B", 1)]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            let number = trimmed.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)
            guard let amount = Double(number), amount > 0 else { return nil }
            return Int(amount * Double(factor))
        }
        return Int(trimmed)
    }

    static func isValidBucket(_ name: String) -> Bool {
        guard (3...63).contains(name.count), let first = name.first, let last = name.last,
              first.isLetter || first.isNumber, last.isLetter || last.isNumber else { return false }
        return name.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "." || $0 == "-" }
    }
}
