import Foundation
import Testing

extension ClusterIntegrationTests {
    /// A big group does not flood the terminal: its first 10 elements, its failures and a count.
    @Suite struct CondensedSummaries {
        static let flow = """
            flow: many
            bucket: {items: [\((1...150).map(String.init).joined(separator: ", "))]}
            steps:
              - group:
                  op: ShellOp
                  input: items
                  output: echoed
                  maxConcurrent: 8
                  allowFailure: true
                  with: {shell: true, command: "echo item $1; test $1 -ne 120 -a $1 -ne 131"}
            """

        @Test func aGroupOfMoreThan100ShowsItsFirst10ItsFailuresAndACount() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("many.yaml", Self.flow)
                let full = cluster.path("full.txt")
                let coordinator = try cluster.coordinator(["run", file, "--quiet", "--workers", "1", "--summary", full])
                #expect(await coordinator.waitForExit(timeout: 120) == .exit(0), "\(coordinator.transcript.suffix(2000))")
                let shown = coordinator.stdoutLines.filter { $0.contains("[ShellOp ") && $0.hasSuffix("WillStart") }
                #expect(shown.count == 12, "10 first elements and 2 failed ones, got \(shown.count)")
                #expect(coordinator.stdoutLines.filter { $0.contains("exited with status 1") }.count >= 2, "the failures' lines are shown")
                #expect(coordinator.stdout.contains("[Group] … 138 more elements succeeded; their lines are not shown here (the full summary: in \(full))"),
                        "\(coordinator.stdout.suffix(1500))")
                #expect(coordinator.stdout.contains("[Group] 2 of 150 elements failed (within allowFailure):"))
                #expect(coordinator.stdout.contains("output size: 148"))
                let written = try String(contentsOfFile: full, encoding: .utf8)
                #expect(written.split(separator: "\n").filter { $0.contains("[ShellOp ") && $0.hasSuffix("WillStart") }.count == 150)
                // The file is written line by line while the run goes, under a temporary name.
                #expect(written.hasPrefix("====== Flow Summary ======\n"))
                #expect(written.hasSuffix("Flow isSuccess: true\n======    Ending    ======\n"))
                let left = try FileManager.default.contentsOfDirectory(atPath: (full as NSString).deletingLastPathComponent)
                #expect(!left.contains { $0.hasSuffix(".partial") }, "\(left)")

                let everything = try cluster.coordinator(["run", file, "--quiet", "--workers", "1", "--full-summary"], label: "full")
                #expect(await everything.waitForExit(timeout: 120) == .exit(0), "\(everything.transcript.suffix(2000))")
                #expect(everything.stdoutLines.filter { $0.contains("[ShellOp ") && $0.hasSuffix("WillStart") }.count == 150)
                #expect(!everything.stdout.contains("more elements succeeded"))
                #expect(everything.stdout.hasSuffix("Flow isSuccess: true\n======    Ending    ======\n"))
            }
        }

        /// A JSON report lists every op, so it keeps every element, condensed terminal or not.
        @Test func aJSONReportListsEveryElement() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("many.yaml", Self.flow)
                let json = cluster.path("report.json")
                let coordinator = try cluster.coordinator(["run", file, "--quiet", "--workers", "1", "--json", json])
                #expect(await coordinator.waitForExit(timeout: 120) == .exit(0), "\(coordinator.transcript.suffix(2000))")
                #expect(coordinator.stdout.contains("138 more elements succeeded"))
                let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
                #expect((report["operations"] as? [Any])?.count == 150)
            }
        }

        @Test func aSummaryFileThatCannotBeMadeStopsTheRunBeforeItStarts() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("many.yaml", Self.flow)
                let coordinator = try cluster.coordinator(["run", file, "--quiet", "--workers", "1", "--summary", cluster.path("no/such/dir/s.txt")])
                #expect(await coordinator.waitForExit(timeout: 60) == .exit(2), "\(coordinator.transcript.suffix(2000))")
                #expect(coordinator.stderr.contains("cannot write the summary to \(cluster.path("no/such/dir/s.txt")): No such file or directory"),
                        "\(coordinator.stderr)")
                #expect(!coordinator.stdout.contains("WillStart"), "nothing ran")
            }
        }
    }
}
