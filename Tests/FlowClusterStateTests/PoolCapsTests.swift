import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

let capsWorker = Data("caps-worker".utf8)
let capsT0 = ContinuousClock.now

func capsAt(_ seconds: Double) -> ContinuousClock.Instant { capsT0 + .microseconds(Int64(seconds * 1_000_000)) }

func client(_ index: Int) -> Data { Data("client-\(index)".utf8) }

func capsHello(_ name: String, origin: String = "ana@laptop", share: UInt32 = 1,
                       heartbeatMilliseconds: UInt32 = 1000) -> WireMessage {
    .hello(WireHello(clientName: name, runID: "run-\(name)", flowName: "flow", origin: origin, share: share,
                     heartbeatIntervalMilliseconds: heartbeatMilliseconds))
}

func capsReady(slots: UInt32) -> WireMessage {
    .ready(WireReady(workerName: "w1", features: WireReady.Feature.cancel, slotCount: slots, ops: ["EchoOp"], hostname: "h",
                     processID: 1, heartbeatIntervalMilliseconds: 1000))
}

func capsTask(_ id: UInt64, payload: Int = 0) -> WireTask {
    WireTask(taskID: id, op: "EchoOp", parameters: ["data": .string(String(repeating: "x", count: payload))])
}

func capsSubmit(_ ids: ClosedRange<UInt64>, payload: Int = 0) -> WireMessage {
    .submit(ids.map { capsTask($0, payload: payload) })
}

func sent(to peer: Data, in actions: [PoolStateMachine.Action]) -> [WireMessage] {
    actions.compactMap { if case .send(let to, let message) = $0, to == peer { message } else { nil } }
}

func tasksSent(to peer: Data, in actions: [PoolStateMachine.Action]) -> [WireTask] {
    sent(to: peer, in: actions).flatMap { message -> [WireTask] in if case .task(let tasks) = message { tasks } else { [] } }
}

func doneResults(to peer: Data, in actions: [PoolStateMachine.Action]) -> [WireResult] {
    sent(to: peer, in: actions).flatMap { message -> [WireResult] in if case .done(let results) = message { results.map(\.result) } else { [] } }
}

func welcome(to peer: Data, in actions: [PoolStateMachine.Action]) -> WireWelcome? {
    sent(to: peer, in: actions).lazy.compactMap { message -> WireWelcome? in if case .welcome(let welcome) = message { welcome } else { nil } }.first
}

func logLines(_ actions: [PoolStateMachine.Action]) -> [String] {
    actions.compactMap { if case .log(_, let text) = $0 { text } else { nil } }
}

func errorText(_ result: WireResult) -> String? {
    if case .withError(let text) = result.finishState { text } else { nil }
}

/// The pool's caps on what a client may take (issue 46): shares, runs per client, credit, queued
/// bytes and heartbeat interval, without sockets.
@Suite struct PoolCapsTests {
    func pool(_ change: (inout PoolStateMachine.Configuration) -> Void = { _ in }) -> PoolStateMachine {
        var configuration = PoolStateMachine.Configuration()
        configuration.name = "caps-pool"
        change(&configuration)
        return PoolStateMachine(configuration: configuration)
    }

    /// Two runs with 40 tasks each on a pool of `slots`; how many of each run the worker got.
    func split(_ pool: inout PoolStateMachine, slots: UInt32, honest: Data, greedy: Data) -> (honest: Int, greedy: Int) {
        _ = pool.receive(capsReady(slots: slots), from: capsWorker, now: capsAt(0))
        _ = pool.receive(capsSubmit(1...40), from: honest, now: capsAt(0.1))
        _ = pool.receive(capsSubmit(1...40), from: greedy, now: capsAt(0.1))
        let tasks = tasksSent(to: capsWorker, in: pool.dispatch(now: capsAt(0.2)))
        let honestCount = tasks.filter { pool.core.tasks[$0.taskID]?.waiter?.client == honest }.count
        return (honestCount, tasks.count - honestCount)
    }

    // MARK: Item 4: shares

    @Test func aRunAskingForAMillionSharesIsGrantedMaxShareAndAnHonestRunKeepsItsPart() throws {
        var pool = pool()
        let honest = client(1), greedy = client(2)
        _ = pool.receive(capsHello("honest"), from: honest, now: capsAt(0))
        let joined = pool.receive(capsHello("greedy", share: 1_000_000), from: greedy, now: capsAt(0))
        #expect(logLines(joined).contains { $0.contains("asked for share 1000000; granted 4") && $0.contains("--max-share 4") })
        // Shares 1 and 4 on 10 slots: 2 and 8, not 1 and 9.
        let (honestSlots, greedySlots) = split(&pool, slots: 10, honest: honest, greedy: greedy)
        #expect(honestSlots == 2)
        #expect(greedySlots == 8)
        #expect(pool.status.runs.map(\.share).sorted() == [1, 4])
    }

    @Test func aKeysShareLineGrantsItsOwnCapInPlaceOfMaxShare() throws {
        var pool = pool()
        let honest = client(1), batch = client(2)
        _ = pool.receive(capsHello("honest"), from: honest, now: capsAt(0))
        let key = PoolStateMachine.PeerKey(text: "nightly-key", share: 8)
        let joined = pool.receive(capsHello("nightly", share: 1_000_000), from: batch, key: key, now: capsAt(0))
        #expect(logLines(joined).contains { $0.contains("granted 8") && $0.contains("share=8") })
        let (honestSlots, batchSlots) = split(&pool, slots: 18, honest: honest, greedy: batch)
        #expect(honestSlots == 2)
        #expect(batchSlots == 16)
    }

    @Test func aClientsFileGivesSharesAndStaysReadableWithoutThem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pool-caps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyA = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7", keyB = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
        let good = directory.appendingPathComponent("clients").path
        try "# clients\n\(keyA) nightly batch share=8 # the big one\n\(keyB) ana\n".write(toFile: good, atomically: true, encoding: .utf8)
        let keys = try AuthorizedKeys.read(at: good)
        #expect(keys.names == [keyA: "nightly batch", keyB: "ana"])
        #expect(keys.shares == [keyA: 8])
        let pool = PoolKeys(workers: AuthorizedKeys(), clients: keys)
        #expect(pool.peerKey(keyA).share == 8)
        #expect(pool.peerKey(keyB).share == nil)

        for bad in ["share=0", "share=lots", "share=99999999999"] {
            let path = directory.appendingPathComponent("bad").path
            try "\(keyA) nightly \(bad)\n".write(toFile: path, atomically: true, encoding: .utf8)
            do {
                _ = try AuthorizedKeys.read(at: path)
                Issue.record("a line with \(bad) was read")
            } catch {
                #expect(error.description.contains("share=N with N from 1 to 10000"), "\(bad): \(error.description)")
                #expect(error.line == 1)
            }
        }
    }

    // MARK: Item 4: runs per client

    @Test func aClientPastMaxRunsPerClientIsHeldAndToldUntilOneOfItsRunsEnds() throws {
        var pool = pool { $0.maxRunsPerClient = 2 }
        _ = pool.receive(capsReady(slots: 8), from: capsWorker, now: capsAt(0))
        _ = pool.receive(capsHello("one"), from: client(1), now: capsAt(0))
        _ = pool.receive(capsHello("two"), from: client(2), now: capsAt(0))
        let third = pool.receive(capsHello("three"), from: client(3), now: capsAt(0))
        let other = pool.receive(capsHello("bob", origin: "bob@desk"), from: client(4), now: capsAt(0))
        let heldWelcome = try #require(welcome(to: client(3), in: third))
        #expect(heldWelcome.features & WireWelcome.Feature.held != 0)
        #expect(logLines(third).contains { $0.contains("ana@laptop already has 2 runs") && $0.contains("--max-runs-per-client 2") })
        #expect((try #require(welcome(to: client(4), in: other))).features & WireWelcome.Feature.held == 0)

        _ = pool.receive(capsSubmit(1...2), from: client(3), now: capsAt(0.1))
        _ = pool.receive(capsSubmit(1...2), from: client(4), now: capsAt(0.1))
        let first = tasksSent(to: capsWorker, in: pool.dispatch(now: capsAt(0.2)))
        // Free slots, but only bob's tasks went: the third run of ana@laptop waits.
        #expect(first.count == 2)
        #expect(first.allSatisfy { pool.core.tasks[$0.taskID]?.waiter?.client == client(4) })

        let left = pool.receive(.disconnect(reason: ""), from: client(1), now: capsAt(0.3))
        #expect(logLines(left).contains { $0.contains("three") && $0.contains("starts") })
        let second = tasksSent(to: capsWorker, in: pool.dispatch(now: capsAt(0.4)))
        #expect(second.count == 2)
        #expect(second.allSatisfy { pool.core.tasks[$0.taskID]?.waiter?.client == client(3) })
    }

    @Test func withCurveTheKeyNotTheOriginCountsRunsPerClient() throws {
        var pool = pool { $0.maxRunsPerClient = 1 }
        let key = PoolStateMachine.PeerKey(text: "key-a")
        _ = pool.receive(capsHello("one", origin: "ana@laptop"), from: client(1), key: key, now: capsAt(0))
        let second = pool.receive(capsHello("two", origin: "someone@else"), from: client(2), key: key, now: capsAt(0))
        #expect((try #require(welcome(to: client(2), in: second))).features & WireWelcome.Feature.held != 0)
        let third = pool.receive(capsHello("three", origin: "ana@laptop"), from: client(3), key: PoolStateMachine.PeerKey(text: "key-b"), now: capsAt(0))
        #expect((try #require(welcome(to: client(3), in: third))).features & WireWelcome.Feature.held == 0)
    }
}
