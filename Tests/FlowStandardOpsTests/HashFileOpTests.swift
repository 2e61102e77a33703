#if canImport(Glibc)
import Glibc
#endif
import Flow
import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

@Suite("HashFileOp")
struct HashFileOpTests {
    @Test func knownVectorsFromFIPS180() async throws {
        let folder = try TemporaryDirectory()
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ]
        var paths: [String] = []
        for (index, (text, _)) in vectors.enumerated() {
            let file = folder.file("vector-\(index)")
            try Data(text.utf8).write(to: file)
            paths.append(file.path)
        }

        let flow = await runFlow(bucket: ["files": strings(paths)], steps: [group("HashFileOp", input: "files", output: "digests")])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["digests"] as? [String] == vectors.map(\.1))
    }

    @Test func agreesWithSha256sumAroundBlockBoundariesAndOnAMegabyte() async throws {
        let folder = try TemporaryDirectory()
        let sizes = [1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1_048_576, 1_048_576 + 3]
        var paths: [String] = []
        for size in sizes {
            let file = folder.file("size-\(size)")
            try PseudoRandomFile.write(to: file, size: size, seed: UInt64(size) &* 0x1000_0001)
            paths.append(file.path)
        }

        let flow = await runFlow(bucket: ["files": strings(paths)], steps: [group("HashFileOp", input: "files", output: "digests")])

        #expect(flow.isSuccess, "\(flow.errorText)")
        var expected: [String] = []
        for path in paths { expected.append(try await TestCommand.sha256sum(path)) }
        #expect(flow.dataBucket["digests"] as? [String] == expected)
    }

    @Test func missingFileFailsNamingThePath() async throws {
        let missing = "/nonexistent-\(UUID().uuidString)/data.bin"
        let result = try await runOperation("HashFileOp", bucket: ["file": missing])

        #expect(result.state == .withError("cannot read \(missing): No such file or directory"))
    }

    /// Opening a named pipe for reading waited for a writer: the op never ended.
    @Test func namedPipeIsRefusedWithoutWaitingForAWriter() async throws {
        let folder = try TemporaryDirectory()
        let pipe = folder.file("pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        // Should the op wait after all, a writer comes and the expectation fails instead of hanging.
        let watchdog = PipeWriterWatchdog(pipe.path, every: 20)
        defer { watchdog.stop() }

        let result = try await runOperation("HashFileOp", bucket: ["file": pipe.path])

        #expect(result.state == .withError("cannot read \(pipe.path): it is a named pipe, not a file"))
    }

    @Test func folderIsNotAFile() async throws {
        let folder = try TemporaryDirectory()
        let result = try await runOperation("HashFileOp", bucket: ["file": folder.path])

        #expect(result.state == .withError("cannot read \(folder.path): it is a folder"))
    }
}
