import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests {
    /// Grouped uploads to a real S3 API (moto, checking every signature) from real coordinator and
    /// worker processes.
    @Suite struct S3Uploads {
        /// `count` small files of distinct content, and with `bigFile` a file of 3½ parts of 5 MiB.
        ///
        /// Names have spaces but no other specials: moto's signature check (not S3's) rejects keys
        /// with non-ASCII letters, `+`, `(`, `'` even from botocore. The signer's handling of those
        /// is checked against botocore itself (`SigV4SignerTests`).
        static func makeFolder(_ cluster: ClusterScope, count: Int, bigFile: Bool) throws -> URL {
            let folder = cluster.directory.appendingPathComponent("photos")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for index in 0..<count {
                let bytes = PatternBytes.make(count: 900 + index * 53, multiplier: 7, offset: index)
                try bytes.write(to: folder.appendingPathComponent(String(format: "photo %02d.jpg", index)))
            }
            if bigFile { try PseudoRandomFile.write(to: folder.appendingPathComponent("video.mp4"), size: 35 * 512 * 1024) }
            return folder
        }

        static func flow(endpoint: String, bucket: String = "photos", extra: String = "", retry: String = "", budget: String = "") -> String {
            """
            flow: s3-upload
            bucket: {folder: ./photos}
            steps:
              - op: ListFilesOp
                with: {path: "${folder}"}
              - group:
                  op: UploadFileOp
                  input: files
                  output: objects
                  maxConcurrent: 4\(retry.isEmpty ? "" : "\n      retry: \(retry)")\(budget.isEmpty ? "" : "\n      maxFailures: \(budget)")
                  with:
                    url: s3://\(bucket)/2026/
                    endpoint: \(endpoint)
                    partSize: 5MiB
                    partConcurrency: 2\(extra.isEmpty ? "" : "\n        " + extra)
            """
        }

        /// Runs `body` with a fresh S3 server and cluster scope, and stops both.
        static func withS3(_ body: (MotoS3Server, ClusterScope) async throws -> Void) async throws {
            let s3 = try await MotoS3Server.start()
            defer { s3.stop() }
            try await withCluster { cluster in try await body(s3, cluster) }
        }

        /// Runs the coordinator (embedded workers) with `environment` added, and waits for it.
        static func run(_ cluster: ClusterScope, _ flowFile: String, folder: URL, environment: [String: String],
                        extra: [String] = []) async throws -> ChildProcess {
            let run = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "folder=\(folder.path)"] + extra,
                                        extraEnvironment: environment)
            _ = await run.waitForExit(timeout: 120)
            return run
        }

        @Test func smallFilesAndAFileOfSeveralPartsArriveByteIdentical() async throws {
            try await Self.withS3 { s3, cluster in
                let folder = try Self.makeFolder(cluster, count: 12, bigFile: true)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint))
                let run = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
                #expect(run.termination == .exit(0), "\(run.transcript)")
                let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                #expect(try await s3.objects().count == 13)
                for name in names {
                    let sent = try Data(contentsOf: folder.appendingPathComponent(name))
                    #expect(try await s3.object("2026/" + name) == sent, "\(name) did not arrive intact")
                    #expect(run.stdout.contains("s3://photos/2026/\(name)"))
                }
                #expect(run.stdout.contains("-> s3://photos/2026/video.mp4 in "))
                #expect(run.stdout.contains(" (4 parts)"), "the 17.5 MiB file did not go up in 4 parts of 5 MiB: \(run.stdout)")
                #expect(try await s3.multipartUploads().isEmpty)
            }
        }

        @Test func namesThatWouldClimbOutOfThePrefixAreRefusedAndFoldersBecomeKeys() async throws {
            try await Self.withS3 { s3, cluster in
                let file = try cluster.write("payload.txt", "payload")
                let flowFile = try cluster.write("names.yaml", """
                    flow: s3-names
                    bucket:
                      files:
                        - {name: "../../escaped.txt", path: "\(file)"}
                        - {name: "a/../../up.txt", path: "\(file)"}
                        - {name: "/root.txt", path: "\(file)"}
                        - {name: "a//b.txt", path: "\(file)"}
                        - {name: "2026/01/a photo.jpg", path: "\(file)"}
                    steps:
                      - group:
                          op: UploadFileOp
                          input: files
                          output: objects
                          allowFailure: true
                          with: {url: "s3://photos/up/sub", endpoint: "\(s3.endpoint)"}
                    """)
                let run = try cluster.start("flow-coordinator", ["run", flowFile], extraEnvironment: s3.credentialsEnvironment)
                _ = await run.waitForExit(timeout: 120)
                #expect(run.termination == .exit(0), "\(run.transcript)")
                #expect(try await s3.objects().keys.sorted() == ["up/sub/2026/01/a photo.jpg"])
                #expect(try await s3.object("up/sub/2026/01/a photo.jpg") == Data("payload".utf8))
                for name in ["../../escaped.txt", "a/../../up.txt", "/root.txt", "a//b.txt"] {
                    #expect(run.stdout.contains("refused the upload name '\(name)'"), "no refusal for \(name): \(run.stdout)")
                }
            }
        }

        /// examples/upload-s3.yaml (the example of UploadingToS3.md), as it is, against the local store.
        @Test func theExampleUploadsAFolder() async throws {
            try await Self.withS3 { s3, cluster in
                let folder = try Self.makeFolder(cluster, count: 5, bigFile: true)
                let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("examples/upload-s3.yaml").path
                let run = try await Self.run(cluster, example, folder: folder, environment: s3.credentialsEnvironment,
                                             extra: ["--set", "endpoint=\(s3.endpoint)"])
                #expect(run.termination == .exit(0), "\(run.transcript)")
                #expect(try await s3.objects().count == 6)
                #expect(try await s3.object("2026/video.mp4") == Data(contentsOf: folder.appendingPathComponent("video.mp4")))
            }
        }

        @Test func aWrongSecretFailsEveryElementOnceWithSignatureDoesNotMatch() async throws {
            try await Self.withS3 { s3, cluster in
                let folder = try Self.makeFolder(cluster, count: 4, bigFile: false)
                // Three failures tolerated: the fourth fails the group, so every element runs.
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint, retry: "{attempts: 3, delay: 0.05}", budget: "3"))
                var environment = s3.credentialsEnvironment
                environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-0123456789abcdefghijklmno"
                let run = try await Self.run(cluster, flowFile, folder: folder, environment: environment)
                #expect(run.termination == .exit(1), "\(run.transcript)")
                let failures = run.stdout.split(separator: "\n").filter { $0.contains("DidFinish: withError:") && $0.contains("HTTP 403 SignatureDoesNotMatch") }
                #expect(failures.count == 4, "\(run.stdout)")
                #expect(!run.stdout.contains("retrying"), "a permanent S3 error was retried: \(run.stdout)")
                #expect(try await s3.objects().isEmpty)
            }
        }

        @Test func noCredentialStringAppearsInOutputsReportsOrTheJournal() async throws {
            try await Self.withS3 { s3, cluster in
                let folder = try Self.makeFolder(cluster, count: 3, bigFile: true)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint, budget: "\"100%\""))
                let wrongSecret = "WrongSecretWrongSecretWrongSecret0123456"
                var outputs: [String: String] = [:]
                for (label, secret) in [("good", s3.secretAccessKey), ("bad", wrongSecret)] {
                    var environment = s3.credentialsEnvironment
                    environment["AWS_SECRET_ACCESS_KEY"] = secret
                    let run = try await Self.run(cluster, flowFile, folder: folder, environment: environment,
                                                 extra: ["--summary", cluster.path("\(label)-summary.txt"), "--json", cluster.path("\(label).json")])
                    #expect(run.termination != nil, "\(run.transcript)")
                    outputs["\(label) stdout"] = run.stdout
                    outputs["\(label) stderr"] = run.stderr
                }
                #expect(outputs["good stdout"]?.contains("Flow isSuccess: true") == true, "\(outputs["good stdout"] ?? "")")
                #expect(outputs["bad stdout"]?.contains("SignatureDoesNotMatch") == true)
                // Every file the runs left in the scope: summaries, reports, journals.
                let enumerator = FileManager.default.enumerator(at: cluster.directory, includingPropertiesForKeys: nil)
                var files = 0
                while let url = enumerator?.nextObject() as? URL {
                    guard !url.path.contains("/photos/"), (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
                    outputs[url.lastPathComponent] = String(decoding: try Data(contentsOf: url), as: UTF8.self)
                    files += 1
                }
                #expect(outputs.keys.contains { $0.hasSuffix(".sqlite") }, "no journal found among \(outputs.keys.sorted())")
                #expect(files >= 5)
                for (name, text) in outputs {
                    for secret in [s3.secretAccessKey, wrongSecret, s3.accessKeyID] {
                        #expect(!text.contains(secret), "a credential appears in \(name)")
                    }
                }
            }
        }

        @Test func cancellingAMultipartUploadLeavesNoUploadBehind() async throws {
            try await Self.withS3 { s3, cluster in
                let folder = cluster.directory.appendingPathComponent("photos")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try PseudoRandomFile.write(to: folder.appendingPathComponent("long.mov"), size: 400 * 1024 * 1024)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint).replacingOccurrences(of: "partConcurrency: 2", with: "partConcurrency: 1"))
                let run = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "folder=\(folder.path)"], extraEnvironment: s3.credentialsEnvironment)
                // The store is the only place a multipart upload's start shows (the run writes
                // nothing then): it is asked every 100 ms, until a deadline that fails the test.
                var started = false
                let deadline = ContinuousClock.now + .seconds(30)
                while !started, ContinuousClock.now < deadline {
                    started = try await !s3.multipartUploads().isEmpty
                    if !started { try await Task.sleep(for: .milliseconds(100)) }
                }
                try #require(started, "no multipart upload started within 30 s: \(run.transcript)")
                run.send(SIGINT)
                #expect(await run.waitForExit(timeout: 60) == .exit(1), "\(run.transcript)")
                // The coordinator waited for its workers, and they for the abort.
                #expect(try await s3.multipartUploads().isEmpty, "a multipart upload stayed behind: \(run.transcript)")
                #expect(try await s3.objects().isEmpty)
            }
        }

        /// Parts are read, sent and let go: a worker holds about `partConcurrency × partSize`
        /// (2 × 5 MiB here), not the file.
        @Test func aWorkersMemoryStaysBoundedByThePartsInFlight() async throws {
            try await Self.withS3 { s3, cluster in
                let folder = cluster.directory.appendingPathComponent("photos")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let size = 160 * 1024 * 1024
                try PseudoRandomFile.write(to: folder.appendingPathComponent("long.mov"), size: size)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint))
                let coordinator = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "folder=\(folder.path)", "--bind", "tcp://127.0.0.1:*"]
                                                    + ClusterScope.fastHeartbeat, extraEnvironment: s3.credentialsEnvironment)
                let worker = try cluster.start("flow-worker", ["--connect", try await coordinator.listeningEndpoint(), "--name", "w1"]
                                               + ClusterScope.fastHeartbeat, extraEnvironment: s3.credentialsEnvironment)
                #expect(await coordinator.waitForExit(timeout: 120) == .exit(0), "\(coordinator.transcript)")
                let peak = try #require(UploadsOnTheCluster.peakMemory(of: worker.processIdentifier))
                print("worker peak resident memory for a 160 MiB multipart upload (2 x 5 MiB parts in flight): \(peak / 1_048_576) MB")
                #expect(peak < 120 * 1024 * 1024, "the worker's memory peaked at \(peak / 1_048_576) MB for a 160 MiB file")
                #expect(coordinator.stdout.contains("(32 parts)"), "\(coordinator.stdout)")
                #expect(try await s3.objects()["2026/long.mov"] == size)
            }
        }

        @Test func aFailedPartIsTriedAgainAloneUnderTheStepsRetry() async throws {
            let s3 = try await MotoS3Server.start()
            defer { s3.stop() }
            let proxy = try await S3FaultProxy.start(in: s3, failingParts: [2, 3])
            defer { proxy.stop() }
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster, count: 0, bigFile: true)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: proxy.endpoint, retry: "{attempts: 3, delay: 0.05}"))
                let run = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
                #expect(run.termination == .exit(0), "\(run.transcript)")
                #expect(try await s3.object("2026/video.mp4") == Data(contentsOf: folder.appendingPathComponent("video.mp4")))
                // Parts 2 and 3 twice, the others once: the op itself was not tried again.
                #expect(try proxy.partTries() == [1: 1, 2: 2, 3: 2, 4: 1])
                #expect(run.stdout.contains("part 2 of 4 failed (try 1 of 3): HTTP 503 SlowDown: Please reduce your request rate.; retrying in"),
                        "\(run.stdout)")
                #expect(!run.stdout.contains("attempt 1 of 3 failed"))
            }
        }

        /// The failed upload is aborted. A store may refuse an abort while a part is still arriving
        /// (moto answered 500 in about one cancelled run in five): the abort is tried again.
        @Test(arguments: [0, 2])
        func withoutRetryAFailedPartFailsTheUploadAndAbortsIt(failingAborts: Int) async throws {
            let s3 = try await MotoS3Server.start()
            defer { s3.stop() }
            let proxy = try await S3FaultProxy.start(in: s3, failingParts: [3], failingAborts: failingAborts)
            defer { proxy.stop() }
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster, count: 0, bigFile: true)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: proxy.endpoint))
                let run = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
                #expect(run.termination == .exit(1), "\(run.transcript)")
                #expect(run.stdout.contains("failed: part 3 of 4: HTTP 503 SlowDown: Please reduce your request rate."), "\(run.stdout)")
                #expect(run.stdout.contains("aborted multipart upload "), "\(run.stdout)")
                #expect(!run.stdout.contains("could not abort"), "\(run.stdout)")
                #expect(try proxy.abortTries() == failingAborts + 1)
                #expect(try await s3.multipartUploads().isEmpty)
                #expect(try await s3.objects().isEmpty)
            }
        }

        @Test func skipExistingAsksTheStoreFirst() async throws {
            try await Self.withS3 { s3, cluster in
                let folder = try Self.makeFolder(cluster, count: 5, bigFile: false)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint, extra: "skipExisting: true"))
                let first = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
                #expect(first.termination == .exit(0), "\(first.transcript)")
                #expect(!first.stdout.contains("skipped "))
                // One file changes size: only it goes up again.
                try Data(repeating: 1, count: 10).write(to: folder.appendingPathComponent("photo 00.jpg"))
                let second = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
                #expect(second.termination == .exit(0), "\(second.transcript)")
                #expect(second.stdout.components(separatedBy: "skipped ").count - 1 == 4, "\(second.stdout)")
                #expect(second.stdout.contains("uploaded photo 00.jpg (10 bytes)"))
                #expect(try await s3.object("2026/photo 00.jpg") == Data(repeating: 1, count: 10))
            }
        }

        @Test func missingCredentialsFailAtOnceNamingTheVariables() async throws {
            try await withCluster { cluster in
                let folder = try Self.makeFolder(cluster, count: 2, bigFile: false)
                let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: "http://127.0.0.1:9", retry: "{attempts: 4, delay: 0.05}"))
                let environment = ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "",
                                   "AWS_SHARED_CREDENTIALS_FILE": cluster.path("none"), "AWS_CONFIG_FILE": cluster.path("none")]
                let run = try await Self.run(cluster, flowFile, folder: folder, environment: environment)
                #expect(run.termination == .exit(1), "\(run.transcript)")
                #expect(run.stdout.contains("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), "\(run.stdout)")
                #expect(!run.stdout.contains("retrying"))
            }
        }

        @Test(arguments: [
            ("partSize: 1MiB", "partSize", "between 5MiB and 5GiB"),
            // Not hexadecimal: the scope's temporary folder (flowct-<hex>) is in every message.
            ("secretAccessKey: wJalrXUtnFEMIK7MDENG", "secretAccessKey", "credentials are read on the machine that runs the op"),
            ("url: s3://Photos/", "url", "is not a bucket name"),
            ("method: POST", "method", "must be PUT"),
        ])
        func validateChecksTheS3ParametersWithTheirPlace(line: String, parameter: String, message: String) async throws {
            try await withCluster { cluster in
                let flowFile = try cluster.write("s3.yaml", """
                    flow: s3
                    bucket: {files: [a.jpg]}
                    steps:
                      - group:
                          op: UploadFileOp
                          input: files
                          output: objects
                          with:
                            \(line.hasPrefix("url:") ? line : "url: s3://photos/\n        " + line)
                    """)
                let validate = try cluster.coordinator(["validate", flowFile], label: "validate")
                #expect(await validate.waitForExit(timeout: 30) == .exit(2), "\(validate.transcript)")
                #expect(validate.stderr.contains("s3.yaml:"), "\(validate.stderr)")
                #expect(validate.stderr.contains(parameter) && validate.stderr.contains(message), "\(validate.stderr)")
                #expect(!validate.stderr.contains("wJalrXUtnFEMIK7MDENG"), "the refused value was repeated: \(validate.stderr)")
            }
        }
    }
}
