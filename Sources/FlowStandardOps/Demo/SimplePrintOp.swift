public import Flow

/// The seed's demo op: logs its message. Parameters: `message` (string).
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class SimplePrintOp: FlowOperation, @unchecked Sendable {
    /// The line it logs.
    public let message: String

    /// It only logs: a dry run runs it.
    public override var dryRunRole: FlowDryRunRole { .readsOnly }

    /// Creates the op.
    public init(message: String) {
        self.message = message
    }

    public override func mainLogic() {
        log(message: message)
        finishSuccessfully()
    }
}

extension SimplePrintOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] { ["message": .string(message)] }
}
