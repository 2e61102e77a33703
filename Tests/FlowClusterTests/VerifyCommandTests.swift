import Flow
import FlowJournal
import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests {
    /// `flow-coordinator verify RUN` against nginx and moto's S3, from real processes: a clean
    /// run passes, a deleted and a changed object fail it naming both, and `--deep` finds a change
    /// that keeps the size.
    @Suite struct VerifyCommand {
        /// The one journal in the cluster's journal folder.
        static func journal(_ cluster: ClusterScope) throws -> String {
            let names = try FileManager.default.contentsOfDirectory(atPath: cluster.journalFolder).filter { $0.hasSuffix(".sqlite") }
            try #require(names.count == 1, "journals: \(names)")
            return cluster.journalFolder + "/" + names[0]
        }

        static func verify(_ cluster: ClusterScope, _ arguments: [String], environment: [String: String] = [:],
                           label: String = "verify") async throws -> ChildProcess {
            let verify = try cluster.start("flow-coordinator", ["verify"] + arguments, label: label, extraEnvironment: environment)
            _ = await verify.waitForExit(timeout: 120)
            return verify
        }

        @Test func aCleanRunPassesAndADeletedAChangedAndASameSizeChangeAreFoundOnHTTP() async throws {
            try await withUploadServer { server, cluster, folder in
                for (index, name) in ["a.bin", "b.bin", "c.bin", "d.bin"].enumerated() {
                    try Data(repeating: UInt8(index + 1), count: 1_000 * (index + 1)).write(to: folder.appendingPathComponent(name))
                }
                let flowFile = try cluster.write("up.yaml", HTTPSyncRules.flow(folder: folder.path, target: server.url("/v"), rule: "false",
                                                                               checksum: "sha256"))
                let run = try cluster.start("flow-coordinator", ["run", flowFile], label: "run")
                _ = await run.waitForExit(timeout: 60)
                #expect(run.termination == .exit(0), "\(run.transcript)")
                let journal = try Self.journal(cluster)
                let runID = URL(fileURLWithPath: journal).deletingPathExtension().lastPathComponent

                let clean = try await Self.verify(cluster, [runID], label: "clean")
                #expect(clean.termination == .exit(0), "\(clean.transcript)")
                #expect(clean.stdout == "verified 4 objects: 4 ok (4 by size only), 0 missing, 0 changed\n", "\(clean.transcript)")

                try FileManager.default.removeItem(at: server.storedFile("/v/a.bin"))
                try Data(repeating: 9, count: 10).write(to: server.storedFile("/v/b.bin"))
                try Data(repeating: 9, count: 3_000).write(to: server.storedFile("/v/c.bin"))
                let broken = try await Self.verify(cluster, [journal, "--json", cluster.path("verify.json")], label: "broken")
                #expect(broken.termination == .exit(1), "\(broken.transcript)")
                #expect(broken.stdout.contains("\(server.url("/v/a.bin")): missing\n"), "\(broken.stdout)")
                #expect(broken.stdout.contains("\(server.url("/v/b.bin")): size 2000 ≠ 10\n"), "\(broken.stdout)")
                #expect(!broken.stdout.contains("c.bin"), "a HEAD cannot see a same-size change without an ETag: \(broken.stdout)")
                #expect(broken.stdout.hasSuffix("verified 4 objects: 2 ok (2 by size only), 1 missing, 1 changed\n"), "\(broken.stdout)")
                let report = try String(contentsOfFile: cluster.path("verify.json"), encoding: .utf8)
                #expect(report.contains(#""missing" : 1"#) && report.contains(#""changed" : 1"#), "\(report)")
                #expect(report.contains(#""size" : 2"#), "the two objects as recorded were compared by size alone: \(report)")

                let deep = try await Self.verify(cluster, [runID, "--deep"], label: "deep")
                #expect(deep.termination == .exit(1), "\(deep.transcript)")
                let recorded = UploadChecksum.sha256.base64(of: Data(repeating: 3, count: 3_000)) ?? ""
                let stored = UploadChecksum.sha256.base64(of: Data(repeating: 9, count: 3_000)) ?? ""
                #expect(deep.stdout.contains("\(server.url("/v/c.bin")): sha256 \(recorded) ≠ \(stored)\n"), "\(deep.stdout)")
                #expect(deep.stdout.hasSuffix("verified 4 objects: 1 ok (1 by checksum), 1 missing, 2 changed\n"), "\(deep.stdout)")
                #expect(await server.accessLog(waitingFor: 4) { $0.method == "GET" }.filter { $0.method == "GET" }.count == 4,
                        "--deep reads every object")
            }
        }

        @Test func anUnknownRunIsAUsageErrorThatSaysWhereItLooked() async throws {
            try await withCluster { cluster in
                let verify = try await Self.verify(cluster, ["20260101-000000-nope"])
                #expect(verify.termination == .exit(2), "\(verify.transcript)")
                #expect(verify.stderr.contains("looked for \(cluster.journalFolder)/20260101-000000-nope.sqlite"), "\(verify.transcript)")
            }
        }
    }
}

extension ClusterIntegrationTests.S3Uploads {
    /// Deletes and overwrites objects behind the run's back with boto3 (python3 waited for off the
    /// cooperative pool).
    static func boto3(_ s3: MotoS3Server, _ script: String) async throws {
        try await S3TestStoreKind.boto3(s3, script)
    }

    /// `verify` of an S3 run (moto): the endpoint comes from the manifest entries the run
    /// recorded; a clean run passes, then an object deleted and one overwritten with other bytes
    /// of the same size fail it, the HEAD seeing the changed ETag and `--deep` the CRC64NVME.
    @Test func verifyFindsADeletedAndAChangedObjectOnS3() async throws {
        try await Self.withS3 { s3, cluster in
            let folder = try Self.makeSyncFolder(cluster)
            let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint))
            let run = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
            #expect(run.termination == .exit(0), "\(run.transcript)")
            let journal = try ClusterIntegrationTests.VerifyCommand.journal(cluster)

            let clean = try await ClusterIntegrationTests.VerifyCommand.verify(cluster, [journal], environment: s3.credentialsEnvironment)
            #expect(clean.termination == .exit(0), "\(clean.transcript)")
            #expect(clean.stdout == "verified 3 objects: 3 ok (3 by checksum), 0 missing, 0 changed\n", "\(clean.transcript)")

            try await Self.boto3(s3, """
                s3.delete_object(Bucket="photos", Key="2026/photo 0.jpg")
                s3.put_object(Bucket="photos", Key="2026/photo 1.jpg", Body=b"z" * 1001)
                """)
            let broken = try await ClusterIntegrationTests.VerifyCommand.verify(cluster, [journal], environment: s3.credentialsEnvironment)
            #expect(broken.termination == .exit(1), "\(broken.transcript)")
            #expect(broken.stdout.contains("s3://photos/2026/photo 0.jpg: missing\n"), "\(broken.stdout)")
            #expect(broken.stdout.contains("s3://photos/2026/photo 1.jpg: "), "\(broken.stdout)")
            #expect(broken.stdout.hasSuffix("verified 3 objects: 1 ok (1 by checksum), 1 missing, 1 changed\n"), "\(broken.stdout)")

            let deep = try await ClusterIntegrationTests.VerifyCommand.verify(cluster, [journal, "--deep"], environment: s3.credentialsEnvironment)
            #expect(deep.termination == .exit(1), "\(deep.transcript)")
            let stored = UploadChecksum.crc64nvme.base64(of: Data(repeating: UInt8(ascii: "z"), count: 1_001)) ?? ""
            #expect(deep.stdout.contains("s3://photos/2026/photo 1.jpg: crc64nvme "), "\(deep.stdout)")
            #expect(deep.stdout.contains(" ≠ \(stored)\n"), "\(deep.stdout)")
        }
    }

    /// A manifest line without the endpoint (as journals before it was recorded have them) is
    /// checked at the endpoint the run's flow, kept in its journal, gave that bucket: with the
    /// environment's default (AWS itself, unreachable here) the checks could not be made.
    @Test func anEntryWithoutItsEndpointIsCheckedWhereTheRunsFlowSentIt() async throws {
        try await Self.withS3 { s3, cluster in
            let folder = try Self.makeSyncFolder(cluster)
            let flowText = Self.flow(endpoint: s3.endpoint)
            let flowFile = try cluster.write("s3.yaml", flowText)
            let run = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment, extra: ["--no-journal"])
            #expect(run.termination == .exit(0), "\(run.transcript)")

            let path = cluster.path("older.sqlite")
            let journal = try RunJournal.create(at: path, runID: "older", flowFile: flowFile, flowText: flowText,
                                                definition: try FlowFileLoader().load(text: flowText, file: flowFile))
            var events: [FlowRecordedEvent] = []
            for name in ["photo 0.jpg", "photo 1.jpg"] {
                let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
                let entry = UploadManifestEntry(target: "s3://photos/2026/\(name)", size: Int64(bytes.count), algorithm: .crc64nvme,
                                                checksum: UploadChecksum.crc64nvme.base64(of: bytes), etag: nil)
                #expect(entry.endpoint == nil && !entry.json.contains("endpoint"))
                events.append(FlowRecordedEvent(time: Date(), kind: .log(entry.logLine)))
            }
            let result = FlowTaskResult(operationName: "UploadFileOp", state: .successfully, events: events, bucket: [:],
                                        startedAt: Date(), finishedAt: Date())
            journal.accepted(FlowJournalRecord(result: result, tag: nil), at: FlowStepID(path: "1"))
            try await journal.finish(.succeeded, exitCode: 0)

            let verify = try await ClusterIntegrationTests.VerifyCommand.verify(cluster, [path], environment: s3.credentialsEnvironment)
            #expect(verify.termination == .exit(0), "\(verify.transcript)")
            #expect(verify.stdout == "verified 2 objects: 2 ok (2 by checksum), 0 missing, 0 changed\n", "\(verify.transcript)")
        }
    }
}
