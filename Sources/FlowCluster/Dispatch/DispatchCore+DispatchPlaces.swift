import Flow
import FlowWire
import Foundation

extension DispatchCore {
    /// One turn of ``dispatch(now:)``: the workers in the order this turn tries them, what it read
    /// of each, and the TASK being filled for each.
    ///
    /// The workers are looked up and read once a turn: a task looks at every worker, and reading a
    /// field through `workers.values[i]` copies the whole worker (its sets and names retained and
    /// released), twelve copies a task (callgrind: most of dispatch's cost). What a task taken
    /// changes, its count in flight, is kept here too.
    struct DispatchTurn {
        /// The workers' peers, rotated a step each turn so that ties go round.
        let peers: [Data]
        var places: [Place]
        /// The tasks for each place, in the order they were placed.
        var batches: [[WireTask]]
        /// Positions of the places that got a task, in the order of their first one.
        var order: [Int] = []
        /// Which places offer `offersOp`: consecutive tasks of one op ask the workers once.
        var offersOp = ""
        var offersPlacement: [WireLabel] = []
        var offeredBy: [Bool] = []
        /// The budgets that said wait this turn: nothing starts or ends in a turn that would let
        /// them start, so the rest of their tasks wait without a look (a group held to 500 a
        /// second otherwise had each turn look for a place for every one of its waiting tasks).
        var heldBudgets: Set<Int> = []

        /// How many more tasks the workers take this turn, slots and queues together: once it is
        /// 0 the rest of the queue waits without a look. A group of 100,000 on 2 workers of 4
        /// slots otherwise had each turn look at all of its up to `maxConcurrent` waiting tasks to
        /// place a few (126 µs of coordinator CPU a task).
        var capacity: Int {
            places.reduce(0) { $0 + ($1.takesTasks ? max(0, $1.slots + $1.queueDepth - $1.inFlight) : 0) }
        }
    }

    /// What ``dispatch(now:)`` reads of a worker, once a turn.
    struct Place {
        let index: Dictionary<Data, Worker>.Index
        let name: String
        let slots: Int
        var inFlight: Int
        let queueDepth: Int
        let takesTasks: Bool
        let features: UInt32
        let freed: UInt64
        let isPool: Bool
        /// A pool that takes placed tasks (WELCOME bit 3): their placement goes in its SUBMIT.
        let takesPlacement: Bool

        init(index: Dictionary<Data, Worker>.Index, worker: Worker) {
            self.index = index
            name = worker.name
            slots = worker.slots
            inFlight = worker.inFlight.count
            queueDepth = worker.queueDepth
            takesTasks = worker.takesTasks
            features = worker.features
            freed = worker.freed
            isPool = worker.isPool
            takesPlacement = worker.takesPlacement
        }

        /// It has a slot free: a task sent now starts at once.
        var hasFreeSlot: Bool { inFlight < slots }
        /// Negative on a free slot, else how many wait in the worker's queue before the next task.
        var queuedAhead: Int { inFlight - slots }
        /// The free slots, or with none the free places in its queue.
        var room: Int { hasFreeSlot ? slots - inFlight : queueDepth - max(0, inFlight - slots) }
    }

    /// How good a place is for a task, compared field by field: a worker that has not failed the
    /// task before, then a free slot over a queue place, then the most room.
    typealias PlaceScore = (fresh: Int, free: Int, room: Int)

    /// The places for this turn: every worker, rotated one step further than last turn.
    mutating func dispatchPlaces() -> DispatchTurn {
        var peers = workers.peers.sorted { $0.lexicographicallyPrecedes($1) }
        let shift = rotation % peers.count
        peers = Array(peers[shift...] + peers[..<shift])
        rotation &+= 1
        let places = peers.map { Place(index: workers.index(forKey: $0)!, worker: workers[$0]!) }
        return DispatchTurn(peers: peers, places: places, batches: [[WireTask]](repeating: [], count: peers.count))
    }

    /// Makes `turn.offeredBy` say which places offer `op` placed on `placement`.
    @inline(__always)
    mutating func askOffers(_ op: String, placement: [WireLabel], in turn: inout DispatchTurn) {
        guard op != turn.offersOp || placement != turn.offersPlacement || turn.offeredBy.isEmpty else { return }
        turn.offersOp = op
        turn.offersPlacement = placement
        turn.offeredBy = turn.places.map { withWorker(at: $0.index) { $0.offers(op, placement: placement) } }
    }

    /// The position of the place a task goes to, `nil` when none may take it now (§8.2): of the
    /// workers that offer its op, the best ``PlaceScore``, rotation breaking ties. With no free
    /// slot anywhere, a task of a group may wait in the queue of a worker that keeps one.
    @inline(__always)
    mutating func bestPlace(group: TaskGroupLimit?, avoid: Set<String>, in turn: DispatchTurn) -> Int? {
        var best: Int?
        var bestScore: PlaceScore = (0, 0, 0)
        for position in turn.places.indices where turn.offeredBy[position] {
            let place = turn.places[position]
            guard mayTake(group: group, at: place) else { continue }
            let avoided = !avoid.isEmpty && avoid.contains(place.name)
            let score: PlaceScore = (fresh: avoided ? 0 : 1, free: place.hasFreeSlot ? 1 : 0, room: place.room)
            if best == nil || score > bestScore {
                best = position
                bestScore = score
            }
        }
        return best
    }

    /// Whether a task of `group` may go to `place`: it takes tasks and has a free slot, or, for a
    /// group's task, a free place in its queue; and the group's bound stays within its limit (a
    /// free slot would raise it, and so would a queue place on a worker with fewer of the group's
    /// tasks than slots).
    @inline(__always)
    private mutating func mayTake(group: TaskGroupLimit?, at place: Place) -> Bool {
        guard place.takesTasks else { return false }
        let free = place.hasFreeSlot
        if !free, group == nil || max(0, place.queuedAhead) >= place.queueDepth { return false }
        if let group, groupBound[group.id, default: 0] >= group.limit,
           free || withWorker(at: place.index, { $0.groupTasks[group.id, default: 0] }) < place.slots {
            return false
        }
        return true
    }
}
