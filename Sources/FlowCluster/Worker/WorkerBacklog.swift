import FlowWire

/// The tasks a worker holds until a slot frees (the protocol's queue, §8.2), first in, first out.
///
/// Taking the first task is O(1): an array's `removeFirst` moved every task behind it, once per
/// finished task, which with a few hundred queued was a sixth of a worker's instructions
/// (callgrind, 20,000 no-op tasks). The taken places are reclaimed once they are half the array.
struct WorkerBacklog: Sequence, ExpressibleByArrayLiteral {
    private var tasks: [WireTask] = []
    private var head = 0

    init(arrayLiteral elements: WireTask...) {
        tasks = elements
    }

    /// Whether no task waits.
    var isEmpty: Bool { head == tasks.count }

    /// How many tasks wait.
    var count: Int { tasks.count - head }

    /// Queues a task last.
    mutating func append(_ task: WireTask) {
        tasks.append(task)
    }

    /// Takes the first task, `nil` when none waits.
    mutating func popFirst() -> WireTask? {
        guard head < tasks.count else { return nil }
        let task = tasks[head]
        head += 1
        if head == tasks.count {
            tasks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32, head * 2 >= tasks.count {
            tasks.removeFirst(head)
            head = 0
        }
        return task
    }

    /// Takes out the waiting tasks that match, keeping the others in their order.
    ///
    /// - Returns: the tasks taken, first to last.
    mutating func removeAll(where matches: (WireTask) -> Bool) -> [WireTask] {
        guard !isEmpty else { return [] }
        var taken: [WireTask] = []
        var kept: [WireTask] = []
        for task in tasks[head...] {
            if matches(task) { taken.append(task) } else { kept.append(task) }
        }
        if !taken.isEmpty {
            tasks = kept
            head = 0
        }
        return taken
    }

    /// The waiting tasks, first to last.
    func makeIterator() -> ArraySlice<WireTask>.Iterator {
        tasks[head...].makeIterator()
    }
}
