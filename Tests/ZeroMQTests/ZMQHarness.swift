import Foundation
import Testing
import ZeroMQ

/// A context plus every socket a test made, so a test closes them all and notices a context
/// that would not terminate (the pyzmq habit) instead of hanging.
final class ZMQHarness {
    let context: ZMQContext
    private var sockets: [ZMQSocket] = []

    init() throws {
        context = try ZMQContext()
    }

    /// A tracked socket with linger 0 and 5 s send and receive time-outs, so nothing in a test
    /// can block for longer.
    func socket(_ type: ZMQSocketType, receiveTimeout: Int = 5_000) throws -> ZMQSocket {
        let socket = try context.socket(type)
        sockets.append(socket)
        try socket.set(
            .linger(milliseconds: 0),
            .receiveTimeout(milliseconds: receiveTimeout),
            .sendTimeout(milliseconds: 5_000)
        )
        return socket
    }

    /// A free loopback TCP endpoint bound by `socket`.
    func bindLoopback(_ socket: ZMQSocket) throws -> String {
        try socket.bind("tcp://127.0.0.1:*")
        return try socket.lastEndpoint
    }

    /// Closes every socket, then terminates the context, recording an issue if that takes
    /// longer than five seconds.
    func finish(sourceLocation: SourceLocation = #_sourceLocation) {
        for socket in sockets { socket.close() }
        sockets.removeAll()
        let context = self.context
        let terminated = runWithTimeout(seconds: 5) { context.close() }
        #expect(terminated, "context did not terminate within 5 s", sourceLocation: sourceLocation)
    }
}

/// Runs `work` on a new thread and reports whether it finished within the time.
func runWithTimeout(seconds: Double, _ work: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        work()
        done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success
}

/// Milliseconds elapsed since `start`.
func milliseconds(since start: ContinuousClock.Instant) -> Double {
    (ContinuousClock.now - start) / .milliseconds(1)
}

/// `count` random bytes.
func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var data = Data(count: count)
    data.withUnsafeMutableBytes { buffer in
        for offset in stride(from: 0, to: count, by: 8) {
            withUnsafeBytes(of: generator.next() as UInt64) { word in
                let length = min(8, count - offset)
                buffer.baseAddress!.advanced(by: offset).copyMemory(from: word.baseAddress!, byteCount: length)
            }
        }
    }
    return data
}

extension Data {
    /// The UTF-8 bytes of a string literal, for readable frames.
    init(text: String) {
        self.init(text.utf8)
    }
}
