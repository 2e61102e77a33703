@testable import FlowStandardOps
import NIOCore
import Testing

/// What `verify` compares when a store keeps less than AWS does: an empty ETag is no ETag, a
/// multipart object's is computed from its parts', and a deep check hashes what it reads whatever
/// the store keeps. The expected digests are Python's `hashlib`, not Flow's.
@Suite struct VerifyBasisTests {
    static let parts = [
        UploadManifestEntry.Part(number: 1, etag: "\"74b87337454200d4d33f80c4663dc5e5\"", checksum: "Yb5VqOL2tOFyM4vd8YTW2+4pyYhT4KBIXs7n8nua8LQ="),
        UploadManifestEntry.Part(number: 2, etag: "\"65ba841e01d6db7733e90a5b7f9e6f80\"", checksum: "gcxbFwGGdLQBtC81uge7eeIRI5wjv/5ljaFXfj5kaHc="),
        UploadManifestEntry.Part(number: 3, etag: "\"e0323a9039add2978bf5b49550572c7c\"", checksum: "NVsbv8lnJc3Oj0onCP2jEKgObRMxWuxOXu0qdf6AMs4="),
    ]

    /// `aaaabbbbcc` in three parts of 4 bytes, as Ceph RGW 16 records it: the completion's ETag empty.
    static func multipart(algorithm: UploadChecksum = .sha256, checksums: Bool = true) -> UploadManifestEntry {
        var entry = UploadManifestEntry(target: "s3://b/k", size: 10, algorithm: algorithm, checksum: nil, etag: "")
        entry.partSize = 4
        entry.parts = parts.map { UploadManifestEntry.Part(number: $0.number, etag: $0.etag, checksum: checksums ? $0.checksum : nil) }
        return entry
    }

    /// The bytes fed in chunks that straddle the part boundaries.
    static func read(_ text: String, for entry: UploadManifestEntry, chunk: Int = 3) -> VerifyObjectOp.StreamedHash.Digests {
        let hash = VerifyObjectOp.StreamedHash(entry)
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            hash.consume(ByteBuffer(bytes: bytes[offset..<min(bytes.count, offset + chunk)]))
            offset += chunk
        }
        return hash.digests()
    }

    @Test func anEmptyRecordedETagIsComputedFromThePartsAndComparedWithTheStoredOne() {
        let entry = Self.multipart()
        #expect(entry.expectedETag == "cf6c8a60b0e393d7e70f2e7564027788-3")
        let same = ObjectCheck.compare(entry, size: 10, checksum: nil, etag: "\"cf6c8a60b0e393d7e70f2e7564027788-3\"")
        #expect(same.differences.isEmpty)
        #expect(same.basis == .etag)
        let other = ObjectCheck.compare(entry, size: 10, checksum: nil, etag: "\"00000000000000000000000000000000-3\"")
        #expect(other.differences == ["etag \"cf6c8a60b0e393d7e70f2e7564027788-3\" ≠ \"00000000000000000000000000000000-3\""])
    }

    @Test func withoutAnETagOrAChecksumOnEitherSideOnlyTheSizeIsCompared() {
        let entry = UploadManifestEntry(target: "s3://b/k", size: 10, algorithm: .crc64nvme, checksum: nil, etag: "")
        #expect(entry.expectedETag == nil)
        let same = ObjectCheck.compare(entry, size: 10, checksum: nil, etag: "\"\"")
        #expect(same.differences.isEmpty, "an empty stored ETag is no ETag")
        #expect(same.basis == .size)
        #expect(ObjectCheck.compare(entry, size: 11, checksum: nil, etag: nil).differences == ["size 10 ≠ 11"])
        let stored = ObjectCheck.compare(Self.multipart(), size: 10, checksum: "x", etag: nil)
        #expect(stored.basis == .size, "no recorded checksum to compare the stored one with, no stored ETag")
    }

    @Test func aStoredChecksumWinsAndSaysSo() {
        let entry = UploadManifestEntry(target: "s3://b/k", size: 10, algorithm: .sha256, checksum: "5bI4QcavRSDQVuZCgQPSgXjlhv9lER6AFn1Dc2reL3I=",
                                        etag: "\"e1\"")
        let check = ObjectCheck.compare(entry, size: 10, checksum: "5bI4QcavRSDQVuZCgQPSgXjlhv9lER6AFn1Dc2reL3I=", etag: "\"e2\"")
        #expect(check.differences.isEmpty)
        #expect(check.basis == .checksum)
    }

    @Test func aDeepReadHashesEachPartAtThePartSize() {
        for chunk in [1, 3, 4, 5, 10] {
            let read = Self.read("aaaabbbbcc", for: Self.multipart(), chunk: chunk)
            #expect(read.count == 10)
            #expect(read.parts.map(\.checksum) == Self.parts.map(\.checksum), "chunks of \(chunk)")
            #expect(read.parts.map(\.md5) == ["74b87337454200d4d33f80c4663dc5e5", "65ba841e01d6db7733e90a5b7f9e6f80", "e0323a9039add2978bf5b49550572c7c"])
            #expect(read.whole == "5bI4QcavRSDQVuZCgQPSgXjlhv9lER6AFn1Dc2reL3I=")
            #expect(read.md5 == "11a7cd2ff48c01afcc65cca69ed0f886")
        }
    }

    @Test func aDeepReadComparesPartChecksumsElsePartMD5sAndNamesThePartThatDiffers() {
        let ok = ObjectCheck.compare(Self.multipart(), read: Self.read("aaaabbbbcc", for: Self.multipart()))
        #expect(ok.differences.isEmpty)
        #expect(ok.basis == .checksum)
        let changed = ObjectCheck.compare(Self.multipart(), read: Self.read("aaaaXbbbcc", for: Self.multipart()))
        #expect(changed.differences == ["part 2 sha256 gcxbFwGGdLQBtC81uge7eeIRI5wjv/5ljaFXfj5kaHc= ≠ iiqjdWsgi/s3g6zg8axstHfm+/dyoBLZoGWL/r0+gC8="])

        let plain = Self.multipart(algorithm: .md5, checksums: false)
        let byETag = ObjectCheck.compare(plain, read: Self.read("aaaabbbbcc", for: plain))
        #expect(byETag.differences.isEmpty)
        #expect(byETag.basis == .etag)
        let changedByETag = ObjectCheck.compare(plain, read: Self.read("aaaaXbbbcc", for: plain))
        #expect(changedByETag.differences.count == 1)
        #expect(changedByETag.differences.first?.hasPrefix("part 2 etag \"65ba841e01d6db7733e90a5b7f9e6f80\" ≠ MD5 ") == true)
        let short = ObjectCheck.compare(plain, read: Self.read("aaaabbbb", for: plain))
        #expect(short.differences == ["size 10 ≠ 8", "parts 3 ≠ 2"])
    }

    @Test func aDeepReadOfASinglePutComparesItsMD5WithAPlainETagElseOnlyTheSize() {
        let single = UploadManifestEntry(target: "s3://b/k", size: 10, algorithm: .none, checksum: nil, etag: "\"11a7cd2ff48c01afcc65cca69ed0f886\"")
        let ok = ObjectCheck.compare(single, read: Self.read("aaaabbbbcc", for: single))
        #expect(ok.differences.isEmpty)
        #expect(ok.basis == .etag)
        #expect(ObjectCheck.compare(single, read: Self.read("aaaabbbbcd", for: single)).differences.count == 1)
        let nothing = UploadManifestEntry(target: "s3://b/k", size: 10, algorithm: .none, checksum: nil, etag: "\"5f3a-1\"")
        let sizeOnly = ObjectCheck.compare(nothing, read: Self.read("aaaabbbbcd", for: nothing))
        #expect(sizeOnly.differences.isEmpty)
        #expect(sizeOnly.basis == .size)
    }

    @Test func theBasisTravelsWithTheCheck() {
        let check = ObjectCheck(target: "s3://b/k", status: .ok, basis: .etag)
        #expect(ObjectCheck(check.flowValue) == check)
        #expect(ObjectCheck(ObjectCheck(target: "t", status: .missing).flowValue)?.basis == nil)
    }
}
