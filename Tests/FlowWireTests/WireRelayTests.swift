import Flow
import FlowWire
import Foundation
import Testing

/// A pool decodes for a relay (`WireCodec.decode(taking:relaying:)`): the tasks of a SUBMIT and
/// the results of a RESULT keep the bytes they came in, and the TASK and DONE it writes copy them.
/// What it writes must be byte for byte what decoding and encoding again writes.
@Suite("Relayed tasks and results")
struct WireRelayTests {
    /// Tasks of every shape a client submits: serial with a bucket, group elements of each kind
    /// of value, an op attempt, a retry policy, a budget, a checkpoint, placement and preference.
    private static var submitted: [WireTask] {
        var tasks: [WireTask] = []
        var serial = WireTask(taskID: 1, attempt: 1, op: "CopyOp", parameters: ["to": .string("/x")], bucket: everyValue)
        serial.retry = WireRetryPolicy(FlowRetryPolicy(attempts: 4))
        tasks.append(serial)
        for (index, key) in everyValue.keys.sorted().enumerated() {
            var element = WireTask(taskID: UInt64(10 + index), attempt: UInt32(1 + index % 3), op: index % 4 == 0 ? "UploadFileOp" : "SleepOp",
                                   displayTag: String(index, radix: 16), parameters: ["ms": .integer(0)],
                                   groupElement: everyValue[key]!, elementIndex: index * 1_000)
            if index % 2 == 0 { element.budget = UInt64(index % 3) }
            if index % 3 == 0 { element.checkpoint = index % 2 == 0 ? .null : .map(["part": .integer(Int64(index))]) }
            if index % 5 == 0 { element.operationAttempt = 3 }
            if index % 4 == 1 { element.placement = [WireLabel(key: "host", value: "h\(index)")] }
            if index % 4 == 2 { element.preference = [WireLabel(key: "role", value: "recorder")] }
            tasks.append(element)
        }
        return tasks
    }

    /// What a pool does to a task before it sends it to a worker: its own id and attempt, its own
    /// budget, one more op attempt for a resent task, no placement for a worker.
    private static func renamed(_ task: WireTask, as id: UInt64) -> WireTask {
        var task = task
        if task.attempt > 1 { task.operationAttempt = max(1, task.operationAttempt) + task.attempt - 1 }
        task.taskID = id
        task.attempt = 1
        if let budget = task.budget { task.budget = budget + 100 }
        task.placement = []
        task.preference = []
        return task
    }

    private static func decoded(_ message: WireMessage, relaying: Bool) throws -> WireMessage {
        var frames = WireCodec.encode(message)
        return try WireCodec.decode(taking: &frames, relaying: relaying)
    }

    @Test("a relayed task writes the bytes the task decoded and encoded again writes, whatever the pool changed of it")
    func aRelayedTaskWritesWhatItWouldEncode() throws {
        guard case .submit(let relayed) = try Self.decoded(.submit(Self.submitted), relaying: true),
              case .submit(let plain) = try Self.decoded(.submit(Self.submitted), relaying: false) else {
            Issue.record("not a SUBMIT")
            return
        }
        #expect(relayed == plain)
        #expect(relayed.allSatisfy { $0.keepsReceivedBytes })
        #expect(!plain.contains { $0.keepsReceivedBytes })
        let relayedTask = relayed.enumerated().map { Self.renamed($1, as: UInt64(500 + $0)) }
        let plainTask = plain.enumerated().map { Self.renamed($1, as: UInt64(500 + $0)) }
        #expect(relayedTask.allSatisfy { $0.keepsReceivedBytes })
        #expect(body(of: .task(relayedTask)) == body(of: .task(plainTask)))
        // One at a time too: a batch's writer shares a repeated map, the kept bytes do not need to.
        for (one, other) in zip(relayedTask, plainTask) {
            #expect(body(of: .task([one])) == body(of: .task([other])), "task \(one.taskID)")
        }
        #expect(try roundTrip(.task(relayedTask)) == .task(plainTask))
    }

    @Test("changing what a relayed task's kept bytes hold forgets them, and the task is written as it is now")
    func changingAKeptFieldForgetsTheBytes() throws {
        guard case .submit(let relayed) = try Self.decoded(.submit(Self.submitted), relaying: true) else {
            Issue.record("not a SUBMIT")
            return
        }
        let element = relayed[3]
        let changes: [(String, (inout WireTask) -> Void)] = [
            ("op", { $0.op = "OtherOp" }),
            ("display tag", { $0.displayTag = "zz" }),
            ("parameters", { $0.parameters = ["ms": .integer(5)] }),
            ("bucket", { $0.bucket = ["k": .string("v")] }),
            ("group element", { $0.groupElement = .string("another") }),
            ("element index", { $0.elementIndex = 77 }),
        ]
        for (field, change) in changes {
            var task = element
            change(&task)
            #expect(!task.keepsReceivedBytes, "\(field)")
            #expect(element.keepsReceivedBytes, "\(field): the original keeps its bytes")
            #expect(try roundTrip(.task([task])) == .task([task]), "\(field)")
        }
    }

    @Test("a body larger than the relay keeps is decoded and encoded again as before")
    func aLargeBodyKeepsNoBytes() throws {
        let large = (0..<40).map { index in
            WireTask(taskID: UInt64(index), op: "SleepOp", groupElement: .string(String(repeating: "x", count: 2_000)), elementIndex: index)
        }
        #expect(body(of: .submit(large)).count > WireCodec.relayedBodyLimit)
        guard case .submit(let read) = try Self.decoded(.submit(large), relaying: true) else {
            Issue.record("not a SUBMIT")
            return
        }
        #expect(read == large)
        #expect(!read.contains { $0.keepsReceivedBytes })
    }

    @Test("a relayed result writes into a DONE the bytes the result decoded and encoded again writes")
    func aRelayedResultWritesWhatItWouldEncode() throws {
        let outputs: [FlowValue] = everyValue.keys.sorted().map { everyValue[$0]! }
        let events = [WireEvent(time: wireDate(sampleTime + 5), kind: .log("line")),
                      WireEvent(time: wireDate(sampleTime + 6), kind: .set(key: "k", value: .map(everyValue)))]
        let results = (0..<6).map { (index: Int) -> WireResult in
            let state: FlowFinishState = index == 2 ? .withError("no \(index)") : .successfully
            let output: FlowValue? = index > 3 ? outputs[index] : .none
            return WireResult(taskID: UInt64(index), attempt: 1, finishState: state, startedAt: wireDate(sampleTime),
                              finishedAt: wireDate(sampleTime + 10), events: index == 1 ? events : [],
                              elementIndex: index == 0 ? nil : index, output: output)
        }
        guard case .result(let relayed) = try Self.decoded(.result(results), relaying: true),
              case .result(let plain) = try Self.decoded(.result(results), relaying: false) else {
            Issue.record("not a RESULT")
            return
        }
        #expect(relayed == results && plain == results)
        #expect(relayed.allSatisfy { $0.encodedTail.bytes != nil && $0.encodedTail.head != nil })
        #expect(plain.allSatisfy { $0.encodedTail.bytes == nil && $0.encodedTail.head == nil })
        func done(_ results: [WireResult]) -> WireMessage {
            .done(results.enumerated().map { index, result in
                var result = result
                result.taskID = 900 + UInt64(index)
                result.attempt = 2
                return WirePoolResult(worker: "w\(index)", result: result)
            })
        }
        #expect(body(of: done(relayed)) == body(of: done(plain)))
        #expect(try roundTrip(done(relayed)) == done(plain))
        var changed = relayed[4]
        changed.output = FlowValue.string("changed")
        #expect(changed.encodedTail.bytes == nil)
        #expect(try roundTrip(.result([changed])) == .result([changed]))
        let finishChanges: [(String, (inout WireResult) -> Void)] = [
            ("finish state", { $0.finishState = .withError("changed") }),
            ("permanence", { $0.isPermanent = true }),
            ("retry after", { $0.retryAfterMilliseconds = 250 }),
            ("start", { $0.startedAt = wireDate(sampleTime - 1) }),
            ("finish", { $0.finishedAt = wireDate(sampleTime + 99) }),
        ]
        for (field, change) in finishChanges {
            var result = relayed[2]
            change(&result)
            #expect(result.encodedTail.head == nil && result.encodedTail.bytes != nil, "\(field)")
            #expect(try roundTrip(.result([result])) == .result([result]), "\(field)")
            #expect(result != relayed[2], "\(field)")
        }
    }
}
