import Flow
import FlowWire
import Foundation
import Testing

@Suite("Message round trips")
struct WireMessageRoundTripTests {
    @Test("every sample message decodes to what was encoded", arguments: sampleMessages)
    func sampleMessageRoundTrips(message: WireMessage) throws {
        #expect(try roundTrip(message) == message)
    }

    @Test("READY keeps every field, including unicode and empty names")
    func readyRoundTrips() throws {
        let full = WireReady(workerName: "wörker-ü", features: 0xDEAD_BEEF, slotCount: .max, ops: ["a", "", "日本"], hostname: "", processID: .max)
        let empty = WireReady(workerName: "", slotCount: 1, ops: [""], hostname: "h", processID: 0)
        #expect(try roundTrip(.ready(full)) == .ready(full))
        #expect(try roundTrip(.ready(empty)) == .ready(empty))
    }

    @Test("TASK keeps every field, with empty and extreme values")
    func taskRoundTrips() throws {
        let extreme = WireTask(
            taskID: .max, attempt: .max, op: "", displayTag: "", parameters: everyValue, bucket: ["in": .map(everyValue)],
            timeLimitMilliseconds: .max
        )
        let plain = WireTask(taskID: 0, attempt: 0, op: "echo")
        let message = WireMessage.task([sampleTask(), extreme, plain])
        #expect(try roundTrip(message) == message)
    }

    @Test("RESULT keeps every finish state", arguments: [
        FlowFinishState.successfully, .withError("boom: \"quoted\" ✗"), .withError(""),
        .withInsufficientInputData("can't find <image> in data bucket"),
        .withMismatchInputDataType("<width> is a string, expected integer"), .cancelled,
    ])
    func resultKeepsFinishState(state: FlowFinishState) throws {
        let message = WireMessage.result([sampleResult(finishState: state)])
        #expect(try roundTrip(message) == message)
    }

    @Test("RESULT keeps events in order, with every value type in set events")
    func resultKeepsEvents() throws {
        var events: [WireEvent] = []
        for (index, entry) in everyValue.sorted(by: { $0.key < $1.key }).enumerated() {
            let time = wireDate(sampleTime + Int64(index) * 1_001)
            events.append(WireEvent(time: time, kind: .log("line \(index) — \(entry.key)")))
            events.append(WireEvent(time: time, kind: .set(key: entry.key, value: entry.value)))
        }
        events.append(WireEvent(time: wireDate(-5), kind: .log("")))
        let result = WireResult(taskID: 9, attempt: 3, finishState: .successfully, startedAt: wireDate(-7), finishedAt: wireDate(sampleTime), events: events)
        guard case .result(let decoded) = try roundTrip(.result([result])) else {
            Issue.record("not a RESULT")
            return
        }
        #expect(decoded.first?.events == events)
        #expect(decoded == [result])
    }

    @Test("a group element keeps its element, of any value type, and a result its output", arguments: everyValue.sorted { $0.key < $1.key })
    func groupElementAndOutputRoundTrip(entry: (key: String, value: FlowValue)) throws {
        let task = WireTask(taskID: 1, op: "square", displayTag: "ab12", groupElement: .some(entry.value), elementIndex: 1_000_000)
        #expect(task.isGroupElement)
        #expect(try roundTrip(.task([task])) == .task([task]))
        let result = WireResult(taskID: 1, attempt: 1, finishState: .successfully, startedAt: wireDate(0), finishedAt: wireDate(0),
                                elementIndex: 1_000_000, output: .some(entry.value))
        #expect(try roundTrip(.result([result])) == .result([result]))
    }

    @Test("a serial task has no group element (not a null one) and a result may have no output")
    func serialTaskHasNoElement() throws {
        let task = WireTask(taskID: 2, op: "echo", bucket: ["k": .null])
        #expect(!task.isGroupElement)
        guard case .task(let tasks) = try roundTrip(.task([task])) else {
            Issue.record("not a TASK")
            return
        }
        // Compared with `.none`: `FlowValue` is `ExpressibleByNilLiteral`, so `nil` could mean `.null`.
        #expect(tasks.count == 1)
        #expect(tasks.first?.groupElement == Optional<FlowValue>.none)
        let result = WireResult(taskID: 2, attempt: 1, finishState: .cancelled, startedAt: wireDate(0), finishedAt: wireDate(0))
        guard case .result(let results) = try roundTrip(.result([result])) else {
            Issue.record("not a RESULT")
            return
        }
        #expect(results.count == 1)
        #expect(results.first?.output == Optional<FlowValue>.none)
    }

    @Test("HEARTBEAT is two frames and nothing else")
    func heartbeatIsTwoFrames() throws {
        #expect(WireCodec.encode(.heartbeat) == [Data("FLOW02".utf8), Data([0x04])])
        #expect(try WireCodec.decode(frames(0x04)) == .heartbeat)
    }

    @Test("DISCONNECT keeps its reason, empty or unicode")
    func disconnectRoundTrips() throws {
        for reason in ["", "unknown worker: send READY", "Überlastung 🔥"] {
            #expect(try roundTrip(.disconnect(reason: reason)) == .disconnect(reason: reason))
        }
    }

    @Test("a batch of 10,000 tasks round-trips in one body")
    func largeTaskBatchRoundTrips() throws {
        let tasks = (0..<10_000).map { index in
            WireTask(
                taskID: UInt64(index), attempt: 1, op: "square", displayTag: String(index, radix: 16),
                parameters: ["factor": .integer(2)], groupElement: .integer(Int64(index))
            )
        }
        #expect(try roundTrip(.task(tasks)) == .task(tasks))
    }

    @Test("a batch's tasks share a parameter map or bucket where it repeats the task's before, as bytes and as decoded")
    func repeatedMapsInABatchDecodeAsWritten() throws {
        // Runs of equal maps, changes, a map that returns after another, an empty one, and maps
        // whose bytes differ only in their last byte or length.
        let parameterMaps: [[String: FlowValue]] = [
            ["ms": .double(0)], ["ms": .double(0)], ["ms": .double(1)], ["ms": .double(0)], [:], [:],
            ["ms": .double(0), "x": .string("a")], ["ms": .double(0), "x": .string("b")], ["ms": .double(0), "x": .string("bb")],
            ["nested": .map(["list": .array([.integer(1), .null])])], ["nested": .map(["list": .array([.integer(1), .null])])],
        ]
        let buckets: [[String: FlowValue]] = [[:], [:], ["k": .integer(1)], ["k": .integer(1)], ["k": .integer(2)], [:]]
        let tasks = (0..<60).map { index in
            WireTask(taskID: UInt64(index), attempt: 1, op: "echo", displayTag: "t",
                     parameters: parameterMaps[index % parameterMaps.count], bucket: buckets[index / 10],
                     groupElement: .integer(Int64(index)), elementIndex: index)
        }
        #expect(try roundTrip(.task(tasks)) == .task(tasks))
        // The batch's bytes are those of each task written alone, one after another: copying a
        // repeated map's bytes writes what encoding it again would.
        var plain = WireWriter()
        plain.writeVarint(UInt64(tasks.count))
        for task in tasks { task.write(to: &plain) }
        #expect(WireCodec.encode(.task(tasks))[2] == plain.data)
        // Each task alone decodes the same.
        for task in tasks.prefix(12) {
            #expect(try roundTrip(.task([task])) == .task([task]))
        }
    }

    @Test("a batch's tasks share an op name where it repeats the task's before, and each decodes as written")
    func repeatedOpNamesInABatchDecodeAsWritten() throws {
        // Runs of one op, a change, names that differ only in their last byte or their length,
        // an op that returns after another, and a name that is not ASCII.
        let ops = ["echo", "echo", "echo", "echp", "echo", "echoo", "ech", "Übertrag", "Übertrag", "echo"]
        let tasks = ops.enumerated().map { index, op in
            WireTask(taskID: UInt64(index), attempt: 1, op: op, displayTag: op, groupElement: .integer(Int64(index)), elementIndex: index)
        }
        let decoded = try roundTrip(.task(tasks))
        #expect(decoded == .task(tasks))
        guard case .task(let read) = decoded else { Issue.record("not a TASK: \(decoded)"); return }
        #expect(read.map(\.op) == ops)
    }

    @Test("a task's id, attempt and budget are fields like the others: changing one on a copy leaves the other as it was")
    func aTaskRenamedOnACopyLeavesTheOriginal() {
        var original = WireTask(taskID: 7, attempt: 2, op: "echo", parameters: ["k": .integer(1)])
        original.budget = 3
        var copy = original
        copy.taskID = 70
        copy.attempt = 1
        copy.budget = nil
        #expect(original.taskID == 7 && original.attempt == 2 && original.budget == 3)
        #expect(copy.taskID == 70 && copy.attempt == 1 && copy.budget == nil)
        #expect(copy.op == "echo" && copy.parameters == ["k": .integer(1)])
        #expect(copy != original)
        copy.taskID = 7
        copy.attempt = 2
        copy.budget = 3
        #expect(copy == original)
        #expect(copy.hashValue == original.hashValue)
        var other = original
        other.budget = 4
        #expect(other != original)
    }

    @Test("a batch of 10,000 results round-trips in one body")
    func largeResultBatchRoundTrips() throws {
        let results = (0..<10_000).map { (index: Int) -> WireResult in
            let start = sampleTime + Int64(index)
            let state: FlowFinishState = index % 7 == 0 ? .withError("odd \(index)") : .successfully
            let event = WireEvent(time: wireDate(start + 100), kind: .set(key: "value", value: .integer(Int64(index * index))))
            return WireResult(
                taskID: UInt64(index), attempt: 1, finishState: state,
                startedAt: wireDate(start), finishedAt: wireDate(start + 250), events: [event]
            )
        }
        #expect(try roundTrip(.result(results)) == .result(results))
    }

    @Test("encoding is deterministic: equal messages give equal bytes")
    func encodingIsDeterministic() {
        for message in sampleMessages {
            #expect(WireCodec.encode(message) == WireCodec.encode(message))
        }
        var shuffled: [String: FlowValue] = [:]
        for entry in everyValue.sorted(by: { $0.key > $1.key }) { shuffled[entry.key] = entry.value }
        let first = WireCodec.encode(.task([WireTask(taskID: 1, op: "x", parameters: everyValue)]))
        let second = WireCodec.encode(.task([WireTask(taskID: 1, op: "x", parameters: shuffled)]))
        #expect(first == second)
    }

    @Test("a reused writer encodes the same body as a fresh one")
    func reusedWriterMatches() {
        var writer = WireWriter(capacity: 16)
        for message in sampleMessages where message.command.hasBody {
            writer.removeAll()
            WireCodec.encodeBody(of: message, into: &writer)
            #expect(writer.data == WireCodec.encode(message)[2])
        }
    }

    @Test("commands are only sent by the roles the spec allows")
    func commandDirections() {
        #expect(WireCommand.ready.canBeSent(by: .worker) && !WireCommand.ready.canBeSent(by: .coordinator))
        #expect(WireCommand.result.canBeSent(by: .worker) && !WireCommand.result.canBeSent(by: .coordinator))
        #expect(WireCommand.task.canBeSent(by: .coordinator) && !WireCommand.task.canBeSent(by: .worker))
        #expect(WireCommand.recall.canBeSent(by: .coordinator) && !WireCommand.recall.canBeSent(by: .worker))
        #expect(WireCommand.returned.canBeSent(by: .worker) && WireCommand.returned.canBeSent(by: .coordinator) && !WireCommand.returned.canBeSent(by: .client))
        for command in [WireCommand.heartbeat, .disconnect] {
            #expect(command.canBeSent(by: .worker) && command.canBeSent(by: .coordinator))
        }
    }
}
