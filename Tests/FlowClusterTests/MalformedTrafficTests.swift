import FlowWire
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension ClusterIntegrationTestsSecondLane {
    /// Traffic that is not a worker's reaches the coordinator's port while it runs a flow.
    @Suite struct ForeignTrafficAtTheCoordinator {
        @Test func garbageFramesAndRawBytesAreDroppedWhileTheFlowCompletes() async throws {
            try await withCluster { cluster in
                let images = ["a", "b", "c", "d", "e", "f"]
                // The run waits at its end for the gate, which opens once the last garbage is
                // written: under ThreadSanitizer a loaded machine took long enough between the
                // worker joining and the last write that the run had ended, and the write found
                // no one to connect to.
                let gate = cluster.path("GO")
                let flow = FlowFixtures.groupedUpload(images: images, maxConcurrent: 3, delay: 0.2) + "\n" + RunControlTests.gateStep(gate)
                let file = try cluster.write("garbage.yaml", flow)
                let coordinator = try cluster.coordinator(
                    ["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "20"] + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let port = try #require(RawPeers.port(of: endpoint))

                // A TCP peer that connects and never says anything, for the whole run.
                let silent = RawPeers.tcpConnect(port: port)
                defer { if let silent { close(silent) } }
                #expect(silent != nil)

                // Before any worker: raw bytes, then ZeroMQ garbage.
                #expect(await RawPeers.tcpWrite(port: port, RawPeers.randomBytes(4096)))
                #expect(await RawPeers.tcpWrite(port: port, Data("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)))
                let greeting = Data([0xff, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x7f, 0x03, 0x00]) + Data("NULL".utf8) + RawPeers.randomBytes(300)
                #expect(await RawPeers.tcpWrite(port: port, greeting))
                let replies = try await RawPeers.dealer(to: endpoint, send: RawPeers.malformedMessages() + [RawPeers.resultFromAStranger()])
                #expect(replies.contains { if case .disconnect = $0 { true } else { false } },
                        "a RESULT from an unknown peer must be answered with DISCONNECT; got \(replies)")
                #expect(!replies.contains { if case .task = $0 { true } else { false } }, "garbage must never register a worker")
                #expect(coordinator.isRunning, "the coordinator died on garbage\n\(coordinator.transcript)")

                // With a real worker, more garbage while the run goes on.
                let worker = try cluster.worker(connect: endpoint, name: "w1")
                try #require(await coordinator.waitForStderr(containing: "worker w1 joined", timeout: 10))
                _ = try await RawPeers.dealer(to: endpoint, send: RawPeers.malformedMessages(), listen: 0.1)
                #expect(await RawPeers.tcpWrite(port: port, RawPeers.randomBytes(10_000)), "running: \(coordinator.isRunning)")
                FileManager.default.createFile(atPath: gate, contents: Data())

                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.finalBucketValue("imageURLs") == FlowFixtures.expectedURLs(images), "\(coordinator.stdout)")
                #expect(coordinator.stderr.contains("dropped a malformed message from peer "), "\(coordinator.stderr)")
                #expect(coordinator.stderr.contains("unsupported protocol version FLOW01, this coordinator speaks FLOW02"), "the wrong version should be logged\n\(coordinator.stderr)")
                let joined = coordinator.stderr.components(separatedBy: " joined from ").count - 1
                #expect(joined == 1, "only w1 may have joined\n\(coordinator.stderr)")
                #expect(!coordinator.stdout.contains("impostor"))
                _ = await worker.terminate()
            }
        }
    }
}
