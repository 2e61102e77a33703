import Flow
import FlowWire
import Foundation
import Testing

/// The one pair of converters between the engine's tasks and results and the wire.
@Suite("Task and result conversion")
struct WireConversionTests {
    /// An array nested `depth` deep around a scalar.
    private func nested(_ depth: Int) -> Any {
        var value: Any = 1
        for _ in 0..<depth { value = [value] }
        return value
    }

    @Test("a group element's index and tag travel in the TASK and back out as a FlowTask")
    func groupElementRoundTrip() throws {
        let task = FlowTask(operation: .named("SleepOp", parameters: ["ms": 1]), bucket: [:], groupTag: "3f2a", groupIndex: 41,
                            groupElement: "photo.jpg", operationName: "SleepOp")
        let wire = try WireTask(task, taskID: 7)
        #expect(wire.elementIndex == 41)
        #expect(wire.groupElement == .string("photo.jpg"))
        let back = FlowTask(wire: try #require(try WireCodec.decode(WireCodec.encode(.task([wire]))).tasks?.first))
        #expect(back.groupIndex == 41)
        #expect(back.groupTag == "3f2a")
        #expect(back.groupElement as? String == "photo.jpg")
    }

    @Test("a bucket value nested 65 deep fails before sending, naming the key; 64 goes")
    func tooDeepBucketValueIsRefused() throws {
        let deep = FlowTask(operation: .named("Op", parameters: [:]), bucket: ["outputs": nested(65)], operationName: "Op")
        #expect(throws: WireEncodingError.self) { try WireTask(deep, taskID: 1) }
        do {
            _ = try WireTask(deep, taskID: 1)
        } catch {
            #expect(error.description.contains("bucket value <outputs> nests arrays and maps 65 deep"))
        }
        let fine = FlowTask(operation: .named("Op", parameters: [:]), bucket: ["outputs": nested(64)], operationName: "Op")
        let wire = try WireTask(fine, taskID: 1)
        #expect(throws: Never.self) { try WireCodec.decode(WireCodec.encode(.task([wire]))) }
    }

    @Test("an output a worker cannot send turns into a failure instead of a RESULT the coordinator would drop")
    func tooDeepOutputFailsTheResult() throws {
        let task = WireTask(taskID: 3, op: "Op", groupElement: .integer(1), elementIndex: 2)
        var result = FlowTaskResult(operationName: "Op", state: .successfully, events: [], bucket: [:], startedAt: Date(), finishedAt: Date())
        result.groupOutput = nested(65)
        let wire = WireResult(result, for: task)
        #expect(wire.elementIndex == 2)
        #expect(wire.output == nil)
        guard case .withError(let text) = wire.finishState else {
            Issue.record("expected a failure, got \(wire.finishState)")
            return
        }
        #expect(text.contains("Op's output nests arrays and maps 65 deep"))
        #expect(throws: Never.self) { try WireCodec.decode(WireCodec.encode(.result([wire]))) }
    }

    @Test("a result comes back to the engine with its index, output, events, worker and the try its op saw")
    func resultRoundTrip() throws {
        var task = WireTask(taskID: 3, op: "Op", groupElement: .integer(1), elementIndex: 5)
        // The op's try, not the dispatch count the RESULT carries back.
        task.operationAttempt = 2
        var result = FlowTaskResult(operationName: "Op", state: .successfully,
                                    events: [FlowRecordedEvent(time: Date(), kind: .log("hi"))], bucket: [:],
                                    startedAt: Date(), finishedAt: Date())
        result.groupOutput = "done"
        let decoded = try #require(try WireCodec.decode(WireCodec.encode(.result([WireResult(result, for: task)]))).results?.first)
        let back = FlowTaskResult(wire: decoded, for: task, worker: "w1")
        #expect(back.groupIndex == 5)
        #expect(back.groupOutput as? String == "done")
        #expect(back.worker == "w1")
        #expect(back.events.count == 1)
        #expect(back.attempt == 2 && decoded.attempt == 1)
    }
}

private extension WireMessage {
    var tasks: [WireTask]? { if case .task(let tasks) = self { tasks } else { nil } }
    var results: [WireResult]? { if case .result(let results) = self { results } else { nil } }
}
