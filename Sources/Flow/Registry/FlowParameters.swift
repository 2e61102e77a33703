import Foundation

/// An op's parameters (`with:` in a flow file), with typed readers that explain bad values.
public struct FlowParameters: Sendable {
    /// The raw values.
    public let values: [String: FlowValue]
    /// The op they belong to, for messages.
    public let operation: String

    /// Wraps parameters.
    public init(_ values: [String: FlowValue], operation: String) {
        self.values = values
        self.operation = operation
    }

    /// A string parameter.
    ///
    /// - Throws: ``FlowParameterError`` when it is missing (and no default) or not a string.
    public func string(_ key: String, default fallback: String? = nil) throws -> String {
        try read(key, fallback, "a string") { value in
            switch value {
            case .string(let text): return text
            case .integer, .double, .bool: return value.description
            default: return nil
            }
        }
    }

    /// An integer parameter.
    public func integer(_ key: String, default fallback: Int? = nil) throws -> Int {
        try read(key, fallback, "an integer") { $0.integerValue }
    }

    /// A number parameter (integers are accepted).
    public func double(_ key: String, default fallback: Double? = nil) throws -> Double {
        try read(key, fallback, "a number") { $0.doubleValue }
    }

    /// A Boolean parameter.
    public func bool(_ key: String, default fallback: Bool? = nil) throws -> Bool {
        try read(key, fallback, "true or false") { $0.boolValue }
    }

    /// A parameter of any type, `nil` when absent.
    public subscript(key: String) -> FlowValue? { values[key] }

    private func read<T>(_ key: String, _ fallback: T?, _ expected: String, _ convert: (FlowValue) -> T?) throws -> T {
        guard let value = values[key] else {
            if let fallback { return fallback }
            throw FlowParameterError(operation: operation, parameter: key, message: "is required")
        }
        guard let converted = convert(value) else {
            throw FlowParameterError(operation: operation, parameter: key, message: "must be \(expected), not \(value.typeName) \(value)")
        }
        return converted
    }
}
