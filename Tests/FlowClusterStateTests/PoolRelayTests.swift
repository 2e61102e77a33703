import Flow
import FlowWire
import Foundation
import Testing
@testable import FlowCluster

/// The pool's machine fed what its router decodes for a relay (`WireCodec.decode(taking:relaying:)`):
/// the TASK a worker gets and the DONE a client gets, encoded and read back as they would be,
/// carry the pool's changes and everything else as it came.
@Suite struct PoolRelayTests {
    private let worker = Data("relay-worker".utf8)
    private let client = Data("relay-client".utf8)
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// What the pool's router hands its machine: the message encoded and decoded for a relay.
    private func relayed(_ message: WireMessage) throws -> WireMessage {
        var frames = WireCodec.encode(message)
        return try WireCodec.decode(taking: &frames, relaying: true)
    }

    /// The messages of `command` sent to `peer`, encoded and read back as the peer reads them.
    private func received(_ command: WireCommand, by peer: Data, in actions: [PoolStateMachine.Action]) throws -> [WireMessage] {
        try actions.compactMap { action -> WireMessage? in
            guard case .send(let to, let message) = action, to == peer, message.command == command else { return nil }
            return try WireCodec.decode(WireCodec.encode(message))
        }
    }

    @Test func aRelayedTaskAndItsResultReachWorkerAndClientAsThePoolChangedThem() throws {
        var configuration = PoolStateMachine.Configuration()
        configuration.name = "relay-pool"
        var pool = PoolStateMachine(configuration: configuration)
        // A worker of an older release: no op attempts, retry policies or budgets.
        _ = pool.receive(.ready(WireReady(workerName: "w1", features: WireReady.Feature.cancel, slotCount: 2, ops: ["EchoOp"],
                                          hostname: "host-w1", processID: 1, heartbeatIntervalMilliseconds: 1000)),
                         from: worker, now: at(0))
        _ = pool.receive(.hello(WireHello(clientName: "A", runID: "run-A", flowName: "flow", origin: "tester@host", share: 1,
                                          heartbeatIntervalMilliseconds: 1000)), from: client, now: at(0))
        var task = WireTask(taskID: 7, attempt: 2, op: "EchoOp", displayTag: "29", parameters: ["who": .string("A-7")],
                            groupElement: .map(["path": .string("photos/ä.jpg"), "size": .integer(12)]), elementIndex: 41)
        task.retry = WireRetryPolicy(FlowRetryPolicy(attempts: 3))
        let submitted = try relayed(.submit([task]))
        guard case .submit(let kept) = submitted else { Issue.record("not a SUBMIT"); return }
        #expect(kept.allSatisfy { $0.keepsReceivedBytes })
        _ = pool.receive(submitted, from: client, now: at(1))

        let toWorker = try received(.task, by: worker, in: pool.dispatch(now: at(2)))
        guard case .task(let sent) = try #require(toWorker.first), let dispatched = sent.first else {
            Issue.record("no TASK: \(toWorker)")
            return
        }
        #expect(sent.count == 1)
        #expect(dispatched.taskID != 7 && dispatched.attempt == 1, "the pool's own id and first attempt")
        #expect(dispatched.operationAttempt == 1 && dispatched.retry == nil, "fields the worker did not announce are left out")
        #expect(dispatched.op == "EchoOp" && dispatched.displayTag == "29" && dispatched.parameters == task.parameters)
        #expect(dispatched.groupElement == task.groupElement && dispatched.elementIndex == 41)

        let result = WireResult(taskID: dispatched.taskID, attempt: 1, finishState: .successfully,
                                startedAt: Date(wireMicroseconds: 1_000_000), finishedAt: Date(wireMicroseconds: 1_250_000),
                                events: [WireEvent(time: Date(wireMicroseconds: 1_100_000), kind: .log("stored ä.jpg"))],
                                elementIndex: 41, output: .string("etag-1"))
        let answered = try relayed(.result([result]))
        let toClient = try received(.done, by: client, in: pool.receive(answered, from: worker, now: at(3)) + pool.dispatch(now: at(3)))
        guard case .done(let done) = try #require(toClient.first), let entry = done.first else {
            Issue.record("no DONE: \(toClient)")
            return
        }
        #expect(done.count == 1)
        #expect(entry.worker == "w1")
        var expected = result
        expected.taskID = 7
        expected.attempt = 2
        #expect(entry.result == expected, "the client's id and attempt, the rest as the worker sent it")
    }
}
