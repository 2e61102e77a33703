package import Foundation

/// Reads protocol primitives from a body frame, checking every bound before it reads.
///
/// Each read names the field it reads, so an error says which field was cut short or invalid and
/// at which byte offset. Lengths and counts are checked against the bytes that remain before
/// anything is allocated for them, so a forged length cannot make the reader reserve gigabytes.
package struct WireReader: Sendable {
    /// The whole body being read.
    package let bytes: [UInt8]
    /// The offset of the next byte to read.
    package private(set) var offset: Int

    /// Creates a reader at the start of `bytes`.
    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    /// Creates a reader at the start of a frame's bytes.
    package init(_ data: Data) {
        self.init([UInt8](data))
    }

    /// The number of bytes not yet read.
    package var remaining: Int { bytes.count - offset }

    /// Whether every byte has been read.
    package var isAtEnd: Bool { offset == bytes.count }

    /// Throws ``WireDecodingError/Code/trailingBytes`` unless every byte has been read.
    package func expectEnd() throws(WireDecodingError) {
        guard isAtEnd else {
            throw WireDecodingError(.trailingBytes, offset: offset, "\(remaining) trailing byte(s) after the last field")
        }
    }

    /// Skips the bytes at the read position if they are the same as those in `range`, which
    /// lies in the part already read.
    ///
    /// - Returns: whether they were the same (and skipped).
    mutating func skipRepeat(of range: Range<Int>) -> Bool {
        let count = range.count
        guard count > 0, count <= remaining, range.upperBound <= offset else { return false }
        let same = bytes.withUnsafeBytes { buffer in
            memcmp(buffer.baseAddress! + range.lowerBound, buffer.baseAddress! + offset, count) == 0
        }
        if same { offset += count }
        return same
    }

    private mutating func take(_ size: Int, _ field: StaticString) throws(WireDecodingError) -> Int {
        guard size <= remaining else {
            throw WireDecodingError(
                .truncated, offset: offset,
                "truncated body: \(field) needs \(size) byte(s), \(remaining) remain"
            )
        }
        let start = offset
        offset += size
        return start
    }

    /// Reads one byte.
    package mutating func readUInt8(_ field: StaticString) throws(WireDecodingError) -> UInt8 {
        let start = try take(1, field)
        return bytes[start]
    }

    /// Reads a 4-byte little-endian unsigned integer.
    package mutating func readUInt32(_ field: StaticString) throws(WireDecodingError) -> UInt32 {
        let start = try take(4, field)
        return UInt32(bytes[start])
            | UInt32(bytes[start + 1]) << 8
            | UInt32(bytes[start + 2]) << 16
            | UInt32(bytes[start + 3]) << 24
    }

    /// Reads an 8-byte little-endian unsigned integer.
    package mutating func readUInt64(_ field: StaticString) throws(WireDecodingError) -> UInt64 {
        let start = try take(8, field)
        var value: UInt64 = 0
        for index in (start..<start + 8).reversed() {
            value = value << 8 | UInt64(bytes[index])
        }
        return value
    }

    /// Reads an 8-byte little-endian two's-complement integer.
    package mutating func readInt64(_ field: StaticString) throws(WireDecodingError) -> Int64 {
        Int64(bitPattern: try readUInt64(field))
    }

    /// Reads an 8-byte little-endian IEEE 754 binary64.
    package mutating func readFloat64(_ field: StaticString) throws(WireDecodingError) -> Double {
        Double(bitPattern: try readUInt64(field))
    }

    /// Reads an unsigned LEB128 varint, rejecting one that is over 10 bytes, overflows 64 bits or
    /// is not in its shortest form (so every value has exactly one encoding).
    package mutating func readVarint(_ field: StaticString) throws(WireDecodingError) -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readUInt8(field)
            let payload = UInt64(byte & 0x7F)
            if shift == 63 && payload > 1 {
                throw WireDecodingError(.invalidVarint, offset: start, "\(field): varint overflows 64 bits")
            }
            value |= payload << shift
            if byte & 0x80 == 0 {
                if byte == 0 && offset - start > 1 {
                    throw WireDecodingError(.invalidVarint, offset: start, "\(field): varint is not in its shortest form")
                }
                return value
            }
            shift += 7
            if shift > 63 {
                throw WireDecodingError(.invalidVarint, offset: start, "\(field): varint is longer than 10 bytes")
            }
        }
    }

    /// Reads a varint that indexes an array, rejecting one that does not fit an `Int`.
    package mutating func readIndex(_ field: StaticString) throws(WireDecodingError) -> Int {
        let start = offset
        let value = try readVarint(field)
        guard value <= UInt64(Int.max) else {
            throw WireDecodingError(.invalidField, offset: start, "\(field): \(value) is larger than any array index")
        }
        return Int(value)
    }

    /// Reads a zig-zag varint as a signed integer.
    package mutating func readZigZag(_ field: StaticString) throws(WireDecodingError) -> Int64 {
        let raw = try readVarint(field)
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// Reads a varint byte length and checks the bytes are there.
    private mutating func readLength(_ field: StaticString) throws(WireDecodingError) -> Int {
        let start = offset
        let length = try readVarint(field)
        guard length <= UInt64(remaining) else {
            throw WireDecodingError(
                .lengthExceedsBody, offset: start,
                "\(field): declared length \(length) exceeds the \(remaining) byte(s) that remain"
            )
        }
        return Int(length)
    }

    /// Reads a varint element count and checks that many elements can fit in what remains.
    ///
    /// - Parameters:
    ///   - minimumElementSize: the fewest bytes one element can take, at least 1.
    ///   - field: the field, for error messages.
    /// - Returns: the count, safe to pass to `reserveCapacity`.
    package mutating func readCount(minimumElementSize: Int, _ field: StaticString) throws(WireDecodingError) -> Int {
        let start = offset
        let count = try readVarint(field)
        let fitting = UInt64(remaining / max(minimumElementSize, 1))
        guard count <= fitting else {
            throw WireDecodingError(
                .lengthExceedsBody, offset: start,
                "\(field): declared count \(count) cannot fit in the \(remaining) byte(s) that remain"
            )
        }
        return Int(count)
    }

    /// Reads a string: varint byte count, then that many bytes of valid UTF-8.
    package mutating func readString(_ field: StaticString) throws(WireDecodingError) -> String {
        try readString(field, maximumBytes: .max)
    }

    /// Reads a string of at most `maximumBytes` bytes, refusing a longer one at its length,
    /// before its bytes are looked at.
    ///
    /// - Throws: ``WireDecodingError/Code/overLimit`` for a longer string, and what
    ///   ``readString(_:)`` throws.
    package mutating func readString(_ field: StaticString, maximumBytes: Int) throws(WireDecodingError) -> String {
        let lengthStart = offset
        let length = try readLength(field)
        guard length <= maximumBytes else {
            throw WireDecodingError(.overLimit, offset: lengthStart, "\(field): \(length) bytes long, longer than the \(maximumBytes) allowed")
        }
        let start = offset
        if length == 0 { return "" }
        offset += length
        // ASCII, nearly every name, key and path, is valid UTF-8 as it is and is decoded at once;
        // the rest is validated. (`String(validating:as:)` alone takes an unspecialised path that
        // cost 1,000 instructions for a 7-byte op name, callgrind.)
        let decoded = bytes.withUnsafeBufferPointer { all -> String? in
            let slice = UnsafeBufferPointer(rebasing: all[start..<start + length])
            if slice.allSatisfy({ $0 < 0x80 }) { return String(decoding: slice, as: UTF8.self) }
            return String(validating: slice, as: UTF8.self)
        }
        guard let string = decoded else {
            throw WireDecodingError(.invalidUTF8, offset: start, "\(field): string of \(length) byte(s) is not valid UTF-8")
        }
        return string
    }

    /// Reads raw bytes: varint byte count, then the bytes.
    package mutating func readBytes(_ field: StaticString) throws(WireDecodingError) -> Data {
        let length = try readLength(field)
        let start = offset
        offset += length
        return Data(bytes[start..<start + length])
    }

    /// Reads a timestamp: Int64 microseconds since 1970-01-01T00:00:00Z.
    package mutating func readDate(_ field: StaticString) throws(WireDecodingError) -> Date {
        Date(wireMicroseconds: try readInt64(field))
    }

    /// Reads a list of strings: varint count, then each string.
    package mutating func readStrings(_ field: StaticString) throws(WireDecodingError) -> [String] {
        try readStrings(field, maximumCount: .max, maximumBytes: .max)
    }

    /// Reads a list of at most `maximumCount` strings of at most `maximumBytes` bytes each. A
    /// longer list is refused at its count, before an array is made for it.
    ///
    /// - Throws: ``WireDecodingError/Code/overLimit`` for a longer list or string, and what
    ///   ``readStrings(_:)`` throws.
    package mutating func readStrings(_ field: StaticString, maximumCount: Int, maximumBytes: Int) throws(WireDecodingError) -> [String] {
        let countStart = offset
        let count = try readCount(minimumElementSize: 1, field)
        guard count <= maximumCount else {
            throw WireDecodingError(.overLimit, offset: countStart, "\(field)s: \(count) of them, more than the \(maximumCount) allowed")
        }
        var strings: [String] = []
        strings.reserveCapacity(count)
        for _ in 0..<count {
            strings.append(try readString(field, maximumBytes: maximumBytes))
        }
        return strings
    }
}
