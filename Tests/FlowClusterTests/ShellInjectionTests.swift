import Foundation
import Testing

/// Bucket values inside a `shell: true` command are data: a value from `--set`, a `--bucket` file
/// or an earlier op's output reaches the script as one word of text, never as code, through the
/// real `flow-coordinator` and its workers.
@Suite struct ShellInjectionTests {
    /// Writes a flow whose shell steps print `${name}` unquoted, in double quotes and in single
    /// quotes, one per line, into `out` (and the earlier op's output into `out2`).
    static func flow(_ cluster: ClusterScope) throws -> String {
        let out = cluster.path("out")
        return try cluster.write("shell.yaml", """
            flow: shell-values
            bucket: {name: plain}
            steps:
              - op: ShellOp
                with:
                  shell: true
                  command: "printf '%s\\\\n' ${name} \\"in double ${name}\\" 'in single ${name}' > \(out)"
              - op: ShellOp
                with:
                  shell: true
                  command: "printf '%s' \\"${name}\\""
              - op: ShellOp
                with:
                  shell: true
                  command: "printf '%s\\\\n' ${output} $${HOME} > \(out)2"
            """)
    }

    @Test(arguments: [
        "$(touch PWNED)", "x `touch PWNED`", "x; touch PWNED", "a' ; touch PWNED; echo '", "b\" ; touch PWNED; echo \"", "c && touch PWNED",
    ])
    func valuesFromSetBucketAndAnEarlierOutputStayText(_ value: String) async throws {
        try await withCluster { cluster in
            let flowFile = try Self.flow(cluster)
            let pwned = cluster.path("PWNED")
            let hostile = value.replacingOccurrences(of: "PWNED", with: pwned)

            let fromSet = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "name=\(hostile)"])
            _ = await fromSet.waitForExit(timeout: 60)
            #expect(fromSet.termination == .exit(0), "\(fromSet.transcript)")
            #expect(!FileManager.default.fileExists(atPath: pwned), "--set \(hostile) ran as code")
            let lines = try String(contentsOfFile: cluster.path("out"), encoding: .utf8)
            #expect(lines == "\(hostile)\nin double \(hostile)\nin single \(hostile)\n")
            let again = try String(contentsOfFile: cluster.path("out2"), encoding: .utf8)
            #expect(again == "\(hostile)\n\(ProcessInfo.processInfo.environment["HOME"] ?? "")\n",
                    "an earlier op's output, and $${HOME} as the shell's own variable")

            let bucketFile = try cluster.write("bucket.json", String(decoding: try JSONSerialization.data(withJSONObject: ["name": hostile]),
                                                                     as: UTF8.self))
            let fromBucket = try cluster.start("flow-coordinator", ["run", flowFile, "--bucket", bucketFile])
            _ = await fromBucket.waitForExit(timeout: 60)
            #expect(fromBucket.termination == .exit(0), "\(fromBucket.transcript)")
            #expect(!FileManager.default.fileExists(atPath: pwned), "--bucket \(hostile) ran as code")
            #expect(try String(contentsOfFile: cluster.path("out"), encoding: .utf8).hasPrefix("\(hostile)\n"))
        }
    }
}
