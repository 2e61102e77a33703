/// A token bucket of op starts a second, on an injected clock: ``take(now:)`` says whether one
/// more start fits now, ``nextToken(now:)`` when the next will.
///
/// It holds at most a twentieth of a second's starts (at least one), so a burst after an idle
/// spell adds at most 0.5% to any 10 s window.
struct RequestTokenBucket: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// Starts a second, above 0.
    private(set) var rate: Double
    private var tokens: Double
    private var refilledAt: Instant?

    /// The most tokens it keeps.
    var capacity: Double { max(1, rate / 20) }

    /// A bucket of `rate` starts a second, holding one token.
    init(rate: Double) {
        self.rate = rate
        tokens = 1
    }

    /// Changes the rate; the tokens kept stay, within the new capacity.
    mutating func setRate(_ rate: Double, now: Instant) {
        refill(now: now)
        self.rate = rate
        tokens = min(tokens, capacity)
    }

    /// Takes one start's token if there is one.
    mutating func take(now: Instant) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Takes `count` tokens for requests made elsewhere (a worker's parts, §15), going into debt
    /// by up to a second's worth: starts then wait until the debt is paid.
    mutating func debit(_ count: Double, now: Instant) {
        refill(now: now)
        tokens = max(-rate, tokens - count)
    }

    /// When the next token is there (now, when there is one).
    func nextToken(now: Instant) -> Instant {
        guard let refilledAt else { return now }
        let missing = 1 - (tokens + rate * Self.seconds(now - refilledAt))
        return missing <= 0 ? now : now + .tokenWait(seconds: missing / rate)
    }

    private mutating func refill(now: Instant) {
        if let refilledAt, now > refilledAt {
            tokens = min(capacity, tokens + rate * Self.seconds(now - refilledAt))
        }
        refilledAt = now
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
