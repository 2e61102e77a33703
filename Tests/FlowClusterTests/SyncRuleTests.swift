import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests.S3Uploads {
    /// Three small files of distinct content in `cluster/photos`.
    static func makeSyncFolder(_ cluster: ClusterScope) throws -> URL {
        let folder = cluster.directory.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for index in 0..<3 {
            try PatternBytes.make(count: 1_000 + index, multiplier: 31, offset: index)
                .write(to: folder.appendingPathComponent("photo \(index).jpg"))
        }
        return folder
    }

    /// The names a run's summary says it uploaded (`uploaded NAME (…`) and skipped.
    static func sentAndSkipped(_ run: ChildProcess) -> (sent: [String], skipped: [String]) {
        func names(after marker: String, until end: String) -> [String] {
            run.stdoutLines.compactMap { line in
                guard let start = line.range(of: marker)?.upperBound, let stop = line.range(of: end, range: start..<line.endIndex) else { return nil }
                return String(line[start..<stop.lowerBound])
            }.sorted()
        }
        return (names(after: "uploaded ", until: " ("), names(after: "skipped ", until: ": the store has it already"))
    }

    /// `skipExisting: modtime` on moto: the first run stores each file's time in
    /// `x-amz-meta-mtime`; after one file is touched (its bytes as they were), a dry run says
    /// it would send that one and skip the others, and the second run sends only it, counting
    /// the others as skipped in its summary, its manifest and its `--json` report.
    @Test func aSecondRunWithSkipExistingModtimeSendsOnlyTheTouchedFile() async throws {
        try await Self.withS3 { s3, cluster in
            let folder = try Self.makeSyncFolder(cluster)
            let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint, extra: "skipExisting: modtime"))
            let first = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment, extra: ["--no-journal"])
            #expect(first.termination == .exit(0), "\(first.transcript)")
            #expect(Self.sentAndSkipped(first).sent.count == 3, "\(first.stdout)")

            let touched = folder.appendingPathComponent("photo 1.jpg")
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3_600)], ofItemAtPath: touched.path)
            let dry = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment, extra: ["--dry-run"])
            #expect(dry.termination == .exit(0), "\(dry.transcript)")
            #expect(dry.stdout.contains("Dry run: to send 1 file, 1001 bytes; skipped 2;"), "\(dry.stdout)")
            #expect(dry.stdout.contains("skipped photo 0.jpg: exists with the same size and modification time (1000 bytes)"), "\(dry.stdout)")

            let manifest = cluster.path("manifest.jsonl")
            let report = cluster.path("report.json")
            let second = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment,
                                            extra: ["--no-journal", "--manifest", manifest, "--json", report])
            #expect(second.termination == .exit(0), "\(second.transcript)")
            let (sent, skipped) = Self.sentAndSkipped(second)
            #expect(sent == ["photo 1.jpg"], "\(second.stdout)")
            #expect(skipped == ["photo 0.jpg", "photo 2.jpg"], "\(second.stdout)")
            #expect(second.stdout.contains("Uploads: sent 1, skipped: 2 (same modtime)"), "\(second.stdout)")
            let entries = try String(contentsOfFile: manifest, encoding: .utf8).split(separator: "\n")
                .map { try JSONDecoder().decode(UploadManifestEntry.self, from: Data($0.utf8)) }
            #expect(entries.filter { $0.skipped == "same modtime" }.map(\.target).sorted()
                    == ["s3://photos/2026/photo 0.jpg", "s3://photos/2026/photo 2.jpg"], "\(entries)")
            #expect(entries.filter { $0.skipped == nil }.map(\.target) == ["s3://photos/2026/photo 1.jpg"])
            #expect(try String(contentsOfFile: report, encoding: .utf8).contains(#"\"skipped\":\"same modtime\""#))
        }
    }

    /// `skipExisting: checksum` on moto: a file whose bytes changed but not its size is sent,
    /// the unchanged ones are skipped for their stored CRC64NVME, and the dry run says the same.
    @Test func skipExistingChecksumSkipsUnchangedFilesAndSendsAChangedFileOfTheSameSize() async throws {
        try await Self.withS3 { s3, cluster in
            let folder = try Self.makeSyncFolder(cluster)
            let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint, extra: "skipExisting: checksum"))
            let first = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment, extra: ["--no-journal"])
            #expect(first.termination == .exit(0), "\(first.transcript)")
            #expect(Self.sentAndSkipped(first).sent.count == 3, "\(first.stdout)")

            let changed = folder.appendingPathComponent("photo 2.jpg")
            let bytes = Data(repeating: 0x5A, count: 1_002)
            try bytes.write(to: changed)
            let dry = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment, extra: ["--dry-run"])
            #expect(dry.termination == .exit(0), "\(dry.transcript)")
            #expect(dry.stdout.contains("Dry run: to send 1 file, 1002 bytes; skipped 2;"), "\(dry.stdout)")
            #expect(dry.stdout.contains("exists with the same size and crc64nvme checksum (1000 bytes)"), "\(dry.stdout)")

            let second = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment, extra: ["--no-journal"])
            #expect(second.termination == .exit(0), "\(second.transcript)")
            let (sent, skipped) = Self.sentAndSkipped(second)
            #expect(sent == ["photo 2.jpg"], "\(second.stdout)")
            #expect(skipped == ["photo 0.jpg", "photo 1.jpg"], "\(second.stdout)")
            #expect(second.stdout.contains("Uploads: sent 1, skipped: 2 (same checksum)"), "\(second.stdout)")
            #expect(try await s3.object("2026/photo 2.jpg") == bytes)
        }
    }
}

extension ClusterIntegrationTests {
    /// `skipExisting` rules against nginx, which keeps no object metadata.
    @Suite struct HTTPSyncRules {
        static func flow(folder: String, target: String, rule: String, checksum: String = "none") -> String {
            """
            flow: sync
            steps:
              - op: ListFilesOp
                with: {path: "\(folder)"}
              - group:
                  op: UploadFileOp
                  input: files
                  output: uploaded
                  maxConcurrent: 2
                  with: {url: "\(target)", skipExisting: \(rule), checksum: \(checksum)}
            """
        }

        /// Each upload with `modtime` sends the file's time as `x-amz-meta-mtime`; nginx does not
        /// keep it, so its `HEAD` never shows it and a second run sends every file again rather
        /// than trusting the size alone.
        @Test func modtimeSendsTheTimeAndAServerThatDoesNotKeepItGetsEveryFileAgain() async throws {
            let server = try NginxServer(loggedHeaders: ["X-Amz-Meta-Mtime"])
            try await server.start()
            defer { server.stop() }
            try await withCluster { cluster in
                let folder = cluster.directory.appendingPathComponent("files")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for name in ["a.bin", "b.bin"] { try Data(repeating: 1, count: 500).write(to: folder.appendingPathComponent(name)) }
                let when = Date(timeIntervalSince1970: 1_700_000_000.25)
                try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: folder.appendingPathComponent("a.bin").path)
                let flowFile = try cluster.write("sync.yaml", Self.flow(folder: folder.path, target: server.url("/sync"), rule: "modtime"))
                for label in ["first", "second"] {
                    let run = try cluster.start("flow-coordinator", ["run", flowFile, "--no-journal"], label: label)
                    _ = await run.waitForExit(timeout: 60)
                    #expect(run.termination == .exit(0), "\(run.transcript)")
                }
                let log = await server.accessLog(waitingFor: 8) { $0.method == "PUT" || $0.method == "HEAD" }
                let puts = log.filter { $0.method == "PUT" }
                #expect(puts.count == 4, "\(log)")
                #expect(log.filter { $0.method == "HEAD" }.count == 4)
                #expect(puts.filter { $0.uri == "/sync/a.bin" }.allSatisfy { $0.headers["X-Amz-Meta-Mtime"] == "1700000000.25" }, "\(puts)")
            }
        }

        /// An unknown `skipExisting` value is refused before anything runs, naming the values
        /// allowed; `checksum` without an algorithm is refused too.
        @Test func anUnknownSkipRuleIsRefusedNamingTheAllowedOnes() async throws {
            try await withCluster { cluster in
                let bad = try cluster.write("bad.yaml", Self.flow(folder: cluster.directory.path, target: "http://127.0.0.1:9/x", rule: "mtime"))
                let validate = try cluster.start("flow-coordinator", ["validate", bad])
                _ = await validate.waitForExit(timeout: 30)
                #expect(validate.termination == .exit(2), "\(validate.transcript)")
                #expect(validate.transcript.contains("must be size, modtime or checksum"), "\(validate.transcript)")
                let none = try cluster.write("none.yaml", Self.flow(folder: cluster.directory.path, target: "http://127.0.0.1:9/x", rule: "checksum"))
                let refused = try cluster.start("flow-coordinator", ["validate", none])
                _ = await refused.waitForExit(timeout: 30)
                #expect(refused.termination == .exit(2), "\(refused.transcript)")
                #expect(refused.transcript.contains("give checksum: crc32c"), "\(refused.transcript)")
            }
        }
    }
}
