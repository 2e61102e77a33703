/// An error that tells ``FlowRetryPolicy`` whether trying again could help.
///
/// An op's failure is transient unless its error says otherwise: adopt this protocol on your own
/// error type (or wrap an error in ``FlowPermanentError``) to stop retries for failures that would
/// only repeat, such as HTTP 403 or a missing file. Missing or mistyped bucket data is never
/// retried, whatever the error.
public protocol FlowRetryAdvice: Error {
    /// Whether the same op with the same input would fail again.
    var isPermanent: Bool { get }
    /// How long the failing side asked to wait before trying again (HTTP `Retry-After`), if it did.
    var retryAfter: Duration? { get }
}

extension FlowRetryAdvice {
    public var retryAfter: Duration? { nil }
}

/// Wraps an error to mark it permanent: `finishWithError(error: FlowPermanentError(error))`.
public struct FlowPermanentError: FlowRetryAdvice, CustomStringConvertible, Sendable {
    /// The error as the op had it.
    public let underlying: any Error

    /// Marks `error` permanent.
    public init(_ error: any Error) {
        underlying = error
    }

    public var isPermanent: Bool { true }
    public var description: String { String(describing: underlying) }
}

/// An op ran past its step's `timeout`; transient, so `retry` tries it again.
public struct FlowTimeLimitExceeded: FlowRetryAdvice, CustomStringConvertible, Sendable, Equatable {
    /// The limit that passed.
    public let limit: Duration

    /// Creates the error.
    public init(limit: Duration) {
        self.limit = limit
    }

    public var isPermanent: Bool { false }

    /// `time limit of 300 s exceeded` (whole seconds), otherwise in milliseconds.
    public var description: String {
        let milliseconds = FlowSaturating.milliseconds(limit)
        if milliseconds % 1000 == 0 { return "time limit of \(milliseconds / 1000) s exceeded" }
        return "time limit of \(milliseconds) ms exceeded"
    }
}
