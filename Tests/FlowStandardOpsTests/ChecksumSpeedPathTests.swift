import Foundation
import Testing
@testable import FlowStandardOps

/// The CRCs' fast paths (the CPU's crc32 instruction three streams at once, carry-less
/// multiplication folding 64 bytes at a time) against a byte-at-a-time reference, at the lengths
/// and alignments where they change over: below and above one fold, three streams, a 1 MiB chunk.
@Suite struct ChecksumSpeedPathTests {
    static let bytes: [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<(1 << 20) + 100).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }()

    static let lengths = [0, 1, 7, 8, 15, 16, 17, 63, 64, 65, 127, 128, 129, 191, 192, 193, 1000, 4096, 24_575, 24_576,
                          24_577, 49_153, 100_003, 1 << 20]

    static func referenceCRC32C(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = ~0
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    static func referenceCRC64NVME(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var crc: UInt64 = ~0
        for byte in bytes {
            crc ^= UInt64(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x9A6C_9329_AC4B_C9B5 : crc >> 1 }
        }
        return ~crc
    }

    @Test func crc32cMatchesTheReferenceAtEveryLengthAndAlignment() {
        Self.bytes.withUnsafeBytes { all in
            for length in Self.lengths {
                for offset in [0, 1, 3, 8, 13] where offset + length <= all.count {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<offset + length])
                    var crc = CRC32C()
                    crc.update(slice)
                    #expect(crc.value == Self.referenceCRC32C(slice), "length \(length), offset \(offset)")
                }
            }
        }
    }

    @Test func crc64nvmeMatchesTheReferenceAtEveryLengthAndAlignment() {
        Self.bytes.withUnsafeBytes { all in
            for length in Self.lengths {
                for offset in [0, 1, 3, 8, 13] where offset + length <= all.count {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<offset + length])
                    var crc = CRC64NVME()
                    crc.update(slice)
                    #expect(crc.value == Self.referenceCRC64NVME(slice), "length \(length), offset \(offset)")
                }
            }
        }
    }

    /// A body fed in uneven pieces (as chunks of a file arrive) gives the checksum of the whole.
    @Test func piecesAcrossTheFastPathsGiveTheWhole() {
        Self.bytes.withUnsafeBytes { all in
            var whole32 = CRC32C(), whole64 = CRC64NVME()
            whole32.update(all)
            whole64.update(all)
            var pieces32 = CRC32C(), pieces64 = CRC64NVME()
            var offset = 0
            var length = 1
            while offset < all.count {
                let end = min(all.count, offset + length)
                let piece = UnsafeRawBufferPointer(rebasing: all[offset..<end])
                pieces32.update(piece)
                pieces64.update(piece)
                offset = end
                length = length * 3 + 5
            }
            #expect(pieces32.value == whole32.value)
            #expect(pieces64.value == whole64.value)
        }
    }
}
