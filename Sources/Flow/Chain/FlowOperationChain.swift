/// A typed op for value-passing chains: takes an `Input`, hands an `Output` to its completion
/// handler (JohnSundell/Flow's operation).
public protocol FlowChainableOperation {
    /// What the op takes.
    associatedtype Input
    /// What it produces.
    associatedtype Output

    /// Performs the op and calls `completionHandler` once with the output.
    func performWithInput(_ input: Input, completionHandler: @escaping @Sendable (Output) -> Void)
}

/// A chain of typed ops, each receiving the previous one's output.
///
/// Not `Sendable`, as JohnSundell/Flow's chains were not: its ops have no `Sendable` bound. Build
/// it where it runs.
///
/// ```swift
/// FlowOperationChain(rootOperation: ParseOp())
///     .append(FetchOp())
///     .append(RenderOp())
///     .performWithInput("swift") { rendered in print(rendered) }
/// ```
public struct FlowOperationChain<Input, Output> {
    private let perform: (Input, @escaping @Sendable (Output) -> Void) -> Void

    /// Starts a chain with its first op.
    public init<Root: FlowChainableOperation>(rootOperation: Root) where Root.Input == Input, Root.Output == Output {
        perform = { input, completion in rootOperation.performWithInput(input, completionHandler: completion) }
    }

    private init(perform: @escaping (Input, @escaping @Sendable (Output) -> Void) -> Void) {
        self.perform = perform
    }

    /// Appends an op that takes this chain's output.
    ///
    /// - Returns: the longer chain, producing the new op's output.
    public func append<Next: FlowChainableOperation>(_ operation: Next) -> FlowOperationChain<Input, Next.Output>
    where Next.Input == Output {
        let first = perform
        return FlowOperationChain<Input, Next.Output> { input, completion in
            nonisolated(unsafe) let next = operation
            first(input) { output in next.performWithInput(output, completionHandler: completion) }
        }
    }

    /// Runs the chain and calls `completionHandler` with the last op's output.
    public func performWithInput(_ input: Input, completionHandler: @escaping @Sendable (Output) -> Void) {
        perform(input, completionHandler)
    }
}

extension FlowOperationChain where Output: Sendable {
    /// Runs the chain and returns the last op's output.
    public func perform(with input: Input) async -> Output {
        await withCheckedContinuation { continuation in
            performWithInput(input) { continuation.resume(returning: $0) }
        }
    }
}
