package import Flow
import Foundation

extension FlowValue {
    /// How many arrays and maps nest in one another on the deepest path through this value: 0
    /// for a scalar, 1 for an array or map of scalars (or an empty one), and so on.
    ///
    /// A sender compares it with ``WireLimits/maximumValueDepth`` before it sends a value it did
    /// not make itself, since a receiver rejects the whole message for one value that is too deep.
    package var wireNestingDepth: Int {
        switch self {
        case .array(let values): return 1 + (values.lazy.map(\.wireNestingDepth).max() ?? 0)
        case .map(let values): return 1 + (values.values.lazy.map(\.wireNestingDepth).max() ?? 0)
        default: return 0
        }
    }
}

extension [String: FlowValue] {
    /// The deepest `FlowValue.wireNestingDepth` among the values (the map itself is a message
    /// field, not a value, and does not count), 0 when empty.
    package var wireNestingDepth: Int {
        values.lazy.map(\.wireNestingDepth).max() ?? 0
    }
}

extension WireWriter {
    /// Appends a value: its ``WireValueTag`` byte, then its payload.
    package mutating func writeValue(_ value: FlowValue) {
        switch value {
        case .null:
            writeUInt8(WireValueTag.null.rawValue)
        case .bool(let flag):
            writeUInt8(flag ? WireValueTag.true.rawValue : WireValueTag.false.rawValue)
        case .integer(let number):
            writeUInt8(WireValueTag.integer.rawValue)
            writeZigZag(number)
        case .double(let number):
            writeUInt8(WireValueTag.double.rawValue)
            writeFloat64(number)
        case .string(let text):
            writeUInt8(WireValueTag.string.rawValue)
            writeString(text)
        case .bytes(let data):
            writeUInt8(WireValueTag.bytes.rawValue)
            writeBytes(data)
        case .date(let date):
            writeUInt8(WireValueTag.date.rawValue)
            writeDate(date)
        case .array(let values):
            writeUInt8(WireValueTag.array.rawValue)
            writeVarint(UInt64(values.count))
            for element in values {
                writeValue(element)
            }
        case .map(let entries):
            writeUInt8(WireValueTag.map.rawValue)
            writeValueMap(entries)
        }
    }

    /// The last map written by ``writeValueMap(_:repeating:)`` and where its bytes are.
    package struct WrittenMap: Sendable {
        let map: [String: FlowValue]
        let range: Range<Int>
    }

    /// Writes a map as ``writeValueMap(_:)`` does; one equal to `last` (a group's tasks share
    /// their op's parameters, one map in memory, which compares equal at once) is `last`'s bytes
    /// copied, not encoded again: its keys sorted, each key and value written (callgrind: about
    /// 1,100 instructions a task on the coordinator).
    package mutating func writeValueMap(_ map: [String: FlowValue], repeating last: inout WrittenMap?) {
        if let last, last.range.upperBound <= bytes.count, last.map == map {
            appendRepeat(of: last.range)
            return
        }
        let start = bytes.count
        writeValueMap(map)
        last = WrittenMap(map: map, range: start..<bytes.count)
    }

    /// Appends a map without a tag byte: varint entry count, then key and value per entry, keys
    /// in increasing order of their UTF-8 bytes so equal maps always encode to equal bytes.
    package mutating func writeValueMap(_ map: [String: FlowValue]) {
        writeVarint(UInt64(map.count))
        guard map.count > 1 else {
            for (key, value) in map {
                writeString(key)
                writeValue(value)
            }
            return
        }
        // Sort indices in a stack buffer rather than building a sorted array of pairs, so a map
        // costs no heap allocation of its own.
        withUnsafeTemporaryAllocation(of: Dictionary<String, FlowValue>.Index.self, capacity: map.count) { indices in
            let initialized = indices.initialize(fromContentsOf: map.indices)
            var sorted = UnsafeMutableBufferPointer(rebasing: indices[..<initialized])
            sorted.sort { map.keys[$0].utf8.lexicographicallyPrecedes(map.keys[$1].utf8) }
            for index in sorted {
                let (key, value) = map[index]
                writeString(key)
                writeValue(value)
            }
            sorted.deinitialize()
        }
    }
}

extension WireReader {
    /// The fewest bytes one map entry takes: an empty key and a tag-only value.
    static let minimumMapEntrySize = 2

    /// Reads a value: a ``WireValueTag`` byte, then its payload.
    ///
    /// - Parameter field: the field, for error messages.
    /// - Throws: on truncation, an unknown tag, invalid UTF-8, a bad map, or nesting deeper than
    ///   ``WireLimits/maximumValueDepth``.
    package mutating func readValue(_ field: StaticString) throws(WireDecodingError) -> FlowValue {
        try readValue(field, enclosing: 0)
    }

    /// Reads a map without a tag byte, as ``WireWriter/writeValueMap(_:)`` writes it.
    package mutating func readValueMap(_ field: StaticString) throws(WireDecodingError) -> [String: FlowValue] {
        try readValueMap(field, enclosing: 0)
    }

    /// The last map read by ``readValueMap(_:reusing:)`` and where its bytes are in the body.
    package struct ReadMap: Sendable {
        let range: Range<Int>
        let map: [String: FlowValue]
    }

    /// Reads a map as ``readValueMap(_:)`` does; when its bytes repeat those of `last`, an earlier
    /// map of the same body, it is `last`'s map, shared rather than decoded again. A batch's
    /// tasks mostly carry the same parameters (a group's elements): decoding them took about
    /// 2,000 instructions a task on a worker (callgrind), comparing their bytes a few dozen.
    ///
    /// Identical bytes decode to an identical map, and the earlier ones were checked when they
    /// were read: the shortcut accepts nothing the full read would refuse.
    package mutating func readValueMap(_ field: StaticString, reusing last: inout ReadMap?) throws(WireDecodingError)
        -> [String: FlowValue] {
        if let last, skipRepeat(of: last.range) { return last.map }
        let start = offset
        let map = try readValueMap(field, enclosing: 0)
        last = ReadMap(range: start..<offset, map: map)
        return map
    }

    /// The last string read by ``readString(_:reusing:)`` and where its bytes are in the body.
    package struct ReadString: Sendable {
        let range: Range<Int>
        let string: String
    }

    /// Reads a string as ``readString(_:)`` does; when its bytes (length included) repeat those
    /// of `last`, an earlier string of the same body, it is `last`'s string. A batch's tasks
    /// mostly run one op: reading its name again cost about 330 instructions a task, checking
    /// it as UTF-8 and making a string (callgrind), comparing its bytes a few dozen.
    package mutating func readString(_ field: StaticString, reusing last: inout ReadString?) throws(WireDecodingError) -> String {
        if let last, skipRepeat(of: last.range) { return last.string }
        let start = offset
        let string = try readString(field)
        last = ReadString(range: start..<offset, string: string)
        return string
    }

    /// - Parameter enclosing: how many arrays and maps enclose the value.
    private mutating func readValue(_ field: StaticString, enclosing: Int) throws(WireDecodingError) -> FlowValue {
        let start = offset
        let tagByte = try readUInt8(field)
        guard let tag = WireValueTag(rawValue: tagByte) else {
            throw WireDecodingError(.unknownValueTag, offset: start, "\(field): unknown value tag 0x\(tagByte.hexDigits)")
        }
        switch tag {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .integer: return .integer(try readZigZag(field))
        case .double: return .double(try readFloat64(field))
        case .string: return .string(try readString(field))
        case .bytes: return .bytes(try readBytes(field))
        case .date: return .date(try readDate(field))
        case .array:
            let level = try nestingLevel(inside: enclosing, at: start, field)
            let count = try readCount(minimumElementSize: 1, field)
            var values: [FlowValue] = []
            values.reserveCapacity(count)
            for _ in 0..<count {
                values.append(try readValue(field, enclosing: level))
            }
            return .array(values)
        case .map:
            let level = try nestingLevel(inside: enclosing, at: start, field)
            return .map(try readValueMap(field, enclosing: level))
        }
    }

    /// Checks an array or map may open here, before reading any of it, so the recursion is
    /// bounded by the limit and not by the attacker.
    /// - Returns: the nesting level of the new array or map.
    private func nestingLevel(inside enclosing: Int, at start: Int, _ field: StaticString) throws(WireDecodingError) -> Int {
        guard enclosing < WireLimits.maximumValueDepth else {
            throw WireDecodingError(
                .nestingTooDeep, offset: start,
                "\(field): arrays and maps nest deeper than \(WireLimits.maximumValueDepth) levels"
            )
        }
        return enclosing + 1
    }

    private mutating func readValueMap(_ field: StaticString, enclosing: Int) throws(WireDecodingError) -> [String: FlowValue] {
        let count = try readCount(minimumElementSize: Self.minimumMapEntrySize, field)
        // One allocation: `reserveCapacity` on an empty map first copies it, then resizes.
        var map = [String: FlowValue](minimumCapacity: count)
        var previousKey: String?
        for _ in 0..<count {
            let keyStart = offset
            let key = try readString(field)
            if let previousKey, !previousKey.utf8.lexicographicallyPrecedes(key.utf8) {
                throw WireDecodingError(
                    .invalidMap, offset: keyStart,
                    "\(field): map key \"\(key)\" does not follow \"\(previousKey)\" in increasing byte order"
                )
            }
            let value = try readValue(field, enclosing: enclosing)
            // Pattern-matched: `FlowValue` is `ExpressibleByNilLiteral`, so `!= nil` is ambiguous.
            if case .some = map.updateValue(value, forKey: key) {
                throw WireDecodingError(.invalidMap, offset: keyStart, "\(field): duplicate map key \"\(key)\"")
            }
            previousKey = key
        }
        return map
    }
}
