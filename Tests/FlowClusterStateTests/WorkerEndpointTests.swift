import Testing
@testable import FlowCluster

/// The endpoint a bound coordinator tells workers to connect to: one other machines can reach.
@Suite struct WorkerEndpointTests {
    @Test(arguments: [
        ("tcp://0.0.0.0:5555", "tcp://build-7:5555"),
        ("tcp://[::]:5555", "tcp://build-7:5555"),
        ("tcp://*:5555", "tcp://build-7:5555"),
        ("tcp://10.0.0.5:5555", "tcp://10.0.0.5:5555"),
        ("tcp://127.0.0.1:41234", "tcp://127.0.0.1:41234"),
        ("ipc:///tmp/flow.sock", "ipc:///tmp/flow.sock"),
    ])
    func aWildcardAddressBecomesThisMachinesName(bound: String, connect: String) {
        #expect(WorkerEndpoint.toConnect(bound: bound, hostName: "build-7") == connect)
    }

    @Test func aHostThatDoesNotResolveIsNamedAndOthersAreNot() {
        let problem = WorkerEndpoint.resolutionProblem("tcp://no-such-host.invalid:5555")
        #expect(problem?.hasPrefix("cannot resolve the host no-such-host.invalid of tcp://no-such-host.invalid:5555: ") == true, "\(problem ?? "nil")")
        for endpoint in ["tcp://127.0.0.1:5555", "tcp://localhost:5555", "tcp://[::1]:5555", "tcp://lo;127.0.0.1:5555", "ipc:///tmp/x.sock", "tcp://*:5555"] {
            #expect(WorkerEndpoint.resolutionProblem(endpoint) == nil, "\(endpoint)")
        }
        #expect(WorkerEndpoint.host(of: "tcp://eth0;10.0.0.5:5555") == "10.0.0.5")
        #expect(WorkerEndpoint.host(of: "tcp://[fe80::1]:5555") == "fe80::1")
    }
}
