import Flow
import FlowTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import FlowStandardOps

/// Uploads with checksums to a real S3 API (moto, checking every signature): single `PUT`s
/// streamed `aws-chunked` with the checksum in a trailer, `Content-MD5`, bodies in memory, and
/// multipart uploads with a checksum per part.
///
/// moto keeps the checksum it is sent and gives it back on `HEAD` with `x-amz-checksum-mode`,
/// but does not recompute it (its source: "TODO: AWS computes the provided value and verifies
/// it"), so these tests prove what is sent, signed and stored, and the values are checked here
/// against the bytes; a refusal is checked with the store's own error answer.
@Suite(.serialized) struct S3ChecksumUploadTests {
    static func upload(_ s3: any S3TestStore, _ input: FileInput, key: String, checksum: UploadChecksum,
                       partSize: String = "5MiB") async throws -> S3Upload.Outcome {
        let target = try S3Target(parameters: FlowParameters(["url": .string("s3://\(s3.bucket)/"), "endpoint": .string(s3.endpoint),
                                                              "partSize": .string(partSize), "partConcurrency": .integer(2)],
                                                             operation: "UploadFileOp"), environment: [:])
        let credentials = S3Credentials(accessKeyID: s3.accessKeyID, secretAccessKey: s3.secretAccessKey)
        let client = S3Client(target: target, signer: SigV4Signer(credentials: credentials, region: target.region), objectHeaders: [],
                              timeout: 60)
        let upload = S3Upload(client: client, key: key, checksum: checksum, retry: .none) { _ in }
        return try await upload.upload(input, deadline: .now() + .seconds(60))
    }

    /// The checksum the store gives back for `key` (`HEAD` with `x-amz-checksum-mode: ENABLED`).
    static func storedChecksum(_ s3: MotoS3Server, key: String, _ checksum: UploadChecksum) async throws -> String? {
        let target = try S3Target(parameters: FlowParameters(["url": .string("s3://\(s3.bucket)/"), "endpoint": .string(s3.endpoint)],
                                                             operation: "UploadFileOp"), environment: [:])
        let credentials = S3Credentials(accessKeyID: s3.accessKeyID, secretAccessKey: s3.secretAccessKey)
        let client = S3Client(target: target, signer: SigV4Signer(credentials: credentials, region: target.region), objectHeaders: [],
                              timeout: 60)
        let answer = try await client.send(.HEAD, key: key, headers: [("x-amz-checksum-mode", "ENABLED")], body: .empty,
                                           deadline: .now() + .seconds(30), action: "HEAD")
        #expect(answer.status == .ok)
        return checksum.s3Header.flatMap { answer.headers.first(name: $0) }
    }

    /// A file of 2½ chunks streamed in one `PUT`: the trailer's checksum is the file's, the store
    /// keeps it, and the object is byte-identical.
    @Test(arguments: [UploadChecksum.crc64nvme, .crc32c, .sha256, .md5, .none])
    func aSinglePutCarriesTheFilesChecksum(_ checksum: UploadChecksum) async throws {
        let s3 = try await MotoS3Server.start()
        defer { s3.stop() }
        let scratch = try TemporaryDirectory(prefix: "s3-checksum")
        let file = scratch.file("clip.bin")
        try PseudoRandomFile.write(to: file, size: 2 * FileUpload.chunkSize + 1234)
        let bytes = try Data(contentsOf: file)
        let outcome = try await Self.upload(s3, .path(file.path, name: "clip.bin"), key: "a/clip.bin", checksum: checksum)
        #expect(try await s3.object("a/clip.bin") == bytes)
        #expect(outcome.parts == 0 && outcome.size == Int64(bytes.count))
        #expect(outcome.checksum == checksum.base64(of: bytes))
        if checksum.s3Name != nil {
            #expect(try await Self.storedChecksum(s3, key: "a/clip.bin", checksum) == checksum.base64(of: bytes))
        }
        let md5 = Insecure_md5Hex(bytes)
        #expect(outcome.etag == "\"\(md5)\"")
    }

    /// An empty file and bytes the coordinator sent (in memory: the checksum goes as a header).
    @Test(arguments: [UploadChecksum.crc64nvme, .crc32c, .sha256, .md5])
    func emptyFilesAndBytesInMemoryCarryTheirChecksum(_ checksum: UploadChecksum) async throws {
        let s3 = try await MotoS3Server.start()
        defer { s3.stop() }
        let scratch = try TemporaryDirectory(prefix: "s3-checksum")
        let empty = scratch.file("empty.txt")
        try Data().write(to: empty)
        let emptyOutcome = try await Self.upload(s3, .path(empty.path, name: "empty.txt"), key: "empty.txt", checksum: checksum)
        #expect(try await s3.object("empty.txt") == Data())
        #expect(emptyOutcome.checksum == checksum.base64(of: []))
        let bytes = Data("hello from the coordinator\n".utf8)
        let outcome = try await Self.upload(s3, .bytes(bytes, name: "hello.txt", path: nil), key: "hello.txt", checksum: checksum)
        #expect(try await s3.object("hello.txt") == bytes)
        #expect(outcome.checksum == checksum.base64(of: bytes))
        if checksum.s3Name != nil {
            #expect(try await Self.storedChecksum(s3, key: "hello.txt", checksum) == checksum.base64(of: bytes))
        }
    }

    /// 3 parts of 5 MiB (the last shorter), each with its checksum, listed in the completion.
    @Test(arguments: [UploadChecksum.crc64nvme, .crc32c, .sha256, .md5])
    func aMultipartUploadSendsAChecksumPerPart(_ checksum: UploadChecksum) async throws {
        let s3 = try await MotoS3Server.start()
        defer { s3.stop() }
        let scratch = try TemporaryDirectory(prefix: "s3-checksum")
        let file = scratch.file("video.mp4")
        try PseudoRandomFile.write(to: file, size: 12 * 1024 * 1024 + 17)
        let bytes = try Data(contentsOf: file)
        let outcome = try await Self.upload(s3, .path(file.path, name: "video.mp4"), key: "v/video.mp4", checksum: checksum)
        #expect(outcome.parts == 3)
        #expect(try await s3.object("v/video.mp4") == bytes)
        #expect(try await s3.multipartUploads().isEmpty)
        if checksum == .crc32c || checksum == .sha256 {
            let parts = stride(from: 0, to: bytes.count, by: 5 << 20).map { start in
                checksum.base64(of: bytes[start..<min(bytes.count, start + (5 << 20))])!
            }
            let composite = S3Upload.compositeChecksum(checksum, parts: parts)
            #expect(composite?.hasSuffix("-3") == true)
            #expect(outcome.checksum == composite)
        }
        #expect(outcome.etag?.hasSuffix("-3\"") == true, "\(outcome.etag ?? "no ETag")")
    }

    /// A body the store refused for its checksum is a transient error that names the algorithm
    /// and the file.
    @Test func aBodyRefusedForItsChecksumIsATransientErrorNamingTheAlgorithm() async throws {
        let target = try S3Target(parameters: FlowParameters(["url": .string("s3://photos/"), "endpoint": .string("http://127.0.0.1:9")],
                                                             operation: "UploadFileOp"), environment: [:])
        let client = S3Client(target: target, signer: SigV4Signer(credentials: S3Credentials(accessKeyID: "A", secretAccessKey: "B"),
                                                                  region: "us-east-1"), objectHeaders: [], timeout: 5)
        let upload = S3Upload(client: client, key: "a.jpg", checksum: .crc32c, retry: .none) { _ in }
        let action = "upload of a.jpg to s3://photos/a.jpg failed"
        for code in ["BadDigest", "XAmzContentChecksumMismatch"] {
            let answer = FileUpload.Answer(status: .badRequest, headers: [:], excerpt: Data(
                "<Error><Code>\(code)</Code><Message>The CRC32C you specified did not match the calculated checksum.</Message></Error>".utf8))
            let refused = S3ErrorResponse.error(in: answer, action: action)!
            await #expect {
                try await upload.explainingChecksum(action: action) { () async throws -> Int in throw refused }
            } throws: { error in
                guard let error = error as? FlowStandardOpError else { return false }
                return !error.isPermanent && error.serviceCode == code && error.message.hasPrefix(action)
                    && error.message.contains("CRC32C checksum did not match") && error.message.contains("retry")
            }
        }
    }

    @Test func theManifestLineRoundTrips() {
        let entry = UploadManifestEntry(target: "s3://photos/a b.jpg", size: 12, algorithm: .crc64nvme, checksum: "AAAAAAAAAAA=",
                                        etag: "\"abc\"")
        #expect(entry.logLine.hasPrefix("manifest {"))
        #expect(entry.logLine.contains("\"target\":\"s3://photos/a b.jpg\""))
        #expect(UploadManifestEntry(logLine: entry.logLine) == entry)
        #expect(UploadManifestEntry(logLine: "uploaded a.jpg") == nil)
    }
}

/// The MD5 of `data` in lowercase hex (what S3 gives as the ETag of a single PUT).
func Insecure_md5Hex(_ data: Data) -> String {
    Data(base64Encoded: UploadChecksum.md5.base64(of: data)!)!.map { String(format: "%02x", $0) }.joined()
}
