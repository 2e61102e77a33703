import Foundation

/// How an op step or a group's elements are tried again after a transient failure
/// (`retry: {attempts: 6, delay: 0.5, backoff: 2, maxDelay: 30, jitter: true}`).
///
/// `attempts` counts every try, the first included: 1 means no retry. The wait before try n+1 is
/// `delay × backoff^(n-1)`, capped at `maxDelay`, and with `jitter` a uniformly random part of it
/// ("full jitter"), so that many elements failing together do not all come back together. A
/// failure that says how long to wait (HTTP `Retry-After`) waits that long instead, capped at
/// `maxDelay`. Only transient failures are retried: see ``FlowRetryAdvice``.
public struct FlowRetryPolicy: Sendable, Hashable {
    /// Tries in all, at least 1.
    public var attempts: Int
    /// The wait before the second try.
    public var delay: Duration
    /// The factor each further wait grows by, at least 1.
    public var backoff: Double
    /// The longest wait.
    public var maxDelay: Duration
    /// Whether each wait is a random part of the computed one (full jitter).
    public var jitter: Bool

    /// No retry: one try.
    public static let none = FlowRetryPolicy(attempts: 1)

    /// Creates a policy; the defaults are those of a flow file's `retry:`.
    public init(attempts: Int, delay: Duration = .seconds(1), backoff: Double = 2, maxDelay: Duration = .seconds(60),
                jitter: Bool = true) {
        self.attempts = max(1, attempts)
        self.delay = max(.zero, delay)
        self.backoff = max(1, backoff)
        self.maxDelay = max(.zero, maxDelay)
        self.jitter = jitter
    }

    /// The wait after try `attempt` failed, before try `attempt + 1`.
    ///
    /// - Parameters:
    ///   - attempt: the try that failed, from 1.
    ///   - retryAfter: how long the failure asked to wait, if it did; it replaces the computed
    ///     wait (still capped at ``maxDelay``, and not jittered).
    ///   - random: the source of jitter.
    public func wait(after attempt: Int, retryAfter: Duration? = nil, using random: inout some RandomNumberGenerator) -> Duration {
        if let retryAfter { return min(max(.zero, retryAfter), maxDelay) }
        // No delay stays none: 0 × backoff^n is NaN once the power passes Double's range (1,025
        // tries at backoff 2), and Double.random(in: 0...NaN) traps.
        let seconds = delay == .zero ? 0 : delay.seconds * pow(backoff, Double(max(0, attempt - 1)))
        let capped = min(seconds, maxDelay.seconds)
        let chosen = jitter ? Double.random(in: 0...capped, using: &random) : capped
        return .microseconds(FlowSaturating.int64(chosen * 1_000_000))
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    package var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }

    /// `0.4 s`, `12 s`, `1.5 s`: for summary lines.
    package var shortText: String { FlowDurationText.short(self) }
}
