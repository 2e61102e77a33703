import Flow
import FlowWire
import Synchronization

/// A worker's side of group bytes budgets (docs/PROTOCOL.md §15): the rate RATE gives it for each
/// budget, the token buckets its ops' progress waits on, and the bytes sent since its last PROGRESS.
///
/// Shared by the I/O thread (RATE in, PROGRESS out) and the tasks that run ops (progress in).
final class WorkerByteBudgets: Sendable {
    typealias Instant = ContinuousClock.Instant

    private struct State {
        /// By budget: `nil` for no bytes limit; each bucket with the id it was made under.
        var buckets: [UInt64: (id: UInt64, bucket: ByteTokenBucket)?] = [:]
        var nextBucket: UInt64 = 0
        /// Bytes sent since the last PROGRESS, by task and attempt.
        var sent: [WireTaskReference: UInt64] = [:]
        var lastReported: Instant?
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

    init(reportInterval: Duration = .milliseconds(200), firstRateWait: Duration = .seconds(1)) {
        self.reportInterval = reportInterval
        self.firstRateWait = firstRateWait
    }

    /// Takes the rates of a RATE.
    func set(_ rates: [WireRate], now: Instant = .now) {
        state.withLock { state in
            for rate in rates {
                let budget = rate.budget
                guard rate.bytesPerSecond > 0 else {
                    state.buckets[budget] = .some(nil)
                    continue
                }
                if case .some(.some(var held)) = state.buckets[budget] {
                    held.bucket.setRate(Double(rate.bytesPerSecond), now: now)
                    state.buckets[budget] = held
                } else {
                    state.nextBucket += 1
                    state.buckets[budget] = (state.nextBucket, ByteTokenBucket(rate: Double(rate.bytesPerSecond), now: now))
                }
            }
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

    /// The PROGRESS entries due now: `nil` until ``reportInterval`` has passed since the last, or
    /// when nothing was sent.
    func takeProgress(now: Instant) -> [WireProgress]? {
        state.withLock { state in
            guard !state.sent.isEmpty else { return nil }
            if let last = state.lastReported, now - last < reportInterval { return nil }
            state.lastReported = now
            let entries = state.sent.map { WireProgress(taskID: $0.key.taskID, attempt: $0.key.attempt, bytes: $0.value) }
            state.sent = [:]
            return entries.sorted { $0.taskID < $1.taskID }
        }
    }

    /// Counts `bytes` of a task and waits until its budget lets them go.
    func sent(_ bytes: Int, task: WireTaskReference, budget: UInt64) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        var counted = false
        var ticket: (bucket: UInt64, place: Double)?
        while true {
            let now = clock.now
            let wait = state.withLock { state -> Duration in
                if !counted {
                    state.sent[task, default: 0] += UInt64(bytes)
                    counted = true
                }
                // No RATE for it yet (the task came just before it): a short wait, then, if none
                // comes (a coordinator that sends none), no limit.
                guard let known = state.buckets[budget] else { return now - start < firstRateWait ? .milliseconds(20) : .zero }
                guard var held = known else { return .zero }
                // A ticket of a bucket made since (after a reset, or no limit in between) is void.
                if let taken = ticket, taken.bucket != held.id { return .zero }
                let place = ticket?.place ?? held.bucket.take(bytes, now: now)
                ticket = (held.id, place)
                let wait = held.bucket.wait(for: place, now: now)
                state.buckets[budget] = held
                return wait
            }
            guard wait > .zero else { return }
            try await Task.sleep(for: min(wait, Self.slice))
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
}
