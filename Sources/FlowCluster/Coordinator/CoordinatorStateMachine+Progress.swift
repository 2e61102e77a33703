import Flow
import FlowWire
import Foundation

extension CoordinatorStateMachine {
    /// PROGRESS from a worker (§15): each entry of a task in flight there with that attempt counts
    /// toward its group's bytes sent; any other entry (a task that ended, moved, or has no budget)
    /// is ignored: progress is a measure, never an answer.
    mutating func countProgress(_ entries: [WireProgress], from peer: Data) {
        for entry in entries {
            guard let index = tasks.index(forKey: entry.taskID) else { continue }
            let budget = withTask(at: index) { $0.worker == peer && $0.task.attempt == entry.attempt ? $0.budget : -1 }
            guard budget >= 0, budget < budgets.count else { continue }
            budgets[budget].bytesSent &+= entry.bytes
        }
    }

    /// The RATEs due (§15): each budget's bytes rate is divided among the workers that announced
    /// the progress feature in proportion to the budget's tasks running on each (its tasks in
    /// flight there, at most its slots), and a worker hears its share when it is new to it, when a
    /// rate was set or changed (`limit`, a timetable), or when it moved by more than 5%. A budget
    /// without a bytes rate is sent as 0 (no limit), so its tasks never wait for one.
    mutating func allocateRates(now: Instant) -> [Action] {
        guard !budgets.isEmpty else { return [] }
        let forced = ratesChanged
        ratesChanged = false
        let running = runningByBudget()
        var actions: [Action] = []
        for (peer, counts) in running.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            var entries: [WireRate] = []
            for (budget, count) in counts.sorted(by: { $0.key < $1.key }) {
                let share = Self.share(of: budgets[budget].rates.bytesPerSecond, count: count, total: running.total(of: budget))
                let last = sentRates[peer]?[budget]
                guard last != share, forced || last == nil || Self.movedFar(from: last!, to: share) else { continue }
                sentRates[peer, default: [:]][budget] = share
                entries.append(WireRate(budget: UInt64(budget), bytesPerSecond: share))
            }
            if !entries.isEmpty {
                withWorker(peer) { $0.lastSent = now }
                actions.append(.send(to: peer, .rate(entries)))
            }
        }
        return actions
    }

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
        return max(1, UInt64((Double(rate) * Double(count) / Double(total)).rounded()))
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
