import Crypto
import Foundation

/// The checksum `UploadFileOp` computes while it reads a file and sends with the body, so that the
/// store checks what arrived: the `checksum` parameter.
///
/// S3's values are the base64 of the big-endian digest (`x-amz-checksum-crc64nvme: 9/...`), which
/// ``UploadChecksumHasher/base64`` gives for every algorithm.
public enum UploadChecksum: String, Sendable, CaseIterable {
    /// CRC-32C (Castagnoli), 4 bytes.
    case crc32c
    /// CRC-64/NVME, 8 bytes: the AWS CLI's and SDKs' default since December 2024.
    case crc64nvme
    /// SHA-256, 32 bytes.
    case sha256
    /// MD5, 16 bytes, sent as `Content-MD5`.
    case md5
    /// No checksum.
    case none

    /// What S3 uploads use when the flow names none: CRC-64/NVME, as the AWS CLI v2 and SDKs do.
    public static let s3Default = UploadChecksum.crc64nvme

    /// The name in S3's headers: `CRC32C`, `CRC64NVME`, `SHA256`; `nil` for `md5` (sent as
    /// `Content-MD5`) and `none`.
    public var s3Name: String? {
        switch self {
        case .crc32c: return "CRC32C"
        case .crc64nvme: return "CRC64NVME"
        case .sha256: return "SHA256"
        case .md5, .none: return nil
        }
    }

    /// The header that carries the value: `x-amz-checksum-crc32c` and so on on S3, `Content-MD5`
    /// for `md5`; `nil` for `none`.
    public var s3Header: String? {
        switch self {
        case .md5: return "Content-MD5"
        case .none: return nil
        default: return "x-amz-checksum-\(rawValue)"
        }
    }

    /// A hasher for this algorithm, `nil` for `none`.
    public func makeHasher() -> UploadChecksumHasher? {
        self == .none ? nil : UploadChecksumHasher(self)
    }

    /// The checksum of `bytes` in base64, `nil` for `none`.
    public func base64(of bytes: some Sequence<UInt8>) -> String? {
        guard var hasher = makeHasher() else { return nil }
        hasher.update(Array(bytes))
        return hasher.base64
    }
}

/// A running checksum, fed the bytes as they are read.
public struct UploadChecksumHasher: Sendable {
    /// The algorithm.
    public let algorithm: UploadChecksum
    private var crc32c = CRC32C()
    private var crc64 = CRC64NVME()
    private var sha256: SHA256?
    private var md5: Insecure.MD5?

    /// Starts a checksum of `algorithm` (not ``UploadChecksum/none``).
    public init(_ algorithm: UploadChecksum) {
        self.algorithm = algorithm
        if algorithm == .sha256 { sha256 = SHA256() }
        if algorithm == .md5 { md5 = Insecure.MD5() }
    }

    /// Adds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch algorithm {
        case .crc32c: crc32c.update(bytes)
        case .crc64nvme: crc64.update(bytes)
        case .sha256: sha256?.update(bufferPointer: bytes)
        case .md5: md5?.update(bufferPointer: bytes)
        case .none: break
        }
    }

    /// Adds bytes.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest so far, big-endian (as S3 sends CRCs).
    public var digest: [UInt8] {
        switch algorithm {
        case .crc32c: return withUnsafeBytes(of: crc32c.value.bigEndian) { Array($0) }
        case .crc64nvme: return withUnsafeBytes(of: crc64.value.bigEndian) { Array($0) }
        case .sha256: return sha256.map { Array($0.finalize()) } ?? []
        case .md5: return md5.map { Array($0.finalize()) } ?? []
        case .none: return []
        }
    }

    /// The digest in base64, as S3's checksum headers and `Content-MD5` carry it.
    public var base64: String { Data(digest).base64EncodedString() }
}
