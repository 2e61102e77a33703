import Flow
import FlowTestSupport
import FlowWire
import Foundation
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A worker written by hand against docs/PROTOCOL.md: a DEALER that says exactly what a test
/// tells it to, for driving a real coordinator into the corners of the protocol.
///
/// It is used by one test at a time and each call returns before the next starts, so its socket is
/// never used from two threads at once (ZeroMQ allows moving a socket between threads between
/// calls). The waits for a message (``next(timeout:)``, ``nextTasks(timeout:)``) are `async`: they
/// wait in `zmq_poll` on a thread of their own, never on one of the cooperative pool's; code that
/// already runs on a thread of its own (``SilentWorker``) uses their blocking forms.
final class RawWorker: @unchecked Sendable {
    let name: String
    private let context: ZMQContext
    private let socket: ZMQSocket
    private let poller = ZMQPoller()
    private var isClosed = false

    /// Connects and says READY.
    ///
    /// - Parameters:
    ///   - heartbeatMilliseconds: the interval it announces; long by default, so the coordinator
    ///     does not declare it dead while a test thinks.
    ///   - features: the READY's feature bits (``WireReady/Feature``).
    init(endpoint: String, name: String, slots: UInt32, ops: [String], heartbeatMilliseconds: UInt32 = 60_000, features: UInt32 = 0) throws {
        self.name = name
        context = try ZMQContext()
        socket = try ZMQSocket(context: context, type: .dealer)
        try socket.set(.linger(milliseconds: 0), .sendTimeout(milliseconds: 1_000))
        try socket.connect(endpoint)
        wakeup = try ZMQWakeup()
        poller.register(socket)
        poller.register(wakeup)
        try send(.ready(WireReady(workerName: name, features: features, slotCount: slots, ops: ops, hostname: "raw", processID: 1,
                                  heartbeatIntervalMilliseconds: heartbeatMilliseconds)))
    }

    deinit { close() }

    func send(_ message: WireMessage) throws {
        _ = try socket.send(WireCodec.encode(message), flags: [])
    }

    /// Wakes a ``next(timeout:)`` in progress (from another thread): it returns `nil` then.
    private let wakeup: ZMQWakeup

    /// Makes a ``next(timeout:)`` that waits now, or the next one, return `nil` at once.
    func wake() { _ = wakeup.signal() }

    /// The next message other than HEARTBEAT, or `nil` after `timeout` seconds (or at a
    /// ``wake()``): ``nextBlocking(timeout:)`` on a thread of its own
    /// (``TestCommand/offThread(_:)``), the caller's task suspended meanwhile.
    func next(timeout: Double) async throws -> WireMessage? {
        try await TestCommand.offThread { try self.nextBlocking(timeout: timeout) }
    }

    /// The tasks of the next TASK message, or `nil` after `timeout` seconds:
    /// ``nextTasksBlocking(timeout:)`` on a thread of its own, the caller's task suspended meanwhile.
    func nextTasks(timeout: Double = 10) async throws -> [WireTask]? {
        try await TestCommand.offThread { try self.nextTasksBlocking(timeout: timeout) }
    }

    /// As ``next(timeout:)``, blocking the calling thread in `zmq_poll` on the socket until the
    /// message (or a ``wake()``) comes: for a thread of its own, never for an `async` caller.
    func nextBlocking(timeout: Double) throws -> WireMessage? {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        while true {
            while let frames = try socket.receiveMultipart(dontWait: true) {
                let message = try WireCodec.decode(frames)
                if case .heartbeat = message { continue }
                return message
            }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            _ = try poller.poll(timeout: max(1, Int((left / .milliseconds(1)).rounded(.up))))
            if try wakeup.drain() > 0 { return nil }
        }
    }

    /// As ``nextTasks(timeout:)``, blocking the calling thread: for a thread of its own.
    func nextTasksBlocking(timeout: Double = 10) throws -> [WireTask]? {
        let deadline = Date().addingTimeInterval(timeout)
        while case let remaining = deadline.timeIntervalSinceNow, remaining > 0 {
            guard let message = try nextBlocking(timeout: remaining) else { return nil }
            if case .task(let tasks) = message { return tasks }
        }
        return nil
    }

    /// A RESULT for `task` that finished now.
    static func result(for task: WireTask, state: FlowFinishStateShorthand = .ok, output: FlowValue? = nil) -> WireResult {
        WireResult(taskID: task.taskID, attempt: task.attempt, finishState: state.finishState, startedAt: Date(), finishedAt: Date(),
                   elementIndex: task.isGroupElement ? task.elementIndex : nil, output: output)
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        socket.close()
        wakeup.close()
        context.close()
    }
}

/// Finish states a raw worker answers with.
enum FlowFinishStateShorthand {
    case ok, cancelled
    case error(String)

    var finishState: FlowFinishState {
        switch self {
        case .ok: return .successfully
        case .cancelled: return .cancelled
        case .error(let text): return .withError(text)
        }
    }
}
