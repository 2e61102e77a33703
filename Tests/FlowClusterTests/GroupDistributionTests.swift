import Foundation
import Testing

extension ClusterIntegrationTests {
    /// Groups spread over several workers, and the ways a run's bucket is set from the command line.
    @Suite struct GroupsAndBucketsOnTheCluster {
        @Test func groupOfThirtyOverThreeWorkersKeepsInputOrderAndUsesSeveralWorkers() async throws {
            try await withCluster { cluster in
                let images = FlowFixtures.imageNames(30)
                let file = try cluster.write("thirty.yaml", FlowFixtures.groupedUpload(images: images, maxConcurrent: 12))
                let coordinator = try cluster.coordinator(["run", file, "--workers", "3", "--concurrency", "4"])
                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")

                let summary = coordinator.stdout
                #expect(summary.finalBucketValue("imageURLs") == FlowFixtures.expectedURLs(images))
                #expect(summary.contains("[DataBucket] add for imageURLs: \(FlowFixtures.expectedURLs(images))"))
                #expect(summary.contains("[FlowArrayGroupDispatcher] all finished. output size: 30"))
                let finished = summary.split(separator: "\n").filter { $0.contains("[UploadSingleImageOp ") && $0.hasSuffix("DidFinish: successfully") }
                #expect(finished.count == 30)
                let workers = Set(finished.compactMap { line in line.firstMatch(of: #/ @ (worker-\d+)\]/#).map { String($0.1) } })
                #expect(workers.count >= 2, "all group elements ran on \(workers)")
                #expect(workers.isSubset(of: ["worker-1", "worker-2", "worker-3"]))
            }
        }

        @Test func setValueIsTypedAndBucketFileIsMergedIntoTheStartBucket() async throws {
            try await withCluster { cluster in
                // The case branch "3" matches only the string "3": with --set count=3 read as an
                // integer the default branch runs.
                let file = try cluster.write("typed.yaml", """
                    flow: typed
                    bucket: {target: A, count: "seven", fromFlow: kept}
                    steps:
                      - cases:
                          key: count
                          branches:
                            "3": [{op: SimplePrintOp, with: {message: CountIsTheString3}}]
                          default: [{op: SimplePrintOp, with: {message: CountIsNotAString}}]
                    """)
                let bucketFile = try cluster.write("bucket.json", """
                    {"fromFile": "yes", "count": "from-file", "nested": {"list": [1, 2]}, "target": "B"}
                    """)
                let coordinator = try cluster.coordinator(["run", file, "--bucket", bucketFile, "--set", "count=3", "--set", "label=hello world"])
                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")

                let start = coordinator.stdout.initialBucketLines
                #expect(start == [
                    "count: 3",
                    "fromFile: yes",
                    "fromFlow: kept",
                    "label: hello world",
                    "nested: [\"list\": [1, 2]]",
                    "target: B",
                ], "\(coordinator.stdout)")
                #expect(coordinator.stdout.contains("CountIsNotAString"), "count=3 was not read as an integer\n\(coordinator.stdout)")
                #expect(!coordinator.stdout.contains("CountIsTheString3"))
            }
        }

        @Test func quotedSetValueStaysAString() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("quoted.yaml", """
                    flow: quoted
                    bucket: {count: 0}
                    steps:
                      - cases:
                          key: count
                          branches:
                            "3": [{op: SimplePrintOp, with: {message: CountIsTheString3}}]
                          default: [{op: SimplePrintOp, with: {message: CountIsNotAString}}]
                    """)
                let coordinator = try cluster.coordinator(["run", file, "--set", "count='3'", "--workers", "1"])
                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("CountIsTheString3"), "\(coordinator.stdout)")
            }
        }
    }
}
