#if canImport(Glibc)
import Glibc
#endif
import Flow
import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

@Suite("UploadFileOp against nginx")
struct UploadFileOpTests {
    @Test func groupOf200FilesArrivesByteForByteWithURLsInInputOrder() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        var paths: [String] = []
        var contents: [Data] = []
        for index in 0..<200 {
            let bytes = PatternBytes.make(count: 64 + index * 37, multiplier: 31, offset: index)
            let file = folder.file(String(format: "file-%03d.bin", index))
            try bytes.write(to: file)
            paths.append(file.path)
            contents.append(bytes)
        }

        let flow = await runFlow(bucket: ["files": strings(paths)], steps: [
            group("UploadFileOp", input: "files", output: "urls", maxConcurrent: 8, ["url": .string(server.url("/uploads/"))]),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        let urls = try #require(flow.dataBucket["urls"] as? [String])
        #expect(urls == paths.map { server.url("/uploads/" + URL(fileURLWithPath: $0).lastPathComponent) })
        for (path, bytes) in zip(paths, contents) {
            let stored = try Data(contentsOf: server.storedFile("/uploads/" + URL(fileURLWithPath: path).lastPathComponent))
            #expect(stored == bytes, "\(path) arrived different")
        }
        #expect(flow.lines.contains { $0.contains("uploaded file-007.bin (323 bytes) -> \(server.url("/uploads/file-007.bin")) in ") })
    }

    @Test func skipExistingSendsOnlyWhatTheServerLacksOrHasAtAnotherSize() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let paths = try (0..<5).map { index -> String in
            let file = folder.file("f-\(index).bin")
            try Data(repeating: UInt8(index), count: 1_000 + index).write(to: file)
            return file.path
        }
        let step = group("UploadFileOp", input: "files", output: "urls", maxConcurrent: 2,
                         ["url": .string(server.url("/keep")), "skipExisting": true])

        let first = await runFlow(bucket: ["files": strings(paths)], steps: [step])
        #expect(first.isSuccess, "\(first.errorText)")
        #expect(await server.accessLog(waitingFor: 5) { $0.method == "PUT" }.filter { $0.method == "PUT" }.count == 5)

        // One file changes size; the others are on the server as they are.
        try Data(repeating: 9, count: 4_321).write(to: URL(fileURLWithPath: paths[2]))
        let second = await runFlow(bucket: ["files": strings(paths)], steps: [step])

        #expect(second.isSuccess, "\(second.errorText)")
        // nginx writes a request's log line after its answer: the second run's last lines may
        // not be in the file yet when the run ends.
        let log = await server.accessLog(waitingFor: 16) { $0.method == "HEAD" || $0.method == "PUT" }
        #expect(log.filter { $0.method == "HEAD" }.count == 10, "every element asks first, in both runs")
        let puts = log.filter { $0.method == "PUT" }.map(\.uri)
        #expect(puts.count == 6 && puts.last == "/keep/f-2.bin", "\(puts)")
        #expect(second.dataBucket["urls"] as? [String] == (0..<5).map { server.url("/keep/f-\($0).bin") })
        #expect(second.lines.contains { $0.contains("skipped f-0.bin: the server has it already (1000 bytes)") })
        #expect(try Data(contentsOf: server.storedFile("/keep/f-2.bin")) == Data(repeating: 9, count: 4_321))
    }

    @Test func objectURLJoinsWithOneSlashAndEncodesTheName() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let file = folder.file("two words.txt")
        try Data("spaced".utf8).write(to: file)

        let result = try await runOperation("UploadFileOp", ["url": .string(server.url("/nested/deeper//"))], bucket: ["file": file.path])

        #expect(result.state == .successfully, "\(result.state)")
        #expect(result.bucket["url"] as? String == server.url("/nested/deeper/two%20words.txt"))
        #expect(try Data(contentsOf: server.storedFile("/nested/deeper/two words.txt")) == Data("spaced".utf8))
    }

    @Test func namesThatWouldClimbOutOfThePrefixAreRefusedAndFoldersKeepTheirSlash() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let file = folder.file("payload.txt")
        try Data("payload".utf8).write(to: file)
        let climbing = ["../../escaped.txt", "../sibling.txt", "./dot.txt", "a/./b.txt", "a/../../up.txt", "a//b.txt", "/root.txt",
                        "trailing/", ".."]
        let names = climbing + ["2026/01/a photo.jpg", "q?#%.txt"]
        let elements = FlowValue.array(names.map { .map(["name": .string($0), "path": .string(file.path)]) })

        let flow = await runFlow(bucket: ["files": elements], steps: [
            group("UploadFileOp", input: "files", output: "urls", maxConcurrent: 4, allowFailure: true,
                  ["url": .string(server.url("/up/sub"))]),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["urls"] as? [String] == [server.url("/up/sub/2026/01/a%20photo.jpg"), server.url("/up/sub/q%3F%23%25.txt")])
        #expect(try Data(contentsOf: server.storedFile("/up/sub/2026/01/a photo.jpg")) == Data("payload".utf8))
        #expect(try Data(contentsOf: server.storedFile("/up/sub/q?#%.txt")) == Data("payload".utf8))
        // Nothing reached the server for the refused names, so nothing lies outside the prefix.
        // (nginx logs a request after answering it: wait for the two that were sent.)
        // (Its access log is a file nginx appends to, with no event to wait on: read every 20 ms,
        // for at most 2 s, the count checked below saying what never came.)
        let deadline = ContinuousClock.now + .seconds(2)
        while server.accessLog().filter({ $0.method == "PUT" }).count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(server.accessLog().filter { $0.method == "PUT" }.count == 2, "\(server.accessLog().map(\.uri))")
        let stored = FileManager.default.enumerator(atPath: server.documentRoot.path)?.compactMap { $0 as? String } ?? []
        #expect(stored.filter { !$0.hasPrefix("up") }.isEmpty, "stored outside /up/sub: \(stored)")
        for name in climbing {
            #expect(flow.lines.contains { $0.contains("refused the upload name '\(name)'") }, "no refusal for \(name)")
        }
        #expect(flow.lines.contains { $0.contains("refused the upload name '../../escaped.txt': it has a '..' segment") })
    }

    @Test func serverErrorsAreSkippedWhenTheGroupAllowsFailure() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let names = ["a.txt", "fail-1.txt", "b.txt", "fail-2.txt", "c.txt"]
        for name in names { try Data(name.utf8).write(to: folder.file(name)) }

        let flow = await runFlow(bucket: ["files": strings(names.map { folder.file($0).path })], steps: [
            group("UploadFileOp", input: "files", output: "urls", maxConcurrent: 2, allowFailure: true, ["url": .string(server.url("/up"))]),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["urls"] as? [String] == ["a.txt", "b.txt", "c.txt"].map { server.url("/up/" + $0) })
        let failures = flow.lines.filter { $0.contains("upload of fail-1.txt") && !$0.contains("DidFinish") && !$0.contains("[Group]") }
        #expect(failures.count == 1)
        #expect(failures.first?.contains("HTTP 500: boom") == true, "\(failures)")
        #expect(flow.lines.contains { $0.contains("DidFinish: withError:") && $0.contains("HTTP 500: boom") })
    }

    @Test func serverErrorFailsTheFlowWhenTheGroupDoesNotAllowFailure() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let file = folder.file("report.txt")
        try Data("x".utf8).write(to: file)

        let flow = await runFlow(bucket: ["files": strings([file.path])], steps: [
            group("UploadFileOp", input: "files", output: "urls", ["url": .string(server.url("/fail/here"))]),
        ])

        #expect(!flow.isSuccess)
        #expect(flow.errorText.contains("HTTP 500: boom"), "\(flow.errorText)")
        #expect(flow.errorText.contains(server.url("/fail/here/report.txt")))
        #expect(flow.dataBucket["urls"] == nil)
    }

    @Test func postSendsTheFileAsTheMultipartFieldNamedFile() async throws {
        let server = try NginxServer(receivesFormPosts: true)
        try await server.start()
        let folder = try TemporaryDirectory()
        // Bytes that look like multipart syntax must survive as they are.
        let bytes = Data("line one\r\n--not-a-boundary\r\n\r\n".utf8) + Data((0..<3000).map { UInt8($0 % 256) })
        let file = folder.file("form.bin")
        try bytes.write(to: file)

        let result = try await runOperation(
            "UploadFileOp", ["url": .string(server.url("/form/inbox")), "method": "post"], bucket: ["file": file.path])

        #expect(result.state == .successfully, "\(result.state)")
        #expect(result.bucket["url"] as? String == server.url("/form/inbox/form.bin"))
        #expect(try Data(contentsOf: server.receivedFormFile("/form/inbox/form.bin")) == bytes)
        let posted = await server.accessLog(waitingFor: 1) { $0.method == "POST" && $0.uri == "/form/inbox/form.bin" && $0.status == 201 }
        #expect(posted.contains { $0.method == "POST" && $0.uri == "/form/inbox/form.bin" && $0.status == 201 })
    }

    @Test func configuredHeadersReachTheServer() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let file = folder.file("with-headers.txt")
        try Data("h".utf8).write(to: file)

        let result = try await runOperation(
            "UploadFileOp",
            ["url": .string(server.url("/h")), "headers": .map(["X-Flow-Token": "secret-42", "Authorization": "Bearer abc"])],
            bucket: ["file": file.path])

        #expect(result.state == .successfully, "\(result.state)")
        let entry = try #require(await server.accessLog(waitingFor: 1) { $0.uri == "/h/with-headers.txt" }.first { $0.uri == "/h/with-headers.txt" })
        #expect(entry.method == "PUT")
        #expect(entry.headers == ["X-Flow-Token": "secret-42", "Authorization": "Bearer abc"])
    }

    @Test func coordinatorMapInputIsUploadedFromItsBytes() async throws {
        let server = try NginxServer(receivesFormPosts: true)
        try await server.start()
        let folder = try TemporaryDirectory()
        let first = folder.file("first.txt")
        let second = folder.file("second.txt")
        try Data("first bytes".utf8).write(to: first)
        try Data("second bytes".utf8).write(to: second)
        let elements = try [first, second].map { try UploadFileSource.coordinatorElement(forPath: $0.path) }
        #expect(elements[0] == .map(["name": "first.txt", "path": .string(first.path), "bytes": .bytes(Data("first bytes".utf8))]))
        // The worker side must use the bytes that came with the task, not the path.
        try FileManager.default.removeItem(at: first)
        try FileManager.default.removeItem(at: second)

        let parameters: [String: FlowValue] = ["url": .string(server.url("/coordinated")), "source": "coordinator"]
        #expect(UploadFileSource.readsOnCoordinator(parameters))
        let flow = await runFlow(bucket: ["files": .array(elements)], steps: [
            group("UploadFileOp", input: "files", output: "urls", parameters),
        ])
        let posted = try await runOperation(
            "UploadFileOp", ["url": .string(server.url("/form/c")), "method": "POST", "source": "coordinator"],
            bucket: ["file": elements[1].anyValue])

        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(flow.dataBucket["urls"] as? [String] == [server.url("/coordinated/first.txt"), server.url("/coordinated/second.txt")])
        #expect(try Data(contentsOf: server.storedFile("/coordinated/second.txt")) == Data("second bytes".utf8))
        #expect(posted.state == .successfully, "\(posted.state)")
        #expect(try Data(contentsOf: server.receivedFormFile("/form/c/second.txt")) == Data("second bytes".utf8))
    }

    @Test func missingFileFailsNamingThePath() async throws {
        let server = try NginxServer()
        try await server.start()
        let missing = "/nonexistent-\(UUID().uuidString)/photo.jpg"

        let result = try await runOperation("UploadFileOp", ["url": .string(server.url("/up"))], bucket: ["file": missing])

        guard case .withError(let text) = result.state else {
            Issue.record("expected a failure, got \(result.state)")
            return
        }
        // Where it was looked for: on a cluster the paths come from the coordinator's folder, and a
        // worker on another machine finds none of them.
        #expect(text == "cannot read \(missing): No such file or directory (looked for on \(ProcessInfo.processInfo.hostName), the "
            + "machine running the op; for files only the coordinator's machine has, give the op source: coordinator)")
        #expect(result.logLines.contains(text))
        #expect(throws: FlowStandardOpError.self) { try UploadFileSource.coordinatorElement(forPath: missing) }
        do {
            _ = try UploadFileSource.coordinatorElement(forPath: missing)
        } catch {
            #expect("\(error)".contains(missing))
        }
    }

    /// A named pipe used to keep the worker's thread in `open` until something wrote to it (an
    /// upload that never ended, its slot busy for good), and `/dev/zero` was sent as an empty file.
    @Test func pathsThatAreNotRegularFilesAreRefusedAtOnce() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let pipe = folder.file("pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        // Should an op wait for a writer after all, one comes: the op then reads an empty pipe
        // and the expectations below fail instead of the test hanging.
        let watchdog = PipeWriterWatchdog(pipe.path, every: 20)
        defer { watchdog.stop() }
        let cases: [(path: String, says: String)] = [
            (pipe.path, "it is a named pipe, not a file"),
            ("/dev/zero", "it is a character device, not a file"),
            (folder.path, "it is a folder"),
        ]

        for (path, says) in cases {
            let result = try await runOperation("UploadFileOp", ["url": .string(server.url("/up"))], bucket: ["file": path])

            #expect(result.state == .withError("cannot read \(path): \(says)"), "\(path)")
            #expect(throws: FlowStandardOpError.self, "\(path) as a coordinator input") {
                try UploadFileSource.coordinatorElement(forPath: path)
            }
        }
        let arrived = try FileManager.default.contentsOfDirectory(atPath: server.documentRoot.path)
        #expect(!arrived.contains("up"), "\(arrived)")
    }

    @Test func refusedConnectionFailsWithTheTransportError() async throws {
        let folder = try TemporaryDirectory()
        let file = folder.file("x.txt")
        try Data("x".utf8).write(to: file)
        let port = try LoopbackPort.free()

        let result = try await runOperation("UploadFileOp", ["url": .string("http://127.0.0.1:\(port)/up")], bucket: ["file": file.path])

        guard case .withError(let text) = result.state else {
            Issue.record("expected a failure, got \(result.state)")
            return
        }
        #expect(text.hasPrefix("upload of x.txt to http://127.0.0.1:\(port)/up/x.txt failed: "), "\(text)")
    }

    @Test func timeLimitEndsAnUploadTheServerNeverAnswers() async throws {
        let listener = try SilentListener()
        let folder = try TemporaryDirectory()
        let file = folder.file("slow.txt")
        try Data("x".utf8).write(to: file)
        let started = Date()

        let result = try await runOperation(
            "UploadFileOp", ["url": .string("http://127.0.0.1:\(listener.port)/up"), "timeout": 0.5], bucket: ["file": file.path])

        let elapsed = Date().timeIntervalSince(started)
        guard case .withError(let text) = result.state else {
            Issue.record("expected a failure, got \(result.state)")
            return
        }
        #expect(text.contains("time limit of 0.5 s exceeded"), "\(text)")
        // The server never answers: without the limit this would not end at all. 120 s leaves room
        // for a machine whose cooperative threads a whole suite keeps busy (20 s was seen).
        #expect(elapsed < 120, "took \(elapsed) s")
    }

    @Test func badParametersAreRejectedByTheFactory() throws {
        let registry = FlowOperationRegistry.standard
        #expect(throws: FlowParameterError.self) { try registry.makeOperation(named: "UploadFileOp", parameters: [:]) }
        #expect(throws: FlowParameterError.self) { try registry.makeOperation(named: "UploadFileOp", parameters: ["url": "ftp://host/x"]) }
        #expect(throws: FlowParameterError.self) {
            try registry.makeOperation(named: "UploadFileOp", parameters: ["url": "http://host/x", "method": "PATCH"])
        }
        #expect(throws: FlowParameterError.self) {
            try registry.makeOperation(named: "UploadFileOp", parameters: ["url": "http://host/x", "headers": ["a", "b"]])
        }
        #expect(throws: FlowParameterError.self) {
            try registry.makeOperation(named: "UploadFileOp", parameters: ["url": "http://host/x", "source": "elsewhere"])
        }
        #expect(throws: FlowParameterError.self) {
            try registry.makeOperation(named: "UploadFileOp", parameters: ["url": "http://host/x", "timeout": 0])
        }
    }
}
