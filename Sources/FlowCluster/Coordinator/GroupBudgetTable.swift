import Flow
import Synchronization

/// The coordinator's side of group budgets that callers touch: which step's tasks carry which
/// budget index, and the budgets as the I/O thread last showed them. Empty, it costs a task one
/// relaxed atomic load (an unlimited run's speed stays as it was).
final class GroupBudgetTable: Sendable {
    private let any = Atomic<Bool>(false)
    private let ids = Mutex<[FlowSourceLocation: Int]>([:])
    private let shown = Mutex<[GroupBudgetStatus]>([])
    /// When the I/O thread last showed them, in nanoseconds of the continuous clock.
    private let shownAt = Atomic<Int64>(-1_000_000_000_000)
    private static let origin = ContinuousClock.now

    /// The budget index of tasks written at `location`, -1 for none.
    @inline(__always)
    func id(for location: FlowSourceLocation?) -> Int {
        guard any.load(ordering: .relaxed), let location else { return -1 }
        return ids.withLock { $0[location] } ?? -1
    }

    /// The index of the group written at `location`, given out on first use.
    ///
    /// - Returns: the index, and whether it is new.
    func register(_ location: FlowSourceLocation) -> (id: Int, new: Bool) {
        let made = ids.withLock { table -> (Int, Bool) in
            if let id = table[location] { return (id, false) }
            let id = table.count
            table[location] = id
            return (id, true)
        }
        any.store(true, ordering: .releasing)
        return made
    }

    /// What the I/O thread shows.
    var statuses: [GroupBudgetStatus] {
        get { shown.withLock { $0 } }
        set { shown.withLock { $0 = newValue } }
    }

    /// Whether the I/O thread should show them again: at most every 50 ms, not at every turn of
    /// its loop (a turn a few tasks apart in a fast group).
    func isDue(now: ContinuousClock.Instant = .now) -> Bool {
        let (seconds, attoseconds) = (now - Self.origin).components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        guard nanoseconds - shownAt.load(ordering: .relaxed) >= 50_000_000 else { return false }
        shownAt.store(nanoseconds, ordering: .relaxed)
        return true
    }
}
