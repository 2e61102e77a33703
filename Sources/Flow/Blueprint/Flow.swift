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
public final class Flow: Sendable {
    /// What the blueprint's `set…` and `add…` calls set up before the run.
    struct Setup {
        var blueprint = FlowBlueprint()
        var definitionNodes: [FlowPlanNode]?
        var willStartBlock: FlowWillStartBlock?
        var didFinishBlock: FlowDidFinishBlock?
        var failureHandlers: [(any Error) -> Void] = []
        var executor: any FlowExecutor = FlowLocalExecutor()
        var journal: (any FlowJournal)?
    }

    let setup: FlowLocked<Setup>
    /// The run's state: the flow's getters read it, the engine writes it.
    let runState: FlowRunState

    /// The flow's name, shown by tools; the flow file's `flow:` for a loaded flow.
    public let name: String?

    /// Creates an empty flow.
    public init() {
        name = nil
        setup = .make(Setup())
        runState = FlowRunState()
    }

    /// Creates a flow from a flow file's definition; its ops are built by name.
    ///
    /// - Parameters:
    ///   - definition: the flow tree and initial bucket.
    ///   - registry: builds the named ops when the flow runs in this process.
    public init(definition: FlowDefinition, registry: FlowOperationRegistry = FlowOperationRegistry()) {
        name = definition.name
        setup = .make(Setup(definitionNodes: FlowPlanNode.nodes(from: definition.steps, defaults: definition.defaults),
                            executor: FlowLocalExecutor(registry: registry)))
        runState = FlowRunState(bucket: definition.bucket.mapValues(\.anyValue))
    }

    // MARK: State

    /// The shared data bucket.
    public var dataBucket: [String: Any] {
        get { runState.bucket }
        set { runState.bucket = newValue }
    }

    /// Whether every op so far succeeded; `true` before the flow runs and when it ends early at an
    /// unmatched case.
    public var isSuccess: Bool {
        get { runState.isSuccess }
        set { runState.isSuccess = newValue }
    }

    /// The error that stopped the flow: the op's error for `withError`, a ``FlowDataError`` for
    /// missing or mistyped input, a ``FlowError`` otherwise; `nil` while it succeeds.
    public var error: (any Error)? {
        get { runState.error }
        set { runState.error = newValue }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { runState.isCancelled }

    /// Every summary line so far, in order (without the elements a retention left out).
    public var logEntries: [FlowLogEntry] { runState.entries }

    /// Every op run so far (serial ops and group elements), in the order they finished (without
    /// the elements a retention left out).
    public var operationRecords: [FlowOperationRecord] { runState.records }

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
        setup.withLock { $0.willStartBlock = block }
        return self
    }

    /// Sets the block called when the flow has finished.
    @discardableResult
    public func setDidFinishBlock(block: @escaping FlowDidFinishBlock) -> Flow {
        setup.withLock { $0.didFinishBlock = block }
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
        setup.withLock { $0.blueprint.add(.operation(.instance(operation), location: nil, policy: policy), flowCase: flowCase) }
        return self
    }

    /// Adds a group: one op from `operationCreator` per element of the dispatcher's input array
    /// (or of its `AsyncSequence`, ``FlowArrayGroupDispatcher/init(elements:outputKey:maxConcurrentOperationCount:allowFailure:)``).
    @discardableResult
    public func addGrouped(operationCreator: any FlowOperationCreator.Type, dispatcher: FlowGroupDispatcher) -> Flow {
        var plan = FlowGroupPlan(
            source: .creator(operationCreator), inputKey: dispatcher.inputKey, outputKey: dispatcher.outputKey,
            maxConcurrent: dispatcher.maxConcurrentOperationCount, allowFailure: dispatcher.allowFailure, location: nil,
            policy: FlowTaskPolicy(retry: dispatcher.retry, timeout: dispatcher.timeout), maxFailures: dispatcher.maxFailures
        )
        plan.elements = dispatcher.elements
        setup.withLock { $0.blueprint.add(.group(plan), flowCase: nil) }
        return self
    }

    /// Joins all open case branches: the next step runs after whichever branch ran.
    @discardableResult
    public func combine() -> Flow {
        setup.withLock { $0.blueprint.combine() }
        return self
    }

    /// Adds a handler called with the error when the flow fails (before the did-finish block).
    @discardableResult
    public func onFailure(_ handler: @escaping (any Error) -> Void) -> Flow {
        setup.withLock { $0.failureHandlers.append(handler) }
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
        runState.setProgressHandler(handler)
        return self
    }

    /// Runs the ops with another executor, for example a cluster's.
    @discardableResult
    public func setExecutor(_ executor: any FlowExecutor) -> Flow {
        setup.withLock { $0.executor = executor }
        return self
    }

    /// Keeps a record of the run in `journal` as it goes; a journal from an earlier life of the
    /// same run (same definition and starting bucket) makes this run resume it: what that life
    /// finished is taken as it was and only the rest runs. See ``FlowJournal``.
    @discardableResult
    public func setJournal(_ journal: any FlowJournal) -> Flow {
        setup.withLock { $0.journal = journal }
        return self
    }

    // MARK: Log

    /// Adds a line to the summary.
    public func log(message: String) {
        runState.log(message, at: Date())
    }


    /// The summary in the seed's format: every line with its time, then `Flow isSuccess:`.
    public func generateSummary() -> String {
        let (lines, success) = runState.summaryLines()
        return FlowSummary.render(entries: lines, isSuccess: success)
    }
}
