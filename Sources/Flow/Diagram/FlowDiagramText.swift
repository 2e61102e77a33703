import Foundation

/// Short, one-line text for the values a flow file holds, shared by the outline and the diagrams.
enum FlowDiagramText {
    /// Longest a single value is shown before it is cut.
    static let maximumValueLength = 40

    /// `key: value` pairs, keys sorted, joined by `, `; empty for no parameters.
    static func parameterList(_ parameters: [String: FlowValue]) -> String {
        parameters.keys.sorted().map { key in "\(key): \(value(parameters[key]!))" }.joined(separator: ", ")
    }

    /// `{key: value, ...}`, or `nil` for no parameters.
    static func parameterBraces(_ parameters: [String: FlowValue]) -> String? {
        parameters.isEmpty ? nil : "{\(parameterList(parameters))}"
    }

    /// A value on one line: strings bare, collections in brackets, long text cut with `...`.
    static func value(_ value: FlowValue) -> String {
        truncated(full(value))
    }

    /// The quoted form of a case value, as in `when "A":`.
    static func quoted(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(oneLine(escaped))\""
    }

    private static func full(_ value: FlowValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return String(flag)
        case .integer(let number): return String(number)
        case .double(let number): return String(number)
        case .string(let text): return oneLine(text)
        case .bytes(let data): return "<\(data.count) bytes>"
        case .date(let date): return FlowRunReport.timestamp(date)
        case .array(let items): return "[" + items.map(full).joined(separator: ", ") + "]"
        case .map(let items): return "{" + parameterListUncut(items) + "}"
        }
    }

    private static func parameterListUncut(_ items: [String: FlowValue]) -> String {
        items.keys.sorted().map { "\($0): \(full(items[$0]!))" }.joined(separator: ", ")
    }

    /// Line breaks written as `\n`, so a step stays on one line.
    static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\\n")
            .replacingOccurrences(of: "\n", with: "\\n")
            .replacingOccurrences(of: "\r", with: "\\n")
            .replacingOccurrences(of: "\t", with: "\\t")
    }

    private static func truncated(_ text: String) -> String {
        guard text.count > maximumValueLength else { return text }
        return String(text.prefix(maximumValueLength - 3)) + "..."
    }
}
