import FlowTestSupport
import Foundation
import Testing

/// Rates and counts out of range are refused by the built `flow-coordinator` where they are
/// given, with exit 2 naming the value and the range (issue 46 item 3): `limit --requests-per-second
/// 1e-300` was taken (exit 0) and killed the running run (exit 132); `requestsPerSecond: 1e-10`
/// passed `validate` and killed `run` and every `resume`. An anchor bomb of aliases used as keys
/// is refused as well (item 12).
@Suite struct LimitRangeTests {
    private static let coordinator = ClusterScope.productsDirectory.appendingPathComponent("flow-coordinator").path

    @Test func limitOutOfRangeExitsTwoNamingTheRangeAndTheRunGoesOn() async throws {
        try await withCluster { cluster in
            let gate = cluster.path("GO")
            let file = try cluster.write("steer.yaml", RunControlTests.gatedFlow(count: 4, gate: gate))
            let run = try cluster.coordinator(["run", file, "--workers", "1", "--concurrency", "2", "--quiet"], label: "run")
            let id = try await RunControlTests.runID(of: run)
            try await RunControlTests.waitForControl(cluster, id, run: run)
            let cases: [([String], String)] = [
                (["--requests-per-second", "1e-300"],
                 "--requests-per-second: 1e-300 requests a second is out of range: give 0.001 to 1000000 requests a second, or off"),
                (["--requests-per-second", "1e17"],
                 "--requests-per-second: 1e17 requests a second is out of range: give 0.001 to 1000000 requests a second, or off"),
                (["--bytes-per-second", "2TiB"],
                 "--bytes-per-second: 2TiB bytes a second is out of range: give 1 B to 1 TiB (1099511627776 bytes) a second, or off"),
            ]
            for (rate, words) in cases {
                let limit = try await RunControlTests.command(cluster, ["limit", id, "--step", "ShellOp"] + rate)
                #expect(limit.termination == .exit(2), "\(rate): \(limit.transcript)")
                #expect(limit.stderr.contains(words), "\(rate): \(limit.transcript)")
            }
            // In range, it is taken, and the run is alive to take it.
            let taken = try await RunControlTests.command(cluster, ["limit", id, "--step", "ShellOp", "--requests-per-second", "0.001"])
            #expect(taken.termination == .exit(0), "\(taken.transcript)")
            let lifted = try await RunControlTests.command(cluster, ["limit", id, "--step", "ShellOp", "--requests-per-second", "off"])
            #expect(lifted.termination == .exit(0), "\(lifted.transcript)")
            FileManager.default.createFile(atPath: gate, contents: Data())
            #expect(await run.waitForExit(timeout: 120) == .exit(0), "\(run.transcript)")
            #expect(run.stdout.finalBucketValue("outs") == RunControlTests.expected(4))
        }
    }

    @Test func validateAndRunRefuseRatesOutOfRangeWithTheirPlace() async throws {
        try await withCluster { cluster in
            let flow = """
                flow: rates
                bucket: {items: [a]}
                steps:
                  - group:
                      op: SimplePrintOp
                      input: items
                      output: outs
                      limit: {requestsPerSecond: 1e-10, schedule: "08:00,:1e300"}
                      with: {message: hi}

                """
            let file = try cluster.write("rates.yaml", flow)
            for arguments in [["validate", file], ["run", file, "--no-journal", "--workers", "1"]] {
                let command = try cluster.coordinator(arguments, label: arguments[0])
                #expect(await command.waitForExit(timeout: 120) == .exit(2), "\(command.transcript)")
                #expect(command.stderr.contains("\(file):8:34: requestsPerSecond must be a number of op starts a second from 0.001 to 1000000, "
                                                + "or off, found the number 1e-10"), "\(command.transcript)")
                #expect(command.stderr.contains("\(file):8:51: schedule: '08:00,:1e300': 1e300 requests a second is out of range"),
                        "\(command.transcript)")
                #expect(!command.stdout.contains("Flow Summary"), "nothing runs")
            }
        }
    }

    @Test func validateRefusesTheAnchorKeyBomb() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).yaml").path
        try AnchorKeyBomb.text(levels: 40).write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Killed past its limit so that a regression fails here instead of pinning a core for years.
        let result = try await TestCommand.measured(Self.coordinator, ["validate", path], timeLimit: 300)
        #expect(result.status == 2 && !result.killed, "\(result.errors.suffix(2000))")
        #expect(result.errors.contains("\(path):5:14: the alias '*l0a' of a map is used in a key: a key must be text"), "\(result.errors.suffix(2000))")
    }
}

/// The file: `levels` levels of maps whose keys are the aliases of the level below.
enum AnchorKeyBomb {
    static func text(levels: Int) -> String {
        var lines = ["flow: bomb", "bucket:", "  l0a: &l0a {x: 1}", "  l0b: &l0b {y: 2}"]
        for level in 1...levels {
            let below = level - 1
            lines.append("  l\(level)a: &l\(level)a {*l\(below)a : 1, *l\(below)b : 2}")
            lines.append("  l\(level)b: &l\(level)b {*l\(below)b : 1, *l\(below)a : 2}")
        }
        lines.append("steps:\n  - op: SimplePrintOp\n    with: {message: hi}")
        return lines.joined(separator: "\n") + "\n"
    }
}
