import Foundation
import Testing
@testable import FlowStandardOps

/// The checksums `UploadFileOp` sends, against published vectors and against themselves fed in pieces.
@Suite struct UploadChecksumTests {
    static let nine = Array("123456789".utf8)

    @Test func crc32cMatchesTheCastagnoliCheckValue() {
        var crc = CRC32C()
        Self.nine.withUnsafeBytes { crc.update($0) }
        #expect(crc.value == 0xE306_9283)
        #expect(UploadChecksum.crc32c.base64(of: Self.nine) == Data([0xE3, 0x06, 0x92, 0x83]).base64EncodedString())
        #expect(UploadChecksum.crc32c.base64(of: []) == "AAAAAA==")
    }

    @Test func crc64nvmeMatchesTheAWSCheckValue() {
        var crc = CRC64NVME()
        Self.nine.withUnsafeBytes { crc.update($0) }
        #expect(crc.value == 0xAE8B_1486_0A79_9888)
        #expect(UploadChecksum.crc64nvme.base64(of: Self.nine) == Data([0xAE, 0x8B, 0x14, 0x86, 0x0A, 0x79, 0x98, 0x88]).base64EncodedString())
        #expect(UploadChecksum.crc64nvme.base64(of: []) == "AAAAAAAAAAA=")
    }

    @Test func sha256AndMD5AreBase64OfTheDigest() {
        // sha256("123456789") = 15e2b0d3…; md5("123456789") = 25f9e794323b453885f5181f1b624d0b.
        #expect(UploadChecksum.sha256.base64(of: Self.nine) == "FeKw08M4keuw8e9gnsQZQgwg4yDOlMZfvIwzEkSOsiU=")
        #expect(UploadChecksum.md5.base64(of: Self.nine) == "JfnnlDI7RTiF9RgfG2JNCw==")
        #expect(UploadChecksum.none.base64(of: Self.nine) == nil)
    }

    /// Slicing-by-8 and the byte loop agree whatever the lengths of the pieces fed.
    @Test(arguments: [UploadChecksum.crc32c, .crc64nvme, .sha256, .md5])
    func piecesGiveTheWholeChecksum(_ algorithm: UploadChecksum) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<100_003).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let whole = algorithm.base64(of: bytes)
        var hasher = algorithm.makeHasher()!
        var offset = 0
        for length in [1, 7, 8, 9, 63, 4096, 1] + Array(repeating: 13_001, count: 8) where offset < bytes.count {
            let end = min(bytes.count, offset + length)
            hasher.update(Array(bytes[offset..<end]))
            offset = end
        }
        hasher.update(Array(bytes[offset...]))
        #expect(hasher.base64 == whole)
        // A byte-at-a-time reference for the CRCs.
        if algorithm == .crc32c {
            var crc: UInt32 = ~0
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            }
            #expect(whole == withUnsafeBytes(of: (~crc).bigEndian) { Data($0).base64EncodedString() })
        }
        if algorithm == .crc64nvme {
            var crc: UInt64 = ~0
            for byte in bytes {
                crc ^= UInt64(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x9A6C_9329_AC4B_C9B5 : crc >> 1 }
            }
            #expect(whole == withUnsafeBytes(of: (~crc).bigEndian) { Data($0).base64EncodedString() })
        }
    }
}
