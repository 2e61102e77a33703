public import Flow

/// One group's budget for the whole cluster (a flow file's group `limit:` and `adaptive:`): the
/// coordinator hands out every task, so it holds it. A task sent to a worker counts as a start
/// when it is sent, also into a worker's queue, so a group's tasks are never sent ahead faster
/// than its rate.
///
/// Pure: the instants come from the caller, as everything in ``DispatchCore``.
struct GroupBudget: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// What stops a task of the group from starting now.
    enum Verdict: Sendable, Equatable {
        case start
        /// The requests rate: the next start fits at this instant.
        case waitUntil(Instant)
        /// The adaptive concurrency: one of the running tasks must end first.
        case waitForRunning
    }

    /// The group as the user names it (its op, and where it was written).
    let name: String
    /// The rates in force (the file's, its timetable's active entry, or `limit` from another
    /// terminal).
    private(set) var rates: FlowLimitRates
    private var requests: RequestTokenBucket?
    /// `nil` with `adaptive: false`.
    private(set) var adaptive: AdaptiveConcurrency?
    /// The start rate's back-off, with ``adaptive``.
    private(set) var adaptiveRate: AdaptiveRate?
    /// The group's tasks sent to workers that are not over yet.
    private(set) var running = 0
    /// Tasks of the group started, all told.
    private(set) var started = 0
    /// Bytes its ops sent, as workers reported them (PROGRESS, §15).
    var bytesSent: UInt64 = 0
    /// Requests its ops made beyond their starts, as workers reported them (§15).
    private(set) var requestsReported: UInt64 = 0
    /// A pool's budget for a client's, before the client's first RATE: no RATE goes to workers
    /// for it yet (they wait for one briefly), so that they do not start unlimited.
    var awaitingRates = false

    /// A budget; `maxConcurrent` bounds the adaptive concurrency.
    init(name: String, rates: FlowLimitRates, maxConcurrent: Int, adaptive: Bool) {
        self.name = name
        self.rates = rates
        requests = rates.requestsPerSecond.map { RequestTokenBucket(rate: $0) }
        self.adaptive = adaptive ? AdaptiveConcurrency(maximum: maxConcurrent) : nil
        adaptiveRate = adaptive ? AdaptiveRate() : nil
    }

    /// The start rate in force: the group's, or lower while backing off.
    var requestsPerSecond: Double? {
        switch (rates.requestsPerSecond, adaptiveRate?.rate) {
        case (let fixed?, let backedOff?): return min(fixed, backedOff)
        case (let fixed, let backedOff): return fixed ?? backedOff
        }
    }

    /// Changes the rates from now on.
    mutating func setRates(_ rates: FlowLimitRates, now: Instant) {
        self.rates = rates
        awaitingRates = false
        applyRequestsRate(now: now)
    }

    private mutating func applyRequestsRate(now: Instant) {
        if let rate = requestsPerSecond {
            if requests == nil { requests = RequestTokenBucket(rate: rate) } else { requests?.setRate(rate, now: now) }
        } else {
            requests = nil
        }
    }

    /// Whether one more task may start now; when it may, it is counted as started.
    mutating func start(now: Instant) -> Verdict {
        if let adaptive, adaptive.isThrottled, running >= adaptive.current { return .waitForRunning }
        if requests != nil, !requests!.take(now: now) { return .waitUntil(requests!.nextToken(now: now)) }
        running += 1
        started += 1
        adaptiveRate?.started(now: now)
        return .start
    }

    /// Requests the group's ops made beyond their starts, as workers reported them (PROGRESS
    /// request entries, §15): they draw on the same requests rate as starts.
    mutating func requested(_ count: UInt64, now: Instant) {
        requestsReported &+= count
        requests?.debit(Double(count), now: now)
    }

    /// A task of the group left its worker.
    mutating func ended() {
        running = max(0, running - 1)
    }

    /// A task of the group answered: a throttled answer backs the adaptive concurrency off, a
    /// good one lets it grow.
    ///
    /// - Returns: a cut, or the end of the back-off; `nil` for anything else.
    mutating func answered(throttled: Bool, now: Instant) -> AdaptiveChange? {
        guard adaptive != nil, adaptiveRate != nil else { return nil }
        let rateChanged = throttled ? adaptiveRate!.throttled(now: now) : adaptiveRate!.answered(now: now)
        if rateChanged { applyRequestsRate(now: now) }
        let changed = throttled ? adaptive!.throttled(now: now) : adaptive!.answered(now: now)
        guard changed || rateChanged else { return nil }
        if throttled { return .cut(concurrency: adaptive!.current, maxConcurrent: adaptive!.maximum, perSecond: adaptiveRate!.rate) }
        return adaptive!.isThrottled || adaptiveRate!.rate != nil ? nil : .recovered(maxConcurrent: adaptive!.maximum)
    }

    /// What a change of the adaptive back-off says.
    enum AdaptiveChange: Sendable, Equatable {
        /// Cut to this concurrency and start rate.
        case cut(concurrency: Int, maxConcurrent: Int, perSecond: Double?)
        /// Back to `maxConcurrent`, with no rate of its own.
        case recovered(maxConcurrent: Int)
    }

    /// What `status` and the metrics show.
    var snapshot: GroupBudgetStatus {
        GroupBudgetStatus(name: name, rates: rates, backedOffRequestsPerSecond: adaptiveRate?.rate, concurrency: adaptive?.current, maxConcurrent: adaptive?.maximum,
                          lowestConcurrency: adaptive?.lowest, throttledAnswers: adaptive?.throttledAnswers ?? 0, started: started,
                          bytesSent: Int(clamping: bytesSent), requestsReported: Int(clamping: requestsReported))
    }
}

/// A group's budget as `flow-coordinator status` and `--metrics` show it.
public struct GroupBudgetStatus: Sendable, Hashable, Codable {
    /// The group (its op, and where it was written).
    public var name: String
    /// The rates set (the file's, its timetable's, or `limit`'s).
    public var rates: FlowLimitRates
    /// While the group backs off: the start rate it is held to.
    public var backedOffRequestsPerSecond: Double?
    /// The adaptive concurrency now; `nil` with `adaptive: false`.
    public var concurrency: Int?
    /// The group's `maxConcurrent`, when adaptive.
    public var maxConcurrent: Int?
    /// The lowest the concurrency went.
    public var lowestConcurrency: Int?
    /// Answers that said the store is overloaded.
    public var throttledAnswers: Int
    /// Tasks started.
    public var started: Int
    /// Bytes the group's ops sent, as they reported them (0 for ops that report none).
    public var bytesSent: Int = 0
    /// Requests the group's ops made beyond their starts (parts of multipart uploads), as they
    /// reported them; they count toward `requestsPerSecond` with ``started``.
    public var requestsReported: Int = 0
}
