import Synchronization

/// Fans the array at `inputKey` out to one op per element and collects their outputs, in input
/// order, at `outputKey`; or, made with ``init(elements:outputKey:maxConcurrentOperationCount:allowFailure:)``,
/// the elements an `AsyncSequence` yields, a page at a time as they come.
///
/// Each op gets a temporary bucket holding only `[primaryInputParamKey: element]`; its value at
/// `primaryOutputParamKey` is collected. A failed op's missing output is skipped, so with
/// `allowFailure` the output can be shorter than the input.
///
/// A final class, its settings under a `Mutex`: `Sendable` as the compiler checks it.
public final class FlowArrayGroupDispatcher: Sendable {
    /// The bucket key of the input array.
    public let inputKey: String
    /// The bucket key the outputs are collected at.
    public let outputKey: String
    /// At most this many ops run at once.
    public let maxConcurrentOperationCount: Int
    /// Whether the flow goes on when some ops fail.
    public let allowFailure: Bool
    /// How each element is tried again after a transient failure.
    public var retry: FlowRetryPolicy {
        get { settings.withLock { $0.retry } }
        set { settings.withLock { $0.retry = newValue } }
    }
    /// How long one try of an element may run; `nil`: no limit.
    public var timeout: Duration? {
        get { settings.withLock { $0.timeout } }
        set { settings.withLock { $0.timeout = newValue } }
    }
    /// How many elements may fail with the group still succeeding; `nil`: none, unless
    /// ``allowFailure``.
    public var maxFailures: FlowFailureBudget? {
        get { settings.withLock { $0.maxFailures } }
        set { settings.withLock { $0.maxFailures = newValue } }
    }

    private struct Settings {
        var retry: FlowRetryPolicy = .none
        var timeout: Duration?
        var maxFailures: FlowFailureBudget?
    }

    private let settings = Mutex(Settings())
    /// The sequence the elements come from instead of the bucket.
    let elements: FlowGroupElementSequence?

    /// Creates a dispatcher.
    ///
    /// - Parameters:
    ///   - inputKey: the bucket key of the input array.
    ///   - outputKey: the bucket key of the output array.
    ///   - maxConcurrentOperationCount: at most this many ops run at once (at least 1).
    ///   - allowFailure: whether the flow goes on when some ops fail.
    public init(inputKey: String, outputKey: String, maxConcurrentOperationCount: Int = 3, allowFailure: Bool = false) {
        self.inputKey = inputKey
        self.outputKey = outputKey
        self.maxConcurrentOperationCount = max(1, maxConcurrentOperationCount)
        self.allowFailure = allowFailure
        elements = nil
    }

    /// Creates a dispatcher whose elements come from `elements` as it yields them, not from the
    /// bucket: the group starts once the sequence has yielded two pages of up to 1,000 (or has
    /// ended), runs while it goes on, and ends when it has ended and the last element is done.
    /// Memory stays flat: the sequence waits while the group is 8 pages behind, and with
    /// `outputKey` empty no output array is kept. A page is handed over full, or once its first
    /// element has waited 20 ms when the next one comes, or at the sequence's end.
    ///
    /// If the sequence throws, the group fails with that error once the elements it had are
    /// done; if the group fails or the run stops, the sequence is no longer read. A journal
    /// (``Flow/setJournal(_:)``) takes back a resumed group's elements by index: give the same
    /// elements in the same order to resume.
    ///
    /// - Parameters:
    ///   - elements: the group's input, one op per element.
    ///   - outputKey: the bucket key the outputs are collected at, in input order; empty (the
    ///     default) keeps none.
    ///   - maxConcurrentOperationCount: at most this many ops run at once (at least 1).
    ///   - allowFailure: whether the flow goes on when some ops fail.
    public init<Elements: AsyncSequence & Sendable>(elements: Elements, outputKey: String = "", maxConcurrentOperationCount: Int = 3,
                                                    allowFailure: Bool = false) where Elements.Element: Sendable {
        inputKey = ""
        self.outputKey = outputKey
        self.maxConcurrentOperationCount = max(1, maxConcurrentOperationCount)
        self.allowFailure = allowFailure
        self.elements = FlowGroupElementSequence(elements)
    }
}

/// The dispatcher ``Flow/addGrouped(operationCreator:dispatcher:)`` takes: the seed's
/// ``FlowArrayGroupDispatcher``, the only kind there is.
public typealias FlowGroupDispatcher = FlowArrayGroupDispatcher
