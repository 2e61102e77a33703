package import Foundation

/// Appends protocol primitives to a growing byte buffer: the encoder's hot path.
///
/// Multi-byte integers are little-endian; varints are unsigned LEB128 in their shortest form
/// (docs/PROTOCOL.md, "Primitive types"). Nothing here allocates beyond the buffer itself, so
/// reserve a realistic capacity up front and a whole task batch is written with few or no
/// reallocations.
package struct WireWriter: Sendable {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8]

    /// Creates an empty writer.
    ///
    /// - Parameter capacity: bytes to reserve before the first write.
    package init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes written so far.
    package var count: Int { bytes.count }

    /// The bytes written so far, as one ZeroMQ frame.
    package var data: Data { Data(bytes) }

    /// Makes room for at least `additional` more bytes without reallocating.
    package mutating func reserveCapacity(additional: Int) {
        bytes.reserveCapacity(bytes.count + additional)
    }

    /// Forgets what was written but keeps the storage, to reuse the writer for the next message.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends a copy of bytes already written, at `range`.
    ///
    /// The bytes are copied out first and appended from that buffer: both are one `memcpy` in a debug
    /// build too, where appending `repeatElement(0, count:)` and copying over it walked the
    /// generic collection a byte at a time (a 1.6 MB SUBMIT of 16 tasks that repeat a 100 KiB
    /// parameter took 0.7 s of CPU to encode, long enough for a loaded pool to drop its client).
    ///
    /// The copy goes through a temporary buffer, on the stack when it fits there (a group's
    /// parameters, repeated for each task of a batch): an array for it was a heap allocation a
    /// task.
    mutating func appendRepeat(of range: Range<Int>) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: range.count) { buffer in
            let initialized = bytes.withUnsafeBufferPointer { source in
                buffer.initialize(fromContentsOf: UnsafeBufferPointer(rebasing: source[range]))
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<initialized]))
        }
    }

    /// Appends one byte.
    package mutating func writeUInt8(_ value: UInt8) {
        bytes.append(value)
    }

    /// Appends a 4-byte little-endian unsigned integer.
    package mutating func writeUInt32(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 8))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 16))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 24))
    }

    /// Appends an 8-byte little-endian unsigned integer.
    package mutating func writeUInt64(_ value: UInt64) {
        writeUInt32(UInt32(truncatingIfNeeded: value))
        writeUInt32(UInt32(truncatingIfNeeded: value &>> 32))
    }

    /// Appends an 8-byte little-endian two's-complement integer.
    package mutating func writeInt64(_ value: Int64) {
        writeUInt64(UInt64(bitPattern: value))
    }

    /// Appends an 8-byte little-endian IEEE 754 binary64, bit for bit (NaN payloads included).
    package mutating func writeFloat64(_ value: Double) {
        writeUInt64(value.bitPattern)
    }

    /// Appends an unsigned LEB128 varint in its shortest form (1 to 10 bytes).
    package mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest &>>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    /// Appends a signed integer as a zig-zag varint, so small magnitudes of either sign stay short.
    package mutating func writeZigZag(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value &<< 1) ^ (value &>> 63)))
    }

    /// Appends a string: varint byte count, then its UTF-8 bytes.
    package mutating func writeString(_ value: String) {
        let utf8 = value.utf8
        writeVarint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Appends bytes encoded already, as they are: a result's tail encoded ahead, or the bytes a
    /// relayed task or result kept from the message it was read from.
    package mutating func writeRaw(_ value: ArraySlice<UInt8>) {
        bytes.append(contentsOf: value)
    }

    /// Appends raw bytes: varint byte count, then the bytes.
    package mutating func writeBytes(_ value: Data) {
        writeVarint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends a timestamp: Int64 microseconds since 1970-01-01T00:00:00Z (`Date.wireMicroseconds`).
    package mutating func writeDate(_ value: Date) {
        writeInt64(value.wireMicroseconds)
    }

    /// Appends a list of strings: varint count, then each string.
    package mutating func writeStrings(_ values: [String]) {
        writeVarint(UInt64(values.count))
        for value in values {
            writeString(value)
        }
    }
}
