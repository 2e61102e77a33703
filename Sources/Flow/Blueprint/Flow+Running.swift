import Foundation

extension Flow {
    /// Starts the flow and returns at once; the did-finish block reports the end.
    public func start() {
        Task { await self.run() }
    }

    /// Starts the flow (like ``start()``) and returns after the did-finish block has run.
    ///
    /// Calling it on a flow that is already running or finished waits for that run instead of
    /// starting another.
    public func run() async {
        guard runState.begin() else {
            await waitUntilFinished()
            return
        }

        runState.logBucketDump(title: "[DataBucket] start with:")
        let (willStart, nodes, executor, journal) = setup.withLock {
            ($0.willStartBlock, $0.definitionNodes ?? $0.blueprint.nodes, $0.executor, $0.journal)
        }
        willStart?(self)

        let engine = FlowEngine(run: runState, executor: executor, journal: journal)
        let task = Task(executorPreference: executor.preferredTaskExecutor) { await engine.run(nodes) }
        if runState.attach(task) { task.cancel() }
        let outcome = await task.value
        await finish(with: outcome)
    }

    /// Cancels the flow: no further op starts, running ops see ``FlowOperation/isCancelled``, the
    /// summary says the flow was cancelled, and ``isSuccess`` is false.
    public func cancel() {
        runState.cancel()
    }

    /// Waits until the flow has finished and its did-finish block has returned.
    public func waitUntilFinished() async {
        await runState.waitUntilFinished()
    }

    private func finish(with outcome: FlowEngine.Outcome) async {
        switch outcome {
        case .completed, .endedEarly:
            break
        case .failed(let failure):
            // As in the seed, `error` stays nil when input data was missing or mistyped (or a
            // group had no input); it holds the op's error when an op failed with one.
            runState.fail(with: failure, keepsError: !Self.isInputFailure(failure))
        case .cancelled:
            runState.log("[Flow] cancelled", at: Date())
            runState.fail(with: FlowError.cancelled, keepsError: true)
        }
        runState.logBucketDump(title: "[DataBucket] end with:")

        let (handlers, didFinish) = setup.withLock { ($0.failureHandlers, $0.didFinishBlock) }
        switch outcome {
        case .completed, .endedEarly: break
        case .failed(let failure): for handler in handlers { handler(failure) }
        case .cancelled: for handler in handlers { handler(FlowError.cancelled) }
        }
        didFinish?(self)

        runState.end(with: outcome)
    }

    private static func isInputFailure(_ failure: any Error) -> Bool {
        if failure is FlowDataError { return true }
        if case .emptyGroupInput = failure as? FlowError { return true }
        return false
    }
}
