import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let t0 = ContinuousClock.now
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int64(seconds * 1_000_000)) }

/// A worker says why it cancels its tasks (issue 37 item 6): a coordinator gone silent (killed -9)
/// is told apart from one that said DISCONNECT (the run cancelled or over), so an op can leave a
/// multipart upload for `resume` in the first case only.
@Suite struct WorkerCancellationCauseTests {
    private static func runningMachine() -> (WorkerStateMachine, UInt64) {
        let ready = WireReady(workerName: "w1", slotCount: 2, ops: ["EchoOp"], hostname: "h", processID: 1)
        var machine = WorkerStateMachine(configuration: .init(ready: ready, slots: 2, heartbeatInterval: .seconds(1), liveness: 3),
                                         now: at(0))
        _ = machine.connected(now: at(0))
        let actions = machine.received(.task([WireTask(taskID: 1, op: "EchoOp", groupElement: .integer(1), elementIndex: 0)]), now: at(0.1))
        let run = actions.compactMap { if case .start(let run, _) = $0 { run } else { nil } }.first ?? .max
        return (machine, run)
    }

    @Test func aSilentCoordinatorMarksItsRunsLostBeforeCancellingThem() throws {
        var (machine, run) = Self.runningMachine()
        let actions = machine.tick(now: at(3.5), date: Date())
        let lost = actions.firstIndex { if case .coordinatorLost(let runs) = $0 { runs == [run] } else { false } }
        let cancel = actions.firstIndex { if case .cancel(let cancelled) = $0 { cancelled == run } else { false } }
        let (lostAt, cancelAt) = (try #require(lost, "\(actions)"), try #require(cancel, "\(actions)"))
        #expect(lostAt < cancelAt, "the cause is told before the task is cancelled")
    }

    @Test func aDisconnectCancelsWithoutSayingTheCoordinatorWasLost() {
        var (machine, run) = Self.runningMachine()
        let actions = machine.received(.disconnect(reason: "coordinator stopping"), now: at(0.2))
        #expect(actions.contains { if case .cancel(let cancelled) = $0 { cancelled == run } else { false } })
        #expect(!actions.contains { if case .coordinatorLost = $0 { true } else { false } })
    }

    @Test func theCauseIsSeenFromTheOpsTask() async {
        let cause = FlowCancellationCause()
        let seen = await FlowProgress.$cancellation.withValue(cause) {
            await Task { FlowProgress.cancellation?.isCoordinatorLost }.value
        }
        #expect(seen == false)
        cause.coordinatorLost()
        #expect(cause.isCoordinatorLost)
    }
}
