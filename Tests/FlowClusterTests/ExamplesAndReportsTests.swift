import Foundation
import Testing

extension ClusterIntegrationTests {
    /// The examples run as the README shows them, and the run's reports describe what happened.
    @Suite struct ExamplesAndReports {
        static let repositoryRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

        static func example(_ name: String) -> String {
            repositoryRoot.appendingPathComponent("examples").appendingPathComponent(name).path
        }

        @Test(arguments: ["chain.yaml", "login-profile.yaml", "failing-login.yaml", "grouped-upload.yaml", "cases.yaml", "upload-folder.yaml"])
        func showPrintsEveryExampleInEachFormat(example: String) async throws {
            try await withCluster { cluster in
                for format in ["outline", "mermaid", "dot"] {
                    let show = try cluster.coordinator(["show", Self.example(example), "--format", format], label: "show-\(format)")
                    #expect(await show.waitForExit(timeout: 20) == .exit(0), "\(show.transcript)")
                    switch format {
                    case "mermaid": #expect(show.stdout.hasPrefix("flowchart TD"))
                    case "dot": #expect(show.stdout.hasPrefix("digraph flow {") && show.stdout.contains("->"))
                    default: #expect(show.stdout.contains("1. "))
                    }
                }
            }
        }

        @Test func jsonReportListsEveryElementWithItsWorkerAndIsWrittenWhenTheFlowFails() async throws {
            try await withCluster { cluster in
                let images = FlowFixtures.imageNames(6)
                let flowFile = try cluster.write("group.yaml", FlowFixtures.groupedUpload(images: images, maxConcurrent: 3))
                let report = cluster.path("report.json")
                let run = try cluster.coordinator(["run", flowFile, "--json", report, "--quiet"])
                #expect(await run.waitForExit(timeout: 30) == .exit(0), "\(run.transcript)")
                let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
                #expect(json?["isSuccess"] as? Bool == true)
                let operations = json?["operations"] as? [[String: Any]] ?? []
                let elements = operations.filter { $0["groupIndex"] is Int }
                #expect(elements.compactMap { $0["groupIndex"] as? Int }.sorted() == Array(0..<images.count))
                #expect(elements.allSatisfy { ($0["worker"] as? String)?.hasPrefix("worker-") == true && $0["state"] as? String == "successfully" })
                let bucket = json?["bucket"] as? [String: Any]
                #expect((bucket?["imageURLs"] as? [String])?.count == images.count)

                let failing = cluster.path("failing.json")
                let failed = try cluster.coordinator(["run", Self.example("failing-login.yaml"), "--json", failing, "--quiet"], label: "failing")
                #expect(await failed.waitForExit(timeout: 30) == .exit(1), "\(failed.transcript)")
                let failure = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: failing))) as? [String: Any]
                #expect(failure?["isSuccess"] as? Bool == false)
                let op = (failure?["operations"] as? [[String: Any]])?.first
                #expect(op?["state"] as? String == "withInsufficientInputData")
                #expect((op?["error"] as? String)?.contains("<email>") == true)
            }
        }

        @Test func aCustomWorkerServesItsOwnOpBesideTheStockOnes() async throws {
            try await withCluster { cluster in
                let coordinator = try cluster.coordinator(["run", Self.example("custom-worker/reverse.yaml"), "--bind", "tcp://127.0.0.1:*"]
                                                          + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let worker = try cluster.start("custom-worker-example", ["--connect", endpoint, "--name", "mine"] + ClusterScope.fastHeartbeat)
                #expect(await coordinator.waitForExit(timeout: 30) == .exit(0), "\(coordinator.transcript)\n\(worker.transcript)")
                #expect(coordinator.stdout.contains(#"add for reversedWords: ["WOLF", "TFIWS", "QMOREZ"]"#), "\(coordinator.stdout)")
                #expect(coordinator.stdout.contains("@ mine] reversing swift"))
            }
        }

        @Test func aSwiftBlueprintRunsOnSpawnedWorkers() async throws {
            try await withCluster { cluster in
                let run = try cluster.start("blueprint-on-cluster-example", [])
                #expect(await run.waitForExit(timeout: 30) == .exit(0), "\(run.transcript)")
                #expect(run.stdout.contains("[SimplePrintOp @ worker-"), "\(run.stdout)")
                #expect(run.stdout.contains(#"add for imageURLs: ["url_of_a", "url_of_b", "url_of_c", "url_of_d"]"#))
                // Its endpoint's socket file goes in $TMPDIR (the scope's folder), and is removed at the end.
                let name = "flow-blueprint-\(run.processIdentifier).sock"
                let left = [cluster.path(name), "/tmp/" + name].filter { FileManager.default.fileExists(atPath: $0) }
                #expect(left.isEmpty, "the example left its socket file behind: \(left)")
            }
        }

        @Test func progressGoesToStderrAsPlainLinesWhenNotATerminalAndQuietSilencesIt() async throws {
            try await withCluster { cluster in
                let flowFile = try cluster.write("group.yaml", FlowFixtures.groupedUpload(images: FlowFixtures.imageNames(8), maxConcurrent: 2, delay: 0.3))
                let loud = try cluster.coordinator(["run", flowFile], label: "loud")
                #expect(await loud.waitForExit(timeout: 30) == .exit(0), "\(loud.transcript)")
                #expect(loud.stderr.contains("progress: UploadSingleImageOp: "), "\(loud.stderr)")
                #expect(loud.stderr.contains("group UploadSingleImageOp: 8/8 done, 0 failed"))
                #expect(loud.stderr.contains("[cluster] SimplePrintOp -> worker-"))
                #expect(!loud.stdout.contains("progress:"))
                // Progress ends with the flow: the local workers the run then stops are not
                // reported leaving (on a terminal those lines cut into the summary).
                #expect(!loud.stderr.contains(" left ("), "\(loud.stderr)")

                let quiet = try cluster.coordinator(["run", flowFile, "--quiet"], label: "quiet")
                #expect(await quiet.waitForExit(timeout: 30) == .exit(0), "\(quiet.transcript)")
                #expect(!quiet.stderr.contains("progress:"))
                #expect(quiet.stdout.contains("Flow isSuccess: true"))
            }
        }
    }
}
