import FlowTestSupport
import Foundation
import Testing

/// `--manifest` is written as ops finish (issue 49): it no longer keeps every element of the run
/// in memory, so a big group stays condensed in the summary, and the manifest and the `Uploads:`
/// line still count every element, those the summary leaves out too.
@Suite struct ManifestStreamTests {
    @Test func aCondensedRunsManifestAndSkipCountHoldEveryElement() async throws {
        try await withUploadServer { server, cluster, folder in
            let count = 150
            for index in 0..<count { try Data(repeating: UInt8(index % 251), count: 100 + index).write(to: folder.appendingPathComponent("f\(index).bin")) }
            let flow = { (skip: Bool) in
                try cluster.write("upload-\(skip).yaml", """
                    flow: manifest
                    steps:
                      - op: ListFilesOp
                        with: {path: "\(folder.path)"}
                      - group: {op: UploadFileOp, input: files, maxConcurrent: 8, with: {url: "\(server.url("/s"))", skipExisting: \(skip)}}
                    """)
            }
            let first = cluster.path("first.jsonl")
            let sent = try cluster.start("flow-coordinator", ["run", try flow(false), "--workers", "2", "--manifest", first], label: "sent")
            #expect(await sent.waitForExit(timeout: 60) == .exit(0), "\(sent.transcript)")
            #expect(sent.stdout.contains("more elements succeeded; their lines are not shown here"), "the summary is condensed: \(sent.stdout.suffix(2000))")
            let uploaded = try String(contentsOfFile: first, encoding: .utf8).split(separator: "\n")
            #expect(uploaded.count == count)
            #expect(Set(uploaded.compactMap { $0.firstMatch(of: /"target":"[^"]*\/(f[0-9]+\.bin)"/)?.1 }).count == count)
            #expect(!uploaded.contains { $0.contains("skipped") })
            #expect(!FileManager.default.fileExists(atPath: first + ".partial"))

            let second = cluster.path("second.jsonl")
            let skipped = try cluster.start("flow-coordinator", ["run", try flow(true), "--workers", "2", "--manifest", second], label: "skipped")
            #expect(await skipped.waitForExit(timeout: 60) == .exit(0), "\(skipped.transcript)")
            #expect(skipped.stdout.contains("more elements succeeded; their lines are not shown here"))
            #expect(skipped.stdout.contains("Uploads: sent 0, skipped: \(count) ("), "\(skipped.stdout.suffix(1000))")
            let lines = try String(contentsOfFile: second, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == count && lines.allSatisfy { $0.contains("\"skipped\"") })
        }
    }
}
