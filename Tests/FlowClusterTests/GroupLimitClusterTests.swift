import FlowTestSupport
import Foundation
import Testing

/// A group's budget for the whole cluster on real processes (issue 38): the requests rate across
/// workers, measured by the server; `limit` from another terminal; adaptive back-off on SlowDown.
@Suite struct GroupLimitClusterTests {
    /// Writes `count` small files into a fresh folder of the scope.
    static func makeFolder(_ cluster: ClusterScope, count: Int, size: Int = 512) throws -> URL {
        let folder = cluster.directory.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for index in 0..<count {
            try Data(repeating: UInt8(truncatingIfNeeded: index), count: size).write(to: folder.appendingPathComponent(String(format: "f-%04d.bin", index)))
        }
        return folder
    }

    static func uploadFlow(maxConcurrent: Int, extra: String, before: String = "") -> String {
        """
        flow: limited
        bucket: {folder: ./files, uploadURL: http://127.0.0.1:1/none}
        steps:
        \(before)  - op: ListFilesOp
            with: {path: "${folder}"}
          - group:
              op: UploadFileOp
              input: files
              output: uploaded
              maxConcurrent: \(maxConcurrent)
              with: {url: "${uploadURL}", source: worker}
        \(extra)
        """
    }

    /// Starts the run on `--bind` and `workers` workers of 8 slots.
    static func start(_ cluster: ClusterScope, flow: String, folder: URL, url: String, workers: Int, extra: [String] = []) async throws -> ChildProcess {
        let flowFile = try cluster.write("limited.yaml", flow)
        let coordinator = try cluster.coordinator(["run", flowFile, "--bind", "tcp://127.0.0.1:*", "--min-workers", String(workers),
                                                   "--set", "folder=\(folder.path)", "--set", "uploadURL=\(url)",
                                                   "--summary", cluster.path("summary.txt")] + extra + ClusterScope.fastHeartbeat)
        let endpoint = try await coordinator.listeningEndpoint()
        for index in 1...workers { _ = try cluster.worker(connect: endpoint, name: "w\(index)", concurrency: 8) }
        return coordinator
    }

    /// 240 uploads at 40 a second on 3 workers with 24 slots: nginx logs them over about 6 s,
    /// never faster than 1.3 × the limit over the whole run (unlimited, they take well under a
    /// second), and every worker took part.
    @Test func theRequestsBudgetHoldsAcrossThreeWorkers() async throws {
        let server = try NginxServer()
        try await server.start()
        defer { server.stop() }
        try await withCluster { cluster in
            let folder = try Self.makeFolder(cluster, count: 240)
            let flow = Self.uploadFlow(maxConcurrent: 24, extra: "      limit: {requestsPerSecond: 40}\n")
            let run = try await Self.start(cluster, flow: flow, folder: folder, url: server.url("/r"), workers: 3)
            #expect(await run.waitForExit(timeout: 120) == .exit(0), "\(run.transcript)")
            let times = await server.accessLog(waitingFor: 240) { $0.method == "PUT" && $0.status < 300 }
                .filter { $0.method == "PUT" && $0.status < 300 }.compactMap(\.time).sorted()
            try #require(times.count == 240, "\(times.count) PUTs logged")
            let rate = Double(times.count - 1) / max(0.001, times.last! - times.first!)
            #expect(rate <= 40 * 1.3, "\(rate) PUTs a second")
            #expect(rate >= 40 * 0.5, "\(rate) PUTs a second: far below the limit")
            let summary = try String(contentsOfFile: cluster.path("summary.txt"), encoding: .utf8)
            for name in ["w1", "w2", "w3"] { #expect(summary.contains("@ \(name)]"), "\(name) ran none") }
        }
    }

    /// A run held to 5 a second is lifted from another terminal (`limit --requests-per-second
    /// off`): it then ends at once, where 300 elements at 5 a second would take a minute; its
    /// status showed the limit before.
    @Test func aLimitChangedWhileRunningTakesEffect() async throws {
        let server = try NginxServer()
        try await server.start()
        defer { server.stop() }
        try await withCluster { cluster in
            let folder = try Self.makeFolder(cluster, count: 300)
            let flow = Self.uploadFlow(maxConcurrent: 8, extra: "      limit: {requestsPerSecond: 5}\n")
            let run = try await Self.start(cluster, flow: flow, folder: folder, url: server.url("/c"), workers: 2)
            let id = try await RunControlTests.runID(of: run)
            try await RunControlTests.waitForControl(cluster, id, run: run)
            let status = try await RunControlTests.status(cluster, id)
            let limits = status["limits"] as? [[String: Any]]
            #expect((limits?.first?["name"] as? String) == "UploadFileOp", "\(status)")
            #expect(((limits?.first?["rates"] as? [String: Any])?["requestsPerSecond"] as? Double) == 5, "\(status)")
            let text = try await RunControlTests.command(cluster, ["status", id])
            #expect(text.stdout.contains("limit UploadFileOp: 5 requests/s"), "\(text.transcript)")
            let before = server.accessLog().filter { $0.method == "PUT" }.count
            #expect(before < 150, "\(before) uploads before the limit was lifted")
            let lifted = try await RunControlTests.command(cluster, ["limit", id, "--step", "UploadFileOp", "--requests-per-second", "off"])
            #expect(lifted.termination == .exit(0), "\(lifted.transcript)")
            #expect(await run.waitForExit(timeout: 30) == .exit(0), "\(run.transcript)")
            #expect(run.stderr.contains("limit from another terminal: UploadFileOp requests a second off"), "\(run.stderr)")
            let wrong = try await RunControlTests.command(cluster, ["limit", id, "--step", "NoSuchOp", "--requests-per-second", "3"])
            #expect(wrong.termination != .exit(0))
        }
    }

    /// A server that answers SlowDown past 40 PUTs a second (counting refused ones), to a group of
    /// 64 at once whose tries take a millisecond: the adaptive group backs off (its rate, as its
    /// concurrency cannot hold it), says so, stores every file, and has far fewer of its PUTs
    /// refused than the same group with `adaptive: false`, which keeps being refused.
    @Test func aThrottlingServerMakesTheGroupBackOff() async throws {
        var refused: [Bool: Double] = [:]
        var stored: [Bool: Int] = [:]
        for adaptive in [true, false] {
            let server = try await FaultyHTTPServer.start(rules: [.init(kind: "503", abovePerSecond: 40)])
            defer { server.stop() }
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster, count: 150, size: 64)
                let flow = Self.uploadFlow(maxConcurrent: 64, extra: "      retry: {attempts: 30, delay: 0.05, maxDelay: 0.2}\n"
                                           + "      allowFailure: true\n      adaptive: \(adaptive)\n")
                let page = cluster.path("limited.html")
                let run = try await Self.start(cluster, flow: flow, folder: folder, url: server.url("/s"), workers: 2, extra: ["--timeline", page])
                #expect(await run.waitForExit(timeout: 240) == .exit(0), "\(run.transcript)")
                // The timeline marks the throttling on the group's step, or none without it.
                let data = try ClusterIntegrationTests.Timeline.PageData.read(try String(contentsOfFile: page, encoding: .utf8))
                let throttled = (data.marks ?? []).filter { $0.kind == "throttled" }
                if adaptive {
                    #expect(!throttled.isEmpty && throttled.allSatisfy { $0.step == "UploadFileOp" && ($0.concurrency ?? 64) < 64 },
                            "\(data.marks ?? [])")
                } else {
                    #expect(throttled.isEmpty, "\(throttled)")
                }
                let stats = try server.stats()
                refused[adaptive] = Double(stats.status["503"] ?? 0) / Double(max(1, stats.puts))
                stored[adaptive] = stats.stored.count
                if adaptive {
                    #expect(run.stdout.contains("the store said slow down; throttled to"), "\(run.stdout)")
                } else {
                    #expect(!run.stdout.contains("throttled to"))
                }
            }
        }
        let adaptive = try #require(refused[true]), fixed = try #require(refused[false])
        #expect(adaptive < fixed * 0.8, "refused: adaptive \(adaptive), fixed \(fixed)")
        #expect(stored[true] == 150, "adaptive stored \(stored[true] ?? 0) of 150")
        #expect((stored[true] ?? 0) >= (stored[false] ?? 0))
    }
}
