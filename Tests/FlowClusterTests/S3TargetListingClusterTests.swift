import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests.S3Uploads {
    /// `skipExisting` by listing the target, from real coordinator and worker processes through a
    /// proxy that counts requests: the first run sends every file with no `HEAD` before it (the
    /// listing found nothing), the second sends nothing and no `HEAD`, each worker listing the
    /// target once; `listTarget: false` asks with a `HEAD` per file again.
    @Test func skipExistingListsTheTargetOncePerWorkerInsteadOfAHeadPerFile() async throws {
        try await Self.withS3 { s3, cluster in
            let proxy = try await S3ResumeProxy.start(in: s3)
            defer { proxy.stop() }
            let folder = try Self.makeFolder(cluster, count: 12, bigFile: false)
            let listed = try cluster.write("listed.yaml", Self.flow(endpoint: proxy.endpoint, extra: "skipExisting: true\n        listTarget: true"))
            let first = try await Self.run(cluster, listed, folder: folder, environment: s3.credentialsEnvironment, extra: ["--workers", "2"])
            #expect(first.termination == .exit(0), "\(first.transcript)")
            let afterFirst = try proxy.stats()
            #expect(afterFirst.heads == 0 && afterFirst.singlePuts == 12, "\(afterFirst)")
            #expect((1...2).contains(afterFirst.listObjects), "one listing per worker that ran files: \(afterFirst)")
            #expect(first.stdout.contains("skipExisting: listed 0 objects under s3://photos/2026/ in 1 request"), "\(first.stdout)")
            #expect(try await s3.objects().count == 12)

            let second = try await Self.run(cluster, listed, folder: folder, environment: s3.credentialsEnvironment, extra: ["--workers", "2"])
            #expect(second.termination == .exit(0), "\(second.transcript)")
            let afterSecond = try proxy.stats()
            #expect(afterSecond.heads == 0 && afterSecond.singlePuts == 12, "nothing sent, nothing asked: \(afterSecond)")
            #expect((1...2).contains(afterSecond.listObjects - afterFirst.listObjects), "\(afterSecond)")
            #expect(second.stdout.contains("skipExisting: listed 12 objects under s3://photos/2026/"), "\(second.stdout)")
            for index in 0..<12 {
                #expect(second.stdout.contains(String(format: "skipped photo %02d.jpg: the store has it already", index)), "\(second.stdout)")
            }

            // A dry run asks the same way, and counts no HEAD it did not send.
            let dry = try await Self.run(cluster, listed, folder: folder, environment: s3.credentialsEnvironment, extra: ["--dry-run"])
            #expect(dry.termination == .exit(0), "\(dry.transcript)")
            #expect(dry.stdout.contains("Dry run: to send 0 files, 0 bytes; skipped 12;"), "\(dry.stdout)")
            #expect(!dry.stdout.contains("HEAD"), "\(dry.stdout)")
            let afterDry = try proxy.stats()
            #expect(afterDry.heads == 0 && afterDry.singlePuts == 12, "\(afterDry)")

            let asked = try cluster.write("asked.yaml", Self.flow(endpoint: proxy.endpoint, extra: "skipExisting: true\n        listTarget: false"))
            let third = try await Self.run(cluster, asked, folder: folder, environment: s3.credentialsEnvironment, extra: ["--workers", "2"])
            #expect(third.termination == .exit(0), "\(third.transcript)")
            let afterThird = try proxy.stats()
            #expect(afterThird.heads == 12 && afterThird.listObjects == afterDry.listObjects && afterThird.singlePuts == 12, "\(afterThird)")
        }
    }

    /// A store that refuses the listing (a key that may `PUT` but lacks `s3:ListBucket`, as
    /// upload-only roles do) does not fail the group: each worker says once that it asks with a
    /// `HEAD` per file instead, tries the listing no more, and every file is sent; a second run
    /// skips every file by its `HEAD`.
    @Test func aRefusedListingFallsBackToAHeadPerFileAndSaysSoOnce() async throws {
        try await Self.withS3 { s3, cluster in
            let proxy = try await S3ResumeProxy.start(in: s3)
            defer { proxy.stop() }
            try proxy.refuseListingObjects()
            let folder = try Self.makeFolder(cluster, count: 12, bigFile: false)
            let listed = try cluster.write("listed.yaml", Self.flow(endpoint: proxy.endpoint, extra: "skipExisting: true\n        listTarget: true"))
            let first = try await Self.run(cluster, listed, folder: folder, environment: s3.credentialsEnvironment, extra: ["--workers", "2"])
            #expect(first.termination == .exit(0), "\(first.transcript)")
            let afterFirst = try proxy.stats()
            #expect(afterFirst.heads == 12 && afterFirst.singlePuts == 12, "a HEAD and a PUT per file: \(afterFirst)")
            #expect((1...2).contains(afterFirst.listObjects), "one refused listing per worker that ran files: \(afterFirst)")
            let warning = "skipExisting: the store refused to list s3://photos/2026/ (HTTP 403 AccessDenied: Access Denied); asking with a HEAD per file instead"
            let warnings = first.stdout.components(separatedBy: warning).count - 1
            #expect(warnings == afterFirst.listObjects, "said once per worker that tried: \(first.stdout)")
            #expect(try await s3.objects().count == 12)

            let second = try await Self.run(cluster, listed, folder: folder, environment: s3.credentialsEnvironment, extra: ["--workers", "2"])
            #expect(second.termination == .exit(0), "\(second.transcript)")
            let afterSecond = try proxy.stats()
            #expect(afterSecond.heads == 24 && afterSecond.singlePuts == 12, "every file skipped by its HEAD: \(afterSecond)")
            for index in 0..<12 {
                #expect(second.stdout.contains(String(format: "skipped photo %02d.jpg: the store has it already", index)), "\(second.stdout)")
            }
        }
    }

    /// A tree lists folder by folder: each worker lists each folder of the target its files go
    /// to, once, and the second run sends nothing and no `HEAD`.
    @Test func aTreeIsListedFolderByFolderAndNotAskedFileByFile() async throws {
        try await Self.withS3 { s3, cluster in
            let proxy = try await S3ResumeProxy.start(in: s3)
            defer { proxy.stop() }
            let folder = cluster.directory.appendingPathComponent("tree")
            for sub in ["a", "b"] {
                try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
                for index in 0..<3 {
                    try Data("\(sub)-\(index)".utf8).write(to: folder.appendingPathComponent("\(sub)/file \(index).txt"))
                }
            }
            let flow = try cluster.write("tree.yaml", """
                flow: s3-tree
                steps:
                  - op: ListFilesOp
                    with: {path: "\(folder.path)", recursive: true}
                  - group:
                      op: UploadFileOp
                      input: files
                      maxConcurrent: 4
                      with:
                        url: s3://photos/2026/
                        endpoint: \(proxy.endpoint)
                        skipExisting: true
                        listTarget: true
                """)
            let first = try await Self.run(cluster, flow, folder: folder, environment: s3.credentialsEnvironment, extra: ["--workers", "2"])
            #expect(first.termination == .exit(0), "\(first.transcript)")
            #expect(try await s3.objects().keys.sorted() == ["2026/a/file 0.txt", "2026/a/file 1.txt", "2026/a/file 2.txt",
                                                             "2026/b/file 0.txt", "2026/b/file 1.txt", "2026/b/file 2.txt"])
            let afterFirst = try proxy.stats()
            #expect(afterFirst.heads == 0 && afterFirst.singlePuts == 6, "\(afterFirst)")
            #expect((2...4).contains(afterFirst.listObjects), "each folder once per worker that had files in it: \(afterFirst)")

            let second = try await Self.run(cluster, flow, folder: folder, environment: s3.credentialsEnvironment, extra: ["--workers", "2"])
            #expect(second.termination == .exit(0), "\(second.transcript)")
            let afterSecond = try proxy.stats()
            #expect(afterSecond.heads == 0 && afterSecond.singlePuts == 6, "nothing sent, nothing asked: \(afterSecond)")
            #expect((2...4).contains(afterSecond.listObjects - afterFirst.listObjects), "\(afterSecond)")
            for sub in ["a", "b"] {
                #expect(second.stdout.contains("skipExisting: listed 3 objects under s3://photos/2026/\(sub)/ in 1 request"), "\(second.stdout)")
            }
            #expect(!second.stdout.contains("listed 6 objects"), "the whole prefix was listed at once: \(second.stdout)")
        }
    }
}
