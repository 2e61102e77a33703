import Flow
import FlowWire
import Foundation
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A worker written by hand against docs/PROTOCOL.md: a DEALER that says exactly what a test
/// tells it to, for driving a real coordinator into the corners of the protocol.
///
/// Its calls are synchronous and it is used by one test at a time, so its socket is never used
/// from two threads at once (ZeroMQ allows moving a socket between threads between calls).
final class RawWorker: @unchecked Sendable {
    let name: String
    private let context: ZMQContext
    private let socket: ZMQSocket
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
        try send(.ready(WireReady(workerName: name, features: features, slotCount: slots, ops: ops, hostname: "raw", processID: 1,
                                  heartbeatIntervalMilliseconds: heartbeatMilliseconds)))
    }

    deinit { close() }

    func send(_ message: WireMessage) throws {
        _ = try socket.send(WireCodec.encode(message), flags: [])
    }

    /// The next message other than HEARTBEAT, or `nil` after `timeout` seconds.
    func next(timeout: Double) throws -> WireMessage? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let frames = try socket.receiveMultipart(dontWait: true) {
                let message = try WireCodec.decode(frames)
                if case .heartbeat = message { continue }
                return message
            }
            usleep(1_000)
        }
        return nil
    }

    /// The tasks of the next TASK message, or `nil` after `timeout` seconds.
    func nextTasks(timeout: Double = 10) throws -> [WireTask]? {
        let deadline = Date().addingTimeInterval(timeout)
        while case let remaining = deadline.timeIntervalSinceNow, remaining > 0 {
            guard let message = try next(timeout: remaining) else { return nil }
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
