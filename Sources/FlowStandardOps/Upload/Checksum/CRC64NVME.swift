import CFlowChecksum

/// CRC-64/NVME, the CRC S3 calls `CRC64NVME` (polynomial 0xAD93D23594C93659, reflected as
/// 0x9A6C9329AC4BC9B5, initial value and final XOR all ones).
///
/// Computed by the `CFlowChecksum` C target: folded 64 bytes at a time with carry-less
/// multiplication (PCLMULQDQ) on x86-64, slicing-by-8 tables elsewhere.
struct CRC64NVME: Sendable {
    private var state: UInt64 = ~0

    /// The checksum of the bytes so far.
    var value: UInt64 { ~state }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        state = flow_crc64nvme_update(state, base, bytes.count)
    }

    /// Whether this machine's CPU instructions compute it.
    static var usesHardware: Bool { flow_crc64nvme_uses_hardware() != 0 }
}
