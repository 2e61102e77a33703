/// The first byte of an encoded `FlowValue`: which case follows (docs/PROTOCOL.md, "Values").
package enum WireValueTag: UInt8, Sendable, Hashable, CaseIterable {
    /// `null`; no payload.
    case null = 0x00
    /// Boolean `false`; no payload.
    case `false` = 0x01
    /// Boolean `true`; no payload.
    case `true` = 0x02
    /// A signed 64-bit integer as a zig-zag varint.
    case integer = 0x03
    /// An IEEE 754 binary64, 8 bytes little-endian.
    case double = 0x04
    /// Varint byte count, then UTF-8.
    case string = 0x05
    /// Varint byte count, then raw bytes.
    case bytes = 0x06
    /// Int64 microseconds since 1970-01-01T00:00:00Z, 8 bytes little-endian.
    case date = 0x07
    /// Varint element count, then each value.
    case array = 0x08
    /// Varint entry count, then key string and value per entry, keys in increasing byte order.
    case map = 0x09
}
