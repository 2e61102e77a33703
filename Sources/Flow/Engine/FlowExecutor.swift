import Foundation

/// One op to run: what the engine hands an executor.
// `@unchecked` for the bucket and element (`Any`): the seed's bucket contract shares its values across threads.
public struct FlowTask: @unchecked Sendable {
    /// How the op is given.
    public enum Operation: Sendable {
        /// An op instance built in this process.
        case instance(FlowOperation)
        /// A registered op name with its parameters.
        case named(String, parameters: [String: FlowValue])
    }

    /// The op.
    public var operation: Operation
    /// The bucket it runs against: a copy of the flow's bucket for a serial op, the temporary
    /// `[primaryInputParamKey: element]` bucket for a group element.
    public var bucket: [String: Any]
    /// The short id of a group element (shown as `[Op abcd]`), `nil` for a serial op.
    public var groupTag: String?
    /// The element's index in its group, `nil` for a serial op.
    public var groupIndex: Int?
    /// The group element; the executor puts it in the op's temporary bucket under the op's
    /// `primaryInputParamKey` (the op, possibly on a worker, is the one that knows that key).
    public var groupElement: Any?
    /// The op's name as the summary shows it.
    public var operationName: String
    /// Where the step was written, for error messages.
    public var location: FlowSourceLocation?
    /// Which try this is, from 1 (``FlowRetryPolicy``).
    public var attempt = 1
    /// The step's `retry:`. The engine retries the whole op itself; the policy is also handed to
    /// the op (``FlowOperation/retryPolicy``) for ops that retry parts of their work alone, such
    /// as the parts of an S3 multipart upload.
    public var retry: FlowRetryPolicy = .none
    /// How long one try may run (`timeout:`); the executor stops the op past it and fails it with
    /// ``FlowTimeLimitExceeded``.
    public var timeLimit: Duration?
    /// The workers a cluster may run it on (the step's `on:`); `nil`: any. A run in one process
    /// runs it as any other.
    public var placement: FlowPlacement?
    /// Labels a cluster runs it on when a worker with them (and ``placement``'s) is connected, and
    /// ignores when none is (a group's `affinity: prefer`); `nil`: none.
    public var preferredPlacement: FlowPlacement?
    /// The group's `affinity:`, when its elements go back to where they came from: a cluster
    /// then looks further ahead in the group (a host's elements may wait while another's run).
    public var affinity: FlowAffinity?
    /// How long a cluster lets it wait for a worker its placement allows before it fails
    /// (`affinityTimeout:`); `nil`: the cluster's worker time-out.
    public var placementWait: Duration?
    /// Workers that already failed this task: a cluster runs a retry elsewhere when it can.
    public var previousWorkers: [String] = []
    /// Whether an earlier life of the run may have run this task before it stopped: an element of
    /// a resumed run that had started and left no result. The op then sees one try more.
    public var mayHaveRunBefore = false
    /// What an earlier try saved (``FlowOperation/savedCheckpoint``) when the task brings it
    /// itself (a worker's TASK); otherwise ``checkpoints`` has it.
    package var checkpoint: FlowValue? = .none
    /// Where the op's checkpoints go and come from, `nil` for none (``FlowCheckpointKeeper``).
    package var checkpoints: (any FlowCheckpointKeeper)?

    /// Which try the op sees (``FlowOperation/attempt``): ``attempt``, one more when it may have
    /// run before the run was resumed.
    public var operationAttempt: Int { attempt + (mayHaveRunBefore ? 1 : 0) }

    /// Creates a task.
    public init(operation: Operation, bucket: [String: Any], groupTag: String? = nil, groupIndex: Int? = nil,
                groupElement: Any? = nil, operationName: String, location: FlowSourceLocation? = nil) {
        self.operation = operation
        self.bucket = bucket
        self.groupTag = groupTag
        self.groupIndex = groupIndex
        self.groupElement = groupElement
        self.operationName = operationName
        self.location = location
    }
}

/// Runs the ops the engine hands it: in this process (``FlowLocalExecutor``) or on a cluster.
///
/// The engine never has more tasks outstanding than a group's `maxConcurrent` (one for serial
/// ops). An executor must return promptly with ``FlowFinishState/cancelled`` when the calling task
/// is cancelled.
public protocol FlowExecutor: Sendable {
    /// Runs one op and returns what it did, made with the try the op saw
    /// (``FlowTaskResult/attempt`` is the task's ``FlowTask/operationAttempt``, as
    /// the engine's own op runner and ``FlowTaskResult/failure(_:for:)`` give it): the engine does not
    /// change it.
    func execute(_ task: FlowTask) async -> FlowTaskResult

    /// Where the engine's own task should run, `nil` (the default) for the global concurrent
    /// executor. A cluster's coordinator names its I/O thread: the engine then hands each task
    /// over and takes each result there, with no wake-up of another thread in between.
    var preferredTaskExecutor: (any TaskExecutor)? { get }

    /// The parameters of the op named `name` with their `${key}` references resolved against
    /// `bucket`; by default as ``FlowParameterTemplate`` does. An executor with a registry lets
    /// each op resolve them its own way (``FlowOperationRegistry/resolveParameters(of:_:bucket:)``).
    ///
    /// - Throws: ``FlowParameterTemplate/MissingKey`` for a reference to a key the bucket lacks.
    func resolveParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any]) throws -> [String: FlowValue]

    /// The parameters of a group of the op named `name`, of `elementCount` elements (`nil`: not
    /// known yet): by default ``resolveParameters(of:_:bucket:)``'s. An executor with a registry
    /// lets the op prepare them too (``FlowOperationRegistry/resolveGroupParameters(of:_:bucket:elementCount:)``).
    ///
    /// - Throws: ``FlowParameterTemplate/MissingKey`` for a reference to a key the bucket lacks.
    func resolveGroupParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any],
                                elementCount: Int?) throws -> [String: FlowValue]

    /// The workers a step with `each: worker` runs on, by name: those connected that `placement`
    /// allows (all, for `nil`), once their labels are known. `nil` (the default) for an executor
    /// without workers, a run in one process: the step then runs once, as any other.
    ///
    /// - Throws: an error saying why the step cannot run on each worker here (through a pool).
    func workers(for placement: FlowPlacement?) async throws -> [FlowWorkerIdentity]?
}

/// A worker a step with `each: worker` runs on: its name and host, which each list element it
/// puts out carries (`worker`, `host`).
public struct FlowWorkerIdentity: Sendable, Hashable {
    public var name: String
    public var host: String

    public init(name: String, host: String) {
        self.name = name
        self.host = host
    }
}

extension FlowExecutor {
    public var preferredTaskExecutor: (any TaskExecutor)? { nil }

    public func workers(for placement: FlowPlacement?) async throws -> [FlowWorkerIdentity]? { nil }

    public func resolveParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any]) throws -> [String: FlowValue] {
        try FlowParameterTemplate.resolve(parameters, bucket: bucket)
    }

    public func resolveGroupParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any],
                                       elementCount: Int?) throws -> [String: FlowValue] {
        try resolveParameters(of: name, parameters, bucket: bucket)
    }
}

/// Runs ops in this process; registered names are built from a registry.
public struct FlowLocalExecutor: FlowExecutor {
    /// The registry for ops given by name.
    public let registry: FlowOperationRegistry

    /// Creates a local executor.
    public init(registry: FlowOperationRegistry = FlowOperationRegistry()) {
        self.registry = registry
    }

    public func resolveParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any]) throws -> [String: FlowValue] {
        try registry.resolveParameters(of: name, parameters, bucket: bucket)
    }

    public func resolveGroupParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any],
                                       elementCount: Int?) throws -> [String: FlowValue] {
        try registry.resolveGroupParameters(of: name, parameters, bucket: bucket, elementCount: elementCount)
    }

    public func execute(_ task: FlowTask) async -> FlowTaskResult {
        guard let limit = task.timeLimit else { return await run(task) }
        return await withTaskGroup(of: FlowTaskResult?.self) { group in
            group.addTask { await run(task) }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            if let first = await group.next(), let result = first {
                group.cancelAll()
                return result
            }
            // The limit passed (or the caller cancelled): stop the op and keep what it did.
            group.cancelAll()
            let stopped = await group.next() ?? nil
            var result = stopped ?? .cancelled(task)
            if Task.isCancelled || result.state.isSuccess { return result }
            let error = FlowTimeLimitExceeded(limit: limit)
            result.state = .withError(error.description)
            result.error = error
            result.isPermanentFailure = false
            return result
        }
    }

    nonisolated(nonsending) private func run(_ task: FlowTask) async -> FlowTaskResult {
        let operation: FlowOperation
        switch task.operation {
        case .instance(let instance):
            operation = instance
        case .named(let name, let parameters):
            do {
                operation = try registry.makeOperation(named: name, parameters: parameters)
            } catch {
                return .failure(error, for: task)
            }
        }
        guard let keeper = task.checkpoints else { return await run(operation, of: task) }
        let slot = FlowCheckpointSlot(keeper: keeper, element: task.groupIndex ?? 0, saved: task.startingCheckpoint)
        return await FlowCheckpointSlot.$current.withValue(slot) { await run(operation, of: task) }
    }

    nonisolated(nonsending) private func run(_ operation: FlowOperation, of task: FlowTask) async -> FlowTaskResult {
        if let index = task.groupIndex {
            // The element itself: `groupElement as Any` would hand the op an `Optional` around it.
            let element: Any = task.groupElement ?? (Optional<Any>.none as Any)
            return await FlowOperationRunner.runGroupElement(
                operation, element: element, index: index, groupTag: task.groupTag ?? "", attempt: task.operationAttempt,
                retry: task.retry)
        } else {
            return await FlowOperationRunner.run(operation, bucket: task.bucket, groupTag: task.groupTag, attempt: task.operationAttempt,
                                                   retry: task.retry)
        }
    }
}
