import FlowTestSupport
import Foundation
import Testing

/// A CURVE pool (docs/PROTOCOL.md §14.7): a client key runs a flow on it, a worker's key may not.
@Suite(.serialized) struct PoolCurveTests {
    @Test func aClientKeyRunsAFlowOnACurvePoolAndAWorkerKeyIsRefusedHello() async throws {
        try await withCluster { cluster in
            let poolKey = try await ClusterIntegrationTestsSecondLane.CurveSecurity.keygen(cluster, "flow-coordinator", "pool.key")
            let workerKey = try await ClusterIntegrationTestsSecondLane.CurveSecurity.keygen(cluster, "flow-worker", "w.key")
            let clientKey = try await ClusterIntegrationTestsSecondLane.CurveSecurity.keygen(cluster, "flow-coordinator", "c.key")
            let workers = try cluster.write("workers", "\(workerKey) w1\n")
            let clients = try cluster.write("clients", "\(clientKey) c1\n")
            let pool = try cluster.coordinator(["pool", "--bind", "tcp://127.0.0.1:*", "--curve-key", cluster.path("pool.key"),
                                                "--authorized-keys", workers, "--authorized-clients", clients] + ClusterScope.fastHeartbeat,
                                               label: "pool")
            try #require(await pool.waitForStderr(containing: "pool listening on ", timeout: 10), "\(pool.transcript)")
            let line = pool.stderr.split(separator: "\n").first { $0.contains("pool listening on ") } ?? ""
            let match = try #require(line.firstMatch(of: #/pool listening on (tcp://[0-9.]+:[0-9]+)/#), "\(line)")
            let endpoint = String(match.1)
            #expect(line.contains("the pool's public key: \(poolKey)"), "\(line)")

            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 2,
                                   extra: ["--curve-key", cluster.path("w.key"), "--coordinator-key=\(poolKey)"])
            let file = try cluster.write("c.yaml", PoolTests.echoFlow("c", count: 6, sleep: 0))
            let run = try cluster.coordinator(["run", file, "--pool", endpoint, "--pool-key=\(poolKey)", "--curve-key", cluster.path("c.key"),
                                               "--worker-timeout", "30"] + ClusterScope.fastHeartbeat, label: "client")
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)\n\(pool.stderr)")
            #expect(run.stdout.finalBucketValue("outs") == PoolTests.expectedOutputs("c", count: 6), "\(run.stdout)")

            // The worker's key pair is admitted to the handshake, but not to HELLO.
            let impostor = try cluster.coordinator(["run", file, "--pool", endpoint, "--pool-key=\(poolKey)", "--curve-key", cluster.path("w.key"),
                                                    "--worker-timeout", "3"] + ClusterScope.fastHeartbeat, label: "impostor")
            #expect(await impostor.waitForExit(timeout: 30) == .exit(3), "\(impostor.transcript)")
            #expect(!impostor.stdout.contains("WillStart"), "\(impostor.stdout)")
            // It says the pool refused it, and why, not that no pool answered (issue 46 item 13).
            #expect(impostor.stderr.contains("the pool at \(endpoint) refused this run: this key may not submit runs on this pool"),
                    "\(impostor.stderr)")
            #expect(!impostor.stderr.contains("no pool answered"), "\(impostor.stderr)")
            #expect(await pool.waitForStderr(containing: "not authorised for that role", timeout: 10), "\(pool.stderr)")
            let refusal = pool.stderr.split(separator: "\n").first { $0.contains("not authorised for that role") } ?? ""
            #expect(refusal.contains("refused HELLO"), "\(refusal)")
            // The pool names the key it refused (§14.7).
            #expect(refusal.contains(workerKey), "\(refusal)")
        }
    }

    /// SIGHUP re-reads both lists: a client key added to `--authorized-clients` runs without a
    /// restart of the pool, and the refused run said why.
    @Test func aClientKeyAddedAndSighupRunsWithoutARestart() async throws {
        try await withCluster { cluster in
            let poolKey = try await ClusterIntegrationTestsSecondLane.CurveSecurity.keygen(cluster, "flow-coordinator", "pool.key")
            let workerKey = try await ClusterIntegrationTestsSecondLane.CurveSecurity.keygen(cluster, "flow-worker", "w.key")
            let clientKey = try await ClusterIntegrationTestsSecondLane.CurveSecurity.keygen(cluster, "flow-coordinator", "late.key")
            let workers = try cluster.write("workers", "\(workerKey) w1\n")
            let clients = try cluster.write("clients", "# nobody yet\n")
            let pool = try cluster.coordinator(["pool", "--bind", "tcp://127.0.0.1:*", "--curve-key", cluster.path("pool.key"),
                                                "--authorized-keys", workers, "--authorized-clients", clients] + ClusterScope.fastHeartbeat,
                                               label: "pool")
            try #require(await pool.waitForStderr(containing: "pool listening on ", timeout: 10), "\(pool.transcript)")
            let line = pool.stderr.split(separator: "\n").first { $0.contains("pool listening on ") } ?? ""
            let endpoint = String(try #require(line.firstMatch(of: #/pool listening on (tcp://[0-9.]+:[0-9]+)/#)).1)
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 2,
                                   extra: ["--curve-key", cluster.path("w.key"), "--coordinator-key=\(poolKey)"])
            let file = try cluster.write("l.yaml", PoolTests.echoFlow("l", count: 4, sleep: 0))
            let arguments = ["run", file, "--pool", endpoint, "--pool-key=\(poolKey)", "--curve-key", cluster.path("late.key")] + ClusterScope.fastHeartbeat
            let refused = try cluster.coordinator(arguments + ["--worker-timeout", "3"], label: "refused")
            #expect(await refused.waitForExit(timeout: 30) == .exit(3), "\(refused.transcript)")
            // A key in neither list: the run says its key was refused, not that no pool answered.
            #expect(refused.stderr.contains("the pool at \(endpoint) refused this run: its CURVE key (\(clientKey)) is not in the pool's "
                                            + "--authorized-clients"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("no pool answered"), "\(refused.stderr)")
            #expect(await pool.waitForStderr(containing: "in neither list (add it to --authorized-keys for a worker or to --authorized-clients",
                                             timeout: 10), "\(pool.stderr)")
            try "\(clientKey) late\n".write(toFile: clients, atomically: true, encoding: .utf8)
            pool.send(SIGHUP)
            #expect(await pool.waitForStderr(containing: "1 client key(s) read", timeout: 10), "\(pool.stderr)")
            let run = try cluster.coordinator(arguments + ["--worker-timeout", "30"], label: "admitted")
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)\n\(pool.stderr)")
            #expect(run.stdout.finalBucketValue("outs") == PoolTests.expectedOutputs("l", count: 4))
        }
    }
}
