import Flow
import FlowWire
import FlowTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// CANCEL (feature bit 3) in a real `flow-worker`, driven by a hand-written coordinator
/// (``RawCoordinator``): the running ShellOp's program is killed, the task is answered `cancelled`
/// at once, and the worker goes on taking tasks.
@Suite struct RealWorkerCancelTests {
    /// What the test's thread saw, handed back so the expectations run in the test's own task.
    struct Observed: Sendable {
        var ready: WireReady?
        /// The programs of the cancelled task while it ran: its shell and its `sleep`.
        var programs: [Int32] = []
        /// The answer to the cancelled task, and how long after the CANCEL it came.
        var answer: (result: WireResult, after: Duration)?
        /// Those of ``programs`` still alive 5 s after the answer.
        var survivors: [Int32] = []
        /// The answer to a task sent after the CANCEL.
        var next: WireResult?
        var exit: ChildProcess.Termination?
        var stderr = ""
    }

    @Test func aCancelledShellOpIsKilledAndAnsweredCancelledAndTheWorkerGoesOn() async throws {
        let scope = try ClusterScope()
        defer { scope.finish() }
        let marker = scope.path("cancel-marker")
        // A sleep no other process runs, found again by its argument.
        let seconds = "30.\(UInt32.random(in: 10_000_000...99_999_999))"
        let observed = try await onOwnThread { () throws -> Observed in
            let coordinator = try RawCoordinator()
            defer { coordinator.close() }
            let worker = try scope.worker(connect: coordinator.endpoint, name: "cancelling", concurrency: 1)
            var observed = Observed()
            guard case .ready(let ready)? = try coordinator.next(timeout: .seconds(20)) else {
                observed.stderr = worker.stderr
                return observed
            }
            observed.ready = ready
            try coordinator.send(.task([Self.shellTask(5, "sleep \(seconds); touch '\(marker)'")]))
            _ = try coordinator.collect(timeout: .seconds(10)) { _ in ProcessTable.mentioning(seconds).count >= 2 }
            observed.programs = ProcessTable.mentioning(seconds)
            try coordinator.send(.cancel([5]))
            let cancelled = ContinuousClock.now
            let answered = try coordinator.collect(timeout: .seconds(10)) { received in Self.result(5, in: received) != nil }
            if let (result, at) = Self.result(5, in: answered.received) { observed.answer = (result, at - cancelled) }
            _ = try coordinator.collect(timeout: .seconds(5)) { _ in !observed.programs.contains(where: ProcessTable.isAlive) }
            observed.survivors = observed.programs.filter(ProcessTable.isAlive)
            for pid in observed.survivors { kill(pid, SIGKILL) }
            try coordinator.send(.task([Self.shellTask(6, "echo still-here")]))
            let next = try coordinator.collect(timeout: .seconds(10)) { received in Self.result(6, in: received) != nil }
            observed.next = Self.result(6, in: next.received)?.result
            worker.send(SIGTERM)
            observed.exit = WorkerTimeLimitTests.waitForExit(worker, coordinator: coordinator)
            observed.stderr = worker.stderr
            return observed
        }
        let ready = try #require(observed.ready, "the worker never said READY\n\(observed.stderr)")
        #expect(ready.features & WireReady.Feature.cancel != 0, "the worker announces CANCEL (bit 3)")
        #expect(observed.programs.count >= 2, "the shell and its sleep ran before the CANCEL: \(observed.programs)\n\(observed.stderr)")
        let answer = try #require(observed.answer, "no RESULT for the cancelled task\n\(observed.stderr)")
        #expect(answer.result.finishState == .cancelled, "\(answer.result.finishState)")
        #expect(answer.after < .seconds(5), "the program sleeps 30 s; the CANCEL must stop it (answered after \(answer.after))")
        #expect(observed.survivors.isEmpty, "the cancelled program's processes are gone: \(observed.survivors)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the script never got past its sleep")
        #expect(observed.next?.finishState == .successfully, "the worker takes tasks after a CANCEL\n\(observed.stderr)")
        #expect(observed.exit == .exit(0), "\(observed.stderr)")
    }

    /// A serial ShellOp task running `script` with `/bin/sh -c`.
    static func shellTask(_ id: UInt64, _ script: String) -> WireTask {
        WireTask(taskID: id, op: "ShellOp", parameters: ["command": .string(script), "shell": true])
    }

    /// The first result for `taskID` among `received`, with when it arrived.
    static func result(_ taskID: UInt64, in received: [(message: WireMessage, at: ContinuousClock.Instant)])
        -> (result: WireResult, at: ContinuousClock.Instant)? {
        for entry in received {
            guard case .result(let results) = entry.message else { continue }
            if let result = results.first(where: { $0.taskID == taskID }) { return (result, entry.at) }
        }
        return nil
    }
}
