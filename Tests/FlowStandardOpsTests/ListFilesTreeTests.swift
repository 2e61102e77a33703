#if canImport(Glibc)
import Glibc
#endif
import Flow
@testable import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

@Suite("ListFilesOp on folder trees")
struct ListFilesTreeTests {
    // MARK: - The glob matcher

    @Test(arguments: [
        // pattern, path, matches
        ("*.jpg", "a.jpg", true),
        ("*.jpg", "2026/01/a.jpg", true), // no '/': the name at any depth
        ("*.jpg", "a.jpeg", false),
        ("/*.jpg", "a.jpg", true), // a leading '/' anchors at the listed folder
        ("/*.jpg", "2026/a.jpg", false),
        ("2026/*.jpg", "2026/a.jpg", true),
        ("2026/*.jpg", "2026/01/a.jpg", false), // '*' does not cross '/'
        ("2026/**", "2026/01/a.jpg", true),
        ("2026/**", "2027/a.jpg", false),
        ("**/01/*", "2026/01/a.jpg", true),
        ("**/01/*", "01/a.jpg", true), // '**/' also matches no folder
        ("a/**/b.txt", "a/b.txt", true),
        ("a/**/b.txt", "a/x/y/b.txt", true),
        ("a/**/b.txt", "ab.txt", false),
        ("x/**.txt", "x/1/2.txt", true),
        ("photo-?.jpg", "photo-1.jpg", true),
        ("photo-?.jpg", "photo-12.jpg", false),
        ("d?r/f", "d/r/f", false), // '?' does not match '/'
        ("??.txt", "é1.txt", true), // one character, not one byte
        ("[ab]*.txt", "b.txt", true),
        ("[ab]*.txt", "c.txt", false),
        ("[!ab]*.txt", "c.txt", true),
        ("[^ab]*.txt", "a.txt", false),
        ("file[0-9].log", "file7.log", true),
        ("file[0-9].log", "fileX.log", false),
        ("\\*.txt", "*.txt", true),
        ("\\*.txt", "a.txt", false),
        ("a b/*", "a b/c d.txt", true),
        ("*", ".hidden", true),
    ])
    func globMatchesRelativePaths(pattern: String, path: String, matches: Bool) throws {
        #expect(try PathGlob(pattern).matches(path) == matches, "\(pattern) on \(path)")
    }

    @Test func badGlobsAreRefusedNamingThePattern() {
        #expect(throws: PathGlobError.self) { try PathGlob("[abc") }
        #expect(throws: PathGlobError.self) { try PathGlob("") }
        #expect(throws: PathGlobError.self) { try PathGlob("[z-a]") }
        #expect((try? PathGlob("[abc")) == nil)
        do {
            _ = try PathGlob("photos/[abc")
        } catch {
            #expect(String(describing: error) == "the pattern 'photos/[abc' cannot be used: its '[' has no closing ']'")
        }
    }

    // MARK: - Sizes and ages

    @Test func sizesReadBytesAndUnits() {
        #expect(FileFilter.byteCount(.integer(1500)) == 1500)
        #expect(FileFilter.byteCount(.string("1500")) == 1500)
        #expect(FileFilter.byteCount(.string("0")) == 0)
        #expect(FileFilter.byteCount(.string("512KiB")) == 524_288)
        #expect(FileFilter.byteCount(.string("10 MiB")) == 10 << 20)
        #expect(FileFilter.byteCount(.string("1.5GiB")) == 3 << 29)
        #expect(FileFilter.byteCount(.string("2kb")) == 2000)
        #expect(FileFilter.byteCount(.string("5MB")) == 5_000_000)
        #expect(FileFilter.byteCount(.string("1GB")) == 1_000_000_000)
        #expect(FileFilter.byteCount(.string("100B")) == 100)
        for bad in ["", "MiB", "ten MiB", "-5", "5 XB", "1e3"] {
            #expect(FileFilter.byteCount(.string(bad)) == nil, "\(bad)")
        }
        #expect(FileFilter.byteCount(.integer(-1)) == nil)
        #expect(FileFilter.byteCount(.bool(true)) == nil)
    }

    @Test func agesReadDurationsAndDates() {
        #expect(FileFilter.age(.string("24h")) == .within(seconds: 86_400))
        #expect(FileFilter.age(.string("30m")) == .within(seconds: 1_800))
        #expect(FileFilter.age(.string("7d")) == .within(seconds: 604_800))
        #expect(FileFilter.age(.string("2w")) == .within(seconds: 1_209_600))
        #expect(FileFilter.age(.string("1h30m")) == .within(seconds: 5_400))
        #expect(FileFilter.age(.string("90s")) == .within(seconds: 90))
        #expect(FileFilter.age(.integer(60)) == .within(seconds: 60))
        #expect(FileFilter.age(.string("2026-01-31")) == .after(Date(timeIntervalSince1970: 1_769_817_600)))
        #expect(FileFilter.age(.string("2026-01-31T08:00:00Z")) == .after(Date(timeIntervalSince1970: 1_769_846_400)))
        #expect(FileFilter.age(.string("2026-01-31T09:00:00+01:00")) == .after(Date(timeIntervalSince1970: 1_769_846_400)))
        for bad in ["", "h", "24x", "24h5", "yesterday", "2026-13-45", "31/01/2026"] {
            #expect(FileFilter.age(.string(bad)) == nil, "\(bad)")
        }
        #expect(FileFilter.Age.within(seconds: 60).cutoff(now: Date(timeIntervalSince1970: 1000)) == Date(timeIntervalSince1970: 940))
    }

    @Test func badFilterParametersFailNamingTheParameter() async throws {
        let folder = try TemporaryDirectory()
        for (key, value, message) in [
            ("minSize", FlowValue.string("ten"), "must be a number of bytes or a size like 512KiB"),
            ("newerThan", .string("yesterday"), "must be a duration like 30m, 24h, 7d"),
            ("include", .array([.string("a[b")]), "the pattern 'a[b' cannot be used"),
        ] {
            #expect(throws: FlowParameterError.self) {
                try FlowOperationRegistry.standard.makeOperation(named: "ListFilesOp", parameters: ["path": .string(folder.path), key: value])
            }
            do {
                _ = try FlowOperationRegistry.standard.makeOperation(named: "ListFilesOp", parameters: ["path": .string(folder.path), key: value])
            } catch {
                #expect(String(describing: error).contains("'\(key)' \(message)"), "\(error)")
            }
        }
        #expect(throws: FlowParameterError.self) {
            try FlowOperationRegistry.standard.makeOperation(named: "ListFilesOp", parameters: [
                "path": .string(folder.path), "minSize": "2MiB", "maxSize": "1MiB",
            ])
        }
    }

    // MARK: - Listing a tree

    /// A tree with nested folders, spaces, unicode, hidden files, an empty folder, a link to a
    /// file, a link to a folder and a link back up to the top, under `tree/`.
    private static func makeTree() throws -> (TemporaryDirectory, URL) {
        let scratch = try TemporaryDirectory()
        let tree = try scratch.folder("tree")
        let files: [(String, Int)] = [
            ("top.txt", 10), (".hidden", 3), ("2026/01/a.jpg", 2000), ("2026/02/a.jpg", 3000), ("2026/02/.b.jpg", 5),
            ("with space/b c+d#e?.txt", 700), ("unicodé/日本.txt", 1100), ("deep/x/y/z.bin", 4096),
        ]
        for (name, size) in files {
            let url = tree.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ name.utf8.count) }).write(to: url)
        }
        try FileManager.default.createDirectory(at: tree.appendingPathComponent("empty/inner"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: tree.appendingPathComponent("link-to-file").path, withDestinationPath: "top.txt")
        try FileManager.default.createSymbolicLink(atPath: tree.appendingPathComponent("link-to-folder").path, withDestinationPath: "2026/01")
        try FileManager.default.createSymbolicLink(atPath: tree.appendingPathComponent("deep/x/up").path, withDestinationPath: "../..")
        return (scratch, tree)
    }

    /// The names every recursive listing of the tree holds without filters (links not followed).
    private static let treeNames = [
        ".hidden", "2026/01/a.jpg", "2026/02/.b.jpg", "2026/02/a.jpg", "deep/x/y/z.bin", "top.txt", "unicodé/日本.txt",
        "with space/b c+d#e?.txt",
    ]

    /// The `name`s of a recursive listing, checking that each `path` is the tree's path joined
    /// with it.
    private static func names(_ value: Any?, in tree: URL) -> [String]? {
        guard let elements = value as? [[String: String]] else { return nil }
        return elements.map { element in
            let name = element["name"] ?? "?"
            #expect(element["path"] == tree.path + "/" + name)
            return name
        }
    }

    @Test func recursiveListingHoldsEveryFileWithItsRelativeNameSortedAndSkipsLinks() async throws {
        let (scratch, tree) = try Self.makeTree()
        defer { scratch.remove() }
        let flow = await runFlow(steps: [step("ListFilesOp", ["path": .string(tree.path + "/"), "recursive": true])])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(Self.names(flow.dataBucket["files"], in: tree) == Self.treeNames)
        #expect(flow.lines.contains(
            "[ListFilesOp] listed 8 files in \(tree.path) and its 10 subfolders (3 symbolic links skipped (followLinks: true follows them))"),
            "\(flow.lines)")
    }

    @Test func followLinksListsWhatLinksLeadToAndStopsAtALoop() async throws {
        let (scratch, tree) = try Self.makeTree()
        defer { scratch.remove() }
        let flow = await runFlow(steps: [step("ListFilesOp", ["path": .string(tree.path), "recursive": true, "followLinks": true])])

        #expect(flow.isSuccess, "\(flow.errorText)")
        let expected = (Self.treeNames + ["link-to-file", "link-to-folder/a.jpg"]).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(Self.names(flow.dataBucket["files"], in: tree) == expected)
        #expect(flow.lines.contains("[ListFilesOp] skipped the link \(tree.path)/deep/x/up: it leads back into a folder being listed (a loop)"))
    }

    @Test func includeAndExcludeMatchRelativePathsAndExcludeWins() async throws {
        let (scratch, tree) = try Self.makeTree()
        defer { scratch.remove() }
        let base: [String: FlowValue] = ["path": .string(tree.path), "recursive": true]
        func with(_ extra: [String: FlowValue], output: String) -> FlowStep {
            step("ListFilesOp", base.merging(extra) { $1 }.merging(["output": .string(output)]) { $1 })
        }
        let flow = await runFlow(steps: [
            with(["include": .array(["*.jpg"])], output: "jpegs"),
            with(["include": .array(["*.jpg"]), "exclude": .array(["2026/02/**"])], output: "january"),
            with(["include": "2026/**", "exclude": .array([".*"])], output: "visible2026"),
            with(["exclude": .array(["**/*.jpg", "/*.txt", "deep/**"])], output: "rest"),
            with(["include": .array(["[tu]*/**", "top.*"])], output: "classes"),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(Self.names(flow.dataBucket["jpegs"], in: tree) == ["2026/01/a.jpg", "2026/02/.b.jpg", "2026/02/a.jpg"])
        #expect(Self.names(flow.dataBucket["january"], in: tree) == ["2026/01/a.jpg"])
        #expect(Self.names(flow.dataBucket["visible2026"], in: tree) == ["2026/01/a.jpg", "2026/02/a.jpg"])
        #expect(Self.names(flow.dataBucket["rest"], in: tree) == [".hidden", "unicodé/日本.txt", "with space/b c+d#e?.txt"])
        #expect(Self.names(flow.dataBucket["classes"], in: tree) == ["top.txt", "unicodé/日本.txt"])
        // `2026/02/**` leaves that folder out whole: it is not entered, its files not counted.
        #expect(flow.lines.contains { $0.hasPrefix("[ListFilesOp] listed 1 files in \(tree.path) and its 9 subfolders (5 left out by the filters") })
    }

    @Test func sizeAndAgeLimitsChooseFiles() async throws {
        let (scratch, tree) = try Self.makeTree()
        defer { scratch.remove() }
        // Two files last changed ten days ago.
        let tenDaysAgo = Date().addingTimeInterval(-10 * 86_400)
        for name in ["2026/01/a.jpg", "top.txt"] {
            try FileManager.default.setAttributes([.modificationDate: tenDaysAgo], ofItemAtPath: tree.appendingPathComponent(name).path)
        }
        let base: [String: FlowValue] = ["path": .string(tree.path), "recursive": true]
        func with(_ extra: [String: FlowValue], output: String) -> FlowStep {
            step("ListFilesOp", base.merging(extra) { $1 }.merging(["output": .string(output)]) { $1 })
        }
        let flow = await runFlow(steps: [
            with(["minSize": "1KiB"], output: "big"),
            with(["minSize": .integer(700), "maxSize": "2000B"], output: "middle"),
            with(["maxSize": "1KB"], output: "small"),
            with(["newerThan": "7d"], output: "recent"),
            with(["newerThan": "2000-01-01"], output: "sinceY2K"),
            with(["newerThan": "2999-01-01T00:00:00Z"], output: "future"),
            with(["newerThan": "7d", "minSize": "1 KiB"], output: "recentBig"),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(Self.names(flow.dataBucket["big"], in: tree) == ["2026/01/a.jpg", "2026/02/a.jpg", "deep/x/y/z.bin", "unicodé/日本.txt"])
        #expect(Self.names(flow.dataBucket["middle"], in: tree) == ["2026/01/a.jpg", "unicodé/日本.txt", "with space/b c+d#e?.txt"])
        #expect(Self.names(flow.dataBucket["small"], in: tree) == [".hidden", "2026/02/.b.jpg", "top.txt", "with space/b c+d#e?.txt"])
        #expect(Self.names(flow.dataBucket["recent"], in: tree) == Self.treeNames.filter { !["2026/01/a.jpg", "top.txt"].contains($0) })
        #expect(Self.names(flow.dataBucket["sinceY2K"], in: tree) == Self.treeNames)
        #expect(Self.names(flow.dataBucket["future"], in: tree) == [])
        #expect(Self.names(flow.dataBucket["recentBig"], in: tree) == ["2026/02/a.jpg", "deep/x/y/z.bin", "unicodé/日本.txt"])
    }

    @Test func aOneFolderListingKeepsItsAbsolutePathsAndTakesTheFilters() async throws {
        let (scratch, tree) = try Self.makeTree()
        defer { scratch.remove() }
        let flow = await runFlow(steps: [
            step("ListFilesOp", ["path": .string(tree.path)]),
            step("ListFilesOp", ["path": .string(tree.path), "exclude": .array(["top.*"]), "output": "excluded"]),
            step("ListFilesOp", ["path": .string(tree.path), "followLinks": false, "output": "noLinks"]),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        // As before: absolute paths, hidden files out, a link to a file counted, no subfolders.
        #expect(flow.dataBucket["files"] as? [String] == ["link-to-file", "top.txt"].map { tree.path + "/" + $0 })
        #expect(flow.dataBucket["excluded"] as? [String] == [tree.path + "/link-to-file"])
        #expect(flow.dataBucket["noLinks"] as? [String] == [tree.path + "/top.txt"])
    }

    /// A folder this process may not open is named and the rest listed. Root reads a `chmod 000`
    /// folder all the same, so that case is checked only when the folder really is unreadable;
    /// a folder whose path is longer than `PATH_MAX` cannot be opened by root either, and is
    /// checked always.
    @Test func unreadableSubfoldersAreNamedAndTheRestListed() async throws {
        let (scratch, tree) = try Self.makeTree()
        defer { scratch.remove() }
        let locked = try scratch.folder("tree/locked")
        try Data("secret".utf8).write(to: locked.appendingPathComponent("secret.txt"))
        chmod(locked.path, 0)
        defer { chmod(locked.path, 0o755) }
        let lockedForUs = opendir(locked.path).map { closedir($0); return false } ?? true
        let segment = String(repeating: "d", count: 200)
        let depth = 4200 / (segment.count + 1) + 1
        try Self.makeChain(in: tree.appendingPathComponent("long").path, segment: segment, depth: depth)
        defer { Self.removeChain(in: tree.appendingPathComponent("long").path, segment: segment) }

        let flow = await runFlow(steps: [step("ListFilesOp", ["path": .string(tree.path), "recursive": true])])

        #expect(flow.isSuccess, "\(flow.errorText)")
        let names = Self.names(flow.dataBucket["files"], in: tree) ?? []
        let shallow = (1...3).map { level in "long/" + Array(repeating: segment, count: level).joined(separator: "/") + "/here.txt" }
        #expect(names == (Self.treeNames + shallow + (lockedForUs ? [] : ["locked/secret.txt"]))
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(!names.contains { $0.hasSuffix("/lost.txt") })
        let tooLong = flow.lines.filter { $0.hasPrefix("[ListFilesOp] cannot list folder \(tree.path)/long/\(segment)/") }
        #expect(tooLong.count == 1, "\(flow.lines)")
        #expect(tooLong.first?.hasSuffix(": File name too long; listed the rest") == true)
        if lockedForUs {
            #expect(flow.lines.contains("[ListFilesOp] cannot list folder \(locked.path): Permission denied; listed the rest"))
        }
        #expect(flow.lines.contains { $0.hasPrefix("[ListFilesOp] listed ") && $0.hasSuffix(", \(lockedForUs ? 2 : 1) subfolders unreadable)") })

        // A folder excluded whole (`long/**`, `**/locked/**`) is not entered, so not reported.
        let pruned = await runFlow(steps: [
            step("ListFilesOp", ["path": .string(tree.path), "recursive": true, "exclude": .array(["long/**", "**/locked/**"])]),
        ])
        #expect(pruned.isSuccess, "\(pruned.errorText)")
        #expect(Self.names(pruned.dataBucket["files"], in: tree) == Self.treeNames)
        #expect(!pruned.lines.contains { $0.contains("cannot list folder") }, "\(pruned.lines)")
    }

    @Test func anUnreadableTopFolderIsStillAnError() async throws {
        let missing = "/nonexistent-\(UUID().uuidString)"
        let flow = await runFlow(steps: [step("ListFilesOp", ["path": .string(missing), "recursive": true])])

        #expect(!flow.isSuccess)
        #expect(flow.errorText == "cannot list folder \(missing): No such file or directory")
    }

    /// `depth` nested folders named `segment` in `base`, made relative to each other (their full
    /// path grows past `PATH_MAX`), with `here.txt` in the first three and `lost.txt` in the last.
    private static func makeChain(in base: String, segment: String, depth: Int) throws {
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        var folder = open(base, O_RDONLY | O_DIRECTORY)
        guard folder >= 0 else { throw TestSupportError("cannot open \(base)") }
        for level in 1...depth {
            guard mkdirat(folder, segment, 0o755) == 0 || errno == EEXIST else { throw TestSupportError("mkdirat failed at \(level)") }
            let next = openat(folder, segment, O_RDONLY | O_DIRECTORY)
            close(folder)
            guard next >= 0 else { throw TestSupportError("openat failed at \(level)") }
            folder = next
            let name = level <= 3 ? "here.txt" : level == depth ? "lost.txt" : nil
            if let name {
                let file = openat(folder, name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                _ = write(file, "x", 1)
                close(file)
            }
        }
        close(folder)
    }

    /// Removes what ``makeChain(in:segment:depth:)`` made, folder by folder relative to the last.
    private static func removeChain(in base: String, segment: String) {
        func remove(in parent: Int32, _ name: String) {
            let folder = openat(parent, name, O_RDONLY | O_DIRECTORY)
            guard folder >= 0 else { return }
            for file in ["here.txt", "lost.txt"] { unlinkat(folder, file, 0) }
            remove(in: folder, segment)
            close(folder)
            unlinkat(parent, name, AT_REMOVEDIR)
        }
        let top = open(base, O_RDONLY | O_DIRECTORY)
        guard top >= 0 else { return }
        remove(in: top, segment)
        close(top)
    }
}
