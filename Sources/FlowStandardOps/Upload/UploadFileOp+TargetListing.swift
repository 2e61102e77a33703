import Flow
import Foundation
import NIOCore
import NIOHTTP1

/// `skipExisting` by listing the target instead of asking for each file (issue 49 item 4), as
/// `rclone copy` and `aws s3 sync` list their destination: for a group of more than 1,000
/// elements to an S3 target, each worker lists the target prefix once (``S3TargetListings``, 1,000
/// keys a request) and answers each file's question from the listing. A file not listed is sent
/// with no request before it; with `skipExisting: size` (or `true`) a listed one is judged by the
/// listed size. `modtime` and `checksum` still send a `HEAD` for the files the listing has, since
/// a listing carries neither the stored time nor the stored checksum.
extension UploadFileOp {
    /// When `skipExisting` lists the target: `listTarget`.
    enum ListTarget: String, Sendable, CaseIterable {
        /// For a group of more than ``listingThreshold`` elements (the default).
        case auto
        /// For every group.
        case always = "true"
        /// Never: a `HEAD` per file (`rclone`'s `--no-traverse`), for a few files into a big bucket.
        case never = "false"
    }

    /// Groups larger than this list their S3 target for `skipExisting` (`listTarget: auto`).
    static let listingThreshold = 1_000

    /// `listTarget`: `auto` (the default), `true` or `false`.
    static func listTarget(_ parameters: FlowParameters) throws -> ListTarget {
        guard let value = parameters["listTarget"] else { return .auto }
        if let flag = value.boolValue { return flag ? .always : .never }
        guard let mode = value.stringValue.flatMap({ ListTarget(rawValue: $0.lowercased()) }) else {
            throw parameters.error("listTarget", "must be auto, true or false")
        }
        return mode
    }

    /// `UploadFileOp`'s ``FlowOperationRegistry/GroupPreparer``: for an S3 target with
    /// `skipExisting`, names a listing its tasks share (`listing`, a new name for each group
    /// started) when `listTarget` is `true`, or `auto` and the group has more than
    /// ``listingThreshold`` elements (or a count not known yet). Anything else is left as it is.
    @Sendable static func prepareGroup(_ parameters: [String: FlowValue], _ elementCount: Int?) -> [String: FlowValue] {
        let given = FlowParameters(parameters, operation: "UploadFileOp")
        guard parameters["listing"] == nil, let url = parameters["url"]?.stringValue, S3Target.isS3(url),
              let rule = try? UploadSkipRule(parameters: given), rule != .off, let mode = try? listTarget(given) else { return parameters }
        switch mode {
        case .never: return parameters
        case .auto where (elementCount ?? .max) <= listingThreshold: return parameters
        case .auto, .always:
            var prepared = parameters
            prepared["listing"] = .string(UUID().uuidString)
            return prepared
        }
    }

    /// The answer to `skipExisting`'s question for `key`: from the group's listing of the target
    /// when it has one (``targetListing``), else a `HEAD`.
    ///
    /// - Parameter sentHEAD: called when a `HEAD` is sent (a dry run counts it).
    func storedHead(key: String, client: S3Client, checksumMode: Bool, deadline: NIODeadline, action: String,
                    sentHEAD: (() -> Void)? = nil) async throws -> ObjectHead {
        if let name = targetListing, let target = s3Target {
            let timeout = self.timeout
            let (objects, line) = try await S3TargetListings.objects(named: name) {
                try await Self.listing(of: target, client: client, timeout: timeout)
            }
            if let line { log(message: line) }
            if let objects {
                guard let object = objects[key] else { return ObjectHead(status: 404, headers: HTTPHeaders()) }
                if skipRule == .size {
                    return ObjectHead(status: 200, headers: HTTPHeaders([("Content-Length", String(object.size)), ("ETag", "\"\(object.etag)\"")]))
                }
            }
        }
        sentHEAD?()
        return try await client.head(key: key, checksumMode: checksumMode, deadline: deadline, action: action)
    }

    /// Every object under the target's prefix, by key, listed 16 prefixes at a time; no objects
    /// (and a line saying why) when the store refuses the listing (``isRefusal(_:)``), so that the
    /// group asks with a `HEAD` per file as it would with `listTarget: false`.
    private static func listing(of target: S3Target, client: S3Client, timeout: Duration) async throws -> S3TargetListings.Listing {
        let started = ContinuousClock.now
        let listing = S3Listing(client: client, timeout: min(timeout, .seconds(60)), keeps: { _, _ in true }, skipsFolder: { _ in false })
        let url = target.objectURI(key: target.keyPrefix)
        let result: S3Listing.Result
        do {
            result = try await listing.list(prefix: target.keyPrefix, recursive: true, concurrency: 16)
        } catch let error as FlowStandardOpError where isRefusal(error) {
            let answer = error.message.range(of: "HTTP ").map { String(error.message[$0.lowerBound...]) } ?? error.message
            return (nil, "skipExisting: the store refused to list \(url) (\(answer)); asking with a HEAD per file instead."
                + " The key may lack s3:ListBucket; set listTarget: false to skip the listing")
        }
        let line = "skipExisting: listed \(result.objects.count) objects under \(url) in \(result.requests) request"
            + (result.requests == 1 ? "" : "s") + String(format: ", %.1f s", (ContinuousClock.now - started).seconds)
            + " (once for this worker's files of the group, instead of a HEAD per file)"
        return (Dictionary(result.objects.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last }), line)
    }

    /// Whether a failed listing was refused for good: HTTP 403 (no `s3:ListBucket`), 405 or 501 (a
    /// store or gateway without `ListObjectsV2`). Anything else (a timeout, a 503 after its retries)
    /// fails the task, which may be tried again.
    static func isRefusal(_ error: FlowStandardOpError) -> Bool {
        [403, 405, 501].contains(error.status ?? 0)
    }
}
