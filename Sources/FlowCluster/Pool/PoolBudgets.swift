import Flow
import FlowWire
import Foundation

/// A pool's side of its clients' group budgets (docs/PROTOCOL.md §15.2 "Pools"): each client's
/// budget id maps to a budget of the pool's own machine, whose rates the client's RATE sets; the
/// machine then divides them among the pool's workers as a coordinator does, and the workers'
/// PROGRESS goes back to the client that owns each task.
struct PoolBudgets: Sendable {
    private struct Key: Hashable, Sendable {
        var client: Data
        var budget: UInt64
    }

    /// The pool's budget of each client's.
    private var ids: [Key: Int] = [:]
    /// The rates each pool budget was given so far (a RATE may name only the bytes or the requests).
    private var rates: [Int: FlowLimitRates] = [:]

    /// The pool's budget for `client`'s `budget`, opened (awaiting its rates) on first use.
    mutating func id(for budget: UInt64, of client: Data, name: String, in machine: inout PoolStateMachine.Core) -> Int {
        let key = Key(client: client, budget: budget)
        if let id = ids[key] { return id }
        let id = machine.openBudget(name: "\(name) budget \(budget)")
        ids[key] = id
        return id
    }

    /// A client's RATE: each entry sets the bytes or the requests rate of its budget in the pool
    /// (0: none), which reaches the pool's workers at the machine's next tick. A budget the client
    /// never submitted a task of is opened for it.
    mutating func apply(_ entries: [WireRate], from client: Data, to machine: inout PoolStateMachine.Core, now: ContinuousClock.Instant) {
        var changed: Set<Int> = []
        for entry in entries {
            let budget = entry.requestsBudget ?? entry.budget
            let id = self.id(for: budget, of: client, name: "client", in: &machine)
            var rate = rates[id] ?? FlowLimitRates()
            if entry.requestsBudget != nil {
                rate.requestsPerSecond = entry.bytesPerSecond == 0 ? nil : Double(entry.bytesPerSecond) / 1000
            } else {
                rate.bytesPerSecond = entry.bytesPerSecond == 0 ? nil : Int64(clamping: entry.bytesPerSecond)
            }
            rates[id] = rate
            changed.insert(id)
        }
        for id in changed.sorted() {
            machine.setBudget(id: id, name: "", rates: rates[id]!, maxConcurrent: 1, adaptive: false, now: now)
        }
    }

    /// Forgets a client's budgets (its registration ended) and closes them in the machine, which
    /// gives their ids out again.
    mutating func forget(_ client: Data, in machine: inout PoolStateMachine.Core) {
        for (key, id) in ids where key.client == client {
            ids[key] = nil
            rates[id] = nil
            machine.closeBudget(id)
        }
    }

    /// A worker's PROGRESS as each owning client sees it: its entries of tasks in flight on that
    /// worker, under the client's task id and attempt (a request entry keeps attempt 0).
    static func relay(_ entries: [WireProgress], from worker: Data, in machine: PoolStateMachine.Core) -> [(client: Data, entries: [WireProgress])] {
        var byClient: [Data: [WireProgress]] = [:]
        for entry in entries {
            guard let record = machine.tasks[entry.taskID], record.worker == worker, let ticket = record.waiter,
                  entry.isRequests || record.task.attempt == entry.attempt else { continue }
            let attempt = entry.isRequests ? 0 : ticket.attempt
            byClient[ticket.client, default: []].append(WireProgress(taskID: ticket.taskID, attempt: attempt, bytes: entry.bytes))
        }
        return byClient.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { ($0, byClient[$0]!) }
    }
}
