import FlowTestSupport
import Foundation
import Testing

/// A large but legal result (100 MB of output) through the real coordinator, with its journal
/// and a `--json` report: the coordinator holds about three times the result at most, the report
/// keeps the value whole, and the summary shows it cut.
@Suite struct LargeResultTests {
    static let size = 100_000_000

    @Test func aLargeOutputCostsTheCoordinatorAboutThreeTimesItsSize() async throws {
        try await withCluster { cluster in
            let flowFile = try cluster.write("large.yaml", """
                flow: large
                steps:
                  - op: ShellOp
                    with: {command: [sh, -c, "head -c \(Self.size) /dev/zero | tr '\\\\0' a"], timeout: 600}
                """)
            let report = cluster.path("report.json")
            let coordinator = try ClusterScope.builtProgram("flow-coordinator").path
            // GNU time reports the peak resident size of the coordinator once it has exited, and of
            // the children it waited for: the worker is a standing one, so the figure is the
            // coordinator's own (a worker holds its output and the RESULT it sends, as much again).
            let endpoint = "tcp://127.0.0.1:\(try LoopbackPort.free())"
            let run = try cluster.startSystem("/usr/bin/time", ["-f", "maxrss=%M", coordinator, "run", flowFile, "--json", report,
                                                                 "--bind", endpoint, "--min-workers", "1", "--worker-timeout", "30"])
            // The default heartbeat: a debug build's worker takes a while to encode 100 MB.
            let worker = try cluster.start("flow-worker", ["--connect", endpoint, "--name", "standing"])
            defer { worker.kill() }
            #expect(await run.waitForExit(timeout: 600) == .exit(0), "\(run.transcript.suffix(2000))")
            let kilobytes = try #require(run.stderr.firstMatch(of: /maxrss=(\d+)/).flatMap { Int($0.1) }, "\(run.stderr.suffix(500))")
            // About 60 MB is the coordinator itself; 3.5 times the result is the bound (it took eleven times before).
            #expect(kilobytes * 1024 < 60_000_000 + Self.size * 7 / 2, "peak \(kilobytes / 1024) MiB for a \(Self.size / 1_000_000) MB result")

            let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
            let output = try #require((json["bucket"] as? [String: Any])?["output"] as? String)
            #expect(output.utf8.count == Self.size && output.utf8.allSatisfy { $0 == UInt8(ascii: "a") }, "the report's value is not whole")
            // The summary's line shows the start of the value and how much more there is.
            let added = try #require(run.stdout.split(separator: "\n").first { $0.contains("[DataBucket] add for output: ") })
            let cut = try #require(added.firstMatch(of: /add for output: (a+)… \((\d+) more bytes\)$/), "not cut: \(added.suffix(80))")
            #expect(cut.1.count + (Int(cut.2) ?? 0) == Self.size && added.utf8.count < 1 << 21, "\(added.utf8.count) bytes")
        }
    }
}

