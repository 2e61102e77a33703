import Foundation
import Testing
import ZeroMQ

@Suite("ZMQPoller readiness")
struct ZMQPollerTests {
    @Test func pollWithNothingReadyReturnsNoSocketsAfterTheTimeout() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let first = try zmq.socket(.pull)
        let second = try zmq.socket(.pull)
        _ = try zmq.bindLoopback(first)
        _ = try zmq.bindLoopback(second)
        let poller = ZMQPoller()
        let firstIndex = poller.register(first)
        let secondIndex = poller.register(second)

        let start = ContinuousClock.now
        #expect(try poller.poll(timeout: 100) == 0)
        let elapsed = milliseconds(since: start)
        #expect(elapsed >= 80, "poll returned after \(elapsed) ms, before its 100 ms time-out")
        #expect(elapsed < 10_000)
        #expect(poller.events(at: firstIndex).isEmpty)
        #expect(poller.events(at: secondIndex).isEmpty)
    }

    @Test func pollReportsOnlyTheSocketWithAMessageWaiting() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let idle = try zmq.socket(.pull)
        let busy = try zmq.socket(.pull)
        _ = try zmq.bindLoopback(idle)
        let busyEndpoint = try zmq.bindLoopback(busy)
        let push = try zmq.socket(.push)
        try push.connect(busyEndpoint)
        let poller = ZMQPoller()
        poller.register(idle)
        poller.register(busy)

        try push.send(Data(text: "wake"))
        #expect(try poller.poll(timeout: 5_000) == 1)
        #expect(poller.isReadable(busy))
        #expect(!poller.isReadable(idle))
        #expect(try busy.events.contains(.readable))
        #expect(try busy.receiveMultipart(dontWait: true) == [Data(text: "wake")])

        #expect(try poller.poll(timeout: 0) == 0)
        #expect(!poller.isReadable(busy))
    }

    @Test func pollReportsAWritableSocketAndAnUnregisteredOneNoLonger() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let pull = try zmq.socket(.pull)
        let endpoint = try zmq.bindLoopback(pull)
        let push = try zmq.socket(.push)
        try push.connect(endpoint)
        let poller = ZMQPoller()
        poller.register(push, for: .writable)
        poller.register(pull, for: .readable)

        #expect(try poller.poll(timeout: 5_000) == 1)
        #expect(poller.events(for: push) == .writable)
        poller.unregister(push)
        #expect(poller.count == 1)
        #expect(poller.events(for: push).isEmpty)
    }

    @Test func pollingAClosedSocketThrowsInsteadOfTouchingFreedMemory() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let pull = try zmq.socket(.pull)
        let poller = ZMQPoller()
        poller.register(pull)
        pull.close()
        let error = try #require(throws: ZMQError.self) { try poller.poll(timeout: 0) }
        #expect(error.isNotSocket)
    }
}
