import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// Exit codes and messages for what cannot run: unknown ops, bad flow files, bad flags.
    @Suite struct CoordinatorRefusals {
        private static let unknownOpFlow = """
            flow: unknown-op
            steps:
              - op: SimplePrintOp
                with: {message: Before}
              - op: NoSuchOp
                with: {message: Never}
            """

        @Test func opNoConnectedWorkerOffersFailsWithExitThreeNamingTheOp() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("unknown.yaml", Self.unknownOpFlow)
                let coordinator = try cluster.coordinator(
                    ["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "1"] + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let worker = try cluster.worker(connect: endpoint, name: "stock")
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(3), "\(coordinator.transcript)")
                #expect(coordinator.stderr.contains("no worker offers op 'NoSuchOp'"), "\(coordinator.stderr)")
                #expect(coordinator.stdout.contains("[SimplePrintOp @ stock] Before"), "the known op before it must run")
                #expect(coordinator.stdout.contains("Flow isSuccess: false"))
                _ = await worker.terminate()
            }
        }

        @Test func embeddedRunRejectsAnUnknownOpUpFrontWithItsLocation() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("unknown.yaml", Self.unknownOpFlow)
                let coordinator = try cluster.coordinator(["run", file])
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(2), "\(coordinator.transcript)")
                let located = coordinator.stderr.split(separator: "\n").first { $0.hasPrefix("\(file):5:") && $0.contains("NoSuchOp") }
                #expect(located?.firstMatch(of: #/^[^:]+:5:\d+: /#) != nil, "want FILE:5:COLUMN: naming NoSuchOp\n\(coordinator.stderr)")
                #expect(!coordinator.stdout.contains("Before"), "nothing may run\n\(coordinator.stdout)")
                // The local workers start while the file loads (to boot meanwhile); a file that does not
                // load stops them before the coordinator exits and removes their endpoint's socket file.
                let workers = ProcessTable.mentioning(cluster.directory.path)
                #expect(workers.isEmpty, "local workers outlived a coordinator whose flow did not load: \(workers)")
                let left = try FileManager.default.contentsOfDirectory(atPath: cluster.directory.path).filter { $0.hasSuffix(".sock") }
                #expect(left.isEmpty, "the private endpoint's socket file was left behind: \(left)")
            }
        }

        @Test func malformedFlowFileExitsTwoWithFileLineColumn() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("broken.yaml", """
                    flow: broken
                    steps:
                      - op: SimplePrintOp
                        with: {message: [unclosed
                    """)
                for subcommand in ["run", "validate"] {
                    let coordinator = try cluster.coordinator([subcommand, file], label: "coordinator \(subcommand)")
                    let end = await coordinator.waitForExit(timeout: 20)
                    #expect(end == .exit(2), "\(coordinator.transcript)")
                    let located = coordinator.stderr.split(separator: "\n").contains { line in
                        line.hasPrefix(file + ":") && line.dropFirst(file.count).firstMatch(of: #/^:\d+:\d+: /#) != nil
                    }
                    #expect(located, "want FILE:LINE:COLUMN: on stderr\n\(coordinator.stderr)")
                    #expect(coordinator.stdout.isEmpty || !coordinator.stdout.contains("Flow Summary"))
                }
            }
        }

        @Test func structurallyWrongFlowFileNamesTheLineOfTheMistake() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("wrong.yaml", """
                    flow: wrong
                    steps:
                      - op: SimplePrintOp
                        with: {message: fine}
                      - group: {op: UploadSingleImageOp, input: images, output: urls, maxConcurrent: zero}
                    """)
                let coordinator = try cluster.coordinator(["validate", file])
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(2), "\(coordinator.transcript)")
                #expect(coordinator.stderr.contains("\(file):5:"), "\(coordinator.stderr)")
                #expect(coordinator.stderr.contains("maxConcurrent"), "\(coordinator.stderr)")
            }
        }

        @Test func validateAcceptsAGoodFileAndStrictRejectsAnUnknownOp() async throws {
            try await withCluster { cluster in
                let good = try cluster.write("good.yaml", FlowFixtures.groupedUpload(images: ["a", "b"], maxConcurrent: 2))
                let validate = try cluster.coordinator(["validate", good], label: "validate")
                #expect(await validate.waitForExit(timeout: 20) == .exit(0), "\(validate.transcript)")
                #expect(validate.stdout.contains("\(good): ok"), "\(validate.stdout)")

                let unknown = try cluster.write("unknown.yaml", Self.unknownOpFlow)
                let lenient = try cluster.coordinator(["validate", unknown], label: "validate lenient")
                #expect(await lenient.waitForExit(timeout: 20) == .exit(0), "\(lenient.transcript)")
                #expect(lenient.stderr.contains("NoSuchOp"), "an unknown op is at least a warning\n\(lenient.stderr)")
                #expect(!lenient.stderr.contains("did you mean"), "nothing is close to NoSuchOp\n\(lenient.stderr)")
                // A near miss of a stock op says which one it is likely to be.
                let typo = try cluster.write("typo.yaml", Self.unknownOpFlow.replacingOccurrences(of: "NoSuchOp", with: "UploadFileOP"))
                let typoed = try cluster.coordinator(["validate", typo], label: "validate typo")
                #expect(await typoed.waitForExit(timeout: 20) == .exit(0), "\(typoed.transcript)")
                #expect(typoed.stderr.contains("warning: op 'UploadFileOP' is not offered by the stock flow-worker (did you mean 'UploadFileOp'?); "
                    + "run it with workers that register it"), "\(typoed.stderr)")
                let strict = try cluster.coordinator(["validate", unknown, "--strict"], label: "validate strict")
                #expect(await strict.waitForExit(timeout: 20) == .exit(2), "\(strict.transcript)")
                #expect(strict.stderr.contains("\(unknown):5:"), "\(strict.stderr)")
            }
        }

        @Test func usageErrorsExitTwo() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("chain.yaml", FlowFixtures.chain)
                let cases: [(String, [String])] = [
                    ("coordinator unknown flag", ["run", file, "--no-such-flag"]),
                    ("coordinator bad --workers", ["run", file, "--workers", "0"]),
                    ("coordinator bad --set", ["run", file, "--set", "novalue"]),
                    ("coordinator missing file argument", ["run"]),
                    ("coordinator missing flow file", ["run", cluster.path("absent.yaml")]),
                ]
                for (label, arguments) in cases {
                    let child = try cluster.coordinator(arguments, label: label)
                    #expect(await child.waitForExit(timeout: 20) == .exit(2), "\(label)\n\(child.transcript)")
                    #expect(!child.stderr.isEmpty, "\(label): say what is wrong")
                }
                let worker = try cluster.start("flow-worker", ["--no-such-flag"], label: "worker unknown flag")
                #expect(await worker.waitForExit(timeout: 20) == .exit(2), "\(worker.transcript)")
                let noEndpoint = try cluster.start("flow-worker", [], label: "worker without --connect")
                #expect(await noEndpoint.waitForExit(timeout: 20) == .exit(2), "\(noEndpoint.transcript)")
            }
        }

        @Test func workerListsTheStockOps() async throws {
            try await withCluster { cluster in
                let list = try cluster.start("flow-worker", ["--list-ops"], label: "list-ops")
                #expect(await list.waitForExit(timeout: 20) == .exit(0), "\(list.transcript)")
                for op in ["SimplePrintOp", "MockAsyncLoginOp", "MockAsyncLoadProfileOp", "UploadSingleImageOp"] {
                    #expect(list.stdout.contains(op), "\(list.stdout)")
                }
            }
        }

        @Test func unusableEndpointsExitThree() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("chain.yaml", FlowFixtures.chain)
                let invalid = try cluster.coordinator(["run", file, "--bind", "tcp://256.1.1.1:1", "--insecure"], label: "invalid address")
                #expect(await invalid.waitForExit(timeout: 20) == .exit(3), "\(invalid.transcript)")
                #expect(invalid.stderr.contains("cannot bind"), "\(invalid.stderr)")

                let holder = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "20"], label: "port holder")
                let taken = try await holder.listeningEndpoint()
                let second = try cluster.coordinator(["run", file, "--bind", taken], label: "second on the same port")
                #expect(await second.waitForExit(timeout: 20) == .exit(3), "\(second.transcript)")
                #expect(second.stderr.contains("cannot bind \(taken)"), "\(second.stderr)")
                #expect(holder.isRunning, "the first coordinator must be unaffected")
                _ = await holder.terminate()

                let worker = try cluster.start("flow-worker", ["--connect", "not-an-endpoint"], label: "worker bad endpoint")
                #expect(await worker.waitForExit(timeout: 20) == .exit(3), "\(worker.transcript)")
                #expect(worker.stderr.contains("cannot connect to not-an-endpoint"), "\(worker.stderr)")
            }
        }

        @Test func noWorkerAtAllFailsAfterTheWorkerTimeoutWithExitThree() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("chain.yaml", FlowFixtures.chain)
                let started = ContinuousClock.now
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "1"])
                let end = await coordinator.waitForExit(timeout: 20)
                let waited = ContinuousClock.now - started
                #expect(end == .exit(3), "\(coordinator.transcript)")
                #expect(waited >= .seconds(1), "gave up after \(waited), before --worker-timeout")
                #expect(coordinator.stderr.contains("no worker offers op 'SimplePrintOp'"), "\(coordinator.stderr)")
                #expect(coordinator.stdout.contains("Flow isSuccess: false"))
            }
        }
    }
}
