import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// The seed's scenarios run by `flow-coordinator run` on embedded workers give the summary the
    /// same flow gives in one process.
    @Suite struct SeedScenariosOnTheCluster {
        /// Runs `yaml` on two embedded workers and compares the summary with the in-process one.
        ///
        /// - Returns: the coordinator (its output) after it exited.
        @discardableResult
        private func runAndCompare(
            _ cluster: ClusterScope, _ name: String, _ yaml: String, settings: [String: String] = [:],
            expectedExit: Int32 = 0, orderMatters: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
        ) async throws -> ChildProcess {
            let file = try cluster.write(name + ".yaml", yaml)
            let summaryFile = cluster.path(name + "-summary.txt")
            let arguments = ["run", file, "--summary", summaryFile] + settings.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0)=\($1)"] }
            let coordinator = try cluster.coordinator(arguments)
            let end = await coordinator.waitForExit(timeout: 30, sourceLocation: sourceLocation)
            #expect(end == .exit(expectedExit), "\(coordinator.transcript)", sourceLocation: sourceLocation)

            let local = try await inProcessSummary(of: file, settings: settings)
            var clusterLines = SummaryMask.lines(coordinator.stdout)
            var localLines = SummaryMask.lines(local.summary)
            if !orderMatters {
                clusterLines.sort()
                localLines.sort()
            }
            expectSameLines(clusterLines, localLines, name, sourceLocation: sourceLocation)
            #expect(coordinator.stdout.contains(" @ worker-"), "the ops did not run on workers", sourceLocation: sourceLocation)
            let written = try? String(contentsOfFile: summaryFile, encoding: .utf8)
            #expect(written == coordinator.stdout, "--summary FILE differs from stdout", sourceLocation: sourceLocation)
            return coordinator
        }

        @Test func chainOfTwoPrintOpsGivesTheInProcessSummary() async throws {
            try await withCluster { cluster in
                let coordinator = try await runAndCompare(cluster, "chain", FlowFixtures.chain)
                let lines = SummaryMask.lines(coordinator.stdout)
                let step1 = lines.firstIndex(of: "[SimplePrintOp] Step1")
                let step2 = lines.firstIndex(of: "[SimplePrintOp] Step2")
                #expect(step1 != nil && step2 != nil && step1! < step2!, "Step1 must come before Step2")
                #expect(coordinator.stdout.contains("Flow isSuccess: true"))
            }
        }

        @Test func loginThenLoadProfileCarriesTheAccessTokenBetweenWorkers() async throws {
            try await withCluster { cluster in
                let coordinator = try await runAndCompare(cluster, "login", FlowFixtures.loginThenProfile)
                #expect(coordinator.stdout.finalBucketValue("accessToken") == "sdaftadagasg", "\(coordinator.stdout)")
                #expect(coordinator.stdout.finalBucketValue("profileRefreshDate") != nil, "\(coordinator.stdout)")
                #expect(coordinator.stdout.contains("[MockAsyncLoginOp @ worker-1] DidFinish: successfully")
                        || coordinator.stdout.contains("[MockAsyncLoginOp @ worker-2] DidFinish: successfully"))
            }
        }

        @Test func groupedUploadWithMaxConcurrentOneGivesTheExactInProcessSummary() async throws {
            try await withCluster { cluster in
                let images = ["a", "b", "c", "d"]
                let coordinator = try await runAndCompare(
                    cluster, "group1", FlowFixtures.groupedUpload(images: images, maxConcurrent: 1))
                #expect(coordinator.stdout.finalBucketValue("imageURLs") == FlowFixtures.expectedURLs(images))
            }
        }

        @Test func groupedUploadWithMaxConcurrentThreeGivesTheInProcessLinesInAnyOrder() async throws {
            try await withCluster { cluster in
                let images = ["a", "b", "c", "d", "e", "f"]
                let coordinator = try await runAndCompare(
                    cluster, "group3", FlowFixtures.groupedUpload(images: images, maxConcurrent: 3), orderMatters: false)
                #expect(coordinator.stdout.finalBucketValue("imageURLs") == FlowFixtures.expectedURLs(images))
                #expect(coordinator.stdout.contains("[FlowArrayGroupDispatcher] group created: 6"))
                #expect(coordinator.stdout.contains("[FlowArrayGroupDispatcher] all finished. output size: 6"))
            }
        }

        @Test(arguments: ["A", "B"])
        func casesRunOnlyTheBranchTheTargetPicks(target: String) async throws {
            try await withCluster { cluster in
                let settings = target == "A" ? [:] : ["target": target]
                let coordinator = try await runAndCompare(cluster, "cases-\(target)", FlowFixtures.cases, settings: settings)
                let lines = SummaryMask.lines(coordinator.stdout)
                #expect(lines.contains("[SimplePrintOp] Step2A1") == (target == "A"))
                #expect(lines.contains("[SimplePrintOp] Step2A2") == (target == "A"))
                #expect(lines.contains("[SimplePrintOp] Step2B1") == (target == "B"))
                #expect(lines.contains("[SimplePrintOp] Step3"))
            }
        }

        @Test func missingInputFailsTheFlowWithExitOneAndNamesTheKey() async throws {
            try await withCluster { cluster in
                let coordinator = try await runAndCompare(cluster, "missing", FlowFixtures.missingInput, expectedExit: 1)
                let lines = SummaryMask.lines(coordinator.stdout)
                #expect(lines.contains("[MockAsyncLoginOp] DidFinish: withInsufficientInputData: can't find <email> in data bucket"),
                        "\(coordinator.stdout)")
                #expect(!coordinator.stdout.contains("NeverPrinted"))
                #expect(coordinator.stdout.contains("Flow isSuccess: false"))
            }
        }
    }
}
