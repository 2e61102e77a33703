import Flow
import FlowCluster
import FlowWire
import FlowTestSupport
import Foundation
import Logging
import Synchronization
import Testing
import ZeroMQ

extension ClusterIntegrationTests {
    /// A peer cannot make the coordinator buffer a huge message: past the frame limit its
    /// connection is dropped before anything reaches the coordinator (`ZMQ_MAXMSGSIZE`).
    @Suite struct InboundSizeLimit {
        @Test func aFrameOverTheLimitNeverReachesTheCoordinator() async throws {
            let events = Mutex<[ClusterEvent]>([])
            let changes = EventWaiters()
            var configuration = FlowCoordinator.Configuration(endpoint: "tcp://127.0.0.1:*")
            configuration.maximumInboundFrameSize = 64 << 10
            #expect(WireLimits.maximumInboundFrameSize == 256 << 20)
            let coordinator = try FlowCoordinator(configuration: configuration, logger: Logger(label: "test")) { event in
                events.withLock { $0.append(event) }
                changes.changed()
            }
            try await withStarted(coordinator) { endpoint in
                @Sendable func malformed() -> Int {
                    events.withLock { $0.filter { if case .malformedMessage = $0 { true } else { false } }.count }
                }
                func send(bodyBytes: Int) throws {
                    let context = try ZMQContext()
                    defer { context.close() }
                    let dealer = try ZMQSocket(context: context, type: .dealer)
                    defer { dealer.close() }
                    try dealer.set(.linger(milliseconds: 2000))
                    try dealer.connect(endpoint)
                    // A RESULT whose body is garbage: the coordinator reports it as malformed when it gets it.
                    _ = try dealer.send([Data(WireLimits.protocolSignature), Data([0x03]), Data(repeating: 0xEE, count: bodyBytes)])
                }
                try send(bodyBytes: 1 << 20)
                // What is tested is that nothing comes: 1.5 s for the frame to arrive if it could
                // (woken at once if a malformed message is reported).
                _ = await changes.wait(timeout: .milliseconds(1500)) { malformed() > 0 }
                #expect(malformed() == 0, "a 1 MiB frame reached the coordinator past a 64 KiB limit")
                try send(bodyBytes: 1 << 10)
                let reported = await changes.wait(timeout: .seconds(10)) { malformed() > 0 }
                #expect(reported && malformed() == 1, "the small garbage frame must arrive and be reported within 10 s (\(malformed()) reports)")
            }
        }
    }
}
