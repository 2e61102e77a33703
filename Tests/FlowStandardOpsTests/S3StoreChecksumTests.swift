import Flow
import FlowTestSupport
import Foundation
import Testing
@testable import FlowStandardOps

/// Every explicit `checksum:` against each store the tests run (moto, and a real Ceph gateway,
/// radosgw 16.2 "Pacific"): it works, or, where the store cannot take it, fails at once with a
/// permanent error that names the store's refusal and the settings that work — never "the bytes
/// changed on the way". A multipart upload works with every algorithm on both (Ceph ignores a
/// part's checksum and keeps none).
@Suite struct S3StoreChecksumTests {
    @Test(arguments: S3TestStoreKind.allCases, [UploadChecksum.crc64nvme, .crc32c, .sha256, .md5, .none])
    func anExplicitChecksumWorksOrFailsAtOnceNamingTheStore(_ kind: S3TestStoreKind, _ checksum: UploadChecksum) async throws {
        let s3 = try await kind.start(bucket: "checksums")
        defer { s3.stop() }
        let small = s3.scratch.file("small.bin")
        try PseudoRandomFile.write(to: small, size: 100 << 10)
        let big = s3.scratch.file("big.bin")
        try PseudoRandomFile.write(to: big, size: 12 << 20)
        let refused = kind == .ceph && checksum.s3Name != nil

        do {
            let outcome = try await S3ChecksumUploadTests.upload(s3, .path(small.path, name: "small.bin"), key: "small.bin", checksum: checksum)
            #expect(!refused, "Ceph Pacific took a trailing \(checksum.rawValue) checksum")
            #expect(outcome.checksum == checksum.base64(of: try Data(contentsOf: small)))
            #expect(try await s3.object("small.bin") == Data(contentsOf: small))
        } catch let error as FlowStandardOpError {
            #expect(refused, "\(error.message)")
            #expect(error.code == .storeRefusedChecksum)
            #expect(error.isPermanent, "a refused form is not tried again")
            #expect(error.message.contains("the store at \(s3.endpoint)") && error.message.contains("XAmzContentSHA256Mismatch"), "\(error.message)")
            #expect(error.message.contains("checksum: \(checksum.rawValue) cannot be sent there"), "\(error.message)")
            #expect(error.message.contains("leave checksum out") && error.message.contains("checksum: md5 or none"), "\(error.message)")
            #expect(!error.message.contains("changed on the way"), "\(error.message)")
            #expect(try await s3.objects()["small.bin"] == nil)
        }

        let outcome = try await S3ChecksumUploadTests.upload(s3, .path(big.path, name: "big.bin"), key: "big.bin", checksum: checksum)
        #expect(outcome.parts == 3)
        #expect(try await s3.object("big.bin") == Data(contentsOf: big))
        #expect(try await s3.multipartUploads().isEmpty)
    }
}
