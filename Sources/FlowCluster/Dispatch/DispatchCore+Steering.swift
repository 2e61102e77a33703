import FlowWire
import Foundation

extension DispatchCore {
    /// Pauses or continues the run: while paused nothing is dispatched, and tasks that wait in
    /// workers' queues (not started) are recalled, so that only running ones finish.
    ///
    /// Reports ``ClusterEvent/paused`` or ``ClusterEvent/continued`` when that changes the run
    /// (the timeline draws it).
    mutating func setPaused(_ paused: Bool) -> [Action] {
        guard paused != self.paused else { return [] }
        self.paused = paused
        guard paused else { return [.report(.continued)] }
        return recall(tasks.compactMap { id, record in record.worker != nil && record.waiter != nil ? id : nil }) + [.report(.paused)]
    }

    /// WITHDRAWs for those of the tasks that were submitted to a pool (§14): the pool drops the
    /// ones it still holds and stops the ones that run.
    func withdraw(_ taskIDs: [UInt64]) -> [Action] {
        messages(for: taskIDs, onWorkersWhere: \.isPool, WireMessage.withdraw)
    }
}
