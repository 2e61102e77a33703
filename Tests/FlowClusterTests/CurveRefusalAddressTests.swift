import FlowTestSupport
import Foundation
import Testing
import ZeroMQ

extension ClusterIntegrationTestsSecondLane.CurveSecurity {
    /// A refusal names the peer that was refused, not the coordinator: bad peers connect from
    /// other loopback addresses (libzmq's `tcp://SOURCE:0;DESTINATION` form) than the one the
    /// coordinator listens on, and each of them is logged.
    @Test func aRefusedPeerIsLoggedWithItsOwnAddressAndEachBadPeerIsLogged() async throws {
        try await withCluster { cluster in
            _ = try await Self.keygen(cluster, "flow-coordinator", "c.key")
            let goodKey = try await Self.keygen(cluster, "flow-worker", "good.key")
            let authorized = try cluster.write("authorized", "\(goodKey) good\n")
            let file = try cluster.write("secrets.yaml", Self.flow)
            let coordinator = try Self.curveCoordinator(cluster, file, authorized: authorized, minWorkers: 1, workerTimeout: 60)
            let endpoint = try await coordinator.listeningEndpoint()
            let port = try #require(endpoint.split(separator: ":").last.map(String.init))
            let misled = try ZMQCurveKeyPair.generate()
            let elsewhere = try ZMQCurveKeyPair.generate()
            let stranger = try ZMQCurveKeyPair.generate()
            let coordinatorKey = try #require(coordinator.stderr.components(separatedBy: "--coordinator-key '").dropFirst().first?
                .prefix(40).description)
            // A plaintext peer from 127.0.0.2, one that trusts another coordinator's key from
            // 127.0.0.3, and a stranger's key (refused by ZAP) from 127.0.0.4. libzmq gives up a
            // connection whose handshake failed, so each tries again on a new socket, as a
            // flow-worker does, until the coordinator names it.
            let peers: [(source: String, line: String, options: [ZMQSocketOption])] = [
                ("127.0.0.2", "refused a peer at 127.0.0.2: its handshake failed", []),
                ("127.0.0.3", "refused a peer at 127.0.0.3: its handshake failed",
                 [.curveServerKey(elsewhere.publicKey), .curvePublicKey(misled.publicKey), .curveSecretKey(misled.secretKey)]),
                ("127.0.0.4", "refused a peer at 127.0.0.4 with key \(stranger.publicKey): not in the authorised keys",
                 [.curveServerKey(coordinatorKey), .curvePublicKey(stranger.publicKey), .curveSecretKey(stranger.secretKey)]),
            ]
            let context = try ZMQContext()
            defer { context.close() }
            let deadline = Date().addingTimeInterval(30)
            var attempts = 0
            while Date() < deadline, !peers.allSatisfy({ coordinator.stderr.contains($0.line) }) {
                attempts += 1
                var sockets: [ZMQSocket] = []
                for peer in peers where !coordinator.stderr.contains(peer.line) {
                    let socket = try ZMQSocket(context: context, type: .dealer)
                    sockets.append(socket)
                    try socket.set(.linger(milliseconds: 0))
                    try socket.set(peer.options)
                    try socket.connect("tcp://\(peer.source):0;127.0.0.1:\(port)")
                }
                try await Task.sleep(for: .milliseconds(300))
                for socket in sockets { socket.close() }
            }
            for peer in peers {
                #expect(coordinator.stderr.contains(peer.line), "\(peer.line) after \(attempts) attempt(s)\n\(coordinator.stderr)")
            }
            // Never the coordinator's own address, from which no peer came; each peer once,
            // though it keeps retrying.
            #expect(!coordinator.stderr.contains("refused a peer at 127.0.0.1"), "\(coordinator.stderr)")
            try await Task.sleep(for: .seconds(1))
            for address in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
                #expect(coordinator.stderr.components(separatedBy: "refused a peer at \(address)").count - 1 == 1,
                        "\(address) logged once: \(coordinator.stderr)")
            }
            #expect(coordinator.isRunning && !coordinator.stdout.contains("WillStart"), "no task went to a refused peer")
            _ = await coordinator.terminate()
        }
    }
}
