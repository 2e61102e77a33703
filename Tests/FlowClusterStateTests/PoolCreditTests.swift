import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

/// The pool enforces what WELCOME says and what it can hold (issue 46): a client's credit, the
/// bytes it may have waiting, and a heartbeat interval of at most 60 s, without sockets.
@Suite struct PoolCreditTests {
    func pool(_ change: (inout PoolStateMachine.Configuration) -> Void = { _ in }) -> PoolStateMachine {
        var configuration = PoolStateMachine.Configuration()
        configuration.name = "credit-pool"
        change(&configuration)
        return PoolStateMachine(configuration: configuration)
    }

    // MARK: Item 5: credit

    @Test func tasksPastTheCreditAreAnsweredWithAFailureAndLoggedOncePerClient() throws {
        var pool = pool { $0.clientCredit = 4 }
        let greedy = client(1)
        _ = pool.receive(capsHello("greedy"), from: greedy, now: capsAt(0))
        let submitted = pool.receive(capsSubmit(1...6), from: greedy, now: capsAt(0.1))
        #expect(logLines(submitted).count == 1)
        #expect(logLines(submitted).first?.contains("past its credit of 4 tasks") == true)
        let refused = doneResults(to: greedy, in: pool.dispatch(now: capsAt(0.2)))
        #expect(refused.map(\.taskID) == [5, 6])
        #expect(refused.allSatisfy { $0.isPermanent && errorText($0)?.contains("credit") == true })
        #expect(pool.status.runs.first?.queued == 4)

        // Still over it: refused again, not logged again.
        let again = pool.receive(capsSubmit(7...7), from: greedy, now: capsAt(0.3))
        #expect(logLines(again).isEmpty)
        #expect(doneResults(to: greedy, in: pool.dispatch(now: capsAt(0.4))).map(\.taskID) == [7])
        // A task sent again under an id it holds replaces it and is no new credit.
        _ = pool.receive(capsSubmit(4...4), from: greedy, now: capsAt(0.5))
        #expect(doneResults(to: greedy, in: pool.dispatch(now: capsAt(0.6))).isEmpty)
        #expect(pool.status.runs.first?.queued == 4)
    }

    @Test func tasksAnsweredFreeTheCreditAgain() throws {
        var pool = pool { $0.clientCredit = 2 }
        let honest = client(1)
        _ = pool.receive(capsReady(slots: 2), from: capsWorker, now: capsAt(0))
        _ = pool.receive(capsHello("honest"), from: honest, now: capsAt(0))
        _ = pool.receive(capsSubmit(1...2), from: honest, now: capsAt(0.1))
        let running = tasksSent(to: capsWorker, in: pool.dispatch(now: capsAt(0.2)))
        #expect(running.count == 2)
        let result = WireResult(taskID: running[0].taskID, attempt: 1, finishState: .successfully, startedAt: Date(), finishedAt: Date())
        _ = pool.receive(.result([result]), from: capsWorker, now: capsAt(0.3))
        #expect(doneResults(to: honest, in: pool.dispatch(now: capsAt(0.3))).count == 1)
        let next = pool.receive(capsSubmit(3...3), from: honest, now: capsAt(0.4))
        #expect(logLines(next).isEmpty)
        #expect(doneResults(to: honest, in: pool.dispatch(now: capsAt(0.5))).isEmpty)
    }

    // MARK: Item 5: queued bytes

    @Test func tasksPastTheQueuedBytesAreAnsweredWithAFailureUntilTheQueueDrains() throws {
        let size = PoolStateMachine.encodedSize(of: capsTask(1, payload: 1_000))
        var pool = pool { $0.maxQueuedBytes = 2 * size }
        let heavy = client(1)
        _ = pool.receive(capsHello("heavy"), from: heavy, now: capsAt(0))
        let submitted = pool.receive(capsSubmit(1...4, payload: 1_000), from: heavy, now: capsAt(0.1))
        #expect(logLines(submitted).count == 1)
        #expect(logLines(submitted).first?.contains("--max-queued-bytes") == true)
        let refused = doneResults(to: heavy, in: pool.dispatch(now: capsAt(0.2)))
        #expect(refused.map(\.taskID) == [3, 4])
        #expect(refused.allSatisfy { !$0.isPermanent && errorText($0)?.contains("at most \(2 * size) waiting") == true })

        // The two waiting go to a worker: the queue is empty again, and more are taken.
        _ = pool.receive(capsReady(slots: 2), from: capsWorker, now: capsAt(0.3))
        #expect(tasksSent(to: capsWorker, in: pool.dispatch(now: capsAt(0.3))).count == 2)
        _ = pool.receive(capsSubmit(3...4, payload: 1_000), from: heavy, now: capsAt(0.4))
        #expect(doneResults(to: heavy, in: pool.dispatch(now: capsAt(0.4))).isEmpty)
        #expect(pool.clients[heavy]?.queuedBytes == 2 * size)
        // Withdrawn, they no longer count.
        _ = pool.receive(.withdraw([3, 4]), from: heavy, now: capsAt(0.5))
        #expect(pool.clients[heavy]?.queuedBytes == 0)
    }

    @Test func aSubmitReadOffTheWireCountsEachTaskAtTheBytesItTook() throws {
        let size = PoolStateMachine.encodedSize(of: capsTask(1, payload: 1_000))
        var pool = pool { $0.maxQueuedBytes = 2 * size }
        let heavy = client(1)
        _ = pool.receive(capsHello("heavy"), from: heavy, now: capsAt(0))
        // As the pool's shell hands it over: decoded from its frames, each task with its size.
        let submit = try WireCodec.decode(WireCodec.encode(capsSubmit(1...3, payload: 1_000)))
        guard case .submit(let tasks) = submit else { Issue.record("not a SUBMIT: \(submit)"); return }
        // Each knows its size as read, so the pool counts it without encoding it again.
        #expect(tasks.map(\.receivedSize) == [size, size, size])
        _ = pool.receive(submit, from: heavy, now: capsAt(0.1))
        #expect(pool.clients[heavy]?.queuedBytes == 2 * size)
        #expect(doneResults(to: heavy, in: pool.dispatch(now: capsAt(0.2))).map(\.taskID) == [3])
    }

    @Test func oneTaskLargerThanTheCapIsTakenWhenNothingWaits() throws {
        var pool = pool { $0.maxQueuedBytes = 100 }
        _ = pool.receive(capsHello("big"), from: client(1), now: capsAt(0))
        _ = pool.receive(capsSubmit(1...2, payload: 1_000), from: client(1), now: capsAt(0.1))
        #expect(doneResults(to: client(1), in: pool.dispatch(now: capsAt(0.2))).map(\.taskID) == [2])
    }

    // MARK: Item 7: heartbeat

    @Test func aClientAnnouncingTheLargestHeartbeatIsHeldToSixtySecondsAndDeclaredGone() throws {
        var pool = pool()
        _ = pool.receive(capsReady(slots: 8), from: capsWorker, now: capsAt(0))
        let joined = pool.receive(capsHello("ghost", heartbeatMilliseconds: 4_294_967_295), from: client(1), now: capsAt(0))
        #expect(welcome(to: client(1), in: joined)?.heartbeatIntervalMilliseconds == 60_000)
        #expect(logLines(joined).contains { $0.contains("4294967295 ms") && $0.contains("60000 ms") })
        _ = pool.receive(capsSubmit(1...8), from: client(1), now: capsAt(0))
        #expect(tasksSent(to: capsWorker, in: pool.dispatch(now: capsAt(0))).count == 8)

        // The worker heartbeats; the client says nothing more.
        _ = pool.receive(.heartbeat, from: capsWorker, now: capsAt(170))
        _ = pool.tick(now: capsAt(170))
        #expect(pool.clients[client(1)] != nil)
        _ = pool.receive(.heartbeat, from: capsWorker, now: capsAt(181))
        let gone = pool.tick(now: capsAt(181))
        #expect(pool.clients[client(1)] == nil)
        #expect(Set(sent(to: capsWorker, in: gone).flatMap { message -> [UInt64] in if case .cancel(let ids) = message { ids } else { [] } }).count == 8)
    }

    // MARK: Item 13: the role refusal names the key

    @Test func aRoleRefusalLogsTheKey() throws {
        var pool = pool()
        let key = PoolStateMachine.PeerKey(text: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7")
        let actions = pool.receive(capsHello("worker-key"), from: client(1), roles: .worker, key: key, now: capsAt(0))
        let refused = actions.compactMap { action -> String? in
            if case .report(.roleRefused(let peer, _)) = action { peer } else { nil }
        }
        #expect(refused.count == 1)
        #expect(refused.first?.contains(key.text) == true)
    }
}
