import Flow
import FlowWire
import Synchronization

/// A worker's side of group budgets (docs/PROTOCOL.md §15): the bytes rate RATE gives it for each
/// budget, and with feature bit 5 its requests rate; the token buckets its ops' progress and
/// requests wait on (a ``ByteTokenBucket`` of requests for the latter); and the bytes sent and
/// requests made since its last PROGRESS.
///
/// Shared by the I/O thread (RATE in, PROGRESS out) and the tasks that run ops (progress in).
final class WorkerByteBudgets: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// What the waits read the time from and sleep on: the continuous clock, or a test's own.
    struct Timekeeper: Sendable {
        let now: @Sendable () -> Instant
        let sleep: @Sendable (Duration) async throws -> Void

        /// The continuous clock and `Task.sleep`.
        static let continuous = Timekeeper(now: { ContinuousClock.now }, sleep: { try await Task.sleep(for: $0) })
    }

    private struct State {
        /// By budget: `nil` for no bytes limit; each bucket with the id it was made under.
        var buckets: [UInt64: (id: UInt64, bucket: ByteTokenBucket)?] = [:]
        /// The same for requests (feature bit 5), in requests a second: a budget whose bytes rate
        /// came without a requests rate (a coordinator that sends none) has no requests limit.
        var requestBuckets: [UInt64: (id: UInt64, bucket: ByteTokenBucket)?] = [:]
        var nextBucket: UInt64 = 0
        /// Bytes sent since the last PROGRESS, by task and attempt.
        var sent: [WireTaskReference: UInt64] = [:]
        /// Requests made since the last PROGRESS, by task and attempt.
        var requested: [WireTaskReference: UInt64] = [:]
        var lastReported: Instant?
        /// When a chunk of each budget first waited for a RATE that had not come: the wait counts
        /// once per budget and registration (§15.2), not once per chunk.
        var awaitingRate: [UInt64: Instant] = [:]
    }

    /// Which of a budget's two rates a wait is held to.
    private enum Kind {
        case bytes, requests
    }

    private let state = Mutex(State())
    /// How often PROGRESS goes at most.
    let reportInterval: Duration
    /// How long an op waits for the first RATE of its budget before it goes unlimited (a
    /// coordinator that sends none).
    let firstRateWait: Duration
    /// The slice a waiting op sleeps before it looks at its bucket again: a rate changed meanwhile
    /// applies from the next slice.
    private static let slice = Duration.milliseconds(100)
    /// The time the waits read and sleep on.
    private let time: Timekeeper

    init(reportInterval: Duration = .milliseconds(200), firstRateWait: Duration = .seconds(1), time: Timekeeper = .continuous) {
        self.reportInterval = reportInterval
        self.firstRateWait = firstRateWait
        self.time = time
    }

    /// Takes the rates of a RATE: bytes entries, and request-rate entries (§15, feature bit 5) in
    /// thousandths of a request a second.
    func set(_ rates: [WireRate], now: Instant = .now) {
        state.withLock { state in
            for rate in rates {
                if let budget = rate.requestsBudget {
                    Self.set(&state.requestBuckets[budget], to: Double(rate.bytesPerSecond) / 1000, now: now, next: &state.nextBucket)
                } else {
                    Self.set(&state.buckets[rate.budget], to: Double(rate.bytesPerSecond), now: now, next: &state.nextBucket)
                }
            }
        }
    }

    /// Sets one budget's bucket to `rate` a second (0: no limit), keeping its waiting tickets.
    private static func set(_ entry: inout (id: UInt64, bucket: ByteTokenBucket)??, to rate: Double, now: Instant, next: inout UInt64) {
        guard rate > 0 else {
            entry = .some(nil)
            return
        }
        if case .some(.some(var held)) = entry {
            held.bucket.setRate(rate, now: now)
            entry = held
        } else {
            next += 1
            entry = (next, ByteTokenBucket(rate: rate, now: now))
        }
    }

    /// Forgets every rate and count: the registration they belong to ended.
    func reset() {
        state.withLock { state in
            let next = state.nextBucket
            state = State()
            state.nextBucket = next
        }
    }

    /// The PROGRESS entries due now (bytes entries, then request entries): `nil` until
    /// ``reportInterval`` has passed since the last (unless `force`), or when nothing was sent.
    ///
    /// - Parameter force: take them whatever the interval: tasks finished, and their last
    ///   progress must reach the coordinator before their RESULTs (after, it counts no more).
    func takeProgress(now: Instant, force: Bool = false) -> [WireProgress]? {
        state.withLock { state in
            guard !state.sent.isEmpty || !state.requested.isEmpty else { return nil }
            if !force, let last = state.lastReported, now - last < reportInterval { return nil }
            state.lastReported = now
            let bytes = state.sent.map { WireProgress(taskID: $0.key.taskID, attempt: $0.key.attempt, bytes: $0.value) }
            let requests = state.requested.map { WireProgress.requests(taskID: $0.key.taskID, count: $0.value) }
            state.sent = [:]
            state.requested = [:]
            return bytes.sorted { $0.taskID < $1.taskID } + requests.sorted { $0.taskID < $1.taskID }
        }
    }

    /// Counts `bytes` of a task and waits until its budget lets them go.
    func sent(_ bytes: Int, task: WireTaskReference, budget: UInt64) async throws {
        try await wait(.bytes, units: bytes, task: task, budget: budget)
    }

    /// Counts one request of a task (beyond its start) and waits until its budget's requests rate
    /// lets it go.
    func requested(task: WireTaskReference, budget: UInt64) async throws {
        try await wait(.requests, units: 1, task: task, budget: budget)
    }

    /// A budget's bucket of `kind`: `nil` while no RATE named the budget, `.some(nil)` for no
    /// limit. A requests rate comes in the same RATE as the budget's first bytes rate or not at all
    /// (a coordinator without feature bit 5), so a known bytes rate alone means no requests limit.
    private static func bucket(_ kind: Kind, of budget: UInt64, in state: State) -> (id: UInt64, bucket: ByteTokenBucket)?? {
        switch kind {
        case .bytes:
            return state.buckets[budget]
        case .requests:
            if let known = state.requestBuckets[budget] { return known }
            return state.buckets[budget] == nil ? nil : .some(nil)
        }
    }

    private func wait(_ kind: Kind, units: Int, task: WireTaskReference, budget: UInt64) async throws {
        var counted = false
        var ticket: (bucket: UInt64, place: Double)?
        while true {
            let now = time.now()
            let wait = state.withLock { state -> Duration in
                if !counted {
                    if kind == .bytes { state.sent[task, default: 0] += UInt64(units) } else { state.requested[task, default: 0] += UInt64(units) }
                    counted = true
                }
                // No RATE for it yet (the task came just before it): a short wait, then, if none
                // comes (a coordinator that sends none), no limit.
                guard let known = Self.bucket(kind, of: budget, in: state) else {
                    let start = state.awaitingRate[budget] ?? now
                    state.awaitingRate[budget] = start
                    return now - start < firstRateWait ? .milliseconds(20) : .zero
                }
                guard var held = known else { return .zero }
                // A ticket of a bucket made since (after a reset, or no limit in between) is void.
                if let taken = ticket, taken.bucket != held.id { return .zero }
                let place = ticket?.place ?? held.bucket.take(units, now: now)
                ticket = (held.id, place)
                let wait = held.bucket.wait(for: place, now: now)
                if kind == .bytes { state.buckets[budget] = held } else { state.requestBuckets[budget] = held }
                return wait
            }
            guard wait > .zero else { return }
            try await time.sleep(min(wait, Self.slice))
        }
    }
}

/// The progress sink a worker binds around one task of a group with a budget.
struct WorkerProgressSink: FlowProgressSink {
    let budgets: WorkerByteBudgets
    let task: WireTaskReference
    let budget: UInt64

    func sent(bytes: Int) async throws {
        try await budgets.sent(bytes, task: task, budget: budget)
    }

    func requested() async throws {
        try await budgets.requested(task: task, budget: budget)
    }
}
