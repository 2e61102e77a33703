/// Where the checkpoints of running ops go and come from (``FlowOperation/saveCheckpoint(_:)``):
/// in one process and on a coordinator, the engine's keeper of a step (kept in memory and in the
/// run's journal); on a worker, the sender of the task's CHECKPOINTs to its coordinator.
package protocol FlowCheckpointKeeper: AnyObject, Sendable {
    /// The latest checkpoint of element `index` of the step (0 for a serial op), `nil` for none.
    func checkpoint(element index: Int) -> FlowValue?

    /// Keeps `value` as element `index`'s latest checkpoint.
    func save(_ value: FlowValue, element index: Int)
}

/// The checkpoint of the op that runs now, bound by the executor around the op's run.
package final class FlowCheckpointSlot: Sendable {
    private let keeper: any FlowCheckpointKeeper
    private let element: Int
    private let latest: FlowLocked<FlowValue?>

    /// The op's slot, starting with `saved` (what an earlier try saved).
    package init(keeper: any FlowCheckpointKeeper, element: Int, saved: FlowValue?) {
        self.keeper = keeper
        self.element = element
        latest = .make(saved)
    }

    /// The calling task's slot, `nil` where no executor keeps checkpoints.
    @TaskLocal package static var current: FlowCheckpointSlot?

    /// The latest value saved, by this try or an earlier one.
    /// `null` reads as none, as it does on a worker (a TASK's `null` checkpoint is none yet).
    var value: FlowValue? {
        latest.withLock { value in
            if case .some(.null) = value { return nil }
            return value
        }
    }

    /// Keeps `value` and hands it to the keeper.
    func save(_ value: FlowValue) {
        latest.withLock { $0 = value }
        keeper.save(value, element: element)
    }
}

/// The checkpoints of one step's ops in the engine: the latest per element in memory, each saved
/// one also in the run's journal, and those an earlier life of the run journaled read back once.
final class FlowStepCheckpoints: FlowCheckpointKeeper {
    private let journal: (any FlowJournal)?
    private let step: FlowStepID
    private let values: FlowLocked<[Int: FlowValue]>

    init(journal: (any FlowJournal)?, step: FlowStepID) {
        self.journal = journal
        self.step = step
        values = .make(journal?.checkpoints(at: step) ?? [:])
    }

    func checkpoint(element index: Int) -> FlowValue? {
        values.withLock { $0[index] }
    }

    func save(_ value: FlowValue, element index: Int) {
        values.withLock { $0[index] = value }
        journal?.checkpointed(value, at: step, element: index)
    }
}

extension FlowTask {
    /// The checkpoint the op starts from: the task's own (from a TASK) or the keeper's latest.
    package var startingCheckpoint: FlowValue? {
        if let checkpoint { return checkpoint }
        return checkpoints?.checkpoint(element: groupIndex ?? 0)
    }
}

extension FlowOperation {
    /// What an earlier try of this op saved with ``saveCheckpoint(_:)``, `nil` when none did (or
    /// where nothing keeps checkpoints).
    ///
    /// A try that runs again after a failure, on another worker after one was lost, or in a run
    /// continued with `flow-coordinator resume` after the coordinator stopped, reads here what the
    /// last try saved, and continues from it instead of starting over: the stock `UploadFileOp`
    /// keeps a multipart upload's id, part size and finished parts so.
    public var savedCheckpoint: FlowValue? { FlowCheckpointSlot.current?.value }

    /// Saves `value` as where this op has got to, for a later try to continue from
    /// (``savedCheckpoint``): the latest value replaces any earlier one.
    ///
    /// Call it after each piece of work that a later try need not do again (a stored part of a
    /// multipart upload). It returns at once: on a cluster the worker sends the value to the
    /// coordinator, which keeps it for the task (a task sent again after its worker was lost
    /// carries it) and writes it to the run's journal (`resume` hands it back). Keep it small (ids,
    /// numbers, short lists): it travels and is written each time. Where nothing keeps checkpoints
    /// (a worker or coordinator that predates them, a flow run without an executor that keeps
    /// them) it does nothing.
    public func saveCheckpoint(_ value: FlowValue) {
        FlowCheckpointSlot.current?.save(value)
    }
}
