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
}
