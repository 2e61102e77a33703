/// A token bucket of bytes a second, on instants the caller gives, that serves its callers in
/// turn: each takes a ticket for the chunk it is about to send (its place in the bucket's stream
/// of bytes) and sends once the bytes before it are paid for at the rate. Chunks thus leave evenly
/// spaced, first come first served, instead of together when a debt is paid; a chunk larger than
/// the bucket still goes, and a changed rate applies to every waiting ticket at once.
///
/// It keeps at most a tenth of a second's bytes, so an idle spell adds at most 1% to a 10 s window.
struct ByteTokenBucket: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// Bytes a second, above 0.
    private(set) var rate: Double
    /// Bytes handed out in tickets, all told.
    private var taken: Double = 0
    /// Bytes paid for at the rate, all told; at most a bucket's worth ahead of `taken`.
    private var paid: Double
    private var refilledAt: Instant

    /// The most bytes it keeps.
    var capacity: Double { rate / 10 }

    /// A full bucket of `rate` bytes a second.
    init(rate: Double, now: Instant) {
        self.rate = rate
        paid = rate / 10
        refilledAt = now
    }

    /// Changes the rate; waiting tickets are paid at the new rate from now on.
    mutating func setRate(_ rate: Double, now: Instant) {
        refill(now: now)
        self.rate = rate
        paid = min(paid, taken + capacity)
    }

    /// Takes a ticket for `bytes`: its place in the stream.
    mutating func take(_ bytes: Int, now: Instant) -> Double {
        refill(now: now)
        let ticket = taken
        taken += Double(bytes)
        return ticket
    }

    /// How long until the bytes before `ticket` are paid for at the present rate; zero when they are.
    mutating func wait(for ticket: Double, now: Instant) -> Duration {
        refill(now: now)
        guard ticket > paid else { return .zero }
        return .tokenWait(seconds: (ticket - paid) / rate)
    }

    private mutating func refill(now: Instant) {
        guard now > refilledAt else { return }
        let (seconds, attoseconds) = (now - refilledAt).components
        paid = min(taken + capacity, paid + rate * (Double(seconds) + Double(attoseconds) * 1e-18))
        refilledAt = now
    }
}
