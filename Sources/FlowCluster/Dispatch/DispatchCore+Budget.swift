import Flow
import FlowWire

extension DispatchCore {
    /// Sets a group's budget (its first task is to come) or changes its rates (`limit` from
    /// another terminal, a timetable's next entry): held tasks are looked at again at once.
    ///
    /// - Parameter id: the index its tasks carry (``submit(_:waiter:avoid:group:budget:)``); ids
    ///   are given out from 0 up.
    mutating func setBudget(id: Int, name: String, rates: FlowLimitRates, maxConcurrent: Int, adaptive: Bool, now: Instant) {
        ratesChanged = true
        if id < budgets.count {
            budgets[id].setRates(rates, now: now)
            return
        }
        while budgets.count < id { budgets.append(GroupBudget(name: "", rates: FlowLimitRates(), maxConcurrent: 1, adaptive: false)) }
        budgets.append(GroupBudget(name: name, rates: rates, maxConcurrent: maxConcurrent, adaptive: adaptive))
    }

    /// Opens a budget whose rates are still to come (a pool's, for a client's budget, §15.2
    /// "Pools"): its tasks start, and no RATE goes for it until ``setBudget(id:name:rates:maxConcurrent:adaptive:now:)``.
    ///
    /// - Returns: its id, the next one.
    mutating func openBudget(name: String) -> Int {
        var budget = GroupBudget(name: name, rates: FlowLimitRates(), maxConcurrent: 1, adaptive: false)
        budget.awaitingRates = true
        // A closed budget is reused once no task carries it any more (a task of the client that
        // left may still be on its way back): its tasks' progress must not count for another.
        if let index = closedBudgets.lastIndex(where: { id in !tasks.values.contains { $0.budget == id } }) {
            let id = closedBudgets.remove(at: index)
            budgets[id] = budget
            return id
        }
        budgets.append(budget)
        return budgets.count - 1
    }

    /// Closes a budget opened with ``openBudget(name:)`` (a pool's client left): it holds nothing
    /// back, workers forget its rates, and ``openBudget(name:)`` gives its id out again, so a
    /// standing pool serving many runs keeps as many budgets as runs at once, not as runs ever.
    mutating func closeBudget(_ id: Int) {
        guard id >= 0, id < budgets.count, !closedBudgets.contains(id) else { return }
        budgets[id] = GroupBudget(name: "", rates: FlowLimitRates(), maxConcurrent: 1, adaptive: false)
        for peer in Array(sentRates.keys) {
            sentRates[peer]?[id] = nil
            sentRates[peer]?[Self.requestsKey(id)] = nil
        }
        closedBudgets.append(id)
    }

    /// Whether a task of group `budget` may start now (counted as started when it may); when its
    /// requests rate holds it, ``budgetWake`` says when to look again.
    mutating func mayStart(budget: Int, now: Instant) -> Bool {
        switch budgets[budget].start(now: now) {
        case .start:
            return true
        case .waitUntil(let instant):
            budgetWake = budgetWake.map { min($0, instant) } ?? instant
            return false
        case .waitForRunning:
            return false
        }
    }

    /// A RESULT of a task of group `budget`: a throttled failure (``ThrottleSignal``) halves its
    /// adaptive concurrency, good answers grow it back; a cut, and the way back to the full
    /// concurrency, are reported.
    mutating func adapt(budget: Int, to result: WireResult, now: Instant, into actions: inout [Action]) {
        switch budgets[budget].answered(throttled: ThrottleSignal.isThrottle(result), now: now) {
        case .cut(let concurrency, let maximum, let perSecond):
            actions.append(.report(.throttled(step: budgets[budget].name, concurrency: concurrency, maxConcurrent: maximum,
                                              perSecond: perSecond)))
        case .recovered(let maximum):
            actions.append(.report(.unthrottled(step: budgets[budget].name, maxConcurrent: maximum)))
        case nil:
            break
        }
    }

    /// Every group budget as `status` shows it.
    var budgetStatuses: [GroupBudgetStatus] { budgets.filter { !$0.name.isEmpty }.map(\.snapshot) }

    /// The RATEs due at once (§15.2), before the TASKs of the turn: when a worker gets its first
    /// task of a budget, it hears its share (and every other worker its new one) before the task,
    /// so the op's first chunk never waits for a RATE, nor goes unlimited when a loaded machine
    /// delays the next look past the worker's wait. Other changes wait for the next ``tick(now:)``.
    mutating func firstShares(_ turn: DispatchTurn, now: Instant) -> [Action] {
        // No budget, no task of one: the turn's tasks are not looked through (perf: 2% of a pool).
        guard !budgets.isEmpty else { return [] }
        let newHolder = turn.order.contains { position in
            hasNewBudget(turn.batches[position], sent: sentRates[turn.peers[position]])
        }
        return newHolder ? allocateRates(now: now) : []
    }

    /// Whether a task of `batch` draws on a budget whose share `sent` (a worker's entry of
    /// ``sentRates``) does not hold yet. The worker's entry is looked up once a turn, and a run of
    /// tasks of one budget asks once (perf: a lookup by routing id a task was 3% of a pool).
    private func hasNewBudget(_ batch: [WireTask], sent: [Int: UInt64]?) -> Bool {
        var known: UInt64?
        for task in batch {
            guard let budget = task.budget, budget != known else { continue }
            guard sent?[Int(budget)] != nil else { return true }
            known = budget
        }
        return false
    }
}
