import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// A folder tree listed with `ListFilesOp recursive: true` and uploaded by a real coordinator
    /// with embedded workers keeps its shape on the server: each file at its path relative to the
    /// listed folder, below the target's prefix.
    @Suite struct TreeUploads {
        /// Writes `names` (paths relative to `tree/photos`, with folders) with distinct contents,
        /// and an empty folder, and returns the listed folder.
        static func makeTree(_ cluster: ClusterScope, _ names: [String]) throws -> URL {
            let folder = cluster.directory.appendingPathComponent("tree/photos")
            for (index, name) in names.enumerated() {
                let url = folder.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try PatternBytes.make(count: 500 + index * 211, multiplier: 17, offset: index).write(to: url)
            }
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("empty/inner"), withIntermediateDirectories: true)
            return folder
        }

        static func flow(target: String, with extra: String = "", listing: String = "") -> String {
            """
            flow: tree
            bucket: {folder: ./photos}
            steps:
              - op: ListFilesOp
                with: {path: "${folder}", recursive: true\(listing)}
              - group:
                  op: UploadFileOp
                  input: files
                  output: uploaded
                  maxConcurrent: 4
                  with: {url: "\(target)"\(extra)}
            """
        }

        /// Two files named `a.jpg` in different folders, spaces, unicode, `+`, `#`, `?`, `%` and a
        /// hidden file: each arrives at its own relative path, byte-identical, whoever reads the
        /// file. With `source: coordinator` the coordinator sends each file's bytes and keeps its
        /// name: run as root, the workers run as `nobody` and cannot read the files at all.
        @Test(arguments: ["worker", "coordinator"])
        func aTreeUploadsAsATreeToNginx(source: String) async throws {
            let server = try NginxServer()
            try await server.start()
            defer { server.stop() }
            try await withCluster { cluster in
                let names = ["2026/01/a.jpg", "2026/02/a.jpg", "top.txt", "with space/b c.txt", "unicodé/日本 写真.jpg",
                             "special/a+b #1 ?.txt", "special/100%.txt", "deep/x/y/z/.hidden"]
                let folder = try Self.makeTree(cluster, names)
                let flowFile = try cluster.write("tree.yaml", Self.flow(target: server.url("/up/prefix"), with: ", source: \(source)"))
                let run: ChildProcess
                if source == "coordinator" {
                    run = try await Self.runWithWorkersThatCannotRead(cluster, flowFile, folder: folder, names: names)
                } else {
                    run = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "folder=\(folder.path)"])
                    _ = await run.waitForExit(timeout: 60)
                }
                #expect(run.termination == .exit(0), "\(run.transcript)")
                for name in names {
                    let sent = try Data(contentsOf: folder.appendingPathComponent(name))
                    #expect((try? Data(contentsOf: server.storedFile("/up/prefix/" + name))) == sent, "\(name) did not arrive intact at its path")
                }
                let stored = FileManager.default.enumerator(atPath: server.documentRoot.appendingPathComponent("up/prefix").path)?
                    .compactMap { $0 as? String }
                    .filter { path in
                        var isFolder: ObjCBool = false
                        FileManager.default.fileExists(atPath: server.documentRoot.appendingPathComponent("up/prefix/" + path).path, isDirectory: &isFolder)
                        return !isFolder.boolValue
                    } ?? []
                #expect(Set(stored) == Set(names), "stored: \(stored)")
                #expect(run.stdout.contains("listed 8 files in \(folder.path) and its 12 subfolders"), "\(run.stdout)")
                #expect(run.stdout.contains("-> \(server.url("/up/prefix/special/a%2Bb%20%231%20%3F.txt"))"), "\(run.stdout)")
            }
        }

        /// Runs the flow on a coordinator with two standing workers; as root, the files are made
        /// root's alone and the workers run as `nobody`, so every byte that arrives came with a task.
        static func runWithWorkersThatCannotRead(_ cluster: ClusterScope, _ flowFile: String, folder: URL, names: [String]) async throws
            -> ChildProcess {
            let asRoot = getuid() == 0
            if asRoot {
                for name in names { chmod(folder.appendingPathComponent(name).path, 0o600) }
                chmod(cluster.directory.path, 0o755)
            }
            let coordinator = try cluster.coordinator(["run", flowFile, "--bind", "tcp://127.0.0.1:*", "--min-workers", "2",
                                                       "--set", "folder=\(folder.path)"] + ClusterScope.fastHeartbeat)
            let endpoint = try await coordinator.listeningEndpoint()
            for name in ["w1", "w2"] {
                let arguments = ["--connect", endpoint, "--name", name] + ClusterScope.fastHeartbeat
                if asRoot {
                    let worker = ClusterScope.productsDirectory.appendingPathComponent("flow-worker").path
                    _ = try cluster.startSystem("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", worker] + arguments,
                                                label: name)
                } else {
                    _ = try cluster.worker(connect: endpoint, name: name)
                }
            }
            _ = await coordinator.waitForExit(timeout: 60)
            #expect(coordinator.stdout.contains("@ w1]") || coordinator.stdout.contains("@ w2]"), "\(coordinator.stdout)")
            return coordinator
        }

        /// Filters choose what goes: only the January photos and the text files outside `skip/`.
        @Test func includeAndExcludeChooseWhatGoes() async throws {
            let server = try NginxServer()
            try await server.start()
            defer { server.stop() }
            try await withCluster { cluster in
                let names = ["2026/01/a.jpg", "2026/02/b.jpg", "notes/n.txt", "skip/s.txt", "x.bin"]
                let folder = try Self.makeTree(cluster, names)
                let flowFile = try cluster.write("tree.yaml", Self.flow(target: server.url("/f"),
                                                                        listing: ", include: [\"2026/01/**\", \"*.txt\"], exclude: [\"skip/**\"]"))
                let run = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "folder=\(folder.path)"])
                _ = await run.waitForExit(timeout: 60)
                #expect(run.termination == .exit(0), "\(run.transcript)")
                for name in ["2026/01/a.jpg", "notes/n.txt"] {
                    #expect((try? Data(contentsOf: server.storedFile("/f/" + name))) == (try Data(contentsOf: folder.appendingPathComponent(name))))
                }
                for name in ["2026/02/b.jpg", "skip/s.txt", "x.bin"] {
                    #expect(!FileManager.default.fileExists(atPath: server.storedFile("/f/" + name).path), "\(name) was uploaded")
                }
            }
        }

        /// The same to moto's S3 server: keys are the prefix and the relative path. (moto's own
        /// signature check refuses keys with letters outside ASCII and `+` even from botocore, so
        /// the names here keep to spaces and `#`; the signer's encoding of the others is checked
        /// against botocore in `SigV4SignerTests`.)
        @Test func aTreeUploadsAsATreeToS3() async throws {
            let s3 = try await MotoS3Server.start()
            defer { s3.stop() }
            try await withCluster { cluster in
                let names = ["2026/01/a.jpg", "2026/02/a.jpg", "top.txt", "with space/b c.txt", "deep/x/y/.hidden"]
                let folder = try Self.makeTree(cluster, names)
                let flowFile = try cluster.write("tree.yaml", Self.flow(target: "s3://photos/backup", with: ", endpoint: \"\(s3.endpoint)\""))
                let run = try cluster.start("flow-coordinator", ["run", flowFile, "--set", "folder=\(folder.path)"],
                                            extraEnvironment: s3.credentialsEnvironment)
                _ = await run.waitForExit(timeout: 120)
                #expect(run.termination == .exit(0), "\(run.transcript)")
                #expect(try await s3.objects().keys.sorted() == names.map { "backup/" + $0 }.sorted())
                for name in names {
                    #expect(try await s3.object("backup/" + name) == Data(contentsOf: folder.appendingPathComponent(name)), "\(name) did not arrive intact")
                    #expect(run.stdout.contains("-> s3://photos/backup/\(name) in "))
                }
            }
        }
    }
}
