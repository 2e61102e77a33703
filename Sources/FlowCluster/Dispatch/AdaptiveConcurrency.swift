/// A group's concurrency that backs off when the store says it is overloaded (AIMD, as TCP's
/// congestion window): a throttled answer halves it, at most once a `cutWindow` (about a round
/// trip: answers to tasks sent before the cut come back throttled too); a `window` after the
/// last cut, each `current` good answers in a row add one, up to `maximum` (the group's
/// `maxConcurrent`).
struct AdaptiveConcurrency: Sendable, Equatable {
    typealias Instant = ContinuousClock.Instant

    /// The group's `maxConcurrent`: never exceeded.
    let maximum: Int
    /// How many of the group's tasks may run now.
    private(set) var current: Int
    /// The least time from a cut to growth.
    let window: Duration
    /// The least time between two cuts.
    let cutWindow: Duration
    /// The lowest it went, and when it was last cut: for the summary.
    private(set) var lowest: Int
    private(set) var lastCut: Instant?
    /// Throttled answers seen, all told.
    private(set) var throttledAnswers = 0
    private var goodSinceChange = 0

    /// Starts at `maximum`.
    init(maximum: Int, window: Duration = .seconds(1), cutWindow: Duration = .milliseconds(100)) {
        self.cutWindow = cutWindow
        self.maximum = max(1, maximum)
        current = self.maximum
        lowest = self.maximum
        self.window = window
    }

    /// Whether it is below `maximum` now.
    var isThrottled: Bool { current < maximum }

    /// A throttled answer (503 SlowDown, 429, Retry-After).
    ///
    /// - Returns: whether `current` fell.
    mutating func throttled(now: Instant) -> Bool {
        throttledAnswers += 1
        goodSinceChange = 0
        if let lastCut, now - lastCut < cutWindow { return false }
        lastCut = now
        let cut = max(1, current / 2)
        guard cut < current else { return false }
        current = cut
        lowest = min(lowest, cut)
        return true
    }

    /// A good answer (any other outcome).
    ///
    /// - Returns: whether `current` grew.
    mutating func answered(now: Instant) -> Bool {
        guard current < maximum else { return false }
        if let lastCut, now - lastCut < window { return false }
        goodSinceChange += 1
        guard goodSinceChange >= current else { return false }
        goodSinceChange = 0
        current += 1
        return true
    }
}
