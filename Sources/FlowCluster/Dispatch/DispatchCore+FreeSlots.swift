import FlowWire
import Foundation

extension DispatchCore {
    /// The machine's free slots, for a queue in front of it that hands it only tasks that can
    /// start at once (a pool's fair share, §14.5). Read from the workers as ``dispatch(now:)``
    /// reads them (``Worker/takesTasks``, ``Worker/free``, ``Worker/offers(_:)``): one placement
    /// table, so the queue in front and dispatch never disagree about where a task can go.
    struct FreeSlots {
        /// Free slots of each worker that takes tasks and has one, as tasks are taken for them.
        private var free: [Int]
        /// Those workers, at the same positions as their free slots: read in place by position,
        /// never copied out (a tuple of a worker and its count, copied for each task asked about,
        /// retained every field of the worker: perf, 4% of a pool's time).
        private let workers: [Worker]
        private let offers: OfferIndex
        /// The workers that take tasks, busy or not: whether any of them could ever take a placed
        /// task (labels are not in ``offers``).
        private let taking: [Worker]
        /// How many more tasks the machine takes: its free slots less the tasks already waiting in
        /// its own queue.
        private(set) var room: Int
        /// The last op asked about, and whether some and every worker offer it: a queue's tasks
        /// mostly share their op, whose name is then compared, not hashed into two sets again
        /// for each task (perf: about 3% of a pool's time).
        private var lastOp: (op: String, some: Bool, every: Bool)?

        fileprivate init(_ machine: DispatchCore, offers: OfferIndex) {
            self.offers = offers
            workers = machine.workers.values.filter { $0.takesTasks && $0.free > 0 }
            free = workers.map(\.free)
            taking = machine.workers.values.filter(\.takesTasks)
            room = free.reduce(0, +) - machine.queue.count
        }

        /// Whether a task of `op` should go to the machine now: a worker that takes tasks and
        /// offers it has a slot free, or no such worker offers it at all (the machine then fails it
        /// after the worker time-out, §8.6). A run whose next task only busy workers offer waits,
        /// and does not take the room of a run whose task a free worker can start.
        /// A task placed by labels (`placement`) counts only the workers that have them.
        mutating func admits(_ op: String, placement: [WireLabel] = []) -> Bool {
            if placement.isEmpty { return !offered(op).some || place(op) != nil }
            return !taking.contains { $0.offers(op, placement: placement) } || place(op, placement: placement) != nil
        }

        /// A task of `op` was handed to the machine: the slot it will take is no longer free.
        mutating func take(_ op: String, placement: [WireLabel] = []) {
            room -= 1
            if let index = place(op, placement: placement) { free[index] -= 1 }
        }

        /// Whether some worker that takes tasks, and every one, offers `op`.
        @inline(__always)
        private mutating func offered(_ op: String) -> (some: Bool, every: Bool) {
            if let lastOp, lastOp.op == op { return (lastOp.some, lastOp.every) }
            let answer = (some: offers.someWorker.contains(op), every: offers.everyWorker.contains(op))
            lastOp = (op, answer.some, answer.every)
            return answer
        }

        private mutating func place(_ op: String, placement: [WireLabel] = []) -> Int? {
            if !placement.isEmpty { return free.indices.first { free[$0] > 0 && workers[$0].offers(op, placement: placement) } }
            let everyWorker = offered(op).every
            return free.indices.first { free[$0] > 0 && (everyWorker || workers[$0].offers(op)) }
        }
    }

    /// The free slots now (``FreeSlots``), the offer index brought up to date first.
    mutating func freeSlots() -> FreeSlots {
        FreeSlots(self, offers: workers.offers())
    }
}
