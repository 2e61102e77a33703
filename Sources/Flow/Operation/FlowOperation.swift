import Foundation

/// How an op finished, with the error itself: the seed's finish type.
public enum FlowOperationStateFinishType: Sendable {
    case successfully
    case withError(any Error)
    case withInsufficientInputData(String)
    case withMismatchInputDataType(String)
}

/// The state of an op, as in the seed.
public enum FlowOperationState: Sendable {
    case idle
    case executing
    case finished(FlowOperationStateFinishType)
}

/// Makes an op usable inside a group: the dispatcher creates one instance per array element.
///
/// Its metatype is `Sendable` (`SendableMetatype`): a group's tasks, on any thread, make their ops
/// from it. Every op class that is not isolated to a global actor is.
public protocol FlowOperationCreator: SendableMetatype {
    /// Creates a fresh op.
    static func create() -> FlowOperation
}

/// One reusable unit of work that reads and writes a data bucket: subclass it and override
/// ``mainLogic()``.
///
/// A synchronous op calls ``finishSuccessfully()`` or ``finishWithError(error:)`` before
/// ``mainLogic()`` returns. An asynchronous op starts its work, calls ``startWithAsynchronous()``
/// at the end of ``mainLogic()``, and finishes later from any thread. An op that returns from
/// ``mainLogic()`` without doing either is reported as failed (the seed would wait forever).
///
/// ``mainLogic()`` runs on a Dispatch global queue thread, never on the main thread, so blocking
/// work there does not stall Swift concurrency's cooperative pool.
///
/// The class is `@unchecked Sendable` so that ops written as in the seed (capturing `self` in a
/// `DispatchQueue.global().asyncAfter` callback) compile in Swift 6 mode; its own state is guarded by
/// a lock.
// `@unchecked`: an open class (the seed's); its own state is under `lock`.
open class FlowOperation: @unchecked Sendable {
    /// A unique id for this instance, made the first time it is asked for: a UUID costs a read
    /// of /dev/urandom, which a group of a million trivial ops should not pay for ids nobody reads.
    public final var identifier: String {
        lock.withLock {
            if let storedIdentifier { return storedIdentifier }
            let made = UUID().uuidString
            storedIdentifier = made
            return made
        }
    }
    // @exclusivity(unchecked) on the lock-guarded properties here and in FlowOperationContext: callgrind, flow-bench 2000 (30,000 in-process elements), all of the module's @exclusivity(unchecked) off: 456 M -> 522 M instructions; the
    // checks from the runner, the local executor, setData and storedValue were 20 M (670 an element). Not measured one by one.
    @exclusivity(unchecked) private var storedIdentifier: String?
    /// A display name; the type's name when `nil`.
    @exclusivity(unchecked) public var name: String?

    let lock = FlowLock.make()
    @exclusivity(unchecked) var context: FlowOperationContext?
    @exclusivity(unchecked) var storedState = FlowOperationState.idle
    @exclusivity(unchecked) var cancelled = false
    /// The type's name, looked up once as the op is made (``operationName`` without a ``name``).
    private let typeName: String
    /// Whether a dry run runs the op (``isDryRun``), and what it noted for the plan; see FlowOperation+DryRun.swift.
    @exclusivity(unchecked) var dryRunMode = false
    @exclusivity(unchecked) var dryRunNotes: [FlowDryRunNote] = []

    /// Creates an op.
    public init() {
        typeName = FlowTypeName.of(type(of: self))
    }

    /// The key under which a group puts this op's input element.
    open var primaryInputParamKey: String { "" }
    /// The key from which a group collects this op's output.
    open var primaryOutputParamKey: String { "" }

    /// The op's logic: override it.
    open func mainLogic() {}

    /// Whether ``mainLogic()`` may run on the Swift concurrency thread that starts the op instead
    /// of a Dispatch thread of its own. Say `true` only for an op whose `mainLogic` never blocks:
    /// no sleeping, no waiting on a semaphore, a lock another op holds or synchronous I/O (it
    /// would hold one of the few threads every task shares). Such an op runs without a thread
    /// hand-off: an in-process group of trivial ops about twice as fast. `false` by default;
    /// ``FlowAsyncOperation``, whose `mainLogic` only starts a task, says `true`.
    open var runsMainLogicInline: Bool { false }

    /// How the op takes part in a dry run (`flow-coordinator run --dry-run`,
    /// ``FlowDryRunExecutor``): ``FlowDryRunRole/writes`` by default, so an op that says nothing
    /// is not run there. Override it with ``FlowDryRunRole/readsOnly`` for an op that changes
    /// nothing outside the flow's bucket (listing, hashing), or ``FlowDryRunRole/rehearses`` for
    /// one that checks ``isDryRun`` and then only reads, noting what it would do
    /// (``noteDryRun(_:)``), as `UploadFileOp` does.
    open var dryRunRole: FlowDryRunRole { .writes }

    /// The op's current state.
    public var state: FlowOperationState {
        lock.withLock { storedState }
    }

    /// Whether the flow was cancelled while this op ran; a long op should check it and finish.
    public var isCancelled: Bool {
        lock.withLock { cancelled }
    }

    /// Which try of this op this is, from 1, while it runs (1 before and after). More than 1 when
    /// an earlier try may have done part of the work: a retry (`retry:`), or an element of a
    /// resumed run that had started when the run stopped and left no result (runs are
    /// at-least-once). An op that must not act twice checks then, for example whether its upload
    /// is already on the server.
    public var attempt: Int {
        lock.withLock { context?.attempt ?? 1 }
    }

    /// The `retry:` of the op's step while it runs (``FlowRetryPolicy/none`` before and after, and
    /// on workers older than the feature). The engine already retries the whole op; an op that
    /// does its work in pieces uses the policy to try a failed piece again alone (an S3 multipart
    /// upload's parts).
    public var retryPolicy: FlowRetryPolicy {
        lock.withLock { context?.retry ?? .none }
    }

    /// The op's tag in the summary: `[TypeName]`, or `[TypeName abcd]` inside a group.
    public var displayName: String {
        let tag = lock.withLock { context?.groupTag }
        return FlowLabel.make(name: operationName, tag: tag, worker: nil)
    }

    /// The name shown in the summary and used to find the op in a registry.
    public var operationName: String {
        name ?? typeName
    }

    /// Marks the op as asynchronous: call it at the end of ``mainLogic()`` after starting async work.
    public func startWithAsynchronous() {
        lock.withLock {
            if case .idle = storedState { storedState = .executing }
            context?.isAsynchronous = true
        }
    }

    /// Finishes the op successfully.
    public func finishSuccessfully() {
        finish(.successfully)
    }

    /// Finishes the op with an error; the flow stops (or, in a group that allows failure, goes on).
    ///
    /// - Parameter error: the error, printed in the summary as `DidFinish: withError: <error>`.
    public func finishWithError(error: any Error) {
        finish(.withError(error))
    }

    /// Reads a value from the op's data bucket.
    ///
    /// A missing key finishes the op `withInsufficientInputData`, a value of another type
    /// `withMismatchInputDataType`, both with the seed's messages; with `isOptional` both just
    /// return `nil`.
    ///
    /// - Parameters:
    ///   - name: the bucket key.
    ///   - isOptional: whether a missing or mistyped value is acceptable.
    /// - Returns: the value, or `nil`.
    @inlinable
    public func getData<T>(name: String, isOptional: Bool = false) -> T? {
        // Inlinable, so that the cast is made for the caller's own `T`: unspecialized, this
        // generic looked up `T?`'s metadata in the runtime's tables on every read.
        let value = storedValue(name)
        if let value, let typed = value as? T {
            return typed
        }
        if !isOptional { finish(FlowDataError.read(key: name, found: value, expected: T.self)) }
        return nil
    }

    /// The bucket's value for `name` while the op runs.
    @usableFromInline
    final func storedValue(_ name: String) -> Any? {
        lock.withLock { context?.bucket[name] }
    }

    /// Finishes the op with the seed's state for a failed bucket read.
    @usableFromInline
    final func finish(_ error: FlowDataError) {
        switch error {
        case .insufficientInputData(let message): finish(.withInsufficientInputData(message))
        case .mismatchInputDataType(let message): finish(.withMismatchInputDataType(message))
        }
    }

    /// Writes a value to the op's data bucket (a group element's temporary bucket inside a group).
    ///
    /// - Parameters:
    ///   - name: the bucket key.
    ///   - value: the value; to cross to a worker it must be a ``FlowValue``-convertible type.
    public func setData(name: String, value: Any) {
        lock.withLock {
            guard let context, !context.isFinished else { return }
            context.bucket[name] = value
            if context.recordsBucketWrites {
                context.events.append(FlowRecordedEvent(time: Date(), kind: .set(key: name, value: value)))
            }
        }
    }

    /// Records a line in the flow's summary, tagged with this op's name.
    ///
    /// - Parameter message: the line.
    public func log(message: String) {
        lock.withLock {
            guard let context, !context.isFinished else { return }
            context.events.append(FlowRecordedEvent(time: Date(), kind: .log(message)))
        }
    }

    /// Called once when the flow is cancelled while this op runs. Subclasses that run their own
    /// tasks cancel them here; call `super`.
    open func didCancel() {}
}

/// `String(describing:)` of op types, once per type: it goes through dynamic casts (is the
/// metatype `CustomStringConvertible`?) that cost more than a trivial op's own work.
enum FlowTypeName {
    private static let lock = NSLock()
    // @exclusivity(unchecked): callgrind, flow-bench 2000 (30,000 in-process elements), all of the module's @exclusivity(unchecked) off: 456 M -> 522 M instructions; this one's checks 2.7 M (90 an element, one lookup per op).
    @exclusivity(unchecked) nonisolated(unsafe) private static var names: [ObjectIdentifier: String] = [:]

    static func of(_ type: FlowOperation.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = lock.withLock({ names[key] }) { return name }
        let name = String(describing: type)
        lock.withLock { names[key] = name }
        return name
    }
}
