import Foundation

/// Resolves `${key}` references to bucket values in an op's parameters, so a flow file can say
/// `with: {path: "${folder}"}` and a run can change the folder with `--set folder=...`.
///
/// A parameter that is exactly `${key}` takes the bucket value itself (keeping its type); one that
/// embeds references (`"${base}/uploads"`) gets their printed forms. `$${` writes a literal `${`.
public enum FlowParameterTemplate {
    /// A reference to a key that is not in the bucket.
    public struct MissingKey: Error, CustomStringConvertible, Sendable {
        /// The bucket key.
        public let key: String
        /// The parameter that referenced it.
        public let parameter: String

        /// Creates the error for `key`, referenced by `parameter`.
        public init(key: String, parameter: String) {
            self.key = key
            self.parameter = parameter
        }

        public var description: String {
            "can't find <\(key)> in data bucket (referenced by parameter '\(parameter)' as ${\(key)})"
        }
    }

    /// Resolves every reference in `parameters`.
    ///
    /// - Throws: ``MissingKey`` for a reference to a key the bucket does not hold.
    public static func resolve(_ parameters: [String: FlowValue], bucket: [String: Any]) throws -> [String: FlowValue] {
        guard parameters.values.contains(where: containsReference) else { return parameters }
        var resolved: [String: FlowValue] = [:]
        for (name, value) in parameters {
            resolved[name] = try resolve(value, parameter: name, bucket: bucket)
        }
        return resolved
    }

    /// A bucket value as a reference embedded in text prints it.
    public static func printedForm(of value: Any) -> String {
        String(describing: value)
    }

    private static func containsReference(_ value: FlowValue) -> Bool {
        switch value {
        case .string(let text): return text.contains("${")
        case .array(let items): return items.contains(where: containsReference)
        case .map(let items): return items.values.contains(where: containsReference)
        default: return false
        }
    }

    private static func resolve(_ value: FlowValue, parameter: String, bucket: [String: Any]) throws -> FlowValue {
        switch value {
        case .string(let text):
            return try resolve(text, parameter: parameter, bucket: bucket)
        case .array(let items):
            return .array(try items.map { try resolve($0, parameter: parameter, bucket: bucket) })
        case .map(let items):
            return .map(try items.mapValues { try resolve($0, parameter: parameter, bucket: bucket) })
        default:
            return value
        }
    }

    private static func resolve(_ text: String, parameter: String, bucket: [String: Any]) throws -> FlowValue {
        if text.hasPrefix("${"), text.hasSuffix("}"), text.dropFirst(2).dropLast().allSatisfy({ $0 != "}" && $0 != "$" }) {
            let key = String(text.dropFirst(2).dropLast())
            guard let value = bucket[key] else { throw MissingKey(key: key, parameter: parameter) }
            return FlowValue(any: value) ?? .string(String(describing: value))
        }
        var output = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            if rest[..<start.lowerBound].hasSuffix("$") {
                output += rest[..<rest.index(before: start.lowerBound)] + "${"
                rest = rest[start.upperBound...]
                continue
            }
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else { break }
            output += rest[..<start.lowerBound]
            let key = String(rest[start.upperBound..<end])
            guard let value = bucket[key] else { throw MissingKey(key: key, parameter: parameter) }
            output += printedForm(of: value)
            rest = rest[rest.index(after: end)...]
        }
        return .string(output + rest)
    }
}
