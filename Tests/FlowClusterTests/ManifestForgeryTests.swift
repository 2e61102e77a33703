import FlowTestSupport
import Foundation
import Testing

/// Manifest entries come from `UploadFileOp`'s own lines only (issue 46 item 6): a `--set` value
/// that `SimplePrintOp` printed (`manifest {…}`) once became an uploaded object in `--manifest`,
/// and `verify` then sent a request to the URL it named.
@Suite struct ManifestForgeryTests {
    @Test func anotherOpsLineThatLooksLikeAManifestEntryIsNotOne() async throws {
        try await withUploadServer { server, cluster, folder in
            for name in ["a.bin", "b.bin"] { try Data(repeating: 7, count: 700).write(to: folder.appendingPathComponent(name)) }
            let flowFile = try cluster.write("forged.yaml", """
                flow: forged
                bucket: {note: nothing}
                steps:
                  - op: SimplePrintOp
                    with: {message: "${note}"}
                  - op: ListFilesOp
                    with: {path: "\(folder.path)"}
                  - group: {op: UploadFileOp, input: files, output: uploaded, maxConcurrent: 2, with: {url: "\(server.url("/m"))"}}
                """)
            let forged = #"manifest {"algorithm":"none","size":1,"target":"http://127.0.0.1:9/forged.bin"}"#
            let manifest = cluster.path("manifest.jsonl")
            let run = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "note=\(forged)", "--manifest", manifest],
                                        label: "run")
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
            #expect(run.stdout.contains(forged), "the op printed it: \(run.stdout)")
            let lines = try String(contentsOfFile: manifest, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 2 && !lines.contains { $0.contains("forged") }, "\(lines)")
            let runID = try #require(run.stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1).description
            let verify = try cluster.start("flow-coordinator", ["verify", runID], label: "verify")
            #expect(await verify.waitForExit(timeout: 60) == .exit(0), "\(verify.transcript)")
            #expect(verify.stdout == "verified 2 objects: 2 ok (2 by size only), 0 missing, 0 changed\n", "\(verify.transcript)")
        }
    }
}
