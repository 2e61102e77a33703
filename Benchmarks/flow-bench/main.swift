// Prints throughput figures for the flow engine. Run through scripts/bench (release build).
import Flow
import Foundation

/// The smallest group op: copies its input to its output.
final class TrivialOp: FlowOperation, FlowOperationCreator, @unchecked Sendable {
    static func create() -> FlowOperation { TrivialOp() }
    override var primaryInputParamKey: String { "in" }
    override var primaryOutputParamKey: String { "out" }
    // Its mainLogic never blocks.
    override var runsMainLogicInline: Bool { true }
    override func mainLogic() {
        if let value: Int = getData(name: "in") { setData(name: "out", value: value) }
        finishSuccessfully()
    }
}

func measureGroup(elements: Int, maxConcurrent: Int) async -> (seconds: Double, ok: Bool) {
    let flow = Flow()
        .setDataBucket(dataBucket: ["items": Array(0..<elements)])
        .addGrouped(operationCreator: TrivialOp.self, dispatcher: FlowArrayGroupDispatcher(
            inputKey: "items", outputKey: "results", maxConcurrentOperationCount: maxConcurrent))
    let start = ContinuousClock.now
    await flow.run()
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return (seconds, flow.isSuccess && (flow.dataBucket["results"] as? [Int])?.count == elements)
}

let arguments = CommandLine.arguments.dropFirst()
// `flow-bench zmq N`: the raw ZeroMQ baseline (ZMQBaseline), N round trips; `zmq-peer` is its peer.
// `flow-bench zmq-latency N`: one message in flight to one peer, N round trips: the floor under a
// serial step's round trip; `zmq-latency-tcp N` the same over TCP on loopback; `zmq-latency-relay N`
// the same through a bare relay process (ZMQRelay, `zmq-relay` is the relay): the floor under a
// pool's extra hop.
switch arguments.first {
case "zmq-peer":
    try ZMQBaseline.runPeer(endpoint: arguments.dropFirst().first ?? "")
    exit(0)
case "zmq-relay":
    try ZMQRelay.run(upstream: arguments.dropFirst().first ?? "")
    exit(0)
case "zmq":
    let messages = arguments.dropFirst().first.flatMap(Int.init) ?? 200_000
    let rate = try ZMQBaseline.median { try ZMQBaseline.measure(messages: messages) }
    print(String(format: "raw ZeroMQ baseline: %9.0f round trips/s  (ROUTER -> 2 DEALER peer processes over ipc, 96 B, 512 in flight, one message per task; median of 3)", rate))
    exit(0)
case "zmq-latency":
    let messages = arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
    let rate = try ZMQBaseline.median { try ZMQBaseline.measure(messages: messages, peers: 1, window: 1) }
    print(String(format: "raw ZeroMQ round trip: %.3f ms  (ROUTER -> 1 DEALER peer process over ipc and back, 96 B, one in flight; median of 3)", 1000 / rate))
    exit(0)
case "list-files":
    // `flow-bench list-files TREE [REPEATS]`: ListFilesOp over a tree (ListingBench).
    try await ListingBench.run(Array(arguments.dropFirst()))
    exit(0)
case "zmq-latency-tcp":
    let messages = arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
    let rate = try ZMQBaseline.median { try ZMQBaseline.measure(messages: messages, peers: 1, window: 1, tcp: true) }
    print(String(format: "raw ZeroMQ round trip: %.3f ms  (ROUTER -> 1 DEALER peer process over tcp 127.0.0.1 and back, 96 B, one in flight; median of 3)", 1000 / rate))
    exit(0)
case "zmq-latency-relay":
    let messages = arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
    let rate = try ZMQBaseline.median { try ZMQBaseline.measure(messages: messages, peers: 1, window: 1, tcp: true, peerCommand: "zmq-relay") }
    print(String(format: "raw ZeroMQ round trip through a relay: %.3f ms  (ROUTER -> relay process -> 1 DEALER peer process over tcp 127.0.0.1 and back, 96 B, one in flight; median of 3)", 1000 / rate))
    exit(0)
default:
    break
}
// `flow-bench [N [LIMIT...]]`: groups of N elements (default 10,000) at each maxConcurrent LIMIT
// (default 1, 3 and 64); one limit alone is handy under a profiler.
let elements = arguments.first.flatMap(Int.init) ?? 10_000
let chosenLimits = arguments.dropFirst().compactMap(Int.init)
let rounds = 5
print("in-process group of \(elements) trivial ops (median of \(rounds) runs)")
for limit in chosenLimits.isEmpty ? [1, 3, 64] : chosenLimits {
    var rates: [Double] = []
    for _ in 0..<rounds {
        let (seconds, ok) = await measureGroup(elements: elements, maxConcurrent: limit)
        guard ok else { print("  run failed"); exit(1) }
        rates.append(Double(elements) / seconds)
    }
    rates.sort()
    let median = rates[rates.count / 2]
    print(String(format: "  maxConcurrent %3d: %9.0f ops/s  (%.1f µs per op)", limit, median, 1e6 / median))
}
