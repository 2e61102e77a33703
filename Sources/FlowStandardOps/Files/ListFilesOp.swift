#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Flow
import Foundation

/// Lists a folder's regular files, or with `recursive: true` a folder tree's: a serial step that
/// feeds a group (`ListFilesOp` then a group of `UploadFileOp` over its output). Not meant for
/// groups: it has no primary input or output.
///
/// Parameters:
/// - `path` (string, required): the folder; a relative path is taken from the current directory.
/// - `glob` (string, optional): keeps only names matching this `fnmatch(3)` pattern (`*`, `?`,
///   `[abc]`), for example `"*.jpg"`.
/// - `output` (string, optional, default `files`): the bucket key the list is put under.
/// - `recursive` (bool, default false): lists the subfolders too, at any depth.
/// - `include`, `exclude` (a glob or a list of globs, optional): matched against each file's path
///   relative to `path` (`PathGlob`: `*` and `?` stay within a folder, `**` crosses folders,
///   `[abc]` classes; a pattern without `/` matches the file name at any depth, as rclone's do). A
///   file is listed when it matches some `include` (all do when there is none) and no `exclude`;
///   a folder an `exclude` ending in `/**` leaves out whole is not entered.
/// - `minSize`, `maxSize` (bytes, or text such as `512KiB`, `10MiB`, `1GiB`, `5MB`; optional):
///   inclusive size limits.
/// - `newerThan` (optional): a duration before the listing (`30m`, `24h`, `7d`, `1h30m`) or a
///   date (`2026-01-31`, `2026-01-31T08:00:00Z`): only files modified after it are listed.
/// - `followLinks` (bool): whether symbolic links are followed. With `recursive` the default is
///   false: links are skipped, as `rclone copy` does without `--links`/`-L`, and counted in the log
///   line; true follows links to files and folders, and a link back into a folder being listed is
///   skipped, named in a log line. Without `recursive` the default is true: links to files count,
///   as they always have.
///
/// Output, without `recursive`: the sorted absolute paths of the folder's regular files (folders
/// are left out). Hidden files (names starting with `.`) are left out unless the glob itself starts
/// with `.`.
///
/// Output, with `recursive`: one map per file, `{"name": "2026/01/a.jpg", "path":
/// "/abs/photos/2026/01/a.jpg"}`, sorted by `name`, the path relative to `path`. `UploadFileOp`
/// (and `HashFileOp`) take such a map as their element and upload the file under its `name`, so a
/// tree uploads as a tree. Hidden files are listed, as rclone lists them; empty folders give
/// nothing. A subfolder that cannot be listed is named in a log line
/// (`cannot list folder /abs/photos/private: Permission denied; listed the rest`) and the rest is
/// listed.
///
/// - `pageSize` (integer 1–1000, default 1000): files handed to the group that reads the list at a
///   time (below).
///
/// Followed by a group whose `input` is its `output` key, in the coordinator's process, it lists a
/// page of `pageSize` files at a time into that group (`FlowOperation.emit(_:to:)`), which starts on
/// the second page: the order is then the walk's (folders depth first, each sorted), and the list
/// never sits whole in the bucket. Each page goes with its first file's path: a run resumed after
/// it was cut off goes on walking from the page its journal names, passing the folders before it
/// unread.
///
/// An empty folder gives an empty list. A missing or unreadable folder (`path` itself) fails the
/// op with an error naming the folder.
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class ListFilesOp: FlowOperation, @unchecked Sendable {
    /// It only lists: a dry run runs it.
    public override var dryRunRole: FlowDryRunRole { .readsOnly }

    /// The folder to list.
    public let path: String
    /// The `fnmatch(3)` pattern names must match, or `nil` for all.
    public let glob: String?
    /// The bucket key the paths are put under.
    public let outputKey: String
    /// Whether subfolders are listed too.
    public let recursive: Bool
    /// Whether symbolic links are followed, `nil` for the default (true without `recursive`,
    /// false with it).
    public let followLinks: Bool?
    /// Files handed to the group that reads the list at a time (1,000).
    public let pageSize: Int
    /// The filter parameters as given (`include`, `exclude`, `minSize`, `maxSize`, `newerThan`).
    private let filterParameters: [String: FlowValue]
    /// The filter they make.
    private let filter: FileFilter

    /// Creates the op.
    ///
    /// - Parameters:
    ///   - path: the folder.
    ///   - glob: an `fnmatch(3)` pattern, or `nil` for every file.
    ///   - outputKey: the bucket key for the list.
    public init(path: String, glob: String? = nil, outputKey: String = "files") {
        self.path = path
        self.glob = glob
        self.outputKey = outputKey
        recursive = false
        followLinks = nil
        pageSize = Self.pageSize
        filterParameters = [:]
        filter = FileFilter()
    }

    private init(path: String, glob: String?, outputKey: String, recursive: Bool, followLinks: Bool?, pageSize: Int,
                 filterParameters: [String: FlowValue], filter: FileFilter) {
        self.path = path
        self.glob = glob
        self.outputKey = outputKey
        self.recursive = recursive
        self.followLinks = followLinks
        self.pageSize = pageSize
        self.filterParameters = filterParameters
        self.filter = filter
    }

    /// Builds the op from `with:` parameters.
    ///
    /// - Throws: `FlowParameterError` when `path` is missing, a parameter has the wrong type, or
    ///   a glob, size or age cannot be read.
    public convenience init(parameters: FlowParameters) throws {
        let output = try parameters.string("output", default: "files")
        guard !output.isEmpty else { throw parameters.error("output", "must not be empty") }
        let followLinks = try parameters["followLinks"].map { _ in try parameters.bool("followLinks") }
        var given: [String: FlowValue] = [:]
        for name in FileFilter.parameterNames { given[name] = parameters[name] }
        let pageSize = try parameters.integer("pageSize", default: Self.pageSize)
        guard (1...Self.pageSize).contains(pageSize) else { throw parameters.error("pageSize", "must be 1 to \(Self.pageSize), not \(pageSize)") }
        self.init(path: try parameters.string("path"), glob: try parameters.optionalString("glob"), outputKey: output,
                  recursive: try parameters.bool("recursive", default: false), followLinks: followLinks, pageSize: pageSize,
                  filterParameters: given,
                  filter: try FileFilter(parameters: parameters))
    }

    public override func mainLogic() {
        if hasPageReader(for: outputKey) {
            startWithAsynchronous()
            Task { await listInPages() }
            return
        }
        do {
            let folder = Self.absolute(path)
            let listing = try FolderListing(folder: folder, options: options)
            logProblems(of: listing)
            log(message: summaryLine(of: listing, folder: folder))
            if recursive {
                setData(name: outputKey, value: listing.entries.map { ["name": $0.relativePath, "path": $0.path] })
            } else {
                setData(name: outputKey, value: listing.entries.map(\.path))
            }
            finishSuccessfully()
        } catch {
            log(message: String(describing: error))
            finishWithError(error: error)
        }
    }

    /// Files listed at a time when a group takes them as they come.
    static let pageSize = 1_000

    /// Lists the folder a page of 1,000 files at a time, each handed to the group that reads
    /// them as it comes (`FlowOperation.emit(_:to:)`): the group's first upload starts while
    /// the tree is still being walked. The order is the walk's (folders depth first, each sorted),
    /// the same every time, so a resumed run's group finds each element where it was.
    private func listInPages() async {
        let folder = Self.absolute(path)
        do {
            var listing = try FolderListing(walking: folder, options: options)
            if case .map(let fields)? = resumedPosition(for: outputKey), case .string(let from)? = fields["path"] {
                log(message: "listing \(folder) goes on where the run's earlier life left it (from \(from))")
                listing = try await BlockingWork.run { [listing] in
                    var listing = listing
                    try listing.skip(to: from)
                    return listing
                }
            }
            var count = 0
            while true {
                // The walk is blocking file-system work: off the cooperative threads.
                let (next, walked) = try await BlockingWork.run { [listing, pageSize] in
                    var listing = listing
                    return (try listing.nextPage(limit: pageSize), listing)
                }
                listing = walked
                if next.isEmpty { break }
                count += next.count
                let page: [Any] = recursive ? next.map { ["name": $0.relativePath, "path": $0.path] } : next.map(\.path)
                // Where the listing stood before the page: its first file, which a resumed
                // run's walk goes on from (FolderListing.skip(to:)).
                try await emit(page, to: outputKey, from: .map(["path": .string(next[0].relativePath)]))
            }
            logProblems(of: listing)
            log(message: summaryLine(of: listing, folder: folder, count: count))
            // Nothing emitted: the group reads an empty list from the bucket, as without pages.
            if count == 0 { setData(name: outputKey, value: [Any]()) }
            finishSuccessfully()
        } catch {
            log(message: String(describing: error))
            finishWithError(error: error)
        }
    }

    /// A line for each subfolder that could not be listed and each link loop.
    private func logProblems(of listing: FolderListing) {
        for unreadable in listing.unreadableFolders {
            log(message: "cannot list folder \(unreadable); listed the rest")
        }
        for loop in listing.loops {
            log(message: "skipped the link \(loop): it leads back into a folder being listed (a loop)")
        }
    }

    /// `listed 1200 files in /srv/photos and its 12 subfolders (3 left out by the filters)`.
    private func summaryLine(of listing: FolderListing, folder: String, count: Int? = nil) -> String {
        var line = "listed \(count ?? listing.entries.count) files in \(folder)" + (glob.map { " matching \($0)" } ?? "")
        if recursive { line += " and its \(listing.folderCount) subfolders" }
        var notes: [String] = []
        if listing.filteredOut > 0 { notes.append("\(listing.filteredOut) left out by the filters") }
        if listing.skippedLinks > 0 {
            notes.append("\(listing.skippedLinks) symbolic link\(listing.skippedLinks == 1 ? "" : "s") skipped (followLinks: true follows them)")
        }
        if !listing.unreadableFolders.isEmpty { notes.append("\(listing.unreadableFolders.count) subfolders unreadable") }
        if !notes.isEmpty { line += " (" + notes.joined(separator: ", ") + ")" }
        return line
    }

    /// How the folder is walked.
    var options: FolderListing.Options {
        var options = FolderListing.Options()
        options.recursive = recursive
        options.followLinks = followLinks ?? !recursive
        options.skipsHidden = !recursive && !(glob?.hasPrefix(".") ?? false)
        options.namePattern = glob
        options.filter = filter
        return options
    }

    /// `path` made absolute against the current directory, without `.`, `..` or a trailing `/`.
    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

extension ListFilesOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] {
        var parameters: [String: FlowValue] = ["path": .string(path), "output": .string(outputKey)]
        if let glob { parameters["glob"] = .string(glob) }
        if recursive { parameters["recursive"] = .bool(true) }
        if let followLinks { parameters["followLinks"] = .bool(followLinks) }
        parameters.merge(filterParameters) { given, _ in given }
        return parameters
    }
}
