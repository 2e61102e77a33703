/// A bad op parameter.
public struct FlowParameterError: Error, CustomStringConvertible, Sendable {
    /// The op.
    public let operation: String
    /// The parameter.
    public let parameter: String
    /// What is wrong with it.
    public let message: String

    /// Creates an error.
    public init(operation: String, parameter: String, message: String) {
        self.operation = operation
        self.parameter = parameter
        self.message = message
    }

    public var description: String { "\(operation): parameter '\(parameter)' \(message)" }
}
