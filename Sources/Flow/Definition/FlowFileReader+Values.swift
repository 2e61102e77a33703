import Foundation
import Yams

extension FlowFileReader {
    /// A node as a bucket or parameter value, by its resolved tag.
    ///
    /// Quoted scalars are text whatever they look like; plain ones are typed by the YAML 1.2 core
    /// schema (``FlowCoreSchema``: `3` integer, `1.5` double, `true` bool, `~`/`null` null, and
    /// `yes`, `0123` as 123, `12:30` and `2024-05-01` as they read); an explicit tag types its value.
    mutating func readValue(_ node: Yams.Node) -> FlowValue? {
        switch node {
        case .scalar(let scalar):
            return readScalar(scalar, node: node)
        case .sequence(let sequence):
            var items: [FlowValue] = []
            var failed = false
            for element in sequence {
                if let item = readValue(element) { items.append(item) } else { failed = true }
            }
            return failed ? nil : .array(items)
        case .mapping(let mapping):
            return readMap(mapping).map(FlowValue.map)
        case .alias:
            // Yams replaces aliases by their anchored nodes while composing; this is a safety net.
            report("an alias cannot be used here: repeat the value instead", at: node)
            return nil
        }
    }

    /// A map of values, as `bucket:` and `with:` hold; keys are taken as text.
    mutating func readMap(_ mapping: Yams.Node.Mapping) -> [String: FlowValue]? {
        var items: [String: FlowValue] = [:]
        var failed = false
        for (key, value) in mapping {
            guard case .scalar(let keyScalar) = key else {
                report("a map key must be text, found \(Self.describe(key))", at: key)
                failed = true
                continue
            }
            // Yams rejects same-text same-type keys; `1` and "1" are both the key "1" here.
            if items[keyScalar.string] != nil {
                report("key '\(keyScalar.string)' appears more than once in this map: keep one", at: key)
                failed = true
                continue
            }
            if let item = readValue(value) { items[keyScalar.string] = item } else { failed = true }
        }
        return failed ? nil : items
    }

    /// A value map field (`bucket:`, `with:`): a map, or nothing for an empty one.
    mutating func readValueMap(_ name: String, _ node: Yams.Node, meaning: String) -> [String: FlowValue]? {
        switch node {
        case .mapping(let mapping):
            return readMap(mapping)
        case .scalar where Self.tagName(of: node) == .null:
            return [:]
        default:
            report("\(name) must be a map of \(meaning), found \(Self.describe(node))", at: node)
            return nil
        }
    }

    private mutating func readScalar(_ scalar: Yams.Node.Scalar, node: Yams.Node) -> FlowValue? {
        let tag = Self.tagName(of: node)
        switch tag {
        case .str, .value, .merge:
            return .string(scalar.string)
        case .null:
            return .null
        case .bool:
            if let value = FlowCoreSchema.bool(scalar.string) { return .bool(value) }
            report("'\(scalar.string)' is not a bool: use true or false", at: node)
        case .int:
            if let value = FlowCoreSchema.integer(scalar.string) { return .integer(value) }
            report(
                "'\(scalar.string)' is not an integer that fits in 64 bits: quote it to keep it as text", at: node)
        case .float:
            if let value = FlowCoreSchema.double(scalar.string) { return .double(value) }
            report("'\(scalar.string)' is not a number: quote it to keep it as text", at: node)
        case .timestamp:
            if let value = Date.construct(from: scalar) { return .date(value) }
            report("'\(scalar.string)' is not a date: write it as 2024-05-01 or 2024-05-01T12:00:00Z", at: node)
        case .binary:
            if let value = Data.construct(from: scalar) { return .bytes(value) }
            report("'\(scalar.string)' is not base64: !!binary values are base64-encoded bytes", at: node)
        default:
            report(
                "unsupported tag '\(tag.rawValue)': remove it, or quote the value to keep it as text", at: node)
        }
        return nil
    }
}
