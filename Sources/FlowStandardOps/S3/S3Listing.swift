import Flow
import Foundation
import NIOCore
import NIOHTTP1

/// Lists what a bucket holds under a prefix with `ListObjectsV2`, for ``ListObjectsOp``.
///
/// Two ways:
/// - **One paginator** (`concurrency` 1, or not `recursive`): pages of up to 1,000 keys one after
///   the other, each asking for the next with the last one's token, as `aws s3 ls --recursive`
///   does. A store answers one page per round trip, so 10 million keys take 10,000 round trips in
///   a row.
/// - **Paginators in parallel** (`concurrency` above 1): the prefix is split into its folders
///   first. Its folders (the common prefixes of the delimiter `/`) are found level by level, each
///   level's folders listed at once, until there are at least `concurrency` of them (or 4 levels,
///   or none left); then each folder found is listed by a paginator of its own, without the
///   delimiter, `concurrency` at a time. The requests are the paginator's plus about one for each
///   folder split off: a tree of 200 folders of 1,000 keys lists in about 13 round trips where
///   one paginator takes 200, and a tree of 100,000 small folders costs no request per folder
///   below the split (a walk of every folder, as rclone makes without `--fast-list`, would).
struct S3Listing: Sendable {
    /// What the listing found.
    struct Result: Sendable {
        /// The objects kept, sorted by key.
        var objects: [S3ObjectEntry] = []
        /// Requests sent.
        var requests = 0
        /// Prefixes listed (1 for the paginator).
        var prefixes = 0
        /// Objects the filter left out.
        var filteredOut = 0
    }

    /// The largest answer read: 1,000 keys of S3's longest (1,024 bytes) with their XML.
    static let pageLimit = 4 << 20

    let client: S3Client
    /// The most one request may take.
    let timeout: Duration
    /// Keys per page asked for (`max-keys`): S3's most, 1,000, unless a test asks for fewer.
    var pageSize = 1000
    /// Whether an object is kept: its key relative to the listed prefix, its entry.
    let keeps: @Sendable (String, S3ObjectEntry) -> Bool
    /// Whether a subfolder (its path relative to the listed prefix, without the last `/`) is
    /// left out whole, not listed at all.
    let skipsFolder: @Sendable (String) -> Bool

    /// Lists `prefix`: every key below it when `recursive`, else only those not below a further
    /// `/`.
    ///
    /// - Throws: ``FlowStandardOpError`` naming the bucket and prefix when a request fails or its
    ///   answer cannot be read; cancellation.
    func list(prefix: String, recursive: Bool, concurrency: Int) async throws -> Result {
        var result: Result
        if recursive && concurrency > 1 {
            result = try await walk(prefix, concurrency: concurrency)
        } else {
            result = Result()
            result.prefixes = 1
            let folder = try await listAll(prefix, root: prefix, delimiter: recursive ? nil : "/")
            result.objects = folder.objects
            result.requests = folder.requests
            result.filteredOut = folder.filteredOut
        }
        result.objects.sort { $0.key < $1.key }
        return result
    }

    /// How many levels of folders are split off at most before the paginators start.
    static let splitLevels = 4

    /// The paginators in parallel: folders split off level by level until there are
    /// `concurrency`, then a paginator for each.
    private func walk(_ root: String, concurrency: Int) async throws -> Result {
        var result = Result()
        var frontier = [root]
        var level = 0
        while frontier.count < concurrency, level < Self.splitLevels {
            let folders = try await listEach(frontier, root: root, delimiter: "/", concurrency: concurrency, into: &result)
            frontier = folders.flatMap(\.subfolders).filter { !skipsFolder(Self.relative(String($0.dropLast()), to: root)) }
            level += 1
            if frontier.isEmpty { return result }
        }
        _ = try await listEach(frontier, root: root, delimiter: nil, concurrency: concurrency, into: &result)
        return result
    }

    /// Lists every page of each of `prefixes`, `concurrency` prefixes at once, and adds what was
    /// found to `result`.
    ///
    /// - Returns: what each prefix's listing found (its subfolders, with a delimiter).
    func listEach(_ prefixes: [String], root: String, delimiter: String?, concurrency: Int, into result: inout Result)
        async throws -> [Folder] {
        var folders: [Folder] = []
        try await withThrowingTaskGroup(of: Folder.self) { group in
            var waiting = prefixes[...]
            var running = 0
            while !waiting.isEmpty || running > 0 {
                while running < concurrency, let prefix = waiting.popFirst() {
                    group.addTask { try await listAll(prefix, root: root, delimiter: delimiter) }
                    running += 1
                }
                guard let folder = try await group.next() else { break }
                running -= 1
                folders.append(folder)
            }
        }
        for folder in folders {
            result.prefixes += 1
            result.requests += folder.requests
            result.filteredOut += folder.filteredOut
            result.objects += folder.objects
        }
        return folders
    }

    /// What listing one prefix, all its pages, found.
    struct Folder: Sendable {
        var objects: [S3ObjectEntry] = []
        var subfolders: [String] = []
        var requests = 0
        var filteredOut = 0
    }

    /// Lists every page of `prefix`, with `delimiter` or without, its kept objects collected.
    func listAll(_ prefix: String, root: String, delimiter: String?) async throws -> Folder {
        var objects: [S3ObjectEntry] = []
        var folder = try await listPages(prefix, root: root, delimiter: delimiter) { objects += $0.objects }
        folder.objects = objects
        return folder
    }

    /// One `ListObjectsV2` request.
    func page(_ prefix: String, delimiter: String?, continuation: String?) async throws -> S3ListPage {
        var query = [("list-type", "2"), ("prefix", prefix), ("encoding-type", "url")]
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let continuation { query.append(("continuation-token", continuation)) }
        if pageSize != 1000 { query.append(("max-keys", String(pageSize))) }
        let action = "listing \(client.target.objectURI(key: prefix)) failed"
        let deadline = NIODeadline.now() + .nanoseconds(Int64(timeout.seconds * 1e9))
        let answer = try await client.send(.GET, key: nil, query: query, body: .empty, deadline: deadline, action: action,
                                           keeping: Self.pageLimit)
        if let error = S3ErrorResponse.error(in: answer, action: action) { throw error }
        guard answer.excerpt.count < Self.pageLimit else {
            throw FlowStandardOpError(.s3, "\(action): the store's answer to one page is larger than \(Self.pageLimit >> 20) MiB")
        }
        return try S3ListPage(xml: answer.excerpt, action: action)
    }

    /// A key's path below the listed prefix: the prefix and a `/` after it taken off
    /// (`photos/2026/a.jpg` below `photos/` or `photos` is `2026/a.jpg`).
    static func relative(_ key: String, to root: String) -> String {
        var rest = Substring(key.hasPrefix(root) ? String(key.dropFirst(root.count)) : key)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        return String(rest)
    }
}
