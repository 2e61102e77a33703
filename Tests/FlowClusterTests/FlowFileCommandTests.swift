import FlowTestSupport
import Foundation
import Testing

/// What `flow-coordinator validate` and `run` make of a flow file's values: how far aliases may
/// expand it, and how `--set` and `--set-string` type what they are given.
@Suite struct FlowFileCommandTests {
    private static let coordinator = ClusterScope.productsDirectory.appendingPathComponent("flow-coordinator").path

    /// A 1.1 MB flow file whose 100 KB text is aliased 111,110 times: 11 GB once expanded, which
    /// passed `validate` and drove `run` past 3 GB in 7 s.
    private static func aliasBomb() -> String {
        "flow: bomb\nbucket:\n" + aliasedValues(indent: "  ") + "steps:\n  - op: SimplePrintOp\n    with: {message: hi}\n"
    }

    /// `big:`, a 100 KB text, and `copies:`, a list of 111,110 aliases of it.
    private static func aliasedValues(indent: String) -> String {
        var text = "\(indent)big: &big \(String(repeating: "x", count: 100_000))\n\(indent)copies:\n"
        text.reserveCapacity(1_200_000)
        for _ in 0..<111_110 { text += "\(indent)- *big\n" }
        return text
    }

    @Test func anAliasBombIsRefusedWithItsPlaceInBoundedMemory() async throws {
        try await withCluster { cluster in
            let bomb = try cluster.write("bomb.yaml", Self.aliasBomb())
            #expect(try FileManager.default.attributesOfItem(atPath: bomb)[.size] as? Int ?? 0 > 1_000_000)
            // The same aliases in a --bucket file, read with a flow that is fine.
            let good = try cluster.write("good.yaml", "flow: good\nsteps:\n  - op: SimplePrintOp\n    with: {message: hi}\n")
            let bucket = try cluster.write("bucket.yaml", Self.aliasedValues(indent: ""))
            let refusal = "the file expands to more than 64 MiB of text beyond what it writes out, through aliases ('*name')"
            let cases: [(String, [String], String)] = [
                ("validate", ["validate", bomb], "\(bomb):3:8: "),
                ("run", ["run", bomb, "--no-journal", "--workers", "1"], "\(bomb):3:8: "),
                ("run --bucket", ["run", good, "--bucket", bucket, "--no-journal", "--workers", "1"], "\(bucket):1:6: "),
            ]
            for (label, arguments, place) in cases {
                // Killed past 1 GB, so that a regression fails here without taking the machine's memory.
                let result = try await TestCommand.measured(Self.coordinator, arguments, memoryCap: 1 << 30, timeLimit: 60)
                #expect(result.status == 2, "\(label): \(result.errors.suffix(2000))")
                #expect(!result.killed, "\(label): killed past 1 GB or 60 s")
                #expect(result.errors.contains(place + refusal), "\(label): \(result.errors.suffix(2000))")
                #expect(result.peakResidentBytes < 300 << 20, "\(label): peak RSS \(result.peakResidentBytes >> 20) MiB")
                #expect(!result.output.contains("Flow Summary"), "\(label): nothing runs")
            }
        }
    }

    @Test func setTypesByYAML12AndSetStringKeepsText() async throws {
        try await withCluster { cluster in
            let flow = try cluster.write("values.yaml", """
                flow: values
                bucket:
                  fromFile: 0123
                  word: off
                steps:
                  - op: SimplePrintOp
                    with: {message: hi}
                """)
            let report = cluster.path("report.json")
            let run = try cluster.coordinator([
                "run", flow, "--no-journal", "--workers", "1", "--json", report,
                "--set", "zip=0123", "--set", "flag=true", "--set", "time=12:30", "--set", "answer=NO",
                "--set-string", "zipText=0123", "--set-string", "flagText=true", "--set-string", "version=1.10",
            ])
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
            let data = try Data(contentsOf: URL(fileURLWithPath: report))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let bucket = try #require(json["bucket"] as? [String: Any], "\(json)")
            #expect(bucket["fromFile"] as? Int == 123)
            #expect(bucket["word"] as? String == "off")
            #expect(bucket["zip"] as? Int == 123)
            #expect(bucket["flag"] as? Bool == true)
            #expect(bucket["time"] as? String == "12:30")
            #expect(bucket["answer"] as? String == "NO")
            #expect(bucket["zipText"] as? String == "0123")
            #expect(bucket["flagText"] as? String == "true")
            #expect(bucket["version"] as? String == "1.10")

            let both = try cluster.coordinator(["run", flow, "--no-journal", "--set", "v=1", "--set-string", "v=1"], label: "both")
            #expect(await both.waitForExit(timeout: 20) == .exit(2), "\(both.transcript)")
            #expect(both.stderr.contains("'v' is given by both --set and --set-string: keep one"), "\(both.stderr)")
        }
    }
}
