import Flow
import FlowWire
import Foundation

extension DispatchCore {
    /// PROGRESS from a worker (§15): each entry of a task in flight there with that attempt counts
    /// toward its group's bytes sent; a request entry (attempt 0) of a task in flight there, from a
    /// worker that announced feature bit 5, draws on its group's requests rate; any other entry (a
    /// task that ended, moved, or has no budget) is ignored: progress is a measure, never an answer.
    mutating func countProgress(_ entries: [WireProgress], from peer: Data, now: Instant) {
        let requests = (workers[peer]?.features ?? 0) & WireReady.Feature.requests != 0
        for entry in entries {
            guard let index = tasks.index(forKey: entry.taskID) else { continue }
            let budget = withTask(at: index) { record in
                record.worker == peer && (entry.isRequests ? requests : record.task.attempt == entry.attempt) ? record.budget : -1
            }
            guard budget >= 0, budget < budgets.count else { continue }
            if entry.isRequests {
                budgets[budget].requested(entry.bytes, now: now)
            } else {
                budgets[budget].bytesSent &+= entry.bytes
            }
        }
    }

    /// The RATEs due (§15): each budget's bytes rate, and for workers that announced feature bit 5
    /// its requests rate, is divided among the workers that announced the progress feature in
    /// proportion to the budget's tasks running on each (its tasks in flight there, at most its
    /// slots), and a worker hears its share when it is new to it, when a rate was set or changed
    /// (`limit`, a timetable), or when it moved by more than 5%. A budget without a rate is sent
    /// as 0 (no limit), so its tasks never wait for one.
    mutating func allocateRates(now: Instant) -> [Action] {
        guard !budgets.isEmpty else { return [] }
        let forced = ratesChanged
        ratesChanged = false
        let running = runningByBudget()
        var actions: [Action] = []
        for (peer, counts) in running.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let requests = (workers[peer]?.features ?? 0) & WireReady.Feature.requests != 0
            var entries: [WireRate] = []
            for (budget, count) in counts.sorted(by: { $0.key < $1.key }) where !budgets[budget].awaitingRates {
                let total = running.total(of: budget)
                let bytes = Self.share(of: budgets[budget].rates.bytesPerSecond, count: count, total: total)
                let isNew = sentRates[peer]?[budget] == nil
                if let entry = rateEntry(to: peer, key: budget, share: bytes, forced: forced) {
                    entries.append(WireRate(budget: UInt64(budget), bytesPerSecond: entry))
                }
                guard requests else { continue }
                let perMille = Self.share(of: budgets[budget].requestsPerSecond.map(Self.perMille), count: count, total: total)
                // With the budget's first bytes rate, always: a worker takes a bytes rate alone as
                // "no requests limit".
                if let entry = rateEntry(to: peer, key: Self.requestsKey(budget), share: perMille, forced: forced || isNew) {
                    entries.append(.requests(budget: UInt64(budget), perMille: entry))
                }
            }
            if !entries.isEmpty {
                withWorker(peer) { $0.lastSent = now }
                actions.append(.send(to: peer, .rate(entries)))
            }
        }
        return actions
    }

    /// The share to send `peer` under `key` of ``sentRates``, if it is due: new, changed when
    /// `forced`, or moved far; it is then noted as sent.
    private mutating func rateEntry(to peer: Data, key: Int, share: UInt64, forced: Bool) -> UInt64? {
        let last = sentRates[peer]?[key]
        guard last != share, forced || last == nil || Self.movedFar(from: last!, to: share) else { return nil }
        sentRates[peer, default: [:]][key] = share
        return share
    }

    /// Where ``sentRates`` keeps a budget's requests share (in thousandths a second): beside its
    /// bytes shares, under a negative key, so that a worker's removal forgets both.
    static func requestsKey(_ budget: Int) -> Int { -1 - budget }

    /// By worker that announced the progress feature, by budget: its tasks running there.
    private func runningByBudget() -> [Data: [Int: Int]] {
        var running: [Data: [Int: Int]] = [:]
        for (peer, worker) in workers where worker.features & WireReady.Feature.progress != 0 && !worker.inFlight.isEmpty {
            var counts: [Int: Int] = [:]
            for id in worker.inFlight {
                guard let budget = tasks[id]?.budget, budget >= 0 else { continue }
                counts[budget, default: 0] += 1
            }
            guard !counts.isEmpty else { continue }
            running[peer] = counts.mapValues { min($0, worker.slots) }
        }
        return running
    }

    /// A worker's share of `rate` (0 for no rate), at least 1 byte a second.
    static func share(of rate: Int64?, count: Int, total: Int) -> UInt64 {
        guard let rate, rate > 0, total > 0 else { return 0 }
        // Below 2^64 whatever the rate (count <= total), but a conversion of a Double is kept
        // from trapping all the same.
        let share = (Double(rate) * Double(min(count, total)) / Double(total)).rounded()
        return share >= 18_446_744_073_709_551_615 ? .max : max(1, UInt64(share))
    }

    /// A requests rate in thousandths of a request a second, the wire's unit, at least 1 (a
    /// rate above 0 is a limit) and at most `Int64.max` (2^63 once a Double): a rate that came past the flow file's
    /// range (the library's API, a pool's client) must not trap here, as `1e17` once did.
    static func perMille(_ rate: Double) -> Int64 {
        let scaled = (rate * 1000).rounded()
        guard !scaled.isNaN else { return 1 }
        return scaled >= 9_223_372_036_854_775_807 ? .max : max(1, Int64(scaled))
    }

    /// Whether a share moved enough to be worth a RATE: to or from no limit, or by more than 5%.
    static func movedFar(from old: UInt64, to new: UInt64) -> Bool {
        if old == 0 || new == 0 { return true }
        return Double(max(old, new)) / Double(min(old, new)) > 1.05
    }
}

extension Dictionary where Key == Data, Value == [Int: Int] {
    /// The tasks of `budget` running on every worker.
    fileprivate func total(of budget: Int) -> Int {
        values.reduce(0) { $0 + ($1[budget] ?? 0) }
    }
}

extension DispatchCore {
    /// CHECKPOINT from a worker (§7.9): each entry of a task in flight there with that attempt,
    /// whose TASK asked for checkpoints, becomes the task's checkpoint (a TASK sent again after
    /// the worker is lost carries it) and goes to whoever submitted the task; any other entry (a
    /// task that ended or moved) is ignored, as a progress entry is.
    mutating func keep(_ entries: [WireCheckpoint], from peer: Data, into actions: inout [Action]) {
        for entry in entries {
            guard let index = tasks.index(forKey: entry.taskID) else { continue }
            let handed = withTask(at: index) { record -> (Waiter, Int)? in
                guard record.worker == peer, record.task.attempt == entry.attempt, case .some = record.task.checkpoint else { return nil }
                record.task.checkpoint = entry.value
                return record.waiter.map { ($0, record.task.isGroupElement ? record.task.elementIndex : 0) }
            }
            guard let (waiter, element) = handed else { continue }
            actions.append(.checkpoint(waiter, index: element, entry.value))
        }
    }
}
