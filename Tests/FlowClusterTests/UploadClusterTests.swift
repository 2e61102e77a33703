import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests {
    /// Grouped uploads on a real cluster to a real HTTP server.
    @Suite struct UploadsOnTheCluster {
        /// Writes `count` files of distinct content into a fresh folder of the scope.
        static func makeFolder(_ cluster: ClusterScope, count: Int) throws -> URL {
            let folder = cluster.directory.appendingPathComponent("photos")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for index in 0..<count {
                let bytes = PatternBytes.make(count: 1000 + index * 37, multiplier: 31, offset: index)
                try bytes.write(to: folder.appendingPathComponent(String(format: "photo-%03d.jpg", index)))
            }
            return folder
        }

        static func uploadFlow(source: String) -> String {
            """
            flow: upload
            bucket: {folder: ./photos, uploadURL: http://127.0.0.1:1/none}
            steps:
              - op: ListFilesOp
                with: {path: "${folder}"}
              - group:
                  op: UploadFileOp
                  input: files
                  output: uploadedURLs
                  maxConcurrent: 4
                  with: {url: "${uploadURL}", source: \(source)}
            """
        }

        /// `source` in any case: the op reads it case-insensitively, and so must the preparation
        /// that ships the bytes (once, `Coordinator` made an op whose bytes were never shipped).
        @Test(arguments: ["coordinator", "Coordinator"])
        func sourceCoordinatorUploadsFilesTheWorkersCannotRead(source: String) async throws {
            let server = try NginxServer()
            try await server.start()
            defer { server.stop() }
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster, count: 12)
                let flowFile = try cluster.write("upload.yaml", Self.uploadFlow(source: source))
                let asRoot = getuid() == 0
                if asRoot {
                    // Workers run as nobody and the files are root's alone: only the coordinator
                    // can read them, so every byte that arrives came through the task.
                    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                        chmod(folder.appendingPathComponent(name).path, 0o600)
                    }
                    chmod(cluster.directory.path, 0o755)
                    chmod(folder.path, 0o711)
                }
                let coordinator = try cluster.coordinator(["run", flowFile, "--bind", "tcp://127.0.0.1:*", "--min-workers", "2",
                                                           "--set", "folder=\(folder.path)", "--set", "uploadURL=\(server.url("/up"))"]
                                                          + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let prefix = asRoot ? ["--reuid=nobody", "--regid=nogroup", "--clear-groups"] : []
                for name in ["w1", "w2"] {
                    let arguments = ["--connect", endpoint, "--name", name] + ClusterScope.fastHeartbeat
                    if asRoot {
                        _ = try cluster.startSystem("/usr/bin/setpriv", prefix + [ClusterScope.productsDirectory.appendingPathComponent("flow-worker").path] + arguments, label: name)
                    } else {
                        _ = try cluster.worker(connect: endpoint, name: name)
                    }
                }
                #expect(await coordinator.waitForExit(timeout: 60) == .exit(0), "\(coordinator.transcript)")
                for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                    let sent = try Data(contentsOf: folder.appendingPathComponent(name))
                    let arrived = try? Data(contentsOf: server.storedFile("/up/\(name)"))
                    #expect(arrived == sent, "\(name) did not arrive intact")
                }
                #expect(coordinator.stdout.contains("@ w1]") && coordinator.stdout.contains("@ w2]"))
            }
        }

        @Test func sourceWorkerReadsThePathOnTheWorker() async throws {
            let server = try NginxServer()
            try await server.start()
            defer { server.stop() }
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster, count: 6)
                let flowFile = try cluster.write("upload.yaml", Self.uploadFlow(source: "worker"))
                let run = try cluster.coordinator(["run", flowFile, "--set", "folder=\(folder.path)", "--set", "uploadURL=\(server.url("/w"))"])
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                    #expect((try? Data(contentsOf: server.storedFile("/w/\(name)"))) == (try Data(contentsOf: folder.appendingPathComponent(name))))
                }
                #expect(run.stdout.contains("[FlowArrayGroupDispatcher] all finished. output size: 6"))
            }
        }

        @Test func aTerminalGetsALiveProgressLineRedrawnInPlace() async throws {
            try await withCluster { cluster in
                let flowFile = try cluster.write("slow.yaml", """
                    flow: slow
                    bucket: {items: [a, b, c, d, e, f, g, h, i, j, k, l]}
                    steps:
                      - group: {op: SleepOp, input: items, output: done, maxConcurrent: 3, with: {ms: 300}}
                    """)
                let coordinator = ClusterScope.productsDirectory.appendingPathComponent("flow-coordinator").path
                // script(1) gives the coordinator a pseudo-terminal as stderr.
                let run = try cluster.startSystem("/usr/bin/script", ["-qefc", "\(coordinator) run \(flowFile) > \(cluster.path("summary.txt"))", "/dev/null"])
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                #expect(run.stdout.contains("\r\u{1B}[KSleepOp: "), "no live line in: \(run.stdout.debugDescription)")
                #expect(!run.stdout.contains("progress: "))
                #expect(run.stdout.contains("group SleepOp: 12/12 done, 0 failed"))
                #expect(try String(contentsOfFile: cluster.path("summary.txt"), encoding: .utf8).contains("Flow isSuccess: true"))
            }
        }
    }
}

extension ClusterIntegrationTests.UploadsOnTheCluster {
    /// The worker's peak resident memory, from /proc (VmHWM), in bytes.
    static func peakMemory(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
    }

    @Test func aWorkerStreamsA200MBUploadWithoutHoldingTheFile() async throws {
        let server = try NginxServer()
        try await server.start()
        defer { server.stop() }
        let folder = try TemporaryDirectory(prefix: "flow-large")
        defer { folder.remove() }
        let file = folder.file("large.bin")
        let size = 200 * 1024 * 1024
        try PseudoRandomFile.write(to: file, size: size)
        try await withCluster { cluster in
            let flowFile = try cluster.write("large.yaml", """
                flow: large
                bucket: {file: "\(file.path)"}
                steps:
                  - op: UploadFileOp
                    with: {url: "\(server.url("/big"))"}
                """)
            let coordinator = try cluster.coordinator(["run", flowFile, "--bind", "tcp://127.0.0.1:*"] + ClusterScope.fastHeartbeat)
            let worker = try cluster.worker(connect: try await coordinator.listeningEndpoint(), name: "w1")
            #expect(await coordinator.waitForExit(timeout: 120) == .exit(0), "\(coordinator.transcript)")
            let peak = try #require(Self.peakMemory(of: worker.processIdentifier))
            print("worker peak resident memory for a 200 MB upload: \(peak / 1_048_576) MB")
            #expect(peak < 120 * 1024 * 1024, "the worker's memory peaked at \(peak / 1_048_576) MB for a 200 MB file")
            let arrived = try FileManager.default.attributesOfItem(atPath: server.storedFile("/big/large.bin").path)[.size] as? Int
            #expect(arrived == size)
            #expect(try await TestCommand.sha256sum(server.storedFile("/big/large.bin").path) == TestCommand.sha256sum(file.path))
            try? FileManager.default.removeItem(at: server.storedFile("/big/large.bin"))
        }
    }
}
