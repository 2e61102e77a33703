import Flow
import FlowWire
import Foundation
import Testing

/// A date that survives the wire exactly: a whole number of microseconds since 1970.
func wireDate(_ microseconds: Int64) -> Date {
    Date(wireMicroseconds: microseconds)
}

/// 2025-01-02T03:04:05.678901Z, with sub-second precision down to the microsecond.
let sampleTime: Int64 = 1_735_787_045_678_901

/// Frames for a hand-made message.
func frames(_ command: UInt8, body: [UInt8]? = nil, protocolFrame: [UInt8] = Array("FLOW02".utf8)) -> [Data] {
    var result = [Data(protocolFrame), Data([command])]
    if let body { result.append(Data(body)) }
    return result
}

/// Encodes, checks the frame layout, decodes and returns the decoded message.
func roundTrip(_ message: WireMessage, sourceLocation: SourceLocation = #_sourceLocation) throws -> WireMessage {
    let encoded = WireCodec.encode(message)
    #expect(encoded.count == (message.command.hasBody ? 3 : 2), sourceLocation: sourceLocation)
    #expect(encoded.first == Data("FLOW02".utf8), sourceLocation: sourceLocation)
    #expect(encoded.dropFirst().first == Data([message.command.rawValue]), sourceLocation: sourceLocation)
    return try WireCodec.decode(encoded)
}

/// Expects the frames to be rejected with the given code.
func expectRejection(
    _ frames: [Data], _ code: WireDecodingError.Code, sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let message = try WireCodec.decode(frames)
        Issue.record("decoded \(message), expected rejection: \(code)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, "got \(error.code): \(error)", sourceLocation: sourceLocation)
    }
}

/// The body frame of an encoded message.
func body(of message: WireMessage) -> [UInt8] {
    [UInt8](WireCodec.encode(message)[2])
}

/// The hex string of some bytes, two lowercase digits each, no separators.
func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { $0 < 0x10 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// Bytes from a hex string; spaces are ignored.
func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// Every FlowValue case, with nesting, unicode and edge numbers.
let everyValue: [String: FlowValue] = [
    "null": .null,
    "false": .bool(false),
    "true": .bool(true),
    "zero": .integer(0),
    "minusOne": .integer(-1),
    "min": .integer(.min),
    "max": .integer(.max),
    "double": .double(3.141_592_653_589_793),
    "negativeZero": .double(-0.0),
    "infinity": .double(.infinity),
    "tiny": .double(.leastNonzeroMagnitude),
    "empty": .string(""),
    "unicode": .string("héllo wörld — 日本語 🧪👩‍👩‍👧 \u{0}"),
    "noBytes": .bytes(Data()),
    "bytes": .bytes(Data((0...255).map { UInt8($0) })),
    "date": .date(wireDate(sampleTime)),
    "beforeEpoch": .date(wireDate(-1_234_567)),
    "emptyArray": .array([]),
    "emptyMap": .map([:]),
    "nested": .array([.integer(1), .array([.string("a"), .map(["k": .array([.null, .bool(true)])])]), .map([:])]),
    "map": .map(["z": .integer(26), "a": .double(-1.5), "é": .string("e acute"), "": .null]),
]

/// A group element TASK with a bit of everything.
func sampleTask(id: UInt64 = 42, attempt: UInt32 = 1) -> WireTask {
    WireTask(
        taskID: id,
        attempt: attempt,
        op: "resize-image",
        displayTag: "3f2a",
        parameters: ["width": .integer(640), "format": .string("png"), "options": .map(["quality": .double(0.9)])],
        groupElement: .map(["image": .bytes(Data(repeating: 0xAB, count: 300)), "tags": .array([.string("a"), .string("b")])]),
        timeLimitMilliseconds: 30_000
    )
}

/// A RESULT with a bit of everything.
func sampleResult(id: UInt64 = 42, attempt: UInt32 = 1, finishState: FlowFinishState = .withError("disk full")) -> WireResult {
    WireResult(
        taskID: id,
        attempt: attempt,
        finishState: finishState,
        startedAt: wireDate(sampleTime),
        finishedAt: wireDate(sampleTime + 1_500),
        events: [
            WireEvent(time: wireDate(sampleTime + 10), kind: .log("starting ✓")),
            WireEvent(time: wireDate(sampleTime + 20), kind: .set(key: "size", value: .integer(1024))),
            WireEvent(time: wireDate(sampleTime + 30), kind: .set(key: "meta", value: .map(["w": .integer(640)]))),
        ],
        elementIndex: 12,
        output: .array([.integer(640), .integer(480)])
    )
}

/// One valid message of each command.
let sampleMessages: [WireMessage] = [
    .ready(WireReady(workerName: "worker-1", slotCount: 4, ops: ["echo", "resize-image"], hostname: "host.local", processID: 4242)),
    .task([sampleTask(), WireTask(taskID: 43, op: "echo", bucket: ["value": .string("x"), "n": .integer(3)])]),
    .result([sampleResult(), WireResult(taskID: 43, attempt: 2, finishState: .successfully, startedAt: wireDate(0), finishedAt: wireDate(1))]),
    .heartbeat,
    .disconnect(reason: "shutting down"),
    .recall([42, 43, .max]),
    .returned([WireTaskReference(taskID: 42, attempt: 1), WireTaskReference(taskID: .max, attempt: .max)]),
]

/// A small deterministic random number generator (SplitMix64), so fuzz runs repeat exactly.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
