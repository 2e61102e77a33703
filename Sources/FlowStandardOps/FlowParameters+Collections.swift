import Flow

/// Readers for the list, map and choice parameters the stock ops take; like ``FlowParameters``'
/// own readers they throw ``FlowParameterError`` naming the op and the parameter.
extension FlowParameters {
    /// An optional string parameter: `nil` when absent.
    func optionalString(_ key: String) throws -> String? {
        values[key] == nil ? nil : try string(key)
    }

    /// A list of strings; numbers and Booleans are taken in their printed form.
    func stringList(_ key: String) throws -> [String]? {
        guard let value = values[key] else { return nil }
        guard case .array(let items) = value else {
            throw error(key, "must be a list of strings, not \(value.typeName) \(value)")
        }
        return try items.map { item in
            guard let text = Self.scalarText(item) else {
                throw error(key, "must be a list of strings, but holds \(item.typeName) \(item)")
            }
            return text
        }
    }

    /// A map of strings; numbers and Booleans are taken in their printed form. Empty when absent.
    func stringMap(_ key: String) throws -> [String: String] {
        guard let value = values[key] else { return [:] }
        guard case .map(let items) = value else {
            throw error(key, "must be a map of strings, not \(value.typeName) \(value)")
        }
        var result: [String: String] = [:]
        for (name, item) in items {
            guard let text = Self.scalarText(item) else {
                throw error(key, "must be a map of strings, but '\(name)' is \(item.typeName) \(item)")
            }
            result[name] = text
        }
        return result
    }

    /// A number of seconds (or milliseconds) that must be positive, or zero when `allowsZero`.
    func duration(_ key: String, default fallback: Double, allowsZero: Bool = false) throws -> Double {
        let number = try double(key, default: fallback)
        guard number.isFinite, number > 0 || (allowsZero && number == 0) else {
            throw error(key, allowsZero ? "must be zero or more, not \(number)" : "must be more than zero, not \(number)")
        }
        return number
    }

    /// A time in seconds, as a flow file gives it: above zero and at most a year (a time limit
    /// past that is a typo, and `Duration` cannot hold every `Double`).
    func seconds(_ key: String, default fallback: Double) throws -> Duration {
        let number = try duration(key, default: fallback)
        guard number <= Self.longestSeconds else { throw error(key, "must be at most a year (31536000 s), not \(number)") }
        return .seconds(number)
    }

    /// A year, the longest time an op's parameter takes.
    static var longestSeconds: Double { 31_536_000 }

    /// One of a fixed set of words, matched without regard to case.
    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, default fallback: Choice) throws -> Choice
    where Choice.RawValue == String {
        guard values[key] != nil else { return fallback }
        let text = try string(key)
        guard let match = Choice.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
            let allowed = Choice.allCases.map(\.rawValue).joined(separator: " or ")
            throw error(key, "must be \(allowed), not \(text)")
        }
        return match
    }

    func error(_ key: String, _ message: String) -> FlowParameterError {
        FlowParameterError(operation: operation, parameter: key, message: message)
    }

    private static func scalarText(_ value: FlowValue) -> String? {
        switch value {
        case .string(let text): return text
        case .integer, .double, .bool: return value.description
        default: return nil
        }
    }
}
