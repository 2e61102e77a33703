/// CRC-64/NVME, the CRC S3 calls `CRC64NVME` (polynomial 0xAD93D23594C93659, reflected as
/// 0x9A6C9329AC4BC9B5, initial value and final XOR all ones), slicing-by-8 over tables computed once.
struct CRC64NVME: Sendable {
    private var state: UInt64 = ~0

    /// The checksum of the bytes so far.
    var value: UInt64 { ~state }

    /// Eight tables of 256 entries: `tables[k][b]` is the CRC of byte `b` followed by `k` zero bytes.
    static let tables: [UInt64] = {
        let polynomial: UInt64 = 0x9A6C_9329_AC4B_C9B5
        var tables = [UInt64](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt64(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return tables
    }()

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        state = Self.tables.withUnsafeBufferPointer { table in
            var crc = state
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                var word: UInt64 = 0
                for k in 0..<8 { word |= UInt64(bytes[index + k]) << (8 * UInt64(k)) }
                crc ^= word
                var next: UInt64 = 0
                for k in 0..<8 { next ^= table[(7 - k) * 256 + Int((crc >> (8 * UInt64(k))) & 0xFF)] }
                crc = next
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt64(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
            return crc
        }
    }
}
