import Foundation

extension FlowOperation {
    /// Ends the op once; later calls are ignored, as are calls on an op that is not running.
    func finish(_ type: FlowOperationStateFinishType) {
        let state: FlowFinishState
        let error: (any Error)?
        switch type {
        case .successfully: (state, error) = (.successfully, nil)
        case .withError(let failure): (state, error) = (.withError(String(describing: failure)), failure)
        case .withInsufficientInputData(let text):
            (state, error) = (.withInsufficientInputData(text), FlowDataError.insufficientInputData(text))
        case .withMismatchInputDataType(let text):
            (state, error) = (.withMismatchInputDataType(text), FlowDataError.mismatchInputDataType(text))
        }
        complete(state: state, error: error, seedState: .finished(type))
    }

    func complete(state: FlowFinishState, error: (any Error)?, seedState: FlowOperationState) {
        let callback: ((FlowFinishState, (any Error)?) -> Void)? = lock.withLock {
            guard let context, !context.isFinished else { return nil }
            context.isFinished = true
            context.outcome = (state, error)
            storedState = seedState
            defer { context.onFinish = nil }
            return context.onFinish
        }
        callback?(state, error)
    }

    /// Marks the op cancelled, lets it react, and ends its run as cancelled.
    ///
    /// The run ends as cancelled in the same step that makes ``FlowOperation/isCancelled`` true, so
    /// an op that notices and finishes at once cannot turn it into another state.
    func cancelRun() {
        let (first, callback): (Bool, ((FlowFinishState, (any Error)?) -> Void)?) = lock.withLock {
            guard !cancelled else { return (false, nil) }
            cancelled = true
            guard let context, !context.isFinished else { return (true, nil) }
            context.isFinished = true
            context.outcome = (.cancelled, CancellationError())
            storedState = .finished(.withError(CancellationError()))
            defer { context.onFinish = nil }
            return (true, context.onFinish)
        }
        guard first else { return }
        callback?(.cancelled, CancellationError())
        didCancel()
    }
}

/// Runs single ops in this process: the engine's local executor and the worker both use it.
package enum FlowOperationRunner {
    /// Runs one op against a bucket and returns what it did.
    ///
    /// ``FlowOperation/mainLogic()`` runs on a Dispatch global queue thread (on the calling thread
    /// for an op that says ``FlowOperation/runsMainLogicInline``); a ``FlowAsyncOperation``'s
    /// ``FlowAsyncOperation/run()`` runs in the calling task, on the global concurrent executor
    /// when that task prefers an I/O thread and the op does not say
    /// ``FlowAsyncOperation/mayRunOnIOThread``. Cancelling the calling task cancels
    /// the op (``FlowOperation/isCancelled`` turns true) and returns at once with
    /// ``FlowFinishState/cancelled``.
    ///
    /// - Parameters:
    ///   - operation: a fresh op instance.
    ///   - bucket: the data bucket it reads and writes: a copy of the flow's bucket for a serial op,
    ///     `[primaryInputParamKey: element]` for a group element.
    ///   - groupTag: the short id shown in a group element's tag, `nil` for a serial op.
    ///   - attempt: which try this is, as ``FlowOperation/attempt`` tells the op.
    ///   - retry: the step's retry policy, as ``FlowOperation/retryPolicy`` tells the op.
    /// - Returns: the finish state, the events in order, and the bucket as the op left it.
    public static func run(_ operation: FlowOperation, bucket: [String: Any], groupTag: String?, attempt: Int = 1,
                           retry: FlowRetryPolicy = .none) async -> FlowTaskResult {
        let context = FlowOperationContext(bucket: bucket, groupTag: groupTag, attempt: attempt, retry: retry)
        // Read here, on the run's task: mainLogic may run on another thread.
        context.stream = FlowElementStream.current
        return await run(operation, context: context)
    }

    /// Runs `operation` against `context`, which this run owns.
    nonisolated(nonsending) private static func run(_ operation: FlowOperation, context: FlowOperationContext) async -> FlowTaskResult {
        if let asyncOperation = operation as? FlowAsyncOperation { return await run(asyncOperation, context: context) }
        // An op that says its mainLogic never blocks runs it right here. When it has finished by
        // the time mainLogic returns, the run is over: no continuation, no cancellation handler,
        // no thread hand-off (a third of a trivial op's cost in an in-process group), and no
        // closure made for a hand-off that does not happen.
        var started = false
        if operation.runsMainLogicInline, !Task.isCancelled {
            let alreadyCancelled = operation.lock.withLock {
                operation.context = context
                return operation.cancelled
            }
            if !alreadyCancelled {
                started = true
                operation.mainLogic()
                // One look under the lock for the usual end: finished, with what it left.
                if let finished = finishedRun(operation, context: context) { return result(of: operation, context: context, finished) }
                failIfUnfinished(operation)
                if let finished = finishedRun(operation, context: context) { return result(of: operation, context: context, finished) }
            }
        }
        // It runs on a Dispatch thread, or it was started above and finishes later (an async op):
        // wait for it, and cancel it if the calling task is cancelled meanwhile.
        let startedInline = started
        let outcome: (FlowFinishState, (any Error)?) = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<(FlowFinishState, (any Error)?), Never>) in
                let (alreadyCancelled, finished) = operation.lock.withLock {
                    operation.context = context
                    if let finished = context.outcome { return (false, Optional(finished)) }
                    context.onFinish = { state, error in continuation.resume(returning: (state, error)) }
                    return (operation.cancelled, nil)
                }
                if let finished {
                    continuation.resume(returning: finished)
                    return
                }
                // Started: it finishes by itself, or `cancelRun` (below) ends it.
                if startedInline { return }
                if alreadyCancelled || Task.isCancelled {
                    operation.complete(state: .cancelled, error: CancellationError(), seedState: .finished(.withError(CancellationError())))
                    return
                }
                if operation.runsMainLogicInline {
                    runMainLogic(operation)
                } else {
                    DispatchQueue.global().async { runMainLogic(operation) }
                }
            }
        } onCancel: {
            operation.cancelRun()
        }
        return result(of: operation, context: context, outcome)
    }

    /// Runs an async op's ``FlowAsyncOperation/run()`` in the calling task, not in a task of its
    /// own that the caller waits for: no task to make, no continuation, no thread hand-off when
    /// it finishes (an op that does not suspend runs start to end on one thread). Cancelling the
    /// calling task cancels the op as ``FlowOperation/cancelRun()`` does, which ends the run as
    /// cancelled at once; ``FlowAsyncOperation/run()`` sees the task cancelled.
    nonisolated(nonsending) private static func run(_ operation: FlowAsyncOperation, context: FlowOperationContext) async -> FlowTaskResult {
        let alreadyCancelled = operation.lock.withLock {
            operation.context = context
            return operation.cancelled
        }
        if alreadyCancelled || Task.isCancelled {
            operation.complete(state: .cancelled, error: CancellationError(), seedState: .finished(.withError(CancellationError())))
        } else {
            operation.startWithAsynchronous()
            if operation.mayRunOnIOThread || !prefersAnotherExecutor {
                await withTaskCancellationHandler {
                    await operation.runToFinish()
                } onCancel: {
                    operation.cancelRun()
                }
            } else {
                // The calling task prefers an I/O thread (a worker's, or the coordinator's for an
                // op placed there); the op's own code does not belong on it.
                await withTaskExecutorPreference(globalConcurrentExecutor) {
                    await withTaskCancellationHandler {
                        await operation.runToFinish()
                    } onCancel: {
                        operation.cancelRun()
                    }
                }
            }
        }
        // `runToFinish` or `cancelRun` finished it; the fallback only keeps the type total.
        let finished = finishedRun(operation, context: context) ?? ((.cancelled, CancellationError()), [], [:])
        return result(of: operation, context: context, finished)
    }

    /// Whether the calling task prefers a task executor other than the global concurrent one: an
    /// I/O loop's (``FlowExecutor/preferredTaskExecutor``).
    private static var prefersAnotherExecutor: Bool {
        guard let preferred = withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor }) else { return false }
        return preferred != globalConcurrentExecutor.asUnownedTaskExecutor()
    }

    /// Calls the op's mainLogic, and fails the run when mainLogic neither finished it nor said it
    /// goes on asynchronously.
    private static func runMainLogic(_ operation: FlowOperation) {
        operation.mainLogic()
        failIfUnfinished(operation)
    }

    /// Fails the run when mainLogic returned without finishing it or saying it goes on
    /// asynchronously.
    private static func failIfUnfinished(_ operation: FlowOperation) {
        // The run's context, which the run set on the op before mainLogic started.
        let unfinished = operation.lock.withLock { operation.context.map { !$0.isFinished && !$0.isAsynchronous } ?? false }
        if unfinished {
            let error = FlowError.operationDidNotFinish(operation: operation.operationName)
            operation.complete(state: .withError(String(describing: error)), error: error, seedState: .finished(.withError(error)))
        }
    }

    /// How a finished run ended and what the op left, read together; `nil` while it runs.
    private typealias FinishedRun = (outcome: (FlowFinishState, (any Error)?), events: [FlowRecordedEvent], bucket: [String: Any])

    private static func finishedRun(_ operation: FlowOperation, context: FlowOperationContext) -> FinishedRun? {
        operation.lock.withLock {
            guard let outcome = context.outcome else { return nil }
            context.takeEmitted()
            return (outcome, context.events, context.bucket)
        }
    }

    /// The finished run's result: the outcome, the events in order and the bucket as the op left it.
    private static func result(of operation: FlowOperation, context: FlowOperationContext,
                               _ outcome: (FlowFinishState, (any Error)?)) -> FlowTaskResult {
        let (events, finalBucket) = operation.lock.withLock {
            context.takeEmitted()
            return (context.events, context.bucket)
        }
        return result(of: operation, context: context, (outcome, events, finalBucket))
    }

    private static func result(of operation: FlowOperation, context: FlowOperationContext, _ finished: FinishedRun) -> FlowTaskResult {
        FlowTaskResult(
            operationName: operation.operationName, state: finished.outcome.0, error: finished.outcome.1, events: finished.events,
            bucket: finished.bucket, startedAt: context.startedAt, finishedAt: Date(), worker: nil, attempt: context.attempt
        )
    }

    /// An empty bucket with room for two keys, copied for each element and never written itself:
    /// a copy takes its storage's type from the template, where `Dictionary(minimumCapacity:)`
    /// looked it up in the runtime's metadata tables every time (callgrind).
    nonisolated(unsafe) private static let elementBucket = [String: Any](minimumCapacity: 2)

    /// Runs one group element: the op gets `[primaryInputParamKey: element]` as its bucket, and
    /// the result carries the value it left at `primaryOutputParamKey`. Its `setData` writes stay
    /// in that bucket and are not among the result's events, as on a worker.
    ///
    /// - Parameters:
    ///   - operation: a fresh op instance.
    ///   - element: the array element.
    ///   - index: the element's index, returned in the result.
    ///   - groupTag: the short id shown in the op's tag.
    ///   - attempt: which try this is, as ``FlowOperation/attempt`` tells the op.
    ///   - retry: the step's retry policy, as ``FlowOperation/retryPolicy`` tells the op.
    public static func runGroupElement(_ operation: FlowOperation, element: Any, index: Int, groupTag: String,
                                       attempt: Int = 1, retry: FlowRetryPolicy = .none) async -> FlowTaskResult {
        // The bucket is made inside the context, which alone holds it: the op's write then changes
        // it in place instead of copying it, and it has room for the output too. Its writes are
        // not recorded as events (the bucket is thrown away; only the output is collected).
        let context = FlowOperationContext(bucket: elementBucket, groupTag: groupTag, attempt: attempt,
                                           retry: retry, recordsBucketWrites: false)
        context.bucket[operation.primaryInputParamKey] = element
        var result = await run(operation, context: context)
        result.groupIndex = index
        result.groupOutput = result.bucket[operation.primaryOutputParamKey]
        return result
    }
}

extension FlowOperation {
    /// Lets an op instance run again after a failed try (a serial step's `retry`): a time limit
    /// cancelled the try, which must not cancel the next one.
    func prepareForRetry() {
        lock.withLock { cancelled = false }
    }
}
