/// A group's start rate that backs off when the store says it is overloaded: concurrency alone
/// cannot, where a try takes a millisecond (one at a time is then a thousand a second). A cut
/// takes the rate to 0.7 of the rate the group started at (or was held to); each second without
/// one adds a fortieth of the rate before the first cut, so it climbs back within 40 s and
/// oscillates just under the store's limit (0.7 to 1 of it, most of it near the top); once it
/// passes the rate before the first cut, the group is unlimited again. Cuts come at most once a `cutPeriod` (about a round trip: answers
/// to tries sent before a cut come back refused too), growth once a `period`.
struct AdaptiveRate: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// Starts a second now; `nil` while not throttled.
    private(set) var rate: Double?
    /// The rate before the first cut: reached again, the back-off ends.
    private var before = 0.0
    private var step = 1.0
    private var changedAt: Instant?
    /// Starts counted in the current second, and when it began; the last whole second's rate.
    private var window: (start: Instant, starts: Int)?
    private var lastSecond = 0.0
    let period: Duration
    let cutPeriod: Duration

    init(period: Duration = .seconds(1), cutPeriod: Duration = .milliseconds(100)) {
        self.period = period
        self.cutPeriod = cutPeriod
    }

    /// A task of the group started.
    mutating func started(now: Instant) {
        guard var current = window else {
            window = (now, 1)
            return
        }
        current.starts += 1
        if now - current.start >= period {
            lastSecond = Double(current.starts) / Self.seconds(now - current.start)
            current = (now, 0)
        }
        window = current
    }

    /// The rate the group started at lately: the current second's when long enough to tell.
    private func observed(now: Instant) -> Double {
        guard let window else { return lastSecond }
        let elapsed = Self.seconds(now - window.start)
        return elapsed >= 0.2 ? max(lastSecond, Double(window.starts) / elapsed) : lastSecond
    }

    /// A throttled answer: halves the rate, at most once a period.
    ///
    /// - Returns: whether it fell.
    mutating func throttled(now: Instant) -> Bool {
        if let changedAt, now - changedAt < cutPeriod { return false }
        let base = rate ?? observed(now: now)
        guard base > 0 else { return false }
        if rate == nil {
            before = base
        }
        rate = max(0.5, base * 0.7)
        step = max(0.5, before / 40)
        changedAt = now
        return true
    }

    /// A good answer: a period after the last change, the rate grows by a step.
    ///
    /// - Returns: whether it changed (grew, or the back-off ended).
    mutating func answered(now: Instant) -> Bool {
        guard let current = rate, let changedAt, now - changedAt >= period else { return false }
        self.changedAt = now
        let grown = current + step
        rate = grown >= before ? nil : grown
        return true
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
