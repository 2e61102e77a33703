import FlowTestSupport
import Foundation
import Testing

/// `flow-coordinator validate` and `run` refuse a `with:` key the stock op does not take, where it
/// was silently ignored and the run "succeeded" doing something else; `flow-worker --list-ops`
/// lists each op's keys.
@Suite struct UnknownParameterTests {
    private static let flow = """
        flow: tree
        steps:
          - op: ListFilesOp
            with:
              path: /tmp
              exclud: ["*.tmp"]
          - group:
              op: UploadFileOp
              input: files
              output: urls
              with: {url: "http://127.0.0.1:1/up", retry: {attempts: 3}}
        """

    @Test func validateAndRunExitTwoNamingTheKeyItsPlaceAndTheKeyMeant() async throws {
        try await withCluster { cluster in
            let file = try cluster.write("tree.yaml", Self.flow)
            let misspelt = "\(file):6:7: unknown parameter 'exclud' for ListFilesOp; did you mean 'exclude'?"
            let stepKey = "\(file):11:44: 'retry' is a group key, not a parameter of UploadFileOp: put it beside 'op:' in 'group:', not under 'with:'"
            let runs: [(String, [String])] = [
                ("validate", ["validate", file]),
                ("validate --strict", ["validate", file, "--strict"]),
                ("run", ["run", file, "--no-journal", "--workers", "1"]),
                // Remote workers may offer other ops, but the stock ones' keys are checked still.
                ("run --bind", ["run", file, "--no-journal", "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "5"]),
            ]
            for (label, arguments) in runs {
                let command = try cluster.coordinator(arguments, label: label)
                #expect(await command.waitForExit(timeout: 30) == .exit(2), "\(label): \(command.transcript)")
                #expect(command.stderr.contains(misspelt), "\(label): \(command.stderr)")
                #expect(command.stderr.contains(stepKey), "\(label): \(command.stderr)")
                #expect(!command.stdout.contains("Flow Summary"), "\(label): nothing runs")
            }

            let fixed = try cluster.write("fixed.yaml", Self.flow.replacingOccurrences(of: "exclud:", with: "exclude:")
                .replacingOccurrences(of: ", retry: {attempts: 3}", with: ""))
            let validate = try cluster.coordinator(["validate", fixed], label: "validate fixed")
            #expect(await validate.waitForExit(timeout: 30) == .exit(0), "\(validate.transcript)")
        }
    }

    @Test func listOpsPrintsEachOpsParameters() async throws {
        try await withCluster { cluster in
            let list = try cluster.start("flow-worker", ["--list-ops"], label: "list-ops")
            #expect(await list.waitForExit(timeout: 20) == .exit(0), "\(list.transcript)")
            #expect(list.stdout.contains("\n      exclude (list): "), "\(list.stdout)")
            #expect(list.stdout.contains("\n      checksum (text): "), "\(list.stdout)")
            #expect(list.stdout.contains("\n      ms (number): "), "\(list.stdout)")
        }
    }
}
