public import Flow

/// Waits a while and passes its input through: for trying flows out and for benchmarks.
///
/// - Primary input `item` and primary output `item`: the same key, so in a group each element
///   comes out as it went in and the group's output equals its input array.
///
/// Parameters:
/// - `ms` (number, default 0): how long to wait, in milliseconds.
///
/// The wait is `Task.sleep`: cancelling the flow ends it at once. As a serial step it only waits
/// and leaves the bucket alone.
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class SleepOp: FlowAsyncOperation, @unchecked Sendable {
    /// How long the op waits, in milliseconds.
    public let milliseconds: Double

    /// Creates the op.
    ///
    /// - Parameter milliseconds: how long to wait.
    public init(milliseconds: Double = 0) {
        self.milliseconds = milliseconds
    }

    /// Builds the op from `with:` parameters.
    ///
    /// - Throws: `FlowParameterError` when `ms` is not a number of zero or more.
    public convenience init(parameters: FlowParameters) throws {
        self.init(milliseconds: try parameters.duration("ms", default: 0, allowsZero: true))
    }

    /// `true`: it only awaits `Task.sleep`.
    public override var mayRunOnIOThread: Bool { true }

    public override var primaryInputParamKey: String { "item" }
    public override var primaryOutputParamKey: String { "item" }
    /// It only waits: a dry run runs it.
    public override var dryRunRole: FlowDryRunRole { .readsOnly }

    public override func run() async throws {
        if milliseconds > 0 {
            try await Task.sleep(nanoseconds: FlowSaturating.uint64(milliseconds * 1_000_000))
        }
    }
}

extension SleepOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] { ["ms": .double(milliseconds)] }
}
