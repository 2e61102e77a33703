import Flow
import Foundation
import Testing
@testable import FlowWire

/// A large result is encoded ahead, off the worker's I/O thread (`WorkerTaskRunner`): the RESULT
/// it goes in must be byte for byte the one encoded on the spot, and a change after the encoding
/// must never send the old bytes.
@Suite struct WireResultEncodedAheadTests {
    func result(output: FlowValue, log: String = "wrote it") -> WireResult {
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        return WireResult(taskID: 7, attempt: 2, finishState: .successfully, startedAt: time, finishedAt: time,
                          events: [WireEvent(time: time, kind: .log(log)), WireEvent(time: time, kind: .set(key: "out", value: output))],
                          elementIndex: 3, output: output)
    }

    @Test func aResultEncodedAheadIsSentByteForByteAsOneEncodedOnTheSpot() throws {
        let big = FlowValue.map(["text": .string(String(repeating: "x", count: 300_000)), "list": .array((0..<500).map { .integer($0) })])
        let plain = result(output: big)
        let ahead = plain.encodingTailAhead()
        #expect(ahead.encodedTail.bytes != nil)
        let batch = [plain, result(output: .string("small"))]
        #expect(WireCodec.encode(.result(batch)) == WireCodec.encode(.result([ahead, batch[1]])))
        // It decodes to the same result, and compares equal to the one never encoded ahead.
        var frames = WireCodec.encode(.result([ahead]))
        guard case .result(let decoded) = try WireCodec.decode(taking: &frames) else { Issue.record("not a RESULT"); return }
        #expect(decoded == [plain])
        #expect(ahead == plain)
    }

    @Test func changingTheEventsIndexOrOutputForgetsTheBytesEncodedAhead() {
        var ahead = result(output: .string("first")).encodingTailAhead()
        ahead.output = .string("second")
        #expect(ahead.encodedTail.bytes == nil)
        var expected = result(output: .string("first"))
        expected.output = .string("second")
        #expect(WireCodec.encode(.result([ahead])) == WireCodec.encode(.result([expected])))
        var again = result(output: .null).encodingTailAhead()
        again.events = []
        #expect(again.encodedTail.bytes == nil)
        var index = result(output: .null).encodingTailAhead()
        index.elementIndex = 4
        #expect(index.encodedTail.bytes == nil)
        // The fixed fields are written live: a pool's change of task id and attempt keeps the bytes.
        var renamed = result(output: .string("kept")).encodingTailAhead()
        renamed.taskID = 99
        renamed.attempt = 1
        #expect(renamed.encodedTail.bytes != nil)
        var fresh = result(output: .string("kept"))
        fresh.taskID = 99
        fresh.attempt = 1
        #expect(WireCodec.encode(.result([renamed])) == WireCodec.encode(.result([fresh])))
    }

    @Test func theSizeCountStopsAtItsLimit() {
        let threshold = WireResult.encodeAheadThreshold
        #expect(!result(output: .string("small")).tailReaches(threshold))
        #expect(result(output: .string(String(repeating: "y", count: threshold))).tailReaches(threshold))
        // Many small values: counted until the limit, not all of them.
        #expect(result(output: .array(Array(repeating: .integer(1), count: threshold / 4))).tailReaches(threshold))
        #expect(!result(output: .array(Array(repeating: .integer(1), count: 1_000))).tailReaches(threshold))
        #expect(result(output: .null, log: String(repeating: "z", count: threshold)).tailReaches(threshold))
    }
}
