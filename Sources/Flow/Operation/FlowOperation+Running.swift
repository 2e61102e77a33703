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
public enum FlowOperationRunner {
    /// Runs one op against a bucket and returns what it did.
    ///
    /// ``FlowOperation/mainLogic()`` runs on a Dispatch global queue thread. Cancelling the calling
    /// task cancels the op (``FlowOperation/isCancelled`` turns true) and returns at once with
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
        let body: @Sendable () -> Void = {
            operation.mainLogic()
            let unfinished = operation.lock.withLock { !context.isFinished && !context.isAsynchronous }
            if unfinished {
                let error = FlowError.operationDidNotFinish(operation: operation.operationName)
                operation.complete(state: .withError(String(describing: error)), error: error,
                                   seedState: .finished(.withError(error)))
            }
        }
        let result: ((FlowFinishState, (any Error)?)) -> FlowTaskResult = { outcome in
            let (events, finalBucket) = operation.lock.withLock { (context.events, context.bucket) }
            return FlowTaskResult(
                operationName: operation.operationName, state: outcome.0, error: outcome.1, events: events,
                bucket: finalBucket, startedAt: context.startedAt, finishedAt: Date(), worker: nil
            )
        }
        // An op that says its mainLogic never blocks runs it right here. When it has finished by
        // the time mainLogic returns, the run is over: no continuation, no cancellation handler,
        // no thread hand-off (a third of a trivial op's cost in an in-process group).
        var started = false
        if operation.runsMainLogicInline, !Task.isCancelled {
            let alreadyCancelled = operation.lock.withLock {
                operation.context = context
                return operation.cancelled
            }
            if !alreadyCancelled {
                started = true
                body()
                if let outcome = operation.lock.withLock({ context.outcome }) { return result(outcome) }
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
                if operation.runsMainLogicInline { body() } else { DispatchQueue.global().async(execute: body) }
            }
        } onCancel: {
            operation.cancelRun()
        }
        return result(outcome)
    }

    /// Runs one group element: the op gets `[primaryInputParamKey: element]` as its bucket, and
    /// the result carries the value it left at `primaryOutputParamKey`.
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
        // Room for the output too: the op's write then does not grow the dictionary.
        var bucket = [String: Any](minimumCapacity: 2)
        bucket[operation.primaryInputParamKey] = element
        var result = await run(operation, bucket: bucket, groupTag: groupTag, attempt: attempt, retry: retry)
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
