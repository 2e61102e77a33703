#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The files of a folder (and with ``Options/recursive`` of its subfolders) that pass a
/// ``FileFilter``: what `ListFilesOp` lists, with what it could not list.
///
/// Listed whole (``init(folder:options:)``, sorted) or a page at a time (``init(walking:options:)``
/// and ``nextPage(limit:)``): folders depth first, each folder's names sorted, so that the order is
/// the same every time (a folder `a`'s files come before `a.txt` there, where the whole listing
/// sorts `a.txt` first).
struct FolderListing {
    /// How to walk.
    struct Options {
        /// Whether subfolders are entered.
        var recursive = false
        /// Whether symbolic links are followed (to files, and with `recursive` to folders).
        var followLinks = false
        /// Whether names starting with `.` are left out.
        var skipsHidden = false
        /// An `fnmatch(3)` pattern file names must match (`glob`), or `nil`.
        var namePattern: String?
        /// Which files are kept.
        var filter = FileFilter()
        /// The time the listing is made, for `newerThan` durations.
        var now = Date()
    }

    /// A file listed.
    struct Entry: Equatable {
        /// The path relative to the listed folder (`2026/01/a.jpg`).
        let relativePath: String
        /// The absolute path.
        let path: String
    }

    /// The listed folder, absolute.
    let folder: String
    /// The files kept, sorted by relative path (by bytes of UTF-8).
    private(set) var entries: [Entry] = []
    /// Subfolders that could not be listed, each with why (`/srv/a/b: Permission denied`).
    private(set) var unreadableFolders: [String] = []
    /// Links not followed, counted.
    private(set) var skippedLinks = 0
    /// Links to a folder that is already being listed above them, each with where it leads.
    private(set) var loops: [String] = []
    /// Subfolders entered, the listed folder not counted.
    private(set) var folderCount = 0
    /// Files found that a filter left out.
    private(set) var filteredOut = 0

    private let options: Options
    private let cutoff: Date?
    /// The folders being walked, the innermost last.
    private var stack: [Frame] = []
    /// The folders on the stack, to notice a link back into one of them.
    private var ancestors: Set<FileID> = []
    /// Files taken since the last page.
    private var page: [Entry] = []

    /// A folder being walked: its names, and how far the walk is.
    private struct Frame {
        let path: String
        let relative: String
        let names: [Name]
        var next = 0
        /// Its identity in ``ancestors``, removed when it is done.
        let id: FileID?
        /// Whether readdir's types tell files from the rest without an `lstat` each.
        let typesSuffice: Bool
    }

    /// Lists `folder` whole, sorted by relative path.
    ///
    /// - Throws: ``FlowStandardOpError/Code/unreadableFolder`` naming the folder when it cannot be
    ///   listed itself; subfolders that cannot be listed are recorded in ``unreadableFolders``.
    init(folder: String, options: Options) throws {
        try self.init(walking: folder, options: options)
        var all: [Entry] = []
        while true {
            let next = try nextPage(limit: .max)
            if next.isEmpty { break }
            all += next
        }
        // Folders are walked in name order, so the list is mostly sorted already (a folder `a`'s
        // files come before `a.txt`, which sorts first): sorted only when it is not.
        if !Self.isSorted(all) {
            all.sort { Self.precedes($0.relativePath, $1.relativePath) }
        }
        entries = all
    }

    /// Opens `folder` to list a page at a time (``nextPage(limit:)``); ``entries`` stays empty.
    ///
    /// - Throws: ``FlowStandardOpError/Code/unreadableFolder`` naming the folder when it cannot be
    ///   listed itself.
    init(walking folder: String, options: Options) throws {
        self.folder = folder
        self.options = options
        cutoff = options.filter.newerThan?.cutoff(now: options.now)
        var top = stat()
        let id = stat(folder, &top) == 0 ? FileID(top) : nil
        if let id { ancestors.insert(id) }
        try push(folder, relative: "", id: id)
    }

    /// The next files, at most `limit`, in walk order; empty once every folder is walked.
    mutating func nextPage(limit: Int) throws -> [Entry] {
        while page.count < limit, !stack.isEmpty {
            let top = stack.count - 1
            guard stack[top].next < stack[top].names.count else {
                if let id = stack.removeLast().id { ancestors.remove(id) }
                continue
            }
            let name = stack[top].names[stack[top].next]
            stack[top].next += 1
            try visit(name, in: stack[top])
        }
        defer { page = [] }
        return page
    }

    /// Goes on from the file at `relativePath` (where a resumed run's listing stood): the walk
    /// starts at the first name not before it, in walk order, without reading the folders before
    /// it. Each folder on the way is entered as the walk would enter it; one that is gone (or no
    /// longer a folder) is passed, and the walk goes on after it.
    mutating func skip(to relativePath: String) throws {
        let components = relativePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for (depth, component) in components.enumerated() {
            guard let top = stack.indices.last else { return }
            let names = stack[top].names
            var low = 0, high = names.count
            while low < high {
                let middle = (low + high) / 2
                if Self.precedes(names[middle].name, component) { low = middle + 1 } else { high = middle }
            }
            stack[top].next = low
            guard depth < components.count - 1, low < names.count, names[low].name == component else { return }
            // A folder on the way to the file: entered now, as the walk enters it.
            stack[top].next = low + 1
            let depthBefore = stack.count
            try visit(names[low], in: stack[top])
            guard stack.count > depthBefore else { return }
        }
    }

    /// Walks `path` next: its names read and sorted, on the stack.
    private mutating func push(_ path: String, relative: String, id: FileID?) throws {
        guard let names = try names(in: path, relative: relative) else {
            if let id { ancestors.remove(id) }
            return
        }
        // A regular file's status (one `lstat` each, most of a listing's time) is read only when a
        // size or age limit needs it: readdir's type says what it is. Where the folder may be read
        // but not searched (`lstat` of its files fails), every entry is still looked at.
        let typesSuffice = options.filter.minSize == nil && options.filter.maxSize == nil && cutoff == nil
            && faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0
        stack.append(Frame(path: path, relative: relative, names: names, id: id, typesSuffice: typesSuffice))
    }

    /// Whether `a` comes before `b` by the bytes of their UTF-8, as
    /// `a.utf8.lexicographicallyPrecedes(b.utf8)` says, with `memcmp` (a generic walk over
    /// `String.UTF8View` took most of a 100,000-file listing's sorts).
    static func precedes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { left in
            b.withUTF8 { right in
                let common = min(left.count, right.count)
                if common > 0, let l = left.baseAddress, let r = right.baseAddress {
                    let order = memcmp(l, r, common)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
    }

    private static func isSorted(_ entries: [Entry]) -> Bool {
        guard entries.count > 1 else { return true }
        for index in 1..<entries.count where precedes(entries[index].relativePath, entries[index - 1].relativePath) {
            return false
        }
        return true
    }

    /// A file or folder's identity, to notice a link that leads back into a folder being listed.
    private struct FileID: Hashable {
        let device: UInt64
        let inode: UInt64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// One name of the folder `frame` walks: a file taken, a folder pushed, anything else skipped.
    private mutating func visit(_ entry: Name, in frame: Frame) throws {
        let (name, type) = (entry.name, entry.type)
        if options.skipsHidden && name.hasPrefix(".") { return }
        let directoryPath = frame.path
        let path = directoryPath == "/" ? "/" + name : directoryPath + "/" + name
        let relativePath = frame.relative.isEmpty ? name : frame.relative + "/" + name
        let isFolder = type == UInt8(DT_DIR)
        // `lstat` fails for a path of PATH_MAX bytes or more, and such a file is not listed.
        if frame.typesSuffice, type == UInt8(DT_REG) || (type == UInt8(DT_LNK) && !options.followLinks), path.utf8.count < Int(PATH_MAX) {
            take(name: name, isLink: type == UInt8(DT_LNK), path: path, relativePath: relativePath, options: options)
            return
        }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            // Gone since it was read, or its path too long to open (ENAMETOOLONG): a folder
            // is named as one that could not be listed; anything else is no file to list.
            if isFolder && options.recursive { unreadableFolders.append(Self.failure(path)) }
            return
        }
        if (status.st_mode & S_IFMT) == S_IFLNK {
            guard options.followLinks else {
                skippedLinks += 1
                return
            }
            // A broken link, or one to something this process may not see, is no file.
            guard stat(path, &status) == 0 else { return }
        }
        switch status.st_mode & S_IFMT {
        case S_IFDIR where options.recursive:
            try descend(into: path, relative: relativePath, status: status)
        case S_IFREG:
            take(name: name, path: path, relativePath: relativePath, status: status, options: options, cutoff: cutoff)
        default:
            return
        }
    }

    /// A regular file or a link known by readdir's type alone (no size or age limit to check).
    private mutating func take(name: String, isLink: Bool, path: String, relativePath: String, options: Options) {
        if isLink {
            skippedLinks += 1
            return
        }
        if let pattern = options.namePattern, fnmatch(pattern, name, 0) != 0 { return }
        guard options.filter.isEmpty || options.filter.admits(relativePath: relativePath) else {
            filteredOut += 1
            return
        }
        page.append(Entry(relativePath: relativePath, path: path))
    }

    /// A regular file whose status was read: its name, path, size and age against the filters.
    private mutating func take(name: String, path: String, relativePath: String, status: stat, options: Options, cutoff: Date?) {
        if let pattern = options.namePattern, fnmatch(pattern, name, 0) != 0 { return }
        guard options.filter.isEmpty
            || (options.filter.admits(relativePath: relativePath)
                && options.filter.admits(size: Int64(status.st_size), modified: Self.modified(status), cutoff: cutoff))
        else {
            filteredOut += 1
            return
        }
        page.append(Entry(relativePath: relativePath, path: path))
    }

    /// Lists a subfolder, unless an exclude leaves it out whole (as rclone does not enter it) or
    /// it is one of its own ancestors (a link loop, named in `loops`).
    private mutating func descend(into path: String, relative relativePath: String, status: stat) throws {
        if options.filter.excludesAll(below: relativePath) { return }
        let id = FileID(status)
        guard !ancestors.contains(id) else {
            loops.append(path)
            return
        }
        ancestors.insert(id)
        folderCount += 1
        try push(path, relative: relativePath, id: id)
    }

    /// A failed call's path and `errno` as text.
    private static func failure(_ path: String) -> String { "\(path): \(String(cString: strerror(errno)))" }

    /// The names in a folder, sorted, each with its type as readdir gives it (`DT_DIR`, `DT_REG`,
    /// `DT_LNK`, `DT_UNKNOWN` where the file system does not say); `nil` when it cannot be
    /// opened. A folder that cannot be read fails the listing when it is the one listed, and is
    /// named in ``unreadableFolders`` when it is a subfolder.
    private mutating func names(in directoryPath: String, relative: String) throws -> [Name]? {
        guard let directory = opendir(directoryPath) else {
            if relative.isEmpty { throw FlowStandardOpError(.unreadableFolder, "cannot list folder \(Self.failure(directoryPath))") }
            unreadableFolders.append(Self.failure(directoryPath))
            return nil
        }
        var names: [Name] = []
        var readError: String?
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { readError = Self.failure(directoryPath) }
                break
            }
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            names.append(Name(name: name, type: entry.pointee.d_type))
        }
        closedir(directory)
        if let readError {
            if relative.isEmpty { throw FlowStandardOpError(.unreadableFolder, "cannot list folder \(readError)") }
            unreadableFolders.append(readError)
        }
        // Sorted, so that what the log names comes in the same order every time.
        names.sort { Self.precedes($0.name, $1.name) }
        return names
    }

    /// A name read from a folder and its type (a struct: sorting an array of tuples looked the
    /// tuple's type up at every comparison).
    private struct Name {
        let name: String
        let type: UInt8
    }

    /// A file's modification time.
    private static func modified(_ status: stat) -> Date {
        #if canImport(Darwin)
        let time = status.st_mtimespec
        #else
        let time = status.st_mtim
        #endif
        return Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }
}
