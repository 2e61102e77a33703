import Foundation

/// The pool's fair share (docs/PROTOCOL.md §14.5): the tasks clients submitted that wait for a
/// slot, one queue per run, and which run's task goes next when a slot frees.
///
/// Weighted max-min fairness, work-conserving: the next task comes from the run with the fewest
/// tasks running per unit of share among the runs that have tasks waiting (ties: the run whose
/// first waiting task came earliest). A run that cannot use its share (it has nothing waiting)
/// takes no turn, so its slots go to the others at once. A run's tasks count as running from the
/// moment they leave here until their result is handed back, so tasks on their way to a worker
/// never keep another run from its share.
struct PoolFairShare<Entry: Sendable>: Sendable {
    struct Run: Sendable {
        var share: Int
        var waiting: [(sequence: UInt64, entry: Entry)] = []
        /// Where the next waiting task is in `waiting` (a queue without moving its elements).
        var head = 0
        var running = 0
        /// Whether the run waits for its turn at all (its client has too many runs, §14.5):
        /// its tasks wait here, and it takes no slot, until it is released.
        var held = false
        var count: Int { waiting.count - head }

        /// The sequence of its first waiting task, its running count and its share, when it may
        /// take a turn now and that task `fits`.
        @inline(__always)
        func headIfReady(_ fits: (Entry) -> Bool) -> (sequence: UInt64, running: Int, share: Int)? {
            guard head < waiting.count, !held, fits(waiting[head].entry) else { return nil }
            return (waiting[head].sequence, running, share)
        }

        mutating func popFirst() -> Entry? {
            guard head < waiting.count else { return nil }
            let entry = waiting[head].entry
            head += 1
            if head > 64, head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            return entry
        }
    }

    private(set) var runs: [Data: Run] = [:]
    private var sequence: UInt64 = 0

    /// How many tasks wait, over all runs.
    private(set) var waitingCount = 0

    /// Adds a run, or changes its share; a `held` run takes no slot until ``release(_:)``.
    mutating func open(_ run: Data, share: Int, held: Bool = false) {
        runs[run, default: Run(share: max(1, share))].share = max(1, share)
        runs[run]!.held = held
    }

    /// A held run takes its turns from now on.
    mutating func release(_ run: Data) {
        runs[run]?.held = false
    }

    /// Removes a run and everything of it that waits.
    ///
    /// - Returns: the entries that waited.
    @discardableResult
    mutating func close(_ run: Data) -> [Entry] {
        guard let removed = runs.removeValue(forKey: run) else { return [] }
        waitingCount -= removed.count
        return removed.waiting[removed.head...].map(\.entry)
    }

    /// A task of `run` waits for a slot.
    mutating func append(_ entry: Entry, to run: Data) {
        append(contentsOf: [entry], to: run)
    }

    /// Tasks of `run` wait for a slot, in this order.
    mutating func append(contentsOf entries: [Entry], to run: Data) {
        // In place, by index: one hash of the run's key, and no copy of its queue.
        guard !entries.isEmpty, let index = runs.index(forKey: run) else { return }
        for entry in entries {
            sequence &+= 1
            runs.values[index].waiting.append((sequence, entry))
        }
        waitingCount += entries.count
    }

    /// Takes out the waiting entries of `run` that match, in order.
    mutating func remove(from run: Data, where matches: (Entry) -> Bool) -> [Entry] {
        guard var state = runs[run] else { return [] }
        var removed: [Entry] = []
        var kept: [(sequence: UInt64, entry: Entry)] = []
        for item in state.waiting[state.head...] {
            if matches(item.entry) { removed.append(item.entry) } else { kept.append(item) }
        }
        state.waiting = kept
        state.head = 0
        runs[run] = state
        waitingCount -= removed.count
        return removed
    }

    /// The next task to give a free slot: the head of the run with the least running per share,
    /// among the runs whose head `fits` (a worker with room offers its op).
    mutating func next(where fits: (Entry) -> Bool = { _ in true }) -> (run: Data, entry: Entry)? {
        var best: (index: Dictionary<Data, Run>.Index, load: Double, sequence: UInt64)?
        var index = runs.startIndex
        while index != runs.endIndex {
            defer { index = runs.index(after: index) }
            let candidate = runs.values[index].headIfReady(fits)
            guard let (first, running, share) = candidate else { continue }
            let load = Double(running) / Double(share)
            if let current = best, current.load < load || (current.load == load && current.sequence < first) { continue }
            best = (index, load, first)
        }
        guard let index = best?.index, let entry = runs.values[index].popFirst() else { return nil }
        runs.values[index].running += 1
        waitingCount -= 1
        return (runs.keys[index], entry)
    }

    /// `count` tasks of `run` that left here are over (their results went back, or they were
    /// withdrawn).
    mutating func finished(_ run: Data, count: Int = 1) {
        guard let index = runs.index(forKey: run) else { return }
        runs.values[index].running = max(0, runs.values[index].running - count)
    }
}
