import Foundation
import ZeroMQ

/// The sockets a coordinator's or a pool's I/O loop polls, and what both loops do with them
/// alike: the ROUTER peers connect to (or a pool link's DEALER in its place), the wake-up, and
/// with CURVE the handshake monitor; waiting for the next deadline, naming failed handshakes
/// once per address, reading one message with the key of its connection, and the tick interval.
/// The loops keep only what their role does with a message.
struct RouterSockets {
    private(set) var router: ZMQSocket
    private let poller = ZMQPoller()
    private var routerIndex: Int
    private let wakeup: ZMQWakeup
    private let wakeupIndex: Int
    private let monitor: ZMQSocket?
    private let monitorIndex: Int?
    private var failedHandshakes = HandshakeFailureLog()
    /// How often the loop ticks its machine: a quarter of the heartbeat interval, at most 50 ms.
    let tickInterval: Duration
    /// When the next tick is due (``tickIfDue(now:)``).
    private(set) var nextTick: ContinuousClock.Instant

    init(router: ZMQSocket, monitor: ZMQSocket?, wakeup: ZMQWakeup, heartbeatInterval: Duration, now: ContinuousClock.Instant) {
        self.router = router
        self.wakeup = wakeup
        self.monitor = monitor
        routerIndex = poller.register(router)
        wakeupIndex = poller.register(wakeup)
        monitorIndex = monitor.map { [poller] in poller.register($0) }
        tickInterval = min(.milliseconds(50), heartbeatInterval / 4)
        nextTick = now
    }

    /// Waits for a socket, the wake-up, the next tick or `deadline`, whichever comes first (not
    /// at all when `mayWait` is false), then drains the wake-up.
    ///
    /// - Throws: what polling threw, which ends the loop.
    func poll(until deadline: ContinuousClock.Instant?, mayWait: Bool = true) throws {
        let until = min(nextTick, deadline ?? nextTick)
        _ = try poller.poll(timeout: mayWait ? max(0, Self.milliseconds(until: until, from: .now)) : 0)
        if poller.events(at: wakeupIndex).contains(.readable) { _ = try? wakeup.drain() }
    }

    /// Whether the last poll found the router (or the link) readable.
    var routerReadable: Bool { poller.events(at: routerIndex).contains(.readable) }

    /// Whether the machine's tick is due; if so, the next one is set an interval from `now`.
    mutating func tickIfDue(now: ContinuousClock.Instant) -> Bool {
        guard now >= nextTick else { return false }
        nextTick = now + tickInterval
        return true
    }

    /// A report for each peer whose CURVE handshake failed since the last poll, once per peer
    /// address (``HandshakeFailureLog``).
    mutating func failedHandshakeReports(now: ContinuousClock.Instant) -> [ClusterEvent] {
        guard let monitor, let monitorIndex, poller.events(at: monitorIndex).contains(.readable) else { return [] }
        var events: [ZMQMonitorEvent] = []
        while let frames = try? monitor.receiveMultipart(dontWait: true) {
            if let event = ZMQMonitorEvent(frames: frames) { events.append(event) }
        }
        return failedHandshakes.take(events, now: now) { $0.acceptedPeer() }.map { .handshakeFailed(address: $0) }
    }

    /// The next message waiting on the router, with its connection's CURVE key when `withKey`
    /// (a metadata lookup per frame, only where CURVE gives one); `nil` when none waits.
    func receive(withKey: Bool) throws -> (frames: [Data], key: String?)? {
        if withKey {
            guard let received = try router.receiveMultipartWithUserID(dontWait: true) else { return nil }
            return (received.frames, received.userID)
        }
        guard let frames = try router.receiveMultipart(dontWait: true) else { return nil }
        return (frames, nil)
    }

    /// Polls `socket` in the router's place from now on (a pool link that said HELLO again on a
    /// new socket).
    mutating func replaceRouter(with socket: ZMQSocket) {
        poller.unregister(router)
        router = socket
        routerIndex = poller.register(socket)
    }

    /// Whole milliseconds from `now` to `deadline`, rounded up: a poll never wakes before it.
    static func milliseconds(until deadline: ContinuousClock.Instant, from now: ContinuousClock.Instant) -> Int {
        let (seconds, attoseconds) = (deadline - now).components
        return Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
