import Foundation
import ZeroMQ

/// What the transport alone does on this machine at this moment: the cluster's message pattern
/// with no Flow in it. A ROUTER in this process sends one small message per task (the size of a
/// no-op TASK) to DEALER peers in other processes, round robin, keeping `window` in flight as a
/// group's concurrency limit does, and each peer sends every message straight back (a RESULT).
enum ZMQBaseline {
    /// About the size of one no-op group task on the wire.
    static let payload = Data(repeating: 0x61, count: 96)
    static let bye = Data("bye".utf8)

    /// A peer: connects, says hello, echoes every message until told bye.
    static func runPeer(endpoint: String) throws {
        let context = try ZMQContext()
        let socket = try context.socket(.dealer)
        try socket.connect(endpoint)
        _ = try socket.send([Data("hello".utf8)])
        while let frames = try socket.receiveMultipart() {
            if frames.first == bye { break }
            _ = try socket.send(frames)
        }
        socket.close()
        context.close()
    }

    /// Starts this program again with `arguments` (a peer or a relay) and returns it running.
    static func startSelf(_ arguments: [String]) throws -> Process {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let child = Process()
        child.executableURL = URL(fileURLWithPath: me)
        child.arguments = arguments
        try child.run()
        return child
    }

    /// The median of three runs of `measure`.
    static func median(of measure: () throws -> Double) rethrows -> Double {
        try (0..<3).map { _ in try measure() }.sorted()[1]
    }

    /// Round trips per second through `peers` peer processes with `window` messages in flight,
    /// over `ipc://`, or over TCP on loopback; `peerCommand` is what each peer process runs
    /// (`zmq-relay` puts a relay and its echo peer in the path).
    static func measure(messages: Int, peers: Int = 2, window: Int = 512, tcp: Bool = false,
                        peerCommand: String = "zmq-peer") throws -> Double {
        let context = try ZMQContext()
        let router = try context.socket(.router)
        try router.set(.routerMandatory(true), .sendHighWaterMark(0), .receiveHighWaterMark(0))
        let path = "/tmp/flow-bench-\(getpid()).sock"
        try router.bind(tcp ? "tcp://127.0.0.1:*" : "ipc://" + path)
        let endpoint = tcp ? try router.lastEndpoint : "ipc://" + path
        defer {
            router.close()
            context.close()
            unlink(path)
        }
        let children = try (0..<peers).map { _ in try startSelf([peerCommand, endpoint]) }
        var routes: [Data] = []
        while routes.count < peers {
            if let frames = try router.receiveMultipart(), let route = frames.first { routes.append(route) }
        }
        let start = ContinuousClock.now
        var sent = 0, received = 0
        while received < messages {
            while sent < messages, sent - received < window {
                _ = try router.send([routes[sent % peers], payload])
                sent += 1
            }
            if try router.receiveMultipart() != nil { received += 1 }
            while received < sent, try router.receiveMultipart(dontWait: true) != nil { received += 1 }
        }
        let elapsed = ContinuousClock.now - start
        for route in routes { _ = try router.send([route, bye]) }
        for child in children { child.waitUntilExit() }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(messages) / seconds
    }
}
