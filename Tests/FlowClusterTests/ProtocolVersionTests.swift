import FlowWire
import Foundation
import Testing
import ZeroMQ

/// A peer of another protocol version is told so, on both sides, and never waits in silence
/// (docs/PROTOCOL.md §9.3): a FLOW/01 worker (its READY from the first text's golden bytes) at a
/// real coordinator, and a real worker at a FLOW/01 coordinator that refuses it.
extension ClusterIntegrationTests {
    @Suite struct ProtocolVersions {
        /// READY from worker `w1` as FLOW/01's first text wrote it (no heartbeat interval).
        static let flow01Ready: [Data] = [
            Data("FLOW01".utf8), Data([0x01]),
            Data([0x02, 0x77, 0x31, 0, 0, 0, 0, 0x02, 0, 0, 0, 0x01, 0x04, 0x65, 0x63, 0x68, 0x6f, 0x01, 0x68, 0x2a, 0, 0, 0]),
        ]

        @Test func aWorkerOfTheEarlierVersionIsAnsweredInItsOwnVersionAndTheCoordinatorSaysWhy() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("one.yaml", FlowFixtures.groupedUpload(images: ["a"], maxConcurrent: 1, delay: 0))
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--min-workers", "1",
                                                           "--worker-timeout", "3"])
                let endpoint = try await coordinator.listeningEndpoint()
                let replies = try await RawPeers.exchange(with: endpoint, send: [Self.flow01Ready, Self.flow01Ready], listen: 1)
                let disconnect = try #require(replies.first, "no answer to a FLOW/01 READY: the old worker would wait in silence")
                #expect(disconnect.count == 3 && disconnect[0] == Data("FLOW01".utf8) && disconnect[1] == Data([0x05]), "\(disconnect)")
                var reader = WireReader(disconnect[2])
                #expect(try reader.readString("reason") == "unsupported protocol version FLOW01, this coordinator speaks FLOW02")
                #expect(replies.count == 1, "answered more than once per heartbeat interval: \(replies.count)")
                #expect(await coordinator.waitForExit(timeout: 20) != .exit(0), "\(coordinator.transcript)")
                let refusals = coordinator.stderr.components(separatedBy: "unsupported protocol version FLOW01, this coordinator speaks FLOW02")
                #expect(refusals.count == 2, "logged once (of two READYs): \(coordinator.stderr)")
                #expect(!coordinator.stderr.contains("joined from"), "a FLOW/01 peer registered: \(coordinator.stderr)")
            }
        }

        @Test func aWorkerAtACoordinatorOfTheEarlierVersionSaysBothVersions() async throws {
            try await withCluster { cluster in
                let context = try ZMQContext()
                defer { context.close() }
                let router = try ZMQSocket(context: context, type: .router)
                defer { router.close() }
                try router.set(.linger(milliseconds: 0))
                try router.bind("tcp://127.0.0.1:*")
                let endpoint = try router.lastEndpoint
                let worker = try cluster.worker(connect: endpoint, name: "new")
                // As a FLOW/01 coordinator following its own 9.3: a DISCONNECT in its version.
                let deadline = Date().addingTimeInterval(10)
                var answered = false
                while Date() < deadline, !answered {
                    if let frames = try router.receiveMultipart(dontWait: true), frames.count >= 2 {
                        #expect(frames[1] == WireCodec.protocolFrame, "the worker does not speak FLOW02: \(frames[1])")
                        var disconnect = WireCodec.encode(.disconnect(reason: "unsupported protocol version FLOW02, this coordinator speaks FLOW01"))
                        disconnect[0] = Data("FLOW01".utf8)
                        _ = try router.send([frames[0]] + disconnect, flags: .dontWait)
                        answered = true
                    } else {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                }
                #expect(answered, "the worker never sent READY")
                let said = "the coordinator at \(endpoint) speaks protocol version FLOW01, this worker speaks FLOW02 (it said: "
                    + "unsupported protocol version FLOW02, this coordinator speaks FLOW01)"
                #expect(await worker.waitForStderr(containing: said, timeout: 10), "\(worker.stderr)")
                _ = await worker.terminate()
            }
        }

    }
}
