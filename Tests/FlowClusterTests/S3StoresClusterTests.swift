import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// The default settings against each store the tests run: moto, and a real Ceph object
    /// gateway (radosgw 16.2 "Pacific"), which refuses the trailer form of a single `PUT`, keeps no
    /// checksum and answers `CompleteMultipartUpload` with an empty ETag. Real coordinator and
    /// worker processes; "S3" in the name puts the suite in scripts/test's S3 phase.
    @Suite struct S3Stores {
        /// Twelve small files and one of four 5 MiB parts with no `checksum:` given arrive
        /// byte-identical; `verify` and `verify --deep` pass and say what they compared; then a
        /// small object and one part of the big one are overwritten with other bytes of the same
        /// size, and both checks find each change.
        @Test(arguments: S3TestStoreKind.allCases)
        func theDefaultsUploadAndVerifySmallAndMultipartObjects(_ kind: S3TestStoreKind) async throws {
            let s3 = try await kind.start()
            defer { s3.stop() }
            try await withCluster { cluster in
                let folder = try S3Uploads.makeFolder(cluster, count: 12, bigFile: true)
                let flowFile = try cluster.write("s3.yaml", S3Uploads.flow(endpoint: s3.endpoint, bucket: s3.bucket))
                let run = try await S3Uploads.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
                #expect(run.termination == .exit(0), "\(run.transcript)")
                for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                    #expect(try await s3.object("2026/" + name) == Data(contentsOf: folder.appendingPathComponent(name)), "\(name)")
                }
                #expect(try await s3.objects().count == 13)
                #expect(try await s3.multipartUploads().isEmpty)
                let fellBack = run.stdout.components(separatedBy: "does not take trailing checksums; sending Content-MD5").count - 1
                #expect(kind == .ceph ? fellBack >= 1 : fellBack == 0, "\(run.stdout)")

                let journal = try VerifyCommand.journal(cluster)
                let environment = s3.credentialsEnvironment
                // Neither store gives the multipart object's checksum to a HEAD (Ceph keeps none; moto keeps
                // none of a full-object CRC64NVME): its ETag is compared, on Ceph one computed from the parts'.
                let expected = "13 ok (12 by checksum, 1 by ETag)"
                let clean = try await VerifyCommand.verify(cluster, [journal], environment: environment, label: "clean")
                #expect(clean.termination == .exit(0), "\(clean.transcript)")
                #expect(clean.stdout == "verified 13 objects: \(expected), 0 missing, 0 changed\n", "\(clean.transcript)")
                let deep = try await VerifyCommand.verify(cluster, [journal, "--deep"], environment: environment, label: "deep")
                #expect(deep.termination == .exit(0), "\(deep.transcript)")
                #expect(deep.stdout == "verified 13 objects: 13 ok (13 by checksum), 0 missing, 0 changed\n", "\(deep.transcript)")

                // Same sizes, other bytes: a small object, and the big one with one byte changed in its third part.
                var video = try Data(contentsOf: folder.appendingPathComponent("video.mp4"))
                video[11 << 20] ^= 0xff
                let changedVideo = s3.scratch.file("video.mp4")
                try video.write(to: changedVideo)
                try await S3TestStoreKind.boto3(s3, """
                    s3.put_object(Bucket=bucket, Key="2026/photo 01.jpg", Body=b"z" * 953)
                    s3.upload_file("\(changedVideo.path)", bucket, "2026/video.mp4")
                    """)
                let broken = try await VerifyCommand.verify(cluster, [journal], environment: environment, label: "broken")
                #expect(broken.termination == .exit(1), "\(broken.transcript)")
                #expect(broken.stdout.contains("s3://\(s3.bucket)/2026/photo 01.jpg: "), "\(broken.stdout)")
                #expect(broken.stdout.contains("s3://\(s3.bucket)/2026/video.mp4: "), "\(broken.stdout)")
                #expect(broken.stdout.hasSuffix(" 0 missing, 2 changed\n"), "\(broken.stdout)")
                let deepBroken = try await VerifyCommand.verify(cluster, [journal, "--deep"], environment: environment, label: "deep-broken")
                #expect(deepBroken.termination == .exit(1), "\(deepBroken.transcript)")
                #expect(deepBroken.stdout.contains("s3://\(s3.bucket)/2026/video.mp4: "), "\(deepBroken.stdout)")
                #expect(deepBroken.stdout.hasSuffix("verified 13 objects: 11 ok (11 by checksum), 0 missing, 2 changed\n"),
                        "\(deepBroken.stdout)")
            }
        }

        /// On Ceph, which keeps no checksum, a second run with `skipExisting: checksum` says once
        /// that it compares size and modification time there, and sends nothing again; a file
        /// whose size changed goes again.
        @Test func skipExistingChecksumOnCephComparesSizeAndModificationTimeAndSaysSo() async throws {
            let s3 = try await S3TestStoreKind.ceph.start()
            defer { s3.stop() }
            try await withCluster { cluster in
                let folder = try S3Uploads.makeFolder(cluster, count: 12, bigFile: true)
                let flowFile = try cluster.write("s3.yaml", S3Uploads.flow(endpoint: s3.endpoint, bucket: s3.bucket,
                                                                            extra: "skipExisting: checksum"))
                let first = try await S3Uploads.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
                #expect(first.termination == .exit(0), "\(first.transcript)")
                try Data(repeating: 7, count: 10).write(to: folder.appendingPathComponent("photo 03.jpg"))

                let again = try await S3Uploads.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment,
                                                    extra: ["--workers", "1"])
                #expect(again.termination == .exit(0), "\(again.transcript)")
                let said = again.stdoutLines.filter { $0.contains("keeps no crc64nvme checksum: skipExisting: checksum compares size and "
                                                                  + "modification time there") }
                #expect(said.count == 1, "\(again.stdout)")
                let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
                for name in names where name != "photo 03.jpg" {
                    #expect(again.stdout.contains("skipped \(name): the store has it already"), "\(name): \(again.stdout)")
                }
                #expect(again.stdout.contains("uploaded photo 03.jpg (10 bytes)"), "\(again.stdout)")
                #expect(try await s3.object("2026/photo 03.jpg") == Data(repeating: 7, count: 10))
            }
        }
    }
}
