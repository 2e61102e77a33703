import Flow
import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

@Suite("ListFilesOp")
struct ListFilesOpTests {
    /// c.txt, a.jpg, B.jpg, .hidden.jpg, a folder `sub.jpg`, and sub.jpg/inner.jpg.
    private func makeFolder() throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory()
        for name in ["c.txt", "a.jpg", "B.jpg", ".hidden.jpg"] { try Data(name.utf8).write(to: folder.file(name)) }
        try folder.folder("sub.jpg")
        try Data().write(to: folder.file("sub.jpg/inner.jpg"))
        return folder
    }

    @Test func listsRegularFilesSortedWithoutHiddenOnesOrFolders() async throws {
        let folder = try makeFolder()
        let flow = await runFlow(steps: [step("ListFilesOp", ["path": .string(folder.path + "/")])])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["files"] as? [String] == ["B.jpg", "a.jpg", "c.txt"].map { folder.file($0).path })
        #expect(flow.lines.contains("[ListFilesOp] listed 3 files in \(folder.path)"))
    }

    @Test func globAndOutputKeyChooseWhatAndWhere() async throws {
        let folder = try makeFolder()
        let flow = await runFlow(steps: [
            step("ListFilesOp", ["path": .string(folder.path), "glob": "*.jpg", "output": "photos"]),
            step("ListFilesOp", ["path": .string(folder.path), "glob": ".*", "output": "hidden"]),
            step("ListFilesOp", ["path": .string(folder.path), "glob": "[ac].*", "output": "picked"]),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["photos"] as? [String] == ["B.jpg", "a.jpg"].map { folder.file($0).path })
        #expect(flow.dataBucket["hidden"] as? [String] == [folder.file(".hidden.jpg").path])
        #expect(flow.dataBucket["picked"] as? [String] == ["a.jpg", "c.txt"].map { folder.file($0).path })
        #expect(flow.dataBucket["files"] == nil)
    }

    @Test func missingFolderFailsNamingIt() async throws {
        let missing = "/nonexistent-\(UUID().uuidString)"
        let flow = await runFlow(steps: [step("ListFilesOp", ["path": .string(missing)])])

        #expect(!flow.isSuccess)
        #expect(flow.errorText == "cannot list folder \(missing): No such file or directory")
        #expect(flow.lines.contains("[ListFilesOp] cannot list folder \(missing): No such file or directory"))
    }

    @Test func emptyFolderGivesAnEmptyListAndTheNextGroupHasNothingToRun() async throws {
        let folder = try TemporaryDirectory()
        let flow = await runFlow(steps: [
            step("ListFilesOp", ["path": .string(folder.path)]),
            group("HashFileOp", input: "files", output: "digests"),
        ])

        #expect(flow.dataBucket["files"] as? [String] == [])
        #expect(!flow.isSuccess)
        #expect(flow.lines.contains { $0.contains("no operation to run for group") })
    }

    @Test func uploadFolderExampleRunsAgainstNginx() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        for index in 1...12 { try Data("photo \(index)".utf8).write(to: folder.file("photo-\(index).jpg")) }
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../examples/upload-folder.yaml")
        var definition = try FlowFileLoader(registry: .standard).load(contentsOf: example.standardizedFileURL.path)
        definition.bucket["folder"] = .string(folder.path)
        definition.bucket["uploadURL"] = .string(server.url("/uploads"))

        let flow = Flow(definition: definition, registry: .standard)
        await flow.run()

        #expect(flow.isSuccess, "\(flow.errorText)")
        let urls = try #require(flow.dataBucket["uploadedURLs"] as? [String])
        #expect(urls.count == 12)
        #expect(urls == urls.sorted())
        for index in 1...12 {
            #expect(try Data(contentsOf: server.storedFile("/uploads/photo-\(index).jpg")) == Data("photo \(index)".utf8))
        }
    }
}
