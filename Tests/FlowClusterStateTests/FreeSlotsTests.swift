import FlowWire
import Foundation
import Testing
@testable import FlowCluster

/// The one placement table: what a pool's fair-share queue may hand the machine is read from the
/// machine's own workers (``DispatchCore/freeSlots()``).
@Suite struct FreeSlotsTests {
    typealias Machine = DispatchCore<UInt64>
    let now = ContinuousClock.now

    func ready(_ name: String, slots: UInt32, ops: [String]) -> WireMessage {
        .ready(WireReady(workerName: name, features: 0, slotCount: slots, ops: ops, hostname: "h", processID: 1,
                         heartbeatIntervalMilliseconds: 1000))
    }

    func machine() -> Machine {
        var machine = Machine(configuration: .init())
        _ = machine.receive(ready("a", slots: 1, ops: ["Shared", "OnlyA"]), from: Data("a".utf8), now: now)
        _ = machine.receive(ready("b", slots: 2, ops: ["Shared", "OnlyB"]), from: Data("b".utf8), now: now)
        return machine
    }

    @Test func aTaskIsAdmittedOnlyWhileAWorkerThatOffersItsOpHasASlotFree() {
        var machine = machine()
        var free = machine.freeSlots()
        #expect(free.room == 3)
        // `admits` remembers the last op it was asked about: called apart from #expect, which
        // reads its arguments as constants.
        var admitted = free.admits("OnlyA")
        #expect(admitted)
        free.take("OnlyA")
        // a's one slot is taken: another OnlyA task waits, while b's ops still go.
        admitted = free.admits("OnlyA")
        #expect(!admitted)
        admitted = free.admits("OnlyB") && free.admits("Shared")
        #expect(admitted)
        free.take("Shared")
        free.take("Shared")
        #expect(free.room == 0)
        admitted = free.admits("OnlyB")
        #expect(!admitted)
    }

    @Test func anOpNoWorkerOffersGoesOnSoTheMachineCanFailItInTime() {
        var machine = machine()
        var free = machine.freeSlots()
        let admitted = free.admits("Nobody")
        #expect(admitted)
    }

    @Test func tasksWaitingInTheMachineAndStoppingWorkersLeaveNoRoom() {
        var machine = machine()
        machine.submit(WireTask(taskID: 1, op: "OnlyB", groupElement: .integer(1), elementIndex: 1), waiter: 1)
        #expect(machine.freeSlots().room == 2)
        // b answers a task `cancelled` (§8.8): it is stopping, and its slots are no room.
        _ = machine.dispatch(now: now)
        var actions: [Machine.Action] = []
        let cancelled = WireResult(taskID: 1, attempt: 1, finishState: .cancelled, startedAt: Date(), finishedAt: Date(), events: [],
                                   elementIndex: 1)
        machine.accept(cancelled, from: Data("b".utf8), now: now, into: &actions)
        var free = machine.freeSlots()
        #expect(free.room == 0, "a's 1 free slot, less the task given back and waiting in the machine")
        // A stopping worker's slots are never free, though it counts as offering its ops until it
        // leaves: an OnlyB task waits at the front queue for b's successor or b's DISCONNECT.
        let admitsB = free.admits("OnlyB"), admitsA = free.admits("OnlyA")
        #expect(!admitsB)
        #expect(admitsA)
    }
}
