import Foundation

/// One run of a ``Flow``: its bucket, result, summary lines, records, progress handler and
/// where it stands (idle, running, finished; cancelled). The engine writes to it through
/// ``FlowRunRecorder``; the flow, the blueprint, forwards its public getters to it.
final class FlowRunState: Sendable {
    enum Phase { case idle, running, finished }

    struct State {
        var bucket: [String: Any] = [:]
        var isSuccess = true
        var error: (any Error)?
        var lines = FlowSummaryLines()
        var groupsStarted = 0
        var progressHandler: (@Sendable (FlowProgressEvent) -> Void)?
        var phase = Phase.idle
        var engineTask: Task<FlowEngine.Outcome, Never>?
        var cancelRequested = false
        var finishWaiters: [CheckedContinuation<Void, Never>] = []
        var outcome: FlowEngine.Outcome?
    }

    /// Taken once or twice per op by the engine's task (a record, a progress handler), and now and
    /// then by a reader of the bucket or the summary.
    let state: FlowLocked<State>

    init(bucket: [String: Any] = [:]) {
        state = .make(State(bucket: bucket))
    }

    // MARK: Read by the flow's getters

    var bucket: [String: Any] {
        get { state.withLock { $0.bucket } }
        set { state.withLock { $0.bucket = newValue } }
    }

    var isSuccess: Bool {
        get { state.withLock { $0.isSuccess } }
        set { state.withLock { $0.isSuccess = newValue } }
    }

    var error: (any Error)? {
        get { state.withLock { $0.error } }
        set { state.withLock { $0.error = newValue } }
    }

    var isCancelled: Bool { state.withLock { $0.cancelRequested } }

    /// The lines kept so far, without a line for the elements left out last.
    var entries: [FlowLogEntry] { state.withLock { $0.lines.entries } }

    var records: [FlowOperationRecord] { state.withLock { $0.lines.records } }

    /// The lines kept so far and the result, for a summary.
    func summaryLines() -> (lines: [FlowLogEntry], isSuccess: Bool) {
        state.withLock { ($0.lines.closedEntries(), $0.isSuccess) }
    }

    // MARK: Set up before the run

    func setRetention(_ retention: FlowElementRetention?) {
        state.withLock { $0.lines.retention = retention }
    }

    func setSummaryStream(_ stream: @escaping @Sendable (FlowLogEntry) -> Void) {
        state.withLock { $0.lines.stream = stream }
    }

    func setProgressHandler(_ handler: @escaping @Sendable (FlowProgressEvent) -> Void) {
        state.withLock { $0.progressHandler = handler }
    }

    // MARK: Lines

    func log(_ text: String, at time: Date) {
        state.withLock { $0.lines.append(FlowLogEntry(time: time, text: text)) }
    }

    /// Writes the whole bucket under `title`.
    func logBucketDump(title: String) {
        state.withLock { $0.lines.dump($0.bucket, title: title) }
    }

    // MARK: Start and end

    /// Starts the run; `false` when it is running or finished already.
    func begin() -> Bool {
        state.withLock { state in
            guard state.phase == .idle else { return false }
            state.phase = .running
            return true
        }
    }

    /// Keeps the engine's task for ``cancel()``; `true` when the run was cancelled before.
    func attach(_ task: Task<FlowEngine.Outcome, Never>) -> Bool {
        state.withLock { state in
            state.engineTask = task
            return state.cancelRequested
        }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelRequested = true
            return state.engineTask
        }
        task?.cancel()
    }

    /// Keeps the run's failure: `isSuccess` false, and `error` unless one is kept already or
    /// `keepsError` is false.
    func fail(with error: any Error, keepsError: Bool) {
        state.withLock { state in
            state.isSuccess = false
            if state.error == nil, keepsError { state.error = error }
        }
    }

    /// Waits until ``end(with:)``.
    func waitUntilFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.phase == .finished { return true }
                state.finishWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The run is over: who waits for it goes on.
    func end(with outcome: FlowEngine.Outcome) {
        let waiters = state.withLock { state in
            state.phase = .finished
            state.outcome = outcome
            defer { state.finishWaiters = [] }
            return state.finishWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

extension FlowRunState: FlowRunRecorder {
    func record(_ result: FlowTaskResult, tag: String?, appliesBucketChanges: Bool, groupOutputKey: String?,
                location: FlowSourceLocation?, group: (number: Int, size: Int)?) -> FlowOperationRecord {
        let mark = group.map { FlowElementMark(group: $0.number, index: result.groupIndex ?? 0, groupSize: $0.size,
                                               failed: !result.state.isSuccess) }
        let record = FlowSummaryLines.record(of: result, tag: tag, groupOutputKey: groupOutputKey, location: location)
        state.withLock { state in
            state.lines.write(result, tag: tag, record: record, mark: mark, appliesBucketChanges: appliesBucketChanges,
                              to: &state.bucket)
        }
        return record
    }

    func log(_ text: String) {
        log(text, at: Date())
    }

    func setBucketValue(_ value: Any, forKey key: String) {
        state.withLock { $0.lines.set(key: key, value: value, at: Date(), in: &$0.bucket) }
    }

    func groupStarts(size: Int) -> Int {
        state.withLock { state in
            state.groupsStarted += 1
            state.lines.reserve(forGroupOf: size)
            return state.groupsStarted
        }
    }

    var progressHandler: (@Sendable (FlowProgressEvent) -> Void)? {
        state.withLock { $0.progressHandler }
    }

    func stop() {
        cancel()
    }
}
