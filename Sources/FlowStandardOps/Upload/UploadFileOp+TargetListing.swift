import Flow
import Foundation
import NIOCore
import NIOHTTP1

/// `skipExisting` by listing the target instead of asking for each file (issue 49 item 4), as
/// `rclone copy` lists its destination directory by directory: for a group of more than 1,000
/// elements to an S3 target, each worker lists each folder of the target its files go to, once
/// (``S3TargetListings``, 1,000 keys a request, `delimiter=/`), and answers each file's question
/// from its folder's listing. A file not listed is sent with no request before it; with
/// `skipExisting: size` (or `true`) a listed one is judged by the listed size. `modtime` and
/// `checksum` still send a `HEAD` for the files the listing has, since a listing carries neither
/// the stored time nor the stored checksum.
///
/// Folder by folder, so that a worker's memory does not grow with the target: it keeps the
/// listings of the folders it used last, up to 400,000 objects together (a tree's files come folder
/// by folder), and a folder of more than ``folderListingLimit`` objects is not kept at all: its
/// files are asked with a `HEAD` each.
/// Listing the whole prefix at once held every object of the target in each worker, a few hundred
/// MB for a million objects.
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

    /// The most objects one folder's listing may hold; a larger folder's files are asked with a
    /// `HEAD` each. A worker's kept listings hold at most ``S3TargetListings/heldObjects`` objects
    /// together (about 80 MB) whatever the target's size.
    static let folderListingLimit = 50_000

    /// The folder whose listing answers for `key`: the key up to its last `/`, never above the
    /// target's prefix (a prefix such as `logs/day-` lists the keys that start with it).
    static func listedFolder(of key: String, under prefix: String) -> String {
        guard let slash = key.lastIndex(of: "/") else { return prefix }
        let folder = String(key[...slash])
        return folder.count < prefix.count ? prefix : folder
    }

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

    /// The answer to `skipExisting`'s question for `key`: from the listing of its folder when the
    /// group lists its target (``targetListing``), else a `HEAD`.
    ///
    /// - Parameter sentHEAD: called when a `HEAD` is sent (a dry run counts it).
    func storedHead(key: String, client: S3Client, checksumMode: Bool, deadline: NIODeadline, action: String,
                    sentHEAD: (() -> Void)? = nil) async throws -> ObjectHead {
        if let name = targetListing, let target = s3Target {
            let timeout = self.timeout
            let folder = Self.listedFolder(of: key, under: target.keyPrefix)
            let (objects, line) = try await S3TargetListings.objects(named: name, folder: folder) {
                try await Self.listing(of: target, folder: folder, client: client, timeout: timeout)
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

    /// The objects directly in `folder` of the target, by key (`delimiter=/`); no objects, and a
    /// line saying why, when the store refuses the listing (``isRefusal(_:)``: the group then asks
    /// with a `HEAD` per file, as with `listTarget: false`) or the folder holds more than `limit`
    /// objects (its files are asked with a `HEAD` each; the listing stops there).
    static func listing(of target: S3Target, folder: String, client: S3Client, timeout: Duration,
                        limit: Int = folderListingLimit) async throws -> S3TargetListings.Listing {
        struct OverLimit: Error {}
        let started = ContinuousClock.now
        let listing = S3Listing(client: client, timeout: min(timeout, .seconds(60)), keeps: { _, _ in true }, skipsFolder: { _ in false })
        let url = target.objectURI(key: folder)
        var objects: S3TargetListings.Objects = [:]
        let listed: S3Listing.Folder
        do {
            listed = try await listing.listPages(folder, root: folder, delimiter: "/") { page in
                for object in page.objects { objects[object.key] = object }
                if objects.count > limit { throw OverLimit() }
            }
        } catch let error as FlowStandardOpError where isRefusal(error) {
            let answer = error.message.range(of: "HTTP ").map { String(error.message[$0.lowerBound...]) } ?? error.message
            return (nil, "skipExisting: the store refused to list \(url) (\(answer)); asking with a HEAD per file instead."
                + " The key may lack s3:ListBucket; set listTarget: false to skip the listing", true)
        } catch is OverLimit {
            return (nil, "skipExisting: \(url) holds more than \(limit) objects; asking with a HEAD per file in it"
                + " (a worker keeps no listing that large in memory)", false)
        }
        let line = "skipExisting: listed \(objects.count) objects under \(url) in \(listed.requests) request"
            + (listed.requests == 1 ? "" : "s") + String(format: ", %.1f s", (ContinuousClock.now - started).seconds)
            + " (once for this worker's files in that folder, instead of a HEAD per file)"
        return (objects, line, false)
    }

    /// Whether a failed listing was refused for good: HTTP 403 (no `s3:ListBucket`), 405 or 501 (a
    /// store or gateway without `ListObjectsV2`). Anything else (a timeout, a 503 after its retries)
    /// fails the task, which may be tried again.
    static func isRefusal(_ error: FlowStandardOpError) -> Bool {
        [403, 405, 501].contains(error.status ?? 0)
    }
}
