import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

private let poolWorker = Data("pool-worker".utf8)
private let secondWorker = Data("pool-worker-2".utf8)
private let clientA = Data("client-a".utf8)
private let clientB = Data("client-b".utf8)
private let stranger = Data("stranger".utf8)
private let poolT0 = ContinuousClock.now

/// An instant `seconds` after the test clock's origin.
private func poolAt(_ seconds: Double) -> ContinuousClock.Instant { poolT0 + .microseconds(Int64(seconds * 1_000_000)) }

private func poolReady(_ name: String = "w1", slots: UInt32 = 2,
                       features: UInt32 = WireReady.Feature.cancel | WireReady.Feature.operationAttempt) -> WireMessage {
    .ready(WireReady(workerName: name, features: features, slotCount: slots, ops: ["EchoOp"], hostname: "host-\(name)",
                     processID: 1, heartbeatIntervalMilliseconds: 1000))
}

private func hello(_ name: String, run: String, share: UInt32 = 1, heartbeatMilliseconds: UInt32 = 1000) -> WireMessage {
    .hello(WireHello(clientName: name, runID: run, flowName: "flow-\(run)", origin: "tester@host", share: share,
                     heartbeatIntervalMilliseconds: heartbeatMilliseconds))
}

/// A serial task whose parameters say whose it is (`who` = `tag-id`).
private func poolTask(_ id: UInt64, tag: String, attempt: UInt32 = 1) -> WireTask {
    WireTask(taskID: id, attempt: attempt, op: "EchoOp", parameters: ["who": .string("\(tag)-\(id)")])
}

private func submit(_ ids: ClosedRange<UInt64>, tag: String) -> WireMessage {
    .submit(ids.map { poolTask($0, tag: tag) })
}

private func workerResult(_ id: UInt64, attempt: UInt32 = 1, state: FlowFinishState = .successfully) -> WireResult {
    WireResult(taskID: id, attempt: attempt, finishState: state, startedAt: Date(), finishedAt: Date())
}

/// Messages sent to `peer`, in order.
private func messages(to peer: Data, in actions: [PoolStateMachine.Action]) -> [WireMessage] {
    actions.compactMap { if case .send(let to, let message) = $0, to == peer { message } else { nil } }
}

/// The TASK messages sent to `peer`.
private func taskBatches(to peer: Data, in actions: [PoolStateMachine.Action]) -> [[WireTask]] {
    messages(to: peer, in: actions).compactMap { if case .task(let tasks) = $0 { tasks } else { nil } }
}

/// The ids of every CANCEL sent to `peer`.
private func cancelled(to peer: Data, in actions: [PoolStateMachine.Action]) -> [UInt64] {
    messages(to: peer, in: actions).flatMap { message -> [UInt64] in if case .cancel(let ids) = message { ids } else { [] } }
}

/// The results of every DONE sent to `peer`.
private func done(to peer: Data, in actions: [PoolStateMachine.Action]) -> [WirePoolResult] {
    messages(to: peer, in: actions).flatMap { message -> [WirePoolResult] in if case .done(let results) = message { results } else { [] } }
}

private func poolReports(_ actions: [PoolStateMachine.Action]) -> [ClusterEvent] {
    actions.compactMap { if case .report(let event) = $0 { event } else { nil } }
}

/// The `who` parameter of a task (which client's task, under which of its ids).
private func who(_ task: WireTask) -> String? {
    if case .string(let text) = task.parameters["who"] { text } else { nil }
}

/// The next entry of a fair share (a mutating call outside `#require`).
private func take(_ fair: inout PoolFairShare<Int>) -> (run: Data, entry: Int)? { fair.next() }

/// The pool's state machine (docs/PROTOCOL.md §14) and its weighted fair share, without sockets.
@Suite struct PoolStateMachineTests {
    private let runA = Data("run-a".utf8)
    private let runB = Data("run-b".utf8)

    func pool(credit: UInt32 = 16) -> PoolStateMachine {
        var configuration = PoolStateMachine.Configuration()
        configuration.name = "test-pool"
        configuration.clientCredit = credit
        return PoolStateMachine(configuration: configuration)
    }

    /// A pool with worker w1 (2 slots) and clients A and B, A having submitted 1…4 and B `bIDs`
    /// (1…4 too unless told), dispatched once at 0.1 s: each client has one task at the worker.
    func poolWithTwoRuns(bIDs: ClosedRange<UInt64> = 1...4) -> (PoolStateMachine, dispatched: [WireTask]) {
        var pool = pool()
        _ = pool.receive(poolReady(), from: poolWorker, now: poolAt(0))
        _ = pool.receive(hello("A", run: "run-A"), from: clientA, now: poolAt(0))
        _ = pool.receive(hello("B", run: "run-B"), from: clientB, now: poolAt(0))
        _ = pool.receive(submit(1...4, tag: "A"), from: clientA, now: poolAt(0.05))
        _ = pool.receive(submit(bIDs, tag: "B"), from: clientB, now: poolAt(0.05))
        let actions = pool.dispatch(now: poolAt(0.1))
        return (pool, taskBatches(to: poolWorker, in: actions).flatMap { $0 })
    }

    // MARK: Fair share

    @Test func sharesOneAndThreeKeepOneAndThreeRunningWhileBothWait() throws {
        var fair = PoolFairShare<Int>()
        fair.open(runA, share: 1)
        fair.open(runB, share: 3)
        for index in 0..<100 {
            fair.append(index, to: runA)
            fair.append(index, to: runB)
        }
        var popped: [Data] = []
        for _ in 0..<4 { popped.append(try #require(take(&fair)).run) }
        #expect(fair.runs[runA]?.running == 1)
        #expect(fair.runs[runB]?.running == 3)
        var turns = 0
        while fair.runs[runA]!.count > 0, fair.runs[runB]!.count > 0 {
            fair.finished(popped.removeFirst())
            popped.append(try #require(take(&fair)).run)
            turns += 1
            #expect(fair.runs[runA]?.running == 1, "turn \(turns)")
            #expect(fair.runs[runB]?.running == 3, "turn \(turns)")
        }
        // B, with three times the slots, ran out first, after about four times its share of turns.
        #expect(fair.runs[runB]?.count == 0)
        #expect(turns > 90)
        // Work-conserving: B has nothing waiting, so every slot that frees goes to A.
        for _ in 0..<4 {
            fair.finished(popped.removeFirst())
            popped.append(try #require(take(&fair)).run)
        }
        #expect(fair.runs[runA]?.running == 4)
        #expect(fair.runs[runB]?.running == 0)
    }

    @Test func aRunWithNothingWaitingTakesNoTurn() throws {
        var fair = PoolFairShare<Int>()
        fair.open(runA, share: 1)
        fair.open(runB, share: 3)
        for index in 0..<10 { fair.append(index, to: runA) }
        for _ in 0..<4 { #expect(try #require(take(&fair)).run == runA) }
        #expect(fair.runs[runA]?.running == 4)
        #expect(fair.runs[runB]?.running == 0)
        // B's first task goes next: it runs least per share.
        fair.append(100, to: runB)
        let next = try #require(take(&fair))
        #expect(next.run == runB && next.entry == 100)
    }

    @Test func closeDropsARunsWaitingEntries() throws {
        var fair = PoolFairShare<Int>()
        fair.open(runA, share: 1)
        fair.open(runB, share: 1)
        for index in 0..<5 {
            fair.append(index, to: runA)
            fair.append(100 + index, to: runB)
        }
        #expect(try #require(take(&fair)).run == runA)
        #expect(fair.waitingCount == 9)
        #expect(fair.close(runB) == [100, 101, 102, 103, 104])
        #expect(fair.runs[runB] == nil)
        #expect(fair.waitingCount == 4)
        var rest: [Int] = []
        while let (run, entry) = fair.next() {
            #expect(run == runA)
            rest.append(entry)
        }
        #expect(rest == [1, 2, 3, 4])
    }

    // MARK: Clients, workers and results

    @Test func twoClientsWithTheSameIdsShareAWorkerAndEachHearsOfItsOwn() throws {
        var pool = pool(credit: 16)
        _ = pool.receive(poolReady(), from: poolWorker, now: poolAt(0))
        for (peer, name) in [(clientA, "A"), (clientB, "B")] {
            let actions = pool.receive(hello(name, run: "run-\(name)"), from: peer, now: poolAt(0))
            let welcome = messages(to: peer, in: actions).compactMap { if case .welcome(let welcome) = $0 { welcome } else { nil } }
            #expect(welcome.count == 1)
            #expect(welcome.first?.slotCount == 16)
            #expect(welcome.first?.poolName == "test-pool")
        }
        #expect(pool.receive(submit(1...4, tag: "A"), from: clientA, now: poolAt(0.05)).isEmpty)
        #expect(pool.receive(submit(1...4, tag: "B"), from: clientB, now: poolAt(0.05)).isEmpty)

        let actions = pool.dispatch(now: poolAt(0.1))
        let batches = taskBatches(to: poolWorker, in: actions)
        #expect(batches.count == 1)
        let sent = try #require(batches.first)
        #expect(sent.count == 2)
        #expect(Set(sent.compactMap(who)) == ["A-1", "B-1"])
        // The ids the worker sees are the pool's own: two different ids, though both clients said 1.
        #expect(Set(sent.map(\.taskID)).count == 2)
        #expect(sent.allSatisfy { $0.attempt == 1 })

        let bTask = try #require(sent.first { who($0) == "B-1" })
        let afterResult = pool.receive(.result([workerResult(bTask.taskID)]), from: poolWorker, now: poolAt(0.2))
        let flushed = afterResult + pool.dispatch(now: poolAt(0.2))
        #expect(done(to: clientA, in: flushed).isEmpty)
        let toB = done(to: clientB, in: flushed)
        #expect(toB.count == 1)
        #expect(toB.first?.result.taskID == 1)
        #expect(toB.first?.result.attempt == 1)
        #expect(toB.first?.result.finishState == .successfully)
        #expect(toB.first?.worker == "w1")
        // B's slot went to B's next task (it runs least per share now).
        #expect(taskBatches(to: poolWorker, in: flushed).flatMap { $0 }.compactMap(who) == ["B-2"])
    }

    @Test func aWithdrawOfIdsAClientNeverSubmittedTouchesNoOtherClientsTask() throws {
        let (start, dispatched) = poolWithTwoRuns(bIDs: 11...14)
        var pool = start
        let aTask = try #require(dispatched.first { who($0) == "A-1" })
        // B never submitted 1…9: 1…4 are A's ids, and the pool's ids of A's tasks are among them.
        let aPoolIDs = pool.clients[clientA]?.tasks.values.sorted() ?? []
        #expect(aPoolIDs.count == 4)
        let actions = pool.receive(.withdraw(Array(1...9) + aPoolIDs), from: clientB, now: poolAt(0.2))
        #expect(actions.isEmpty)
        #expect(pool.core.tasks[aTask.taskID]?.waiter != nil)
        let later = pool.dispatch(now: poolAt(0.3))
        #expect(messages(to: clientA, in: later).isEmpty)
        #expect(cancelled(to: poolWorker, in: later).isEmpty)
        #expect(pool.status.runs.first { $0.id == "run-A" }?.inFlight == 1)
        #expect(pool.status.runs.first { $0.id == "run-A" }?.queued == 3)
        #expect(pool.status.runs.first { $0.id == "run-B" }?.queued == 3)
        // A's task's result still reaches A.
        let answered = pool.receive(.result([workerResult(aTask.taskID)]), from: poolWorker, now: poolAt(0.4))
            + pool.dispatch(now: poolAt(0.4))
        #expect(done(to: clientA, in: answered).map(\.result.taskID) == [1])
        #expect(done(to: clientB, in: answered).isEmpty)
    }

    @Test func aWithdrawOfAClientsOwnIdsTakesOnlyItsTasksThoughAnotherUsesTheSameIds() throws {
        let (start, dispatched) = poolWithTwoRuns()
        var pool = start
        let aTask = try #require(dispatched.first { who($0) == "A-1" })
        let bTask = try #require(dispatched.first { who($0) == "B-1" })
        // B withdraws 1…4, its own ids, which A uses as well: only B's tasks go.
        let actions = pool.receive(.withdraw([1, 2, 3, 4]), from: clientB, now: poolAt(0.2)) + pool.dispatch(now: poolAt(0.2))
        #expect(messages(to: clientA, in: actions).isEmpty)
        #expect(cancelled(to: poolWorker, in: actions) == [bTask.taskID])
        #expect(messages(to: clientB, in: actions).contains(.returned([2, 3, 4].map { WireTaskReference(taskID: $0, attempt: 1) })))
        #expect(done(to: clientB, in: actions).map(\.result.taskID) == [1])
        #expect(pool.core.tasks[aTask.taskID]?.waiter != nil)
        #expect(pool.status.runs.first { $0.id == "run-A" }?.queued == 3)
    }

    @Test func withdrawingAQueuedTaskReturnsItAndARunningOneIsCancelled() throws {
        var pool = pool()
        _ = pool.receive(poolReady(), from: poolWorker, now: poolAt(0))
        _ = pool.receive(hello("A", run: "run-A"), from: clientA, now: poolAt(0))
        _ = pool.receive(submit(1...4, tag: "A"), from: clientA, now: poolAt(0))
        let sent = taskBatches(to: poolWorker, in: pool.dispatch(now: poolAt(0.1))).flatMap { $0 }
        #expect(sent.compactMap(who) == ["A-1", "A-2"])

        let queued = pool.receive(.withdraw([3]), from: clientA, now: poolAt(0.2))
        #expect(messages(to: clientA, in: queued) == [.returned([WireTaskReference(taskID: 3, attempt: 1)])])
        #expect(cancelled(to: poolWorker, in: queued).isEmpty)

        let running = try #require(sent.first { who($0) == "A-1" })
        let stop = pool.receive(.withdraw([1]), from: clientA, now: poolAt(0.3))
        #expect(cancelled(to: poolWorker, in: stop) == [running.taskID])
        let answer = done(to: clientA, in: stop + pool.dispatch(now: poolAt(0.3)))
        #expect(answer.count == 1)
        #expect(answer.first?.result.taskID == 1)
        #expect(answer.first?.result.finishState == .cancelled)
        #expect(answer.first?.worker == "w1", "the worker it was stopped on, as §14.4 and the §12 example name it, not the pool")
    }

    @Test func aSilentClientIsRemovedItsRunningTasksCancelledAndItsWaitingOnesDropped() throws {
        var pool = pool()
        _ = pool.receive(poolReady(), from: poolWorker, now: poolAt(0))
        _ = pool.receive(hello("A", run: "run-A", heartbeatMilliseconds: 100), from: clientA, now: poolAt(0))
        _ = pool.receive(submit(1...4, tag: "A"), from: clientA, now: poolAt(0))
        let sent = taskBatches(to: poolWorker, in: pool.dispatch(now: poolAt(0))).flatMap { $0 }
        #expect(sent.count == 2)

        // Within liveness × interval (3 × 100 ms) it stays.
        let early = pool.tick(now: poolAt(0.25))
        #expect(cancelled(to: poolWorker, in: early).isEmpty)
        #expect(pool.clients[clientA] != nil)

        let actions = pool.tick(now: poolAt(0.4))
        #expect(pool.clients[clientA] == nil)
        #expect(Set(cancelled(to: poolWorker, in: actions)) == Set(sent.map(\.taskID)))
        #expect(messages(to: clientA, in: actions).isEmpty)
        let left = poolReports(actions).compactMap { event -> (String, Int, Int)? in
            if case .clientLeft(let name, _, _, let dropped, let stopped) = event { (name, dropped, stopped) } else { nil }
        }
        #expect(left.count == 1)
        #expect(left.first?.0 == "A")
        #expect(left.first?.1 == 2)
        #expect(left.first?.2 == 2)

        // A new worker with free slots gets none of A's waiting tasks.
        _ = pool.receive(poolReady("w2", slots: 4), from: secondWorker, now: poolAt(0.5))
        let later = pool.dispatch(now: poolAt(0.5))
        #expect(taskBatches(to: secondWorker, in: later).isEmpty)
        #expect(taskBatches(to: poolWorker, in: later).isEmpty)
        #expect(pool.status.runs.isEmpty)
    }

    // MARK: Roles, attempts, status

    @Test func aWorkerKeyMayNotSubmitRuns() {
        var pool = pool()
        let actions = pool.receive(hello("A", run: "run-A"), from: clientA, roles: .worker, now: poolAt(0))
        let replies = messages(to: clientA, in: actions)
        #expect(replies.count == 1)
        guard case .disconnect(let reason) = replies.first else {
            Issue.record("expected DISCONNECT, got \(replies)")
            return
        }
        #expect(reason.contains("may not submit runs"))
        #expect(poolReports(actions).contains { if case .roleRefused = $0 { true } else { false } })
        #expect(pool.clients.isEmpty)
        #expect(pool.status.runs.isEmpty)
        // It is still unknown: a SUBMIT is answered as from an unknown peer, and nothing is queued.
        let submitted = pool.receive(submit(1...2, tag: "A"), from: clientA, roles: .worker, now: poolAt(0.1))
        #expect(messages(to: clientA, in: submitted).allSatisfy { if case .disconnect = $0 { true } else { false } })
        #expect(pool.fair.waitingCount == 0)
    }

    @Test func aClientKeyMayNotRegisterAsAWorker() {
        var pool = pool()
        let actions = pool.receive(poolReady(), from: poolWorker, roles: .client, now: poolAt(0))
        let replies = messages(to: poolWorker, in: actions)
        #expect(replies.count == 1)
        guard case .disconnect(let reason) = replies.first else {
            Issue.record("expected DISCONNECT, got \(replies)")
            return
        }
        #expect(reason.contains("may not register as a worker"))
        #expect(poolReports(actions).contains { if case .roleRefused = $0 { true } else { false } })
        #expect(pool.core.workers.isEmpty)
        #expect(pool.status.workers.isEmpty)
    }

    @Test func aTaskResentWithAttemptTwoReachesTheWorkerAsOperationAttemptTwo() throws {
        var pool = pool()
        _ = pool.receive(poolReady(), from: poolWorker, now: poolAt(0))
        _ = pool.receive(hello("A", run: "run-A"), from: clientA, now: poolAt(0))
        _ = pool.receive(.submit([poolTask(7, tag: "A", attempt: 2)]), from: clientA, now: poolAt(0))
        let sent = taskBatches(to: poolWorker, in: pool.dispatch(now: poolAt(0.1))).flatMap { $0 }
        let task = try #require(sent.first)
        #expect(sent.count == 1)
        #expect(task.operationAttempt == 2)
        // Towards the worker it is the pool's first dispatch; the client hears of its own attempt.
        #expect(task.attempt == 1)
        let answer = done(to: clientA, in: pool.receive(.result([workerResult(task.taskID)]), from: poolWorker, now: poolAt(0.2))
            + pool.dispatch(now: poolAt(0.2)))
        #expect(answer.map(\.result.taskID) == [7])
        #expect(answer.map(\.result.attempt) == [2])
    }

    @Test func statusFromAnUnknownPeerNamesWorkersAndRunsButNoParameters() throws {
        var pool = poolWithTwoRuns().0
        let actions = pool.receive(.status, from: stranger, now: poolAt(0.2))
        let replies = messages(to: stranger, in: actions)
        #expect(replies.count == 1)
        guard case .statusReply(let json) = replies.first else {
            Issue.record("expected STATUS-REPLY, got \(replies)")
            return
        }
        let status = try PoolStatus(json: json)
        #expect(status.pool == "test-pool")
        #expect(status.workers.map(\.name) == ["w1"])
        #expect(status.workers.first?.slots == 2)
        #expect(status.workers.first?.busy == 2)
        #expect(Set(status.runs.map(\.id)) == ["run-A", "run-B"])
        #expect(Set(status.runs.map(\.client)) == ["A", "B"])
        #expect(status.runs.allSatisfy { $0.inFlight == 1 && $0.queued == 3 && $0.done == 0 })
        // The tasks' parameters (`who`: A-1 … B-4) never leave the pool.
        #expect(!json.contains("who"))
        #expect(!json.contains("A-1") && !json.contains("B-4"))
        // A stranger that asked is not registered.
        #expect(pool.clients[stranger] == nil && pool.core.workers[stranger] == nil)
    }

    // MARK: Ops

    /// A run whose next task only a busy worker offers does not take the free slot of a worker
    /// whose op another run waits for (§14.5).
    @Test func aRunWaitingForABusyWorkersOpLeavesTheFreeSlotToARunThatCanUseIt() {
        var pool = pool()
        let ready = { (name: String, op: String, slots: UInt32) -> WireMessage in
            .ready(WireReady(workerName: name, features: WireReady.Feature.cancel, slotCount: slots, ops: [op], hostname: name, processID: 1))
        }
        _ = pool.receive(ready("resizer", "ResizeOp", 1), from: poolWorker, now: poolAt(0))
        _ = pool.receive(ready("uploader", "UploadOp", 2), from: secondWorker, now: poolAt(0))
        _ = pool.receive(hello("A", run: "run-A", share: 4), from: clientA, now: poolAt(0))
        _ = pool.receive(hello("B", run: "run-B"), from: clientB, now: poolAt(0))
        // B uploads one file; A (four times B's share) resizes three: the resizer takes one.
        _ = pool.receive(.submit([WireTask(taskID: 1, attempt: 1, op: "UploadOp")]), from: clientB, now: poolAt(0.01))
        _ = pool.receive(.submit((1...3).map { WireTask(taskID: $0, attempt: 1, op: "ResizeOp") }), from: clientA, now: poolAt(0.01))
        let first = pool.dispatch(now: poolAt(0.02))
        #expect(taskBatches(to: poolWorker, in: first).flatMap { $0 }.count == 1)
        #expect(taskBatches(to: secondWorker, in: first).flatMap { $0 }.count == 1)
        // B has more uploads. A's load (1 of 4) is below B's (1 of 1), but only the busy resizer
        // offers A's op: the uploader's free slot goes to B at once.
        _ = pool.receive(.submit((2...3).map { WireTask(taskID: $0, attempt: 1, op: "UploadOp") }), from: clientB, now: poolAt(0.03))
        let second = pool.dispatch(now: poolAt(0.04))
        let uploads = taskBatches(to: secondWorker, in: second).flatMap { $0 }
        #expect(uploads.count == 1 && uploads.first?.op == "UploadOp", "\(second)")
        #expect(pool.core.queue.isEmpty, "no task of A waits in the machine holding the room")
    }
}
