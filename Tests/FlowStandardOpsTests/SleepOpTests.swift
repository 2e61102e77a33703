import Flow
import FlowStandardOps
import Foundation
import Testing

@Suite("SleepOp")
struct SleepOpTests {
    @Test func groupPassesItsInputThroughAfterTheWait() async throws {
        let started = Date()
        let flow = await runFlow(bucket: ["items": [1, "two", 3.5, ["k": "v"]]], steps: [
            group("SleepOp", input: "items", output: "same", maxConcurrent: 4, ["ms": 60]),
        ])

        #expect(flow.isSuccess, "\(flow.errorText)")
        let output = try #require(flow.dataBucket["same"] as? [Any])
        #expect(FlowValue(any: output) == [1, "two", 3.5, ["k": "v"]])
        #expect(Date().timeIntervalSince(started) >= 0.06)
    }

    @Test func cancellingTheFlowEndsTheWait() async throws {
        let flow = Flow(definition: FlowDefinition(name: "sleepy", steps: [step("SleepOp", ["ms": 300_000])]), registry: .standard)
        let started = Date()
        flow.start()
        try await Task.sleep(nanoseconds: 100_000_000)
        flow.cancel()
        await flow.waitUntilFinished()

        #expect(!flow.isSuccess)
        // Far below the op's 300 s, with room for a loaded machine (a full suite run took 27 s
        // from start to end here, most of it before the cancel).
        #expect(Date().timeIntervalSince(started) < 120)
    }

    @Test func negativeWaitIsRejected() {
        #expect(throws: FlowParameterError.self) {
            try FlowOperationRegistry.standard.makeOperation(named: "SleepOp", parameters: ["ms": -5])
        }
    }
}
