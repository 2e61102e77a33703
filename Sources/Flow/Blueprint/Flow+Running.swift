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
        let startsNow = lock.withLock {
            guard phase == .idle else { return false }
            phase = .running
            return true
        }
        guard startsNow else {
            await waitUntilFinished()
            return
        }

        logBucketDump(title: "[DataBucket] start with:")
        let (willStart, nodes, executor, journal) = lock.withLock {
            (willStartBlock, definitionNodes ?? blueprint.nodes, self.executor, self.journal)
        }
        willStart?(self)

        let engine = FlowEngine(flow: self, executor: executor, journal: journal)
        let task = Task(executorPreference: executor.preferredTaskExecutor) { await engine.run(nodes) }
        let cancelledBefore = lock.withLock {
            engineTask = task
            return cancelRequested
        }
        if cancelledBefore { task.cancel() }
        let outcome = await task.value
        await finish(with: outcome)
    }

    /// Cancels the flow: no further op starts, running ops see ``FlowOperation/isCancelled``, the
    /// summary says the flow was cancelled, and ``isSuccess`` is false.
    public func cancel() {
        let task = lock.withLock {
            cancelRequested = true
            return engineTask
        }
        task?.cancel()
    }

    /// Waits until the flow has finished and its did-finish block has returned.
    public func waitUntilFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = lock.withLock {
                if phase == .finished { return true }
                finishWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func finish(with outcome: FlowEngine.Outcome) async {
        switch outcome {
        case .completed, .endedEarly:
            break
        case .failed(let failure):
            lock.withLock {
                storedIsSuccess = false
                // As in the seed, `error` stays nil when input data was missing or mistyped (or a
                // group had no input); it holds the op's error when an op failed with one.
                if storedError == nil, !Self.isInputFailure(failure) {
                    storedError = failure
                }
            }
        case .cancelled:
            log("[Flow] cancelled", at: Date())
            lock.withLock {
                storedIsSuccess = false
                if storedError == nil { storedError = FlowError.cancelled }
            }
        }
        logBucketDump(title: "[DataBucket] end with:")

        let (handlers, didFinish) = lock.withLock { (failureHandlers, didFinishBlock) }
        switch outcome {
        case .completed, .endedEarly: break
        case .failed(let failure): for handler in handlers { handler(failure) }
        case .cancelled: for handler in handlers { handler(FlowError.cancelled) }
        }
        didFinish?(self)

        let waiters = lock.withLock {
            phase = .finished
            storedOutcome = outcome
            defer { finishWaiters = [] }
            return finishWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private static func isInputFailure(_ failure: any Error) -> Bool {
        if failure is FlowDataError { return true }
        if case .emptyGroupInput = failure as? FlowError { return true }
        return false
    }
}
