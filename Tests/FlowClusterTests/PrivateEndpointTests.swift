#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// The socket file of an embedded run's private endpoint: in `$XDG_RUNTIME_DIR`, and removed by
/// the next run when its own run was killed before it could remove it.
@Suite struct PrivateEndpointTests {
    static func sockets(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("flow-") && $0.hasSuffix(".sock") }.sorted()
    }

    @Test func aKilledRunsSocketFileIsRemovedByTheNextRunAndOthersAreKept() async throws {
        try await withCluster { cluster in
            let runtime = cluster.path("runtime")
            try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
            let environment = ["XDG_RUNTIME_DIR": runtime]
            let slow = try cluster.write("slow.yaml", """
                flow: slow
                steps:
                  - op: SleepOp
                    with: {ms: 60000}
                """)
            let killed = try cluster.start("flow-coordinator", ["run", slow], label: "killed", extraEnvironment: environment)
            #expect(await killed.waitForStderr(containing: "SleepOp", timeout: 30), "\(killed.transcript)")
            let left = Self.sockets(in: runtime)
            try #require(left.count == 1 && left.first?.hasPrefix("flow-\(killed.processIdentifier)-") == true,
                         "the run's socket is not in XDG_RUNTIME_DIR: \(left)")
            killed.kill()
            _ = await killed.waitForExit(timeout: 10)
            #expect(Self.sockets(in: runtime) == left, "SIGKILL leaves the socket file: the next run must remove it")

            // Not ours to remove: a plain file with a dead process's name, and a live process's socket.
            let plain = runtime + "/flow-999999999-1.sock"
            #expect(FileManager.default.createFile(atPath: plain, contents: Data()))
            let live = try cluster.start("flow-coordinator", ["run", slow], label: "live", extraEnvironment: environment)
            #expect(await live.waitForOutput(timeout: 30) { _, _ in Self.sockets(in: runtime).contains { $0.hasPrefix("flow-\(live.processIdentifier)-") } })

            let quick = try cluster.write("quick.yaml", """
                flow: quick
                steps:
                  - op: SimplePrintOp
                """)
            let next = try cluster.start("flow-coordinator", ["run", quick], label: "next", extraEnvironment: environment)
            #expect(await next.waitForExit(timeout: 30) == .exit(0), "\(next.transcript)")
            let after = Self.sockets(in: runtime)
            #expect(!after.contains(left[0]), "the killed run's socket file is still there: \(after)")
            #expect(after.contains("flow-999999999-1.sock"), "a file that is not a socket was removed")
            #expect(after.contains { $0.hasPrefix("flow-\(live.processIdentifier)-") }, "a running run's socket was removed: \(after)")
            #expect(after.count == 2, "the quick run left its own socket file: \(after)")
            live.kill()
        }
    }
}
