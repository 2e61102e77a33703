import Foundation

/// A JSON document read straight into ``FlowValue``s with Foundation's `JSONSerialization`, for
/// big bucket files: a million values in a fraction of the memory and time the YAML parser needs
/// for the same text. JSON is YAML, and this reads it as the YAML reader does: a number with a
/// fraction or an exponent is a double, one without is an integer, strings are text.
///
/// It has no line numbers for its errors, and leaves alone what the YAML reader judges in its own
/// way (an integer past 64 bits, a key given twice): the loader falls back to the YAML reader for
/// any file this refuses, which finds the problem and says where. `JSONSerialization` keeps the
/// last of a key given twice without a word, so this counts the text's key separators (the `:`
/// outside strings) against the keys it read, and refuses the file when they differ. It takes
/// files of ``minimumSize`` or more; smaller ones, often written by hand, cost the YAML reader
/// little.
enum FlowJSONValue {
    /// The smallest text this reads: 64 KiB (about 3,000 values). Through the YAML parser a
    /// 20,000-value bucket (400 KB) took 193 M instructions, 15% of its whole cluster run
    /// (callgrind); it was read that way below 1 MiB before duplicate keys were counted.
    static let minimumSize = 64 << 10

    /// The JSON text's value, `nil` when it is not JSON this reads or is shorter than ``minimumSize``.
    static func read(_ text: String) -> FlowValue? {
        guard text.utf8.count >= minimumSize, let first = text.utf8.first(where: { !isSpace($0) }), first == UInt8(ascii: "{") else { return nil }
        var text = text
        let data = text.withUTF8 { Data($0) }
        guard let object = try? JSONSerialization.jsonObject(with: data), let value = value(object) else { return nil }
        // A key given twice was dropped: the YAML reader reports it.
        guard keyCount(value) == text.withUTF8(separatorCount) else { return nil }
        return value
    }

    /// The keys of every map in `value`.
    static func keyCount(_ value: FlowValue) -> Int {
        switch value {
        case .map(let map): return map.values.reduce(map.count) { $0 + keyCount($1) }
        case .array(let values): return values.reduce(0) { $0 + keyCount($1) }
        default: return 0
        }
    }

    /// The `:` bytes outside strings of valid JSON text: one for each key of each object.
    static func separatorCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: ":") {
                count += 1
            }
        }
        return count
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
    }

    static func value(_ object: Any) -> FlowValue? {
        switch object {
        case let text as String:
            return .string(text)
        case let list as [Any]:
            var values: [FlowValue] = []
            values.reserveCapacity(list.count)
            for element in list {
                guard let value = value(element) else { return nil }
                values.append(value)
            }
            return .array(values)
        case let map as [String: Any]:
            var values = [String: FlowValue](minimumCapacity: map.count)
            for (key, element) in map {
                guard let value = value(element) else { return nil }
                values[key] = value
            }
            return .map(values)
        case let number as NSNumber:
            // JSONSerialization types its numbers: `c` true and false, `d` a fraction or an
            // exponent, `i`/`q` an integer; `Q` is an integer past Int64, for the YAML reader.
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "c"): return .bool(number.boolValue)
            case UInt8(ascii: "d"), UInt8(ascii: "f"): return .double(number.doubleValue)
            case UInt8(ascii: "i"), UInt8(ascii: "q"), UInt8(ascii: "l"), UInt8(ascii: "s"): return .integer(number.int64Value)
            default: return nil
            }
        case is NSNull:
            return .null
        default:
            return nil
        }
    }
}
