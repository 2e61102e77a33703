import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// A big file's multipart upload, interrupted by a worker or a coordinator killed with
    /// SIGKILL, is continued where it stopped: real coordinator and worker processes, moto's S3
    /// server behind a proxy that counts each part `PUT`.
    @Suite struct S3ResumedUploads {
        /// 12 parts of 5 MiB, the last one 77 bytes.
        static let size = 55 * 1024 * 1024 + 77
        static let partCount = 12
        static let partConcurrency = 2
        static let key = "2026/video.bin"

        static func flow(endpoint: String) -> String {
            """
            flow: s3-big-file
            bucket: {folder: ./photos}
            steps:
              - op: ListFilesOp
                with: {path: "${folder}"}
              - group:
                  op: UploadFileOp
                  input: files
                  output: objects
                  maxConcurrent: 1
                  with:
                    url: s3://photos/2026/
                    endpoint: \(endpoint)
                    partSize: 5MiB
                    partConcurrency: \(partConcurrency)
            """
        }

        /// The folder with the big file, last modified a minute ago (so parts stored now are
        /// newer than it to the second).
        static func makeFolder(_ cluster: ClusterScope) throws -> URL {
            let folder = cluster.directory.appendingPathComponent("photos")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("video.bin")
            try PseudoRandomFile.write(to: file, size: size)
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-60)], ofItemAtPath: file.path)
            return folder
        }

        /// Waits until the store holds at least `count` parts of the unfinished upload (the proxy's
        /// count first, then `ListParts` on the store), holding later part `PUT`s at the proxy so
        /// that the upload is still unfinished when the test acts.
        static func holdAfterStoredParts(_ count: Int, proxy: S3ResumeProxy, transcript: () -> String) async throws -> [Int] {
            // The proxy holds later parts itself once `count` are stored: polling its count and
            // then holding let a fast upload finish in between (0 unfinished uploads listed).
            try proxy.hold(afterStored: count)
            let deadline = ContinuousClock.now + .seconds(120)
            while try proxy.stats().stored < count {
                guard ContinuousClock.now < deadline else { throw HarnessError("fewer than \(count) parts stored: \(transcript())") }
                try await Task.sleep(for: .milliseconds(20))
            }
            try proxy.hold()
            let listed = try await proxy.storedParts(of: key)
            try #require(listed.count == 1, "\(listed)")
            let parts = listed.values.first ?? []
            try #require(parts.count >= count && parts.count < partCount, "\(parts)")
            return parts
        }

        static func checkResumedUpload(_ s3: MotoS3Server, _ proxy: S3ResumeProxy, folder: URL, output: String) async throws {
            #expect(try await s3.object(key) == Data(contentsOf: folder.appendingPathComponent("video.bin")))
            #expect(try await s3.multipartUploads().isEmpty)
            let stats = try proxy.stats()
            // Every part once, but for those in flight at the kill.
            #expect(stats.partPuts <= partCount + partConcurrency, "\(stats.partPuts) part PUTs for \(partCount) parts: \(stats.parts)")
            #expect(stats.creates == 1 && stats.aborts == 0 && stats.completes == 1, "\(stats)")
            #expect(output.contains("resuming multipart upload "), "\(output)")
            #expect(output.contains(" parts already on the store"), "\(output)")
        }

        @Test func aWorkerKilledMidUploadLeavesItsPartsAndAnotherWorkerSendsOnlyTheRest() async throws {
            let s3 = try await MotoS3Server.start()
            defer { s3.stop() }
            let proxy = try await S3ResumeProxy.start(in: s3)
            defer { proxy.stop() }
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: proxy.endpoint))
                let coordinator = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "folder=\(folder.path)", "--bind", "tcp://127.0.0.1:*"]
                                                    + ClusterScope.fastHeartbeat, extraEnvironment: s3.credentialsEnvironment)
                let endpoint = try await coordinator.listeningEndpoint()
                let first = try cluster.start("flow-worker", ["--connect", endpoint, "--name", "w1"] + ClusterScope.fastHeartbeat,
                                              label: "w1", extraEnvironment: s3.credentialsEnvironment)
                _ = try await Self.holdAfterStoredParts(4, proxy: proxy) { coordinator.transcript + first.transcript }
                first.send(SIGKILL)
                #expect(await first.waitForExit(timeout: 10) == .signal(SIGKILL))
                let listingsBefore = try proxy.stats().listUploads
                try proxy.release()
                let second = try cluster.start("flow-worker", ["--connect", endpoint, "--name", "w2"] + ClusterScope.fastHeartbeat,
                                               label: "w2", extraEnvironment: s3.credentialsEnvironment)
                #expect(await coordinator.waitForExit(timeout: 120) == .exit(0), "\(coordinator.transcript)\n\(second.transcript)")
                try await Self.checkResumedUpload(s3, proxy, folder: folder, output: coordinator.stdout)
                #expect(coordinator.stdout.contains("@ w2]"), "\(coordinator.stdout)")
                // The TASK sent again carried w1's checkpoint (§7.9): no search of the store's
                // unfinished uploads.
                #expect(coordinator.stdout.contains(" from its checkpoint: "), "\(coordinator.stdout)")
                let stats = try proxy.stats()
                #expect(stats.listUploads == listingsBefore, "only the first try looked for an unfinished upload: \(stats)")
            }
        }

        /// A coordinator killed mid-upload: its local worker stops with it and `resume` continues
        /// the upload. The journal keeps the upload id, part size and finished parts as parts
        /// finish (§7.9), so the resume continues it even where the store refuses to list
        /// unfinished uploads (a key without `s3:ListBucketMultipartUploads`), with `ListParts`.
        @Test(arguments: [false, true])
        func aCoordinatorKilledMidUploadIsResumedAndSendsOnlyTheRest(listingRefused: Bool) async throws {
            let s3 = try await MotoS3Server.start()
            defer { s3.stop() }
            let proxy = try await S3ResumeProxy.start(in: s3)
            defer { proxy.stop() }
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: proxy.endpoint))
                let coordinator = try cluster.start("flow-coordinator", ["run", flowFile, "--quiet", "--workers", "1", "--set", "folder=\(folder.path)"],
                                                    extraEnvironment: s3.credentialsEnvironment)
                let stored = try await Self.holdAfterStoredParts(4, proxy: proxy) { coordinator.transcript }
                let runID = try #require(coordinator.stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1).description
                // The journal writes what it was told at most 0.1 s later (RunJournal.flushInterval).
                try await Task.sleep(for: .milliseconds(500))
                let workers = ProcessTable.children(of: coordinator.processIdentifier, named: "flow-worker")
                coordinator.send(SIGKILL)
                #expect(await coordinator.waitForExit(timeout: 10) == .signal(SIGKILL))
                // The local worker stops with its coordinator, leaving the upload for the resume;
                // the parts it had in flight reach the store after it is gone.
                let survivors = await ProcessTable.waitUntilGone(workers, timeout: 20)
                #expect(survivors.isEmpty, "the local worker outlived its killed coordinator: \(survivors)")
                if listingRefused { try proxy.refuseListingUploads() }
                try proxy.release()
                #expect(try proxy.stats().aborts == 0)
                try #require(try await proxy.storedParts(of: Self.key).count == 1)

                let resumed = try cluster.start("flow-coordinator", ["resume", runID, "--quiet", "--full-summary", "--workers", "1"], label: "resume",
                                                extraEnvironment: s3.credentialsEnvironment)
                #expect(await resumed.waitForExit(timeout: 120) == .exit(0), "\(resumed.transcript)")
                try await Self.checkResumedUpload(s3, proxy, folder: folder, output: resumed.stdout)
                let line = resumed.stdout.split(separator: "\n").first { $0.contains(" from its checkpoint: ") }
                let kept = try #require(line?.firstMatch(of: /: ([0-9]+) of 12 parts on the store \(([0-9]+) recorded\)/), "\(resumed.stdout)")
                #expect(Int(kept.1)! >= stored.count && Int(kept.2)! >= stored.count, "\(line ?? "")")
                #expect(!resumed.stdout.contains("could not look for an unfinished multipart upload"), "\(resumed.stdout)")
            }
        }

        /// A standing worker (`flow-worker --connect`) outlives its coordinator: it notices the
        /// silence, cancels the upload without aborting it (the run was interrupted, not
        /// cancelled by its user), and when `resume` binds the same endpoint it joins again and
        /// continues the upload, sending only the parts the store lacks.
        @Test func aCoordinatorKilledUnderAStandingWorkerLeavesTheUploadForResume() async throws {
            let s3 = try await MotoS3Server.start()
            defer { s3.stop() }
            let proxy = try await S3ResumeProxy.start(in: s3)
            defer { proxy.stop() }
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: proxy.endpoint))
                let endpoint = "tcp://127.0.0.1:\(try LoopbackPort.free())"
                let coordinator = try cluster.start("flow-coordinator", ["run", flowFile, "--quiet", "--bind", endpoint, "--set", "folder=\(folder.path)"]
                                                    + ClusterScope.fastHeartbeat, extraEnvironment: s3.credentialsEnvironment)
                let worker = try cluster.start("flow-worker", ["--connect", endpoint, "--name", "standing"] + ClusterScope.fastHeartbeat,
                                               label: "standing", extraEnvironment: s3.credentialsEnvironment)
                _ = try await Self.holdAfterStoredParts(4, proxy: proxy) { coordinator.transcript + worker.transcript }
                let runID = try #require(coordinator.stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1).description
                coordinator.send(SIGKILL)
                #expect(await coordinator.waitForExit(timeout: 10) == .signal(SIGKILL))
                // The worker stays up, says it cancelled its task, and leaves the upload unaborted.
                #expect(await worker.waitForStderr(containing: "cancelled 1 running task", timeout: 30), "\(worker.transcript)")
                try proxy.release()
                // What is tested is that nothing happens for a second: the worker neither exits
                // nor aborts the upload once its held parts go through (woken at once if it exits).
                let exited = await worker.waitForOutput(timeout: 1) { _, _ in !worker.isRunning }
                #expect(!exited && worker.isRunning, "\(worker.transcript)")
                let afterLoss = try proxy.stats()
                #expect(afterLoss.aborts == 0, "the standing worker aborted the upload: \(afterLoss)")
                try #require(try await proxy.storedParts(of: Self.key).count == 1)

                let resumed = try cluster.start("flow-coordinator", ["resume", runID, "--quiet", "--full-summary", "--bind", endpoint,
                                                                      "--min-workers", "1"] + ClusterScope.fastHeartbeat,
                                                label: "resume", extraEnvironment: s3.credentialsEnvironment)
                #expect(await resumed.waitForExit(timeout: 120) == .exit(0), "\(resumed.transcript)\n\(worker.transcript)")
                try await Self.checkResumedUpload(s3, proxy, folder: folder, output: resumed.stdout)
                #expect(resumed.stdout.contains("@ standing]"), "\(resumed.stdout)")
                #expect(await worker.terminate() == .exit(0), "\(worker.transcript)")
            }
        }
    }
}
