import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests.S3Uploads {
    /// A run of real coordinator and worker processes lists what an upload put in moto with
    /// `ListObjectsOp` and fans the objects out to a group on the workers.
    @Test func listedObjectsFeedAGroupOnTheWorkers() async throws {
        try await Self.withS3 { s3, cluster in
            let folder = try Self.makeFolder(cluster, count: 6, bigFile: false)
            let upload = try await Self.run(cluster, try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint)), folder: folder,
                                            environment: s3.credentialsEnvironment)
            #expect(upload.termination == .exit(0), "\(upload.transcript)")
            let listFlow = try cluster.write("list.yaml", """
                flow: s3-list
                steps:
                  - op: ListObjectsOp
                    with: {url: "s3://photos/2026/", endpoint: "\(s3.endpoint)", concurrency: 4, exclude: "photo 05.jpg"}
                  - group:
                      op: SleepOp
                      input: objects
                      output: seen
                      maxConcurrent: 4
                """)
            let list = try await Self.run(cluster, listFlow, folder: folder, environment: s3.credentialsEnvironment, extra: ["--workers", "2"])
            #expect(list.termination == .exit(0), "\(list.transcript)")
            #expect(list.stdout.contains("listed 5 objects ("), "\(list.stdout)")
            #expect(list.stdout.contains("under s3://photos/2026/ in 1 request, "), "\(list.stdout)")
            #expect(list.stdout.contains("(1 left out by the filters)"), "\(list.stdout)")
            let seen = try #require(list.stdout.finalBucketValue("seen"), "\(list.stdout)")
            for index in 0..<5 {
                #expect(seen.contains("2026/photo 0\(index).jpg"), "\(seen)")
            }
            #expect(!seen.contains("photo 05.jpg"))
            #expect(seen.contains("\"size\": 900") || seen.contains("\"size\":900"), "\(seen)")
        }
    }
}
