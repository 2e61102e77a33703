import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// CURVE: only workers whose keys the coordinator lists can join, and nothing crosses the wire
    /// in plaintext.
    @Suite struct CurveSecurity {
        static let flow = """
            flow: secrets
            bucket: {items: [secret-alpha-7d1f, secret-beta-93ac, secret-gamma-e02b]}
            steps:
              - group: {op: SleepOp, input: items, output: done, maxConcurrent: 2, with: {ms: 20}}
            """

        /// Makes a key pair with `program keygen` and returns its public key.
        static func keygen(_ cluster: ClusterScope, _ program: String, _ name: String) async throws -> String {
            let made = try cluster.start(program, ["keygen", cluster.path(name)], label: "keygen \(name)")
            #expect(await made.waitForExit(timeout: 20) == .exit(0), "\(made.transcript)")
            return made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// `run FILE` bound on loopback with the coordinator key `c.key` and the list `authorized`.
        static func curveCoordinator(_ cluster: ClusterScope, _ file: String, authorized: String, minWorkers: Int,
                                     workerTimeout: Int) throws -> ChildProcess {
            try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--curve-key", cluster.path("c.key"), "--authorized-keys", authorized,
                                     "--min-workers", String(minWorkers), "--worker-timeout", String(workerTimeout)] + ClusterScope.fastHeartbeat)
        }

        static func curveWorker(_ cluster: ClusterScope, _ endpoint: String, name: String, key: String, coordinatorKey: String,
                                extra: [String] = []) throws -> ChildProcess {
            try cluster.worker(connect: endpoint, name: name, extra: ["--curve-key", cluster.path(key), "--coordinator-key=\(coordinatorKey)"] + extra)
        }

        @Test func keyFilesAreSecretAndNeverOverwritten() async throws {
            try await withCluster { cluster in
                let key = try await Self.keygen(cluster, "flow-worker", "w.key")
                #expect(key.count == 40, "\(key)")
                let path = cluster.path("w.key")
                let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
                #expect(mode == 0o600)
                let text = try String(contentsOfFile: path, encoding: .utf8)
                #expect(text.contains("public-key = \(key)\n"))
                #expect(text.contains("secret-key = "))
                let again = try cluster.start("flow-coordinator", ["keygen", path], label: "keygen again")
                #expect(await again.waitForExit(timeout: 20) == .exit(2))
                #expect(again.stderr.contains("\(path): a file is already there; a key file is never overwritten"), "\(again.stderr)")
                #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
            }
        }

        @Test func onlyAnAuthorisedWorkerJoinsAndTheOthersAreToldOrLogged() async throws {
            try await withCluster { cluster in
                let coordinatorKey = try await Self.keygen(cluster, "flow-coordinator", "c.key")
                let goodKey = try await Self.keygen(cluster, "flow-worker", "good.key")
                let strangerKey = try await Self.keygen(cluster, "flow-worker", "stranger.key")
                _ = try await Self.keygen(cluster, "flow-worker", "other.key")
                let authorized = try cluster.write("authorized", "# workers\n\(goodKey) good-worker\n\n")
                let file = try cluster.write("secrets.yaml", Self.flow)
                let coordinator = try Self.curveCoordinator(cluster, file, authorized: authorized, minWorkers: 1, workerTimeout: 30)
                let endpoint = try await coordinator.listeningEndpoint()
                #expect(coordinator.stderr.contains("start workers with: flow-worker --connect \(endpoint) --curve-key WORKER.key "
                                                    + "--coordinator-key '\(coordinatorKey)'"), "the key workers need: \(coordinator.stderr)")
                // A stranger's key, a plaintext worker, and a worker that trusts the wrong coordinator key.
                let stranger = try Self.curveWorker(cluster, endpoint, name: "stranger", key: "stranger.key", coordinatorKey: coordinatorKey)
                let plaintext = try cluster.worker(connect: endpoint, name: "plaintext")
                let misled = try Self.curveWorker(cluster, endpoint, name: "misled", key: "other.key", coordinatorKey: strangerKey)
                #expect(await coordinator.waitForStderr(containing: "refused a peer at 127.0.0.1 with key \(strangerKey)", timeout: 20),
                        "\(coordinator.stderr)")
                #expect(await misled.waitForStderr(containing: "no answer from \(endpoint): is the coordinator running, and is --coordinator-key right?",
                                                   timeout: 20), "\(misled.transcript)")
                #expect(await plaintext.waitForStderr(containing: "does it use CURVE (then give --curve-key and --coordinator-key)?", timeout: 20),
                        "\(plaintext.transcript)")
                #expect(await coordinator.waitForStderr(containing: "refused a peer at 127.0.0.1: its handshake failed (a plaintext worker, or one given the wrong --coordinator-key)",
                                                        timeout: 20), "\(coordinator.stderr)")
                #expect(coordinator.isRunning && !coordinator.stdout.contains("WillStart"), "no task went to a refused peer")

                let good = try Self.curveWorker(cluster, endpoint, name: "good", key: "good.key", coordinatorKey: coordinatorKey)
                #expect(await coordinator.waitForExit(timeout: 30) == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdoutLines.filter { $0.contains("WillStart") }.count == 3)
                #expect(coordinator.stdoutLines.filter { $0.contains("WillStart") }.allSatisfy { $0.contains("@ good]") })
                #expect(coordinator.stderr.components(separatedBy: "refused a peer at 127.0.0.1 with key \(strangerKey)").count == 2,
                        "a refusal is logged once per peer and key")
                for worker in [stranger, plaintext, misled, good] { _ = await worker.terminate() }
            }
        }

        @Test func sighupAdmitsAWorkerAddedToTheList() async throws {
            try await withCluster { cluster in
                let coordinatorKey = try await Self.keygen(cluster, "flow-coordinator", "c.key")
                let lateKey = try await Self.keygen(cluster, "flow-worker", "late.key")
                let authorized = try cluster.write("authorized", "# nobody yet\n")
                let file = try cluster.write("secrets.yaml", Self.flow)
                let coordinator = try Self.curveCoordinator(cluster, file, authorized: authorized, minWorkers: 1, workerTimeout: 60)
                let endpoint = try await coordinator.listeningEndpoint()
                let late = try Self.curveWorker(cluster, endpoint, name: "late", key: "late.key", coordinatorKey: coordinatorKey)
                #expect(await coordinator.waitForStderr(containing: "with key \(lateKey): not in the authorised keys", timeout: 20))
                try "\(lateKey) late\n".write(toFile: authorized, atomically: true, encoding: .utf8)
                coordinator.send(SIGHUP)
                #expect(await coordinator.waitForStderr(containing: "SIGHUP: 1 authorised key(s) read from \(authorized)", timeout: 10),
                        "\(coordinator.stderr)")
                #expect(await coordinator.waitForExit(timeout: 60) == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdoutLines.filter { $0.contains("@ late] WillStart") }.count == 3)
                _ = await late.terminate()
            }
        }

        @Test func sighupEndsTheRegistrationOfAWorkerTakenOffTheList() async throws {
            try await withCluster { cluster in
                let coordinatorKey = try await Self.keygen(cluster, "flow-coordinator", "c.key")
                let keepKey = try await Self.keygen(cluster, "flow-worker", "keep.key")
                let dropKey = try await Self.keygen(cluster, "flow-worker", "drop.key")
                let authorized = try cluster.write("authorized", "\(keepKey) keep\n\(dropKey) drop\n")
                let file = try cluster.write("slow.yaml", """
                    flow: slow
                    bucket: {items: [\((1...60).map(String.init).joined(separator: ", "))]}
                    steps:
                      - group: {op: SleepOp, input: items, output: done, maxConcurrent: 4, with: {ms: 150}}
                    """)
                let coordinator = try Self.curveCoordinator(cluster, file, authorized: authorized, minWorkers: 2, workerTimeout: 60)
                let endpoint = try await coordinator.listeningEndpoint()
                let keep = try Self.curveWorker(cluster, endpoint, name: "keep", key: "keep.key", coordinatorKey: coordinatorKey, extra: ["--concurrency", "2"])
                let drop = try Self.curveWorker(cluster, endpoint, name: "drop", key: "drop.key", coordinatorKey: coordinatorKey, extra: ["--concurrency", "2"])
                #expect(await coordinator.waitForStderr(containing: "worker drop joined", timeout: 20))
                #expect(await coordinator.waitForStderr(containing: "worker keep joined", timeout: 20))
                // The group has begun on both workers' slots before the key is taken off the list.
                #expect(await coordinator.waitForStderr(containing: "group SleepOp: 60 element(s)", timeout: 20))
                try "\(keepKey) keep\n".write(toFile: authorized, atomically: true, encoding: .utf8)
                coordinator.send(SIGHUP)
                #expect(await coordinator.waitForStderr(containing: "its key is no longer in the authorised keys", timeout: 10), "\(coordinator.stderr)")
                #expect(await drop.waitForStderr(containing: "this worker's key is no longer authorised", timeout: 10), "\(drop.transcript)")
                // It comes back, and its handshake is refused.
                #expect(await coordinator.waitForStderr(containing: "with key \(dropKey): not in the authorised keys", timeout: 10),
                        "\(coordinator.stderr)")
                #expect(await coordinator.waitForExit(timeout: 60) == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("output size: 60"))
                _ = await keep.terminate()
                _ = await drop.terminate()
            }
        }

        /// For containers and services: the keys from the environment instead of flags.
        @Test func keysCanComeFromTheEnvironment() async throws {
            try await withCluster { cluster in
                let coordinatorKey = try await Self.keygen(cluster, "flow-coordinator", "c.key")
                let workerKey = try await Self.keygen(cluster, "flow-worker", "w.key")
                let authorized = try cluster.write("authorized", "\(workerKey) w\n")
                let file = try cluster.write("secrets.yaml", Self.flow)
                let coordinator = try cluster.start("flow-coordinator", ["run", file, "--bind", "tcp://127.0.0.1:*", "--min-workers", "1"]
                                                    + ClusterScope.fastHeartbeat, label: "coordinator",
                                                    extraEnvironment: ["FLOW_CURVE_KEY": cluster.path("c.key"), "FLOW_AUTHORIZED_KEYS": authorized])
                let endpoint = try await coordinator.listeningEndpoint()
                // The coordinator does use CURVE: a plaintext worker is refused.
                let plain = try cluster.worker(connect: endpoint, name: "plain")
                #expect(await coordinator.waitForStderr(containing: "refused a peer at 127.0.0.1: its handshake failed", timeout: 20),
                        "\(coordinator.stderr)")
                _ = await plain.terminate()
                // The coordinator's key as a file holding just the public key, as keygen printed it.
                let publicKeyFile = try cluster.write("c.pub", coordinatorKey + "\n")
                let worker = try cluster.start("flow-worker", ["--connect", endpoint, "--name", "env"] + ClusterScope.fastHeartbeat, label: "env",
                                               extraEnvironment: ["FLOW_CURVE_KEY": cluster.path("w.key"), "FLOW_COORDINATOR_KEY": publicKeyFile])
                #expect(await coordinator.waitForExit(timeout: 30) == .exit(0), "\(coordinator.transcript)\n\(worker.transcript)")
                #expect(coordinator.stdoutLines.filter { $0.contains("@ env] WillStart") }.count == 3)
                _ = await worker.terminate()
            }
        }

        @Test func aPlaintextBindBeyondThisMachineIsRefusedUnlessInsecure() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("secrets.yaml", Self.flow)
                let refused = try cluster.coordinator(["run", file, "--bind", "tcp://0.0.0.0:5555"], label: "plaintext")
                #expect(await refused.waitForExit(timeout: 20) == .exit(2))
                #expect(refused.stderr.contains("--bind tcp://0.0.0.0:5555 listens beyond this machine in plaintext"), "\(refused.stderr)")
                #expect(refused.stderr.contains("--curve-key FILE") && refused.stderr.contains("--insecure"))
                // With --insecure it goes on, with a warning (to an address this machine does not
                // have, so nothing is bound beyond loopback).
                let insecure = try cluster.coordinator(["run", file, "--bind", "tcp://192.0.2.1:5555", "--insecure"], label: "insecure")
                #expect(await insecure.waitForExit(timeout: 20) == .exit(3))
                #expect(insecure.stderr.contains("\nwarning: --insecure: tcp://192.0.2.1:5555 takes plaintext workers from anywhere")
                        || insecure.stderr.hasPrefix("warning: --insecure: tcp://192.0.2.1:5555 takes plaintext workers from anywhere"),
                        "a warning, not an error: \(insecure.stderr)")
                #expect(!insecure.stderr.contains("error: warning:"), "\(insecure.stderr)")
                #expect(insecure.stderr.contains("cannot bind tcp://192.0.2.1:5555"))
                // Keys without --bind, and one without the other, are usage errors.
                let half = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--curve-key", cluster.path("none.key")], label: "half")
                #expect(await half.waitForExit(timeout: 20) == .exit(2))
                #expect(half.stderr.contains("CURVE needs both --curve-key FILE and --authorized-keys FILE"), "\(half.stderr)")
            }
        }

        /// What crosses the coordinator's port is ciphertext: no bucket value, no op name.
        @Test func aCaptureOfTheRunHoldsNoBucketValue() async throws {
            try await withCluster { cluster in
                let coordinatorKey = try await Self.keygen(cluster, "flow-coordinator", "c.key")
                let workerKey = try await Self.keygen(cluster, "flow-worker", "w.key")
                let authorized = try cluster.write("authorized", "\(workerKey)\n")
                let file = try cluster.write("secrets.yaml", Self.flow)
                // The kernel's pick of a free port: a random one in the ephemeral range was once
                // taken by another test's connection ("Address already in use").
                let port = try LoopbackPort.free()
                let capture = cluster.path("capture.pcap")
                let tcpdump = try cluster.startSystem("/usr/bin/env", ["tcpdump", "-i", "lo", "-U", "-w", capture, "tcp port \(port)"], label: "tcpdump")
                #expect(await tcpdump.waitForStderr(containing: "listening on lo", timeout: 20), "\(tcpdump.transcript)")
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:\(port)", "--curve-key", cluster.path("c.key"),
                                                           "--authorized-keys", authorized, "--min-workers", "1"] + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let worker = try Self.curveWorker(cluster, endpoint, name: "w", key: "w.key", coordinatorKey: coordinatorKey)
                #expect(await coordinator.waitForExit(timeout: 30) == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("secret-gamma-e02b"), "the values did travel")
                _ = await worker.terminate()
                // tcpdump -U writes each packet as it captures it, and flushes as SIGTERM ends it.
                _ = await tcpdump.terminate()
                let bytes = try Data(contentsOf: URL(fileURLWithPath: capture))
                #expect(bytes.count > 2_000, "the capture holds the run's packets (\(bytes.count) bytes)")
                for secret in ["secret-alpha-7d1f", "secret-beta-93ac", "secret-gamma-e02b", "SleepOp", "FLOW02"] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) crossed the wire in plaintext")
                }
            }
        }
    }
}
