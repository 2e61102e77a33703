import Foundation

/// Called with the flow before its first op starts.
public typealias FlowWillStartBlock = (Flow) -> Void
/// Called with the flow after it finished (successfully, failed, ended early or cancelled).
public typealias FlowDidFinishBlock = (Flow) -> Void

/// A blueprint of ops and the data bucket they share: chain `add` calls, then ``start()`` or
/// ``run()``.
///
/// ```swift
/// Flow()
///   .setDataBucket(dataBucket: ["images": ["a", "b"]])
///   .add(operation: SimplePrintOp(message: "hello"))
///   .addGrouped(operationCreator: UploadSingleImageOp.self,
///               dispatcher: FlowArrayGroupDispatcher(inputKey: "images", outputKey: "imageURLs"))
///   .setDidFinishBlock { flow in print(flow.generateSummary()) }
///   .start()
/// ```
///
/// Where callbacks run: Linux command-line programs have no main run loop, so the will-start
/// block, the failure handlers and the did-finish block run on the flow's own task (a thread of
/// Swift's global concurrent pool), one after another, never at the same time. ``run()`` returns
/// after the did-finish block has returned.
// `@unchecked`: every mutable property is read and written under `lock`.
public final class Flow: @unchecked Sendable {
    enum Phase { case idle, running, finished }

    let lock = FlowLock.make()
    // @exclusivity(unchecked) on the hot lock-guarded properties: callgrind, flow-bench 2000 (30,000 in-process elements), all of the module's @exclusivity(unchecked) off: 456 M -> 522 M instructions; their checks in
    // record and appendLocked were 12.0 M (400 an element). Not measured one by one.
    @exclusivity(unchecked) var storedBucket: [String: Any] = [:]
    var storedIsSuccess = true
    var storedError: (any Error)?
    @exclusivity(unchecked) var entries: [FlowLogEntry] = []
    var blueprint = FlowBlueprint()
    var definitionNodes: [FlowPlanNode]?
    var willStartBlock: FlowWillStartBlock?
    var didFinishBlock: FlowDidFinishBlock?
    var failureHandlers: [(any Error) -> Void] = []
    var executor: any FlowExecutor = FlowLocalExecutor()
    var journal: (any FlowJournal)?
    var groupsStarted = 0
    var phase = Phase.idle
    var engineTask: Task<FlowEngine.Outcome, Never>?
    var cancelRequested = false
    var finishWaiters: [CheckedContinuation<Void, Never>] = []
    var storedOutcome: FlowEngine.Outcome?
    @exclusivity(unchecked) var records: [FlowOperationRecord] = []
    @exclusivity(unchecked) var progressHandler: (@Sendable (FlowProgressEvent) -> Void)?
    @exclusivity(unchecked) var retention: FlowElementRetention?
    @exclusivity(unchecked) var summaryStream: (@Sendable (FlowLogEntry) -> Void)?
    @exclusivity(unchecked) var leftOut: FlowLeftOutElements?

    /// The flow's name, shown by tools; the flow file's `flow:` for a loaded flow.
    public let name: String?

    /// Creates an empty flow.
    public init() {
        name = nil
    }

    /// Creates a flow from a flow file's definition; its ops are built by name.
    ///
    /// - Parameters:
    ///   - definition: the flow tree and initial bucket.
    ///   - registry: builds the named ops when the flow runs in this process.
    public init(definition: FlowDefinition, registry: FlowOperationRegistry = FlowOperationRegistry()) {
        name = definition.name
        storedBucket = definition.bucket.mapValues(\.anyValue)
        definitionNodes = FlowPlanNode.nodes(from: definition.steps, defaults: definition.defaults)
        executor = FlowLocalExecutor(registry: registry)
    }

    // MARK: State

    /// The shared data bucket.
    public var dataBucket: [String: Any] {
        get { lock.withLock { storedBucket } }
        set { lock.withLock { storedBucket = newValue } }
    }

    /// Whether every op so far succeeded; `true` before the flow runs and when it ends early at an
    /// unmatched case.
    public var isSuccess: Bool {
        get { lock.withLock { storedIsSuccess } }
        set { lock.withLock { storedIsSuccess = newValue } }
    }

    /// The error that stopped the flow: the op's error for `withError`, a ``FlowDataError`` for
    /// missing or mistyped input, a ``FlowError`` otherwise; `nil` while it succeeds.
    public var error: (any Error)? {
        get { lock.withLock { storedError } }
        set { lock.withLock { storedError = newValue } }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { lock.withLock { cancelRequested } }

    /// Every summary line so far, in order (without the elements a retention left out).
    public var logEntries: [FlowLogEntry] { lock.withLock { entries } }

    /// Every op run so far (serial ops and group elements), in the order they finished (without
    /// the elements a retention left out).
    public var operationRecords: [FlowOperationRecord] { lock.withLock { records } }

    // MARK: Blueprint

    /// Sets the initial data bucket.
    @discardableResult
    public func setDataBucket(dataBucket: [String: Any]) -> Flow {
        self.dataBucket = dataBucket
        return self
    }

    /// Sets the block called before the first op.
    @discardableResult
    public func setWillStartBlock(block: @escaping FlowWillStartBlock) -> Flow {
        lock.withLock { willStartBlock = block }
        return self
    }

    /// Sets the block called when the flow has finished.
    @discardableResult
    public func setDidFinishBlock(block: @escaping FlowDidFinishBlock) -> Flow {
        lock.withLock { didFinishBlock = block }
        return self
    }

    /// Adds a serial op; with a case, opens a case branch that later `add` calls extend.
    ///
    /// - Parameters:
    ///   - operation: the op instance.
    ///   - flowCase: the condition of a new branch, or `nil` for a plain step.
    ///   - retry: how the op is tried again after a transient failure (one try by default).
    ///   - timeout: how long one try may run (no limit by default).
    @discardableResult
    public func add(operation: FlowOperation, flowCase: FlowCase? = nil, retry: FlowRetryPolicy = .none, timeout: Duration? = nil) -> Flow {
        let policy = FlowTaskPolicy(retry: retry, timeout: timeout)
        lock.withLock { blueprint.add(.operation(.instance(operation), location: nil, policy: policy), flowCase: flowCase) }
        return self
    }

    /// Adds a group: one op from `operationCreator` per element of the dispatcher's input array.
    @discardableResult
    public func addGrouped(operationCreator: any FlowOperationCreator.Type, dispatcher: FlowGroupDispatcher) -> Flow {
        let plan = FlowGroupPlan(
            source: .creator(operationCreator), inputKey: dispatcher.inputKey, outputKey: dispatcher.outputKey,
            maxConcurrent: dispatcher.maxConcurrentOperationCount, allowFailure: dispatcher.allowFailure, location: nil,
            policy: FlowTaskPolicy(retry: dispatcher.retry, timeout: dispatcher.timeout), maxFailures: dispatcher.maxFailures
        )
        lock.withLock { blueprint.add(.group(plan), flowCase: nil) }
        return self
    }

    /// Joins all open case branches: the next step runs after whichever branch ran.
    @discardableResult
    public func combine() -> Flow {
        lock.withLock { blueprint.combine() }
        return self
    }

    /// Adds a handler called with the error when the flow fails (before the did-finish block).
    @discardableResult
    public func onFailure(_ handler: @escaping (any Error) -> Void) -> Flow {
        lock.withLock { failureHandlers.append(handler) }
        return self
    }

    /// Adds a handler called only when the flow fails with an error of type `E`.
    @discardableResult
    public func onFailure<E: Error>(_ type: E.Type, _ handler: @escaping (E) -> Void) -> Flow {
        onFailure { error in
            if let typed = error as? E { handler(typed) }
        }
    }

    /// Sets a handler told about progress (ops starting and finishing, group counts) while the
    /// flow runs. It is called on the flow's task: keep it short.
    @discardableResult
    public func setProgressHandler(_ handler: @escaping @Sendable (FlowProgressEvent) -> Void) -> Flow {
        lock.withLock { progressHandler = handler }
        return self
    }

    /// Runs the ops with another executor, for example a cluster's.
    @discardableResult
    public func setExecutor(_ executor: any FlowExecutor) -> Flow {
        lock.withLock { self.executor = executor }
        return self
    }

    /// Keeps a record of the run in `journal` as it goes; a journal from an earlier life of the
    /// same run (same definition and starting bucket) makes this run resume it: what that life
    /// finished is taken as it was and only the rest runs. See ``FlowJournal``.
    @discardableResult
    public func setJournal(_ journal: any FlowJournal) -> Flow {
        lock.withLock { self.journal = journal }
        return self
    }

    // MARK: Log

    /// Adds a line to the summary.
    public func log(message: String) {
        log(message, at: Date())
    }

    func log(_ text: String, at time: Date) {
        lock.withLock { appendLocked(FlowLogEntry(time: time, text: text)) }
    }

    /// The summary in the seed's format: every line with its time, then `Flow isSuccess:`.
    public func generateSummary() -> String {
        let (lines, success) = lock.withLock {
            closeLeftOutLocked()
            return (entries, storedIsSuccess)
        }
        return FlowSummary.render(entries: lines, isSuccess: success)
    }
}

/// Which group element a summary line belongs to, so a long group can be shown condensed.
struct FlowElementMark: Sendable, Hashable {
    /// The group's number in this run (groups counted as they start).
    var group: Int
    /// The element's index.
    var index: Int
    /// How many elements the group has.
    var groupSize: Int
    /// Whether the element failed.
    var failed: Bool
    /// For the line that stands for elements a retention left out of memory: how many.
    var leftOut: Int?
}
