import FlowWire
import Foundation

extension DispatchCore {
    /// The places tasks go to, by routing id: the registered workers (a pool, to its client), the
    /// ops they offer, and the workers lost lately. It owns them: the rest of the machine, and the
    /// roles that embed it, read them here and change them only through the calls below, so what
    /// the offer index and the lost list say never drifts from the workers.
    struct WorkerTable: Sendable, Sequence {
        /// The registered workers, by routing id.
        private(set) var byPeer: [Data: Worker] = [:]
        /// The workers lost (silent or unreachable, not those that left) and the ops they offered,
        /// the latest last and at most ``lostKept``: a task no worker offers any more says that its
        /// workers were lost, not that none ever offered its op.
        private(set) var lost: [(name: String, ops: Set<String>, reason: String)] = []
        /// What ``offers()`` keeps of the workers' ops while they stay the same.
        private var offerIndex = OfferIndex()
        /// Counts the changes of who is registered and of their labels: a status shows the list
        /// of workers again only when it moved.
        private(set) var generation: UInt64 = 0
        /// The worker ``withWorker(_:_:)`` found last, valid while ``generation`` is the same
        /// (an index stays valid while no worker is added or removed).
        private var last: (peer: Data, index: Dictionary<Data, Worker>.Index, generation: UInt64)?
        static var lostKept: Int { 16 }

        // MARK: Reading

        subscript(peer: Data) -> Worker? { byPeer[peer] }
        var count: Int { byPeer.count }
        var isEmpty: Bool { byPeer.isEmpty }
        var peers: Dictionary<Data, Worker>.Keys { byPeer.keys }
        var values: Dictionary<Data, Worker>.Values { byPeer.values }
        func index(forKey peer: Data) -> Dictionary<Data, Worker>.Index? { byPeer.index(forKey: peer) }
        func makeIterator() -> Dictionary<Data, Worker>.Iterator { byPeer.makeIterator() }

        /// The ops every worker that takes tasks offers, and those some such worker offers,
        /// brought up to date when the workers changed.
        mutating func offers() -> OfferIndex {
            if offerIndex.workers.count != byPeer.count || !byPeer.keys.allSatisfy(offerIndex.workers.contains) {
                let taking = byPeer.values.filter(\.takesTasks)
                var index = OfferIndex(workers: Set(byPeer.keys), everyWorker: taking.first?.ops ?? [], someWorker: [])
                for worker in taking {
                    index.everyWorker.formIntersection(worker.ops)
                    index.someWorker.formUnion(worker.ops)
                }
                offerIndex = index
            }
            return offerIndex
        }

        // MARK: Changing

        /// Registers `worker` as `peer`, in place of any worker registered so before.
        mutating func register(_ worker: Worker, as peer: Data) {
            byPeer[peer] = worker
            generation &+= 1
        }

        /// Gives the worker registered as `peer` the labels of its LABELS (§7.10); `false` when
        /// it did not announce feature bit 7, and then nothing changes.
        mutating func setLabels(_ labels: [String: String], of peer: Data) -> Bool {
            let set = withWorker(peer) { worker -> Bool in
                guard worker.features & WireReady.Feature.labels != 0 else { return false }
                worker.labels = labels
                worker.labelsKnown = true
                return true
            } ?? false
            if set { generation &+= 1 }
            return set
        }

        /// Forgets the worker registered as `peer`; a lost one (`lostFor` its reason) is kept in
        /// ``lost`` with its ops.
        mutating func remove(_ peer: Data, lostFor reason: String? = nil) {
            guard let worker = byPeer.removeValue(forKey: peer) else { return }
            generation &+= 1
            guard let reason else { return }
            lost.append((worker.name, worker.ops, reason))
            if lost.count > Self.lostKept { lost.removeFirst() }
        }

        /// Forgets every worker (the machine shuts down); the lost ones stay listed.
        mutating func removeAll() {
            byPeer = [:]
            generation &+= 1
        }

        /// Changes the worker registered as `peer` in place; `nil` when there is none.
        ///
        /// Not `byPeer[peer]?.change()`: a dictionary subscript's `_modify` moves the value out into
        /// an optional and back, and for a value this size it allocates its coroutine frame on the
        /// heap at every access. perf counted 12 of the coordinator's 44 mallocs per task there
        /// (six in ``DispatchCore/dispatch(now:)``, six in ``DispatchCore/release(_:from:freesSlot:)``);
        /// through `Dictionary.Values` the worker is changed where it lies.
        ///
        /// The last worker found is remembered until who is registered changes (``generation``):
        /// a RESULT's answers all come from one worker, and hashing its routing id for each took
        /// 2% of a pool (callgrind).
        @inline(__always)
        mutating func withWorker<Result>(_ peer: Data, _ change: (inout Worker) -> Result) -> Result? {
            let index: Dictionary<Data, Worker>.Index
            if let last, last.generation == generation, last.peer == peer {
                index = last.index
            } else {
                guard let found = byPeer.index(forKey: peer) else { return nil }
                index = found
                last = (peer, found, generation)
            }
            return change(&byPeer.values[index])
        }

        /// Reads or changes the worker at `index` in place (see ``withWorker(_:_:)``): reading a
        /// field through `values[index]` would copy the whole worker, its sets retained and
        /// released.
        @inline(__always)
        mutating func withWorker<Result>(at index: Dictionary<Data, Worker>.Index, _ change: (inout Worker) -> Result) -> Result {
            change(&byPeer.values[index])
        }
    }

    /// The ops every worker that takes tasks offers, and those some such worker offers, kept while
    /// the registered workers stay the same: a front queue asks them for each task it hands over.
    struct OfferIndex: Sendable {
        fileprivate var workers: Set<Data> = []
        fileprivate(set) var everyWorker: Set<String> = []
        fileprivate(set) var someWorker: Set<String> = []
    }
}
