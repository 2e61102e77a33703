import FlowTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension ClusterIntegrationTests {
    /// Cancelling a run while a worker has many uploads in flight, again and again: URLSession on
    /// Linux once crashed a worker here (`EasyHandle.swift: 'try!'`), which AsyncHTTPClient must not.
    @Suite struct CancellingUploads {
        @Test func cancellingAGroupWith64UploadsInFlight50TimesNeverCrashesAProcess() async throws {
            // The server holds each upload of the 50 rounds for a minute, so all 64 are in flight
            // when a run is cancelled however slowly this machine gets to it (a 3 s stall once let
            // a loaded machine's run finish first); a held request ends when its client closes.
            // The 51st try of each file, the resume's, goes through.
            let server = try await FaultyHTTPServer.start(rules: [.init(kind: "hold", first: 50, seconds: 60)])
            defer { server.stop() }
            try await withCluster { cluster in
                let folder = cluster.path("files")
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                var paths: [String] = []
                for index in 0..<64 {
                    let path = folder + "/f\(index).bin"
                    try Data(repeating: UInt8(index), count: 256 * 1024).write(to: URL(fileURLWithPath: path))
                    paths.append("\"\(path)\"")
                }
                let flowFile = try cluster.write("upload.yaml", """
                    flow: cancel-me
                    bucket: {files: [\(paths.joined(separator: ", "))]}
                    steps:
                      - group: {op: UploadFileOp, input: files, output: urls, maxConcurrent: 64, with: {url: "\(server.url("/up"))"}}
                    """)
                let port = try LoopbackPort.free()
                let endpoint = "tcp://127.0.0.1:\(port)"
                let worker = try cluster.worker(connect: endpoint, name: "w1", concurrency: 64)
                var inFlightSeen: [Int] = []
                var lastResume = ""
                for round in 1...50 {
                    let before = try server.stats().puts
                    let coordinator = try cluster.coordinator(["run", flowFile, "--bind", endpoint, "--min-workers", "1", "--quiet"],
                                                              label: "coordinator-\(round)")
                    // Wait until the worker has 64 new uploads at the server, then interrupt.
                    let deadline = ContinuousClock.now + .seconds(20)
                    var puts = before
                    while ContinuousClock.now < deadline, puts - before < 64, coordinator.isRunning {
                        try await Task.sleep(for: .milliseconds(20))
                        puts = try server.stats().puts
                    }
                    inFlightSeen.append(puts - before)
                    let endedEarly = !coordinator.isRunning
                    coordinator.send(SIGINT)
                    let end = await coordinator.waitForExit(timeout: 20)
                    #expect(end == .exit(1), "round \(round): \(coordinator.transcript)")
                    // The last thing an interrupted run says is how to go on, on the same standing
                    // worker (a run that ended by itself, reported just below, says nothing of the kind).
                    let runID = try #require(coordinator.stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1).description
                    let resume = "flow-coordinator resume \(runID) --bind \(endpoint) --min-workers 1"
                    lastResume = resume
                    #expect(coordinator.stderr.contains("(resume it with: \(resume))"), "round \(round): \(coordinator.stderr)")
                    #expect(endedEarly || coordinator.stderr.contains("run \(runID) stopped before its end; go on where it stopped with: \(resume)\n"),
                            "round \(round): \(coordinator.stderr)")
                    #expect(!endedEarly, "round \(round): the run ended by itself with \(puts - before) uploads at the server\n\(coordinator.transcript)")
                    try #require(worker.isRunning, "round \(round): the worker died\n\(worker.transcript)")
                }
                #expect(inFlightSeen.allSatisfy { $0 == 64 }, "uploads in flight when cancelled: \(inFlightSeen)")
                // The last round's command, pasted as printed, finishes that run on the standing
                // worker, not on local workers of its own.
                let binary = ClusterScope.productsDirectory.path
                let pasted = try cluster.startSystem("/bin/sh", ["-c", "PATH='\(binary)':$PATH \(lastResume) --quiet"], label: "pasted")
                #expect(await pasted.waitForExit(timeout: 60) == .exit(0), "\(pasted.transcript)")
                #expect(pasted.stdout.contains("@ w1]") && !pasted.stdout.contains("@ worker-1]"), "\(pasted.stdout.suffix(2_000))")
                #expect(!worker.stderr.contains("Fatal error"), "\(worker.stderr)")
                let end = await worker.terminate()
                #expect(end == .exit(0), "the worker must still drain and exit cleanly\n\(worker.transcript)")
            }
        }
    }
}
