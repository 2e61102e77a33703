import Foundation

/// A bucket read that failed: the key is missing or holds another type.
public enum FlowDataError: Error, CustomStringConvertible, Sendable {
    /// The key is not in the bucket.
    case insufficientInputData(String)
    /// The key holds a value of another type.
    case mismatchInputDataType(String)

    public var description: String {
        switch self {
        case .insufficientInputData(let message), .mismatchInputDataType(let message): return message
        }
    }

    /// The error for a read of `key` that found `value` (`nil`: nothing) where `expected` was wanted.
    @usableFromInline
    static func read(key: String, found value: Any?, expected: Any.Type) -> FlowDataError {
        guard let value else { return .insufficientInputData(missingMessage(key: key)) }
        return .mismatchInputDataType(mismatchMessage(key: key, value: value, expected: expected))
    }

    /// The seed's message for a missing key.
    static func missingMessage(key: String) -> String {
        "can't find <\(key)> in data bucket"
    }

    /// The seed's message for a value of the wrong type.
    static func mismatchMessage(key: String, value: Any, expected: Any.Type) -> String {
        "<\(key)> in data bucket is <\(value)> with type <\(type(of: value))>, but NOT type <\(expected)>."
    }
}
