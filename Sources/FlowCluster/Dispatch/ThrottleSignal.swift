import Flow
import FlowWire

/// Whether a failed try says the store is overloaded: the op failed asking to wait
/// (`Retry-After`), or its error names HTTP 429 or 503, or an S3 throttling code (`SlowDown`,
/// `Throttling`, `RequestLimitExceeded`, …). Read from the RESULT as it comes (§7.3): its error
/// text and retry-after, so ops need nothing new to be recognised.
enum ThrottleSignal {
    /// Words in an error that mean "slow down".
    static let markers = ["HTTP 429", "HTTP 503", "SlowDown", "Throttling", "RequestLimitExceeded", "TooManyRequests",
                          "Too Many Requests", "Slow Down"]

    /// Whether `result` is a throttled failure.
    static func isThrottle(_ result: WireResult) -> Bool {
        guard case .withError(let text) = result.finishState else { return false }
        return result.retryAfterMilliseconds > 0 || isThrottle(text: text)
    }

    /// Whether an error's text names a throttling answer.
    static func isThrottle(text: String) -> Bool {
        markers.contains { text.contains($0) }
    }
}
