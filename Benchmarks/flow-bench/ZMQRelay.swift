import Foundation
import ZeroMQ

/// The floor under a pool's extra hop: ``ZMQBaseline``'s one-in-flight round trip with a bare
/// ZeroMQ relay process in the path (bench ROUTER → relay DEALER, relay ROUTER → peer DEALER, and
/// back), over TCP on loopback, as a run through a pool has its tasks relayed. The relay decodes
/// nothing: what it adds over the direct round trip is the transport's own cost of one more
/// process each way (its wake-ups), which no pool can go under.
enum ZMQRelay {
    /// The relay: binds a ROUTER for one echo peer (which it starts), then connects a DEALER to
    /// `upstream` and passes every message across both ways until told bye.
    static func run(upstream: String) throws {
        let context = try ZMQContext()
        let down = try context.socket(.router)
        try down.set(.routerMandatory(true), .sendHighWaterMark(0), .receiveHighWaterMark(0))
        try down.bind("tcp://127.0.0.1:*")
        let peer = try ZMQBaseline.startSelf(["zmq-peer", try down.lastEndpoint])
        guard let hello = try down.receiveMultipart(), let route = hello.first else { return }
        let up = try context.socket(.dealer)
        try up.set(.sendHighWaterMark(0), .receiveHighWaterMark(0))
        try up.connect(upstream)
        _ = try up.send([Data("hello".utf8)])
        let poller = ZMQPoller()
        let upIndex = poller.register(up)
        let downIndex = poller.register(down)
        relaying: while true {
            _ = try poller.poll(timeout: -1)
            if poller.events(at: upIndex).contains(.readable) {
                while let frames = try up.receiveMultipart(dontWait: true) {
                    _ = try down.send([route] + frames)
                    if frames.first == ZMQBaseline.bye { break relaying }
                }
            }
            if poller.events(at: downIndex).contains(.readable) {
                while let frames = try down.receiveMultipart(dontWait: true) {
                    _ = try up.send(Array(frames.dropFirst()))
                }
            }
        }
        peer.waitUntilExit()
        up.close()
        down.close()
        context.close()
    }
}
