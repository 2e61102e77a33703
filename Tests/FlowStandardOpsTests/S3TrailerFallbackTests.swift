import Flow
import FlowTestSupport
import Foundation
import NIOCore
import Testing
@testable import FlowStandardOps

/// A store that does not take trailing checksums (Ceph RGW 16 "Pacific": `400
/// XAmzContentSHA256Mismatch` to `STREAMING-UNSIGNED-PAYLOAD-TRAILER`), played by the checksum proxy
/// in front of moto (issue 47 item 1): with the checksum left to Flow, an upload goes again at
/// once as a signed PUT with Content-MD5, said once; an explicit checksum fails for good, naming
/// the refusal and what works, never "the bytes changed on the way".
@Suite(.serialized) struct S3TrailerFallbackTests {
    static func upload(_ s3: MotoS3Server, endpoint: String, key: String, checksum: UploadChecksum, auto: Bool,
                       lines: S3ResumeUploadTests.Lines) throws -> S3Upload {
        let target = try S3Target(parameters: FlowParameters(["url": .string("s3://\(s3.bucket)/"), "endpoint": .string(endpoint)],
                                                             operation: "UploadFileOp"), environment: [:])
        let credentials = S3Credentials(accessKeyID: s3.accessKeyID, secretAccessKey: s3.secretAccessKey)
        let client = S3Client(target: target, signer: SigV4Signer(credentials: credentials, region: target.region), objectHeaders: [],
                              timeout: 60)
        var upload = S3Upload(client: client, key: key, checksum: checksum, retry: .none) { lines.append($0) }
        upload.fallsBackFromTrailer = auto
        return upload
    }

    @Test func anAutoChecksumFallsBackToContentMD5AndASignedPayloadOnce() async throws {
        let s3 = try await MotoS3Server.start()
        defer { s3.stop() }
        let proxy = try await S3ChecksumProxy.start(in: s3, pacific: true)
        defer { proxy.stop() }
        let scratch = try TemporaryDirectory(prefix: "s3-trailer")
        let lines = S3ResumeUploadTests.Lines()
        for index in 0..<3 {
            let file = scratch.file("f\(index).bin")
            let bytes = PatternBytes.make(count: 70_000 + index, multiplier: 13, offset: index)
            try bytes.write(to: file)
            let outcome = try await Self.upload(s3, endpoint: proxy.endpoint, key: "small/f\(index).bin", checksum: .crc64nvme, auto: true,
                                                lines: lines).upload(.path(file.path, name: "f\(index).bin"), deadline: .now() + .seconds(60))
            #expect(try await s3.object("small/f\(index).bin") == bytes)
            #expect(outcome.algorithm == .md5 && outcome.checksum == UploadChecksum.md5.base64(of: bytes))
        }
        let said = lines.all.filter { $0.contains("does not take trailing checksums") }
        #expect(said == ["the store at \(proxy.endpoint) does not take trailing checksums; sending Content-MD5 and a signed payload instead"],
                "\(lines.all)")
        let stats = try proxy.stats()
        #expect(stats["trailers_refused"] == 1, "only the first upload tried the trailer: \(stats)")
        #expect(stats["forwarded"] == 3 && stats["other_agents"] == 0 && stats["flow_agents"] == 4, "\(stats)")
    }

    @Test(arguments: [UploadChecksum.crc32c, .crc64nvme, .sha256])
    func anExplicitTrailingChecksumTheStoreCannotTakeFailsAtOnceSayingWhatWorks(_ checksum: UploadChecksum) async throws {
        let s3 = try await MotoS3Server.start()
        defer { s3.stop() }
        let proxy = try await S3ChecksumProxy.start(in: s3, pacific: true)
        defer { proxy.stop() }
        let scratch = try TemporaryDirectory(prefix: "s3-trailer")
        let file = scratch.file("one.bin")
        try Data(repeating: 3, count: 4_096).write(to: file)
        let lines = S3ResumeUploadTests.Lines()
        do {
            _ = try await Self.upload(s3, endpoint: proxy.endpoint, key: "one.bin", checksum: checksum, auto: false, lines: lines)
                .upload(.path(file.path, name: "one.bin"), deadline: .now() + .seconds(60))
            Issue.record("the upload succeeded")
        } catch let error as FlowStandardOpError {
            #expect(error.isPermanent, "no retries: \(error.message)")
            #expect(error.message.contains("the store at \(proxy.endpoint) does not take trailing checksums (it answered HTTP 400 "
                                           + "XAmzContentSHA256Mismatch)"), "\(error.message)")
            #expect(error.message.contains("checksum: \(checksum.rawValue) cannot be sent there; leave checksum out"), "\(error.message)")
            #expect(!error.message.contains("changed on the way"), "\(error.message)")
        }
        let stats = try proxy.stats()
        #expect(stats["trailers_refused"] == 1 && stats["forwarded"] == 0, "no retry: \(stats)")
        #expect(try await s3.objects().isEmpty)
    }

    /// A store that takes no checksum headers at all (Backblaze B2: `InvalidArgument: Unsupported
    /// header 'x-amz-sdk-checksum-algorithm'` on PutObject and UploadPart): with `auto`, a small
    /// file and a file of three parts both arrive byte-identical, the multipart one after its
    /// refused upload was aborted and another started with Content-MD5 parts.
    @Test func anAutoChecksumFallsBackOnAStoreThatTakesNoChecksumHeaders() async throws {
        let s3 = try await MotoS3Server.start()
        defer { s3.stop() }
        let proxy = try await S3ChecksumProxy.start(in: s3, b2: true)
        defer { proxy.stop() }
        let scratch = try TemporaryDirectory(prefix: "s3-b2")
        let lines = S3ResumeUploadTests.Lines()
        let big = scratch.file("big.bin")
        try PseudoRandomFile.write(to: big, size: 12 * 1024 * 1024 + 7, seed: 11)
        let target = try S3Target(parameters: FlowParameters(["url": .string("s3://\(s3.bucket)/"), "endpoint": .string(proxy.endpoint),
                                                              "partSize": .string("5MiB")], operation: "UploadFileOp"), environment: [:])
        let credentials = S3Credentials(accessKeyID: s3.accessKeyID, secretAccessKey: s3.secretAccessKey)
        let client = S3Client(target: target, signer: SigV4Signer(credentials: credentials, region: target.region), objectHeaders: [],
                              timeout: 60)
        var upload = S3Upload(client: client, key: "big.bin", checksum: .crc64nvme, retry: .none) { lines.append($0) }
        upload.fallsBackFromTrailer = true
        let outcome = try await upload.upload(.path(big.path, name: "big.bin"), deadline: .now() + .seconds(120))
        #expect(try await s3.object("big.bin") == Data(contentsOf: big))
        #expect(outcome.parts == 3 && outcome.algorithm == .md5, "\(outcome)")
        #expect(lines.contains("the store at \(proxy.endpoint) does not take checksum headers on multipart uploads; sending Content-MD5 instead"),
                "\(lines.all)")
        #expect(try await s3.multipartUploads().isEmpty, "the refused upload was aborted")

        let small = scratch.file("small.bin")
        try Data(repeating: 9, count: 3_000).write(to: small)
        let single = try await Self.upload(s3, endpoint: proxy.endpoint, key: "small.bin", checksum: .crc64nvme, auto: true, lines: lines)
            .upload(.path(small.path, name: "small.bin"), deadline: .now() + .seconds(60))
        #expect(try await s3.object("small.bin") == Data(contentsOf: small))
        #expect(single.algorithm == .md5)
        #expect((try proxy.stats()["headers_refused"] ?? 0) >= 1)
    }
}
