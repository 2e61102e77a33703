import Flow
import FlowWire
import FlowFuzzSupport
import Foundation

/// Feeds bytes to the wire decoder as a peer would send them: byte 0 chooses the command frame,
/// the rest is the body, behind the protocol signature (`WireCodec.protocolFrame`). Byte 0 with its high bit set splits the
/// rest into frames at every 0xFF byte instead, so frame counts and signatures are fuzzed too.
/// A decoded message is encoded again and must decode to the same message.
enum FuzzWire {
    static func run(_ input: Data) {
        guard let first = input.first else { return }
        let rest = input.dropFirst()
        var frames: [Data]
        if first & 0x80 == 0 {
            frames = [Data(WireLimits.protocolSignature), Data([first]), Data(rest)]
        } else {
            frames = rest.split(separator: 0xFF, omittingEmptySubsequences: false).map { Data($0) }
        }
        guard let message = try? WireCodec.decode(frames) else { return }
        let again = WireCodec.encode(message)
        guard let back = try? WireCodec.decode(again) else {
            fatalError("a message the decoder took does not decode once encoded: \(message)")
        }
        guard WireCodec.encode(back) == again else {
            fatalError("encoding is not stable for \(message)")
        }
        if case .result(let results) = message { convert(results) }
    }

    /// A RESULT's numbers as the coordinator and a worker convert them (a `Retry-After` of any
    /// length once trapped in this conversion): to the engine's result and back to the wire.
    static func convert(_ results: [WireResult]) {
        for result in results {
            let task = WireTask(taskID: result.taskID, attempt: result.attempt, op: "UploadFileOp",
                                groupElement: result.elementIndex.map { _ in .integer(0) }, elementIndex: result.elementIndex ?? 0)
            let engine = FlowTaskResult(wire: result, for: task, worker: "w1")
            _ = WireResult(engine, for: task)
        }
    }
}

/// The seed corpus: one message of each kind, in the fuzz input form.
enum WireSeeds {
    static var messages: [(String, WireMessage)] {
        let time = Date(timeIntervalSince1970: 1_790_000_000.125)
        let everyValue: FlowValue = .map([
            "null": .null, "flag": .bool(true), "count": .integer(-42), "ratio": .double(0.5), "text": .string("caf\u{e9}"),
            "bytes": .bytes(Data([0, 1, 0xFF])), "date": .date(time),
            "list": .array([.integer(1), .array([.string("nested")]), .map(["k": .string("v")])]),
        ])
        var retried = WireTask(taskID: 8, attempt: 2, op: "UploadFileOp", displayTag: "3f2a", parameters: ["url": .string("http://h/u")],
                               groupElement: .string("/photos/p-0001.jpg"), elementIndex: 17, timeLimitMilliseconds: 300_000)
        retried.operationAttempt = 3
        retried.retry = WireRetryPolicy(FlowRetryPolicy(attempts: 6, delay: .milliseconds(500), backoff: 2, maxDelay: .seconds(30)))
        return [
            ("ready", .ready(WireReady(workerName: "worker-1", features: 3, slotCount: 4, ops: ["ShellOp", "UploadFileOp"],
                                       hostname: "host", processID: 4242, heartbeatIntervalMilliseconds: 1000))),
            ("task-serial", .task([WireTask(taskID: 7, op: "ShellOp", parameters: ["command": .array([.string("echo"), .string("hi")])],
                                            bucket: ["all": everyValue])])),
            ("task-group", .task([retried, WireTask(taskID: 9, op: "SleepOp", displayTag: "a1b2", groupElement: .integer(5), elementIndex: 0)])),
            ("result", .result([
                WireResult(taskID: 7, attempt: 1, finishState: .successfully, startedAt: time, finishedAt: time,
                           events: [WireEvent(time: time, kind: .log("hello")), WireEvent(time: time, kind: .set(key: "out", value: everyValue))]),
                WireResult(taskID: 8, attempt: 2, finishState: .withError("HTTP 503"), startedAt: time, finishedAt: time,
                           elementIndex: 17, retryAfterMilliseconds: 1500),
                WireResult(taskID: 9, attempt: 1, finishState: .successfully, startedAt: time, finishedAt: time,
                           elementIndex: 0, output: .string("url_of_5")),
            ])),
            // A Retry-After past any bound (99999999999999999 s once trapped converting it).
            ("result-retry-after-max", .result([
                WireResult(taskID: 10, attempt: 1, finishState: .withError("HTTP 503 SlowDown"), startedAt: time, finishedAt: time,
                           elementIndex: 3, retryAfterMilliseconds: .max),
            ])),
            ("heartbeat", .heartbeat),
            ("disconnect", .disconnect(reason: "worker stopping")),
            ("recall", .recall([8, 9])),
            ("returned", .returned([WireTaskReference(taskID: 8, attempt: 2), WireTaskReference(taskID: 9, attempt: 1)])),
            ("cancel", .cancel([8, 9])),
            ("hello", .hello(WireHello(clientName: "client-1", runID: "r-2026", flowName: "photos", origin: "ana@laptop", share: 2,
                                       heartbeatIntervalMilliseconds: 1000))),
            ("welcome", .welcome(WireWelcome(poolName: "pool", slotCount: 16, heartbeatIntervalMilliseconds: 1000))),
            ("submit", .submit([retried, WireTask(taskID: 7, op: "ShellOp", parameters: ["command": .array([.string("echo")])])])),
            ("withdraw", .withdraw([7, 8])),
            ("status", .status),
            ("status-reply", .statusReply(#"{"pool":"p","workers":[{"name":"w1","slots":4}],"runs":[]}"#)),
            ("done", .done([
                WirePoolResult(worker: "w1", result: WireResult(taskID: 7, attempt: 1, finishState: .successfully, startedAt: time,
                                                                finishedAt: time, events: [WireEvent(time: time, kind: .log("hello"))])),
                WirePoolResult(worker: "w2", result: WireResult(taskID: 8, attempt: 2, finishState: .cancelled, startedAt: time,
                                                                finishedAt: time, elementIndex: 17)),
            ])),
        ]
    }

    /// Writes each seed as `byte 0 = command, rest = body`, the form ``FuzzWire/run(_:)`` reads.
    static func write(to folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, message) in messages {
            let frames = WireCodec.encode(message)
            var input = Data(frames[1])
            if frames.count > 2 { input += frames[2] }
            try input.write(to: URL(fileURLWithPath: folder).appendingPathComponent(name))
        }
    }
}

#if FUZZING
// SwiftPM links an executable with `main` aliased to `flow_fuzz_wire_main`; here that is libFuzzer's
// driver, run with this target's input function.
@_cdecl("flow_fuzz_wire_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv) { FuzzWire.run($0) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzWire.run(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}
#else
/// Without the fuzzer: replays inputs (files, or every file in folders), as a regression test of
/// the committed corpus and of crashes the fuzzer found.
@main
enum Replay {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-seeds", arguments.count == 2 {
            do {
                try WireSeeds.write(to: arguments[1])
                print("flow-fuzz-wire: \(WireSeeds.messages.count) seeds written to \(arguments[1])")
            } catch {
                print("flow-fuzz-wire: \(error)")
                exit(1)
            }
            return
        }
        let count = FuzzReplay.each(arguments) { FuzzWire.run($0) }
        print("flow-fuzz-wire: \(count) input(s) replayed, none crashed")
    }
}
#endif
