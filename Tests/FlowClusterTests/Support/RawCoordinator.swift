import FlowWire
import Foundation
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A coordinator written by hand against docs/PROTOCOL.md: a ROUTER on a random loopback port that
/// lets a test drive a real `flow-worker` message by message.
///
/// It is not `Sendable` on purpose: create, use and close it on one thread (see
/// ``onOwnThread(_:)``), since a ZeroMQ socket must stay on the thread that made it.
final class RawCoordinator {
    /// Where the worker connects, e.g. `tcp://127.0.0.1:41235`.
    let endpoint: String
    /// The routing id of the worker that last said READY.
    private(set) var worker: Data?
    private let context: ZMQContext
    private let router: ZMQSocket
    private let poller = ZMQPoller()
    private let heartbeatInterval: Duration
    private var lastSent = ContinuousClock.now
    private var isClosed = false

    /// Binds `tcp://127.0.0.1:*`.
    ///
    /// - Parameter heartbeatInterval: how often it heartbeats the worker while a test waits; keep
    ///   it under the worker's own interval, which governs the connection (§8).
    init(heartbeatInterval: Duration = .milliseconds(50)) throws {
        self.heartbeatInterval = heartbeatInterval
        context = try ZMQContext()
        router = try ZMQSocket(context: context, type: .router)
        try router.set(.linger(milliseconds: 0), .sendTimeout(milliseconds: 1_000), .routerMandatory(true))
        try router.bind("tcp://127.0.0.1:*")
        endpoint = try router.lastEndpoint
        poller.register(router)
    }

    deinit { close() }

    /// Sends `message` to the worker that said READY.
    func send(_ message: WireMessage) throws {
        guard let worker else { throw HarnessError("no worker has said READY yet") }
        _ = try router.send([worker] + WireCodec.encode(message), flags: [])
        lastSent = .now
    }

    /// The next message other than HEARTBEAT, or `nil` after `timeout`; heartbeats the worker
    /// meanwhile, so a worker with a short liveness does not reconnect while a test waits.
    func next(timeout: Duration) throws -> WireMessage? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let message = try receiveOne(before: deadline) { return message }
        }
        return nil
    }

    /// Heartbeats and collects messages other than HEARTBEAT until `condition` holds or `timeout`
    /// passes.
    ///
    /// - Returns: the messages, each with when it arrived, and whether `condition` held.
    func collect(timeout: Duration, until condition: (_ received: [(message: WireMessage, at: ContinuousClock.Instant)]) -> Bool)
        throws -> (received: [(message: WireMessage, at: ContinuousClock.Instant)], satisfied: Bool) {
        let deadline = ContinuousClock.now + timeout
        var received: [(message: WireMessage, at: ContinuousClock.Instant)] = []
        while ContinuousClock.now < deadline {
            if condition(received) { return (received, true) }
            if let message = try receiveOne(before: deadline) { received.append((message, .now)) }
        }
        return (received, condition(received))
    }

    /// One message other than HEARTBEAT, after a heartbeat if one is due; waits for it in
    /// `zmq_poll` until the next heartbeat is due or `deadline`, and returns `nil` then.
    private func receiveOne(before deadline: ContinuousClock.Instant) throws -> WireMessage? {
        if worker != nil, ContinuousClock.now - lastSent >= heartbeatInterval { try send(.heartbeat) }
        var frames = try router.receiveMultipart(dontWait: true)
        if frames == nil {
            let wake = worker == nil ? deadline : min(deadline, lastSent + heartbeatInterval)
            let left = ContinuousClock.now.duration(to: wake)
            if left > .zero, try poller.poll(timeout: max(1, Int((left / .milliseconds(1)).rounded(.up)))) > 0 {
                frames = try router.receiveMultipart(dontWait: true)
            }
        }
        guard let frames else { return nil }
        let message = try WireCodec.decode(Array(frames.dropFirst()))
        if case .ready = message { worker = frames.first }
        if case .heartbeat = message { return nil }
        return message
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        router.close()
        context.close()
    }
}

/// Runs `body` on a new thread of its own and returns what it returns: the synchronous ZeroMQ
/// code of a test then owns its sockets from creation to close, with no `await` between calls
/// and no cooperative-pool thread parked on a poll.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = "test-zmq"
        thread.start()
    }
}
