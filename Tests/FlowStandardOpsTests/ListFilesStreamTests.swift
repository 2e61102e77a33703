import Flow
@testable import FlowStandardOps
import Foundation
import Testing

/// `ListFilesOp` before a group that reads its output lists a page of 1,000 files at a time into
/// the group (issue 49): the group runs while the tree is still being walked, in the walk's order
/// (folders depth first, each sorted), every file once.
@Suite struct ListFilesStreamTests {
    /// A tree of `folders` folders of `files` empty files each (`d00/f0000` …), and its files in
    /// the walk's order.
    static func tree(folders: Int, files: Int) throws -> (root: String, walkOrder: [String]) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("flow-stream-\(UUID().uuidString)").path
        var order: [String] = []
        for folder in 0..<folders {
            let name = String(format: "d%02d", folder)
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            for file in 0..<files {
                let path = root + "/" + name + String(format: "/f%04d", file)
                FileManager.default.createFile(atPath: path, contents: nil)
                order.append(path)
            }
        }
        return (root, order)
    }

    /// The stock ops and `PathOp`, which puts out its element's `path`.
    static var registry: FlowOperationRegistry {
        var registry = FlowOperationRegistry.standard
        registry.register("PathOp", primaryInputParamKey: "file", primaryOutputParamKey: "path") { _ in
            FlowClosureOperation(name: "PathOp", primaryInputParamKey: "file", primaryOutputParamKey: "path") { op in
                let file: [String: Any] = try op.value("file")
                op.set("path", file["path"] as? String ?? "")
            }
        }
        return registry
    }

    @Test func aGroupAfterTheListingRunsWhileTheTreeIsWalked() async throws {
        // 12 pages: more than the 8 that may wait, so the listing cannot end before the group
        // has taken pages.
        let (root, order) = try Self.tree(folders: 12, files: 1_000)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let flow = Flow(definition: FlowDefinition(name: "tree", bucket: [:], steps: [
            .operation(FlowOperationStep(op: "ListFilesOp", parameters: ["path": .string(root), "recursive": true])),
            .group(FlowGroupStep(op: "PathOp", input: "files", output: "paths", maxConcurrent: 1)),
        ]), registry: Self.registry)
        await flow.run()
        #expect(flow.isSuccess, "\(flow.generateSummary().suffix(2000))")
        #expect((flow.dataBucket["paths"] as? [Any])?.compactMap { $0 as? String } == order)
        #expect(flow.dataBucket["files"] == nil, "the list went to the group, not into the bucket")
        let records = flow.operationRecords
        let listing = try #require(records.first { $0.operationName == "ListFilesOp" })
        let first = try #require(records.first { $0.groupIndex == 0 })
        // One at a time, the group had finished the first two pages' elements before the
        // listing could hand over its last page.
        #expect(first.finishedAt <= listing.finishedAt, "the group started after the listing ended")
        #expect(flow.generateSummary().contains("listed 12000 files in \(root) and its 12 subfolders"))
    }

    /// A resumed run's walk goes on from a file (issue 49): from any file of a tree whose names
    /// sort differently by path than by walk (`a/…` before `a.txt`, hidden files, deep folders),
    /// it gives exactly the files the whole walk gave from that one on; from a file whose folder is
    /// gone, it goes on after where that folder was.
    @Test func aWalkGoesOnFromAnyFileAsTheWholeWalkWouldHave() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("flow-skip-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let files = ["a.txt", "a/x", "a/b/y", "a/b/z", "a/c", ".hidden", "b", "b-c/d", "é/f", "zz/1/2/3/deep"]
        for file in files {
            let path = root + "/" + file
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: path, contents: nil)
        }
        var options = FolderListing.Options()
        options.recursive = true
        func walk(from start: String?) throws -> [String] {
            var listing = try FolderListing(walking: root, options: options)
            if let start { try listing.skip(to: start) }
            var walked: [String] = []
            while case let page = try listing.nextPage(limit: 3), !page.isEmpty { walked += page.map(\.relativePath) }
            return walked
        }
        let whole = try walk(from: nil)
        #expect(Set(whole) == Set(files) && whole.count == files.count)
        #expect(whole.firstIndex(of: "a/x")! < whole.firstIndex(of: "a.txt")!, "the walk's order, not the paths' bytes")
        for (index, file) in whole.enumerated() {
            #expect(try walk(from: file) == Array(whole[index...]), "from \(file)")
        }
        // Gone since: a folder on the way, a file in a folder that is there.
        #expect(try walk(from: "a/bb/gone") == Array(whole[whole.firstIndex(of: "a/c")!...]))
        #expect(try walk(from: "a/b/yy") == Array(whole[whole.firstIndex(of: "a/b/z")!...]))
        #expect(try walk(from: "zzz/none") == ["é/f"], "é sorts after z by its bytes")
        #expect(try walk(from: "é/g").isEmpty)
    }

    @Test func aFolderThatCannotBeListedFailsTheStepAndTheGroupDoesNotRun() async {
        let flow = Flow(definition: FlowDefinition(name: "tree", bucket: [:], steps: [
            .operation(FlowOperationStep(op: "ListFilesOp", parameters: ["path": "/nonexistent/flow-stream", "recursive": true])),
            .group(FlowGroupStep(op: "PathOp", input: "files", output: "paths", maxConcurrent: 4)),
        ]), registry: Self.registry)
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(flow.generateSummary().contains("cannot list folder /nonexistent/flow-stream"))
        #expect(!flow.operationRecords.contains { $0.operationName == "PathOp" })
    }
}
