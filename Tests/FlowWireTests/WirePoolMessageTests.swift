import Flow
import FlowWire
import Foundation
import Testing

/// One valid message of each command a pool adds: CANCEL to a worker, and those between a pool and
/// its clients.
let samplePoolMessages: [WireMessage] = [
    .cancel([7, .max]),
    .hello(WireHello(clientName: "client-ü", runID: "2025-01-02-abcd", flowName: "photos", origin: "ana@laptop", share: 3,
                     heartbeatIntervalMilliseconds: 250)),
    .welcome(WireWelcome(poolName: "pool@tcp://10.0.0.5:5555", features: 0, slotCount: 64, heartbeatIntervalMilliseconds: 250)),
    .submit([sampleTask(), WireTask(taskID: 43, op: "echo", bucket: ["value": .string("x")])]),
    .withdraw([42, 43]),
    .status,
    .statusReply(#"{"workers":[{"name":"w1","slots":4}],"runs":[]}"#),
    .done([
        WirePoolResult(worker: "w1", result: sampleResult()),
        WirePoolResult(worker: "", result: WireResult(taskID: 43, attempt: 2, finishState: .cancelled, startedAt: wireDate(0),
                                                      finishedAt: wireDate(1))),
    ]),
]

/// The pool's messages (PROTOCOL.md §7.8 and §14): their layouts byte for byte, as §12's examples
/// write them, so a change of layout fails here; round trips; what a receiver rejects; who may
/// send each.
@Suite("Pool messages")
struct WirePoolMessageTests {
    private func expectBody(_ message: WireMessage, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = bytes(hex: hex)
        #expect(hexString(body(of: message)) == hexString(expected), sourceLocation: sourceLocation)
        #expect(try WireCodec.decode(frames(message.command.rawValue, body: expected)) == message, sourceLocation: sourceLocation)
    }

    /// A HELLO body: client "c", run "r1", flow "f", origin "u@h", then `tail` (share and interval).
    private func hello(tail: String) -> [Data] {
        frames(0x10, body: bytes(hex: "01 63  02 7231  01 66  03 754068" + tail))
    }

    // MARK: Golden bytes

    @Test("the new commands have the values the spec gives them")
    func commandValues() {
        let values: [(WireCommand, UInt8)] = [
            (.cancel, 0x08), (.hello, 0x10), (.welcome, 0x11), (.submit, 0x12), (.withdraw, 0x13), (.status, 0x14),
            (.statusReply, 0x15), (.done, 0x16),
        ]
        for (command, value) in values { #expect(command.rawValue == value, "\(command)") }
        #expect(!WireCommand.status.hasBody && WireCommand.cancel.hasBody && WireCommand.statusReply.hasBody)
        #expect(WireReady.Feature.cancel == 0x0000_0008)
    }

    @Test("HELLO example: four strings, share and heartbeat interval as u32")
    func helloBytes() throws {
        let hello = WireHello(clientName: "c1", runID: "r1", flowName: "f", origin: "u@h", share: 2, heartbeatIntervalMilliseconds: 1_000)
        try expectBody(.hello(hello), "02 6331  02 7231  01 66  03 754068  02000000  e8030000")
    }

    @Test("WELCOME example: pool name, features, credit, heartbeat interval")
    func welcomeBytes() throws {
        let welcome = WireWelcome(poolName: "p", features: 0, slotCount: 16, heartbeatIntervalMilliseconds: 1_000)
        try expectBody(.welcome(welcome), "01 70  00000000  10000000  e8030000")
        let other = WireWelcome(poolName: "p", features: 0, slotCount: 8, heartbeatIntervalMilliseconds: 500)
        try expectBody(.welcome(other), "01 70  00000000  08000000  f4010000")
    }

    @Test("SUBMIT example: the TASK example's body")
    func submitBytes() throws {
        let task = WireTask(taskID: 7, attempt: 1, op: "echo", parameters: ["n": .integer(-2)], timeLimitMilliseconds: 1_000)
        let hex = "01  0700000000000000  01000000  04 6563686f  00  01 01 6e 03 03  00  00  e8030000"
        try expectBody(.submit([task]), hex)
        #expect(body(of: .submit([task])) == body(of: .task([task])), "the same body as TASK; only the command differs")
    }

    @Test("WITHDRAW and CANCEL examples: a list of u64 task ids")
    func withdrawAndCancelBytes() throws {
        try expectBody(.withdraw([7]), "01  0700000000000000")
        try expectBody(.cancel([7, 9]), "02  0700000000000000  0900000000000000")
        try expectBody(.cancel([.max, 0x0102]), "02  ffffffffffffffff  0201000000000000")
    }

    @Test("STATUS example is two frames, and STATUS-REPLY one string")
    func statusBytes() throws {
        #expect(WireCodec.encode(.status) == [Data("FLOW02".utf8), Data([0x14])])
        #expect(try WireCodec.decode(frames(0x14)) == .status)
        let json = #"{"pool":"p","workers":[],"runs":[]}"#
        #expect(json.utf8.count == 35)
        try expectBody(.statusReply(json), "23 7b22706f6f6c223a2270222c22776f726b657273223a5b5d2c2272756e73223a5b5d7d")
        try expectBody(.statusReply(""), "00")
    }

    @Test("DONE examples: each result behind the name of the worker that ran it")
    func doneBytes() throws {
        let ok = WireResult(taskID: 7, attempt: 1, finishState: .successfully, startedAt: wireDate(0), finishedAt: wireDate(0))
        let okHex = "02 7731  0700000000000000  01000000  00 00  0000000000000000  0000000000000000  00  00"
        try expectBody(.done([WirePoolResult(worker: "w1", result: ok)]), "01  " + okHex)
        let withdrawn = WireResult(taskID: 8, attempt: 2, finishState: .cancelled, startedAt: wireDate(0), finishedAt: wireDate(0),
                                   elementIndex: 3)
        let withdrawnHex = "02 7731  0800000000000000  02000000  04 00  0000000000000000  0000000000000000  00  01 03"
        try expectBody(.done([WirePoolResult(worker: "w1", result: withdrawn)]), "01  " + withdrawnHex)
        try expectBody(.done([WirePoolResult(worker: "w1", result: withdrawn), WirePoolResult(worker: "w1", result: ok)]),
                       "02  " + withdrawnHex + okHex)
        let unnamed = WireResult(taskID: 9, attempt: 1, finishState: .successfully, startedAt: wireDate(1), finishedAt: wireDate(2))
        try expectBody(.done([WirePoolResult(worker: "", result: unnamed)]),
                       "01  00  0900000000000000  01000000  00 00  0100000000000000  0200000000000000  00  00")
    }

    // MARK: Round trips

    @Test("every pool message decodes to what was encoded", arguments: samplePoolMessages)
    func roundTrips(message: WireMessage) throws {
        #expect(try roundTrip(message) == message)
    }

    @Test("each task read from a SUBMIT knows the bytes it took there, repeated maps and all")
    func receivedSizes() throws {
        let shared: [String: FlowValue] = ["ms": .integer(0), "name": .string("ü-photos")]
        let tasks = [sampleTask(), WireTask(taskID: 43, op: "echo", parameters: shared, groupElement: .string("a"), elementIndex: 0),
                     WireTask(taskID: 44, op: "echo", parameters: shared, groupElement: .string(String(repeating: "b", count: 300)),
                              elementIndex: 1)]
        guard case .submit(let decoded) = try WireCodec.decode(WireCodec.encode(.submit(tasks))) else {
            Issue.record("not a SUBMIT")
            return
        }
        let sizes = tasks.map { task in
            var writer = WireWriter(capacity: 0)
            task.write(to: &writer)
            return writer.count
        }
        #expect(decoded.map(\.receivedSize) == sizes)
        #expect(tasks.allSatisfy { $0.receivedSize == 0 })
        // It is no field of the task: a task read is equal to the one written.
        #expect(decoded == tasks)
    }

    @Test("HELLO and WELCOME keep extreme and unicode fields")
    func extremeHelloAndWelcome() throws {
        let long = String(repeating: "é", count: 127) + "x"  // 255 bytes: the most allowed
        let hello = WireHello(clientName: long, runID: "", flowName: "日本", origin: long, share: .max, heartbeatIntervalMilliseconds: 1)
        #expect(try roundTrip(.hello(hello)) == .hello(hello))
        let welcome = WireWelcome(poolName: long, features: .max, slotCount: .max, heartbeatIntervalMilliseconds: .max)
        #expect(try roundTrip(.welcome(welcome)) == .welcome(welcome))
    }

    @Test("every strict prefix of a pool message's body is rejected as truncated", arguments: samplePoolMessages.filter { $0.command.hasBody })
    func everyCutPointIsRejected(message: WireMessage) {
        let full = body(of: message)
        for length in 0..<full.count {
            do {
                let decoded = try WireCodec.decode(frames(message.command.rawValue, body: Array(full[..<length])))
                Issue.record("prefix of \(length)/\(full.count) bytes decoded as \(decoded)")
            } catch {
                #expect(error.code == .truncated || error.code == .lengthExceedsBody, "cut at \(length): \(error)")
            }
        }
        expectRejection(frames(message.command.rawValue, body: full + [0x00]), .trailingBytes)
    }

    // MARK: Rejections

    @Test("HELLO with a share or heartbeat interval of 0 is rejected")
    func helloZeroes() {
        expectRejection(hello(tail: "00000000  e8030000"), .invalidField)
        expectRejection(hello(tail: "01000000  00000000"), .invalidField)
        #expect(throws: Never.self) { try WireCodec.decode(hello(tail: "01000000  01000000")) }
    }

    @Test("WELCOME with a slot count or heartbeat interval of 0 is rejected")
    func welcomeZeroes() {
        expectRejection(frames(0x11, body: bytes(hex: "01 70  00000000  00000000  f4010000")), .invalidField)
        expectRejection(frames(0x11, body: bytes(hex: "01 70  00000000  08000000  00000000")), .invalidField)
        #expect(throws: Never.self) { try WireCodec.decode(frames(0x11, body: bytes(hex: "01 70  00000000  01000000  01000000"))) }
    }

    @Test("an empty batch of WITHDRAW, CANCEL, DONE or SUBMIT is rejected", arguments: [0x08, 0x12, 0x13, 0x16] as [UInt8])
    func emptyBatches(command: UInt8) {
        expectRejection(frames(command, body: [0x00]), .emptyBatch)
    }

    @Test("a text over 255 bytes in HELLO, WELCOME or DONE is rejected at its length", arguments: 0..<4)
    func overLongTexts(field: Int) {
        let over = [0x80, 0x02] + [UInt8](repeating: 0x61, count: 256)  // varint 256, then 256 bytes
        let exact = [0xFF, 0x01] + [UInt8](repeating: 0x61, count: 255)
        let short = bytes(hex: "01 61")
        func body(_ text: [UInt8]) -> [UInt8] {
            var fields = [short, short, short, short]
            fields[field] = text
            return fields.flatMap { $0 } + bytes(hex: "01000000  e8030000")
        }
        expectRejection(frames(0x10, body: body(over)), .overLimit)
        #expect(throws: Never.self) { try WireCodec.decode(frames(0x10, body: body(exact))) }
        if field == 0 {
            expectRejection(frames(0x11, body: over + bytes(hex: "00000000  08000000  f4010000")), .overLimit)
            let result = "0700000000000000  01000000  00 00  0000000000000000  0000000000000000  00  00"
            expectRejection(frames(0x16, body: [0x01] + over + bytes(hex: result)), .overLimit)
        }
    }

    @Test("STATUS with a body frame, even an empty one, is rejected; STATUS-REPLY without one too")
    func statusFrames() {
        expectRejection(frames(0x14, body: []), .extraFrames)
        expectRejection(frames(0x14, body: [0x00]), .extraFrames)
        expectRejection(frames(0x15), .missingFrame)
        expectRejection(frames(0x08), .missingFrame)
    }

    // MARK: Roles

    @Test("each pool command is sent only by the roles the spec allows")
    func commandDirections() {
        let roles: [WirePeerRole] = [.coordinator, .worker, .client]
        let allowed: [(WireCommand, Set<String>)] = [
            (.cancel, ["coordinator"]), (.welcome, ["coordinator"]), (.statusReply, ["coordinator"]), (.done, ["coordinator"]),
            (.hello, ["client"]), (.submit, ["client"]), (.withdraw, ["client"]),
            (.status, ["coordinator", "worker", "client"]),
            (.heartbeat, ["coordinator", "worker", "client"]), (.disconnect, ["coordinator", "worker", "client"]),
            (.ready, ["worker"]), (.result, ["worker"]), (.returned, ["worker", "coordinator"]),
            (.task, ["coordinator"]), (.recall, ["coordinator"]),
            (.progress, ["worker"]), (.rate, ["coordinator"]), (.checkpoint, ["worker"]), (.labels, ["worker", "coordinator"]),
        ]
        #expect(Set(allowed.map(\.0)) == Set(WireCommand.allCases), "every command is listed")
        for (command, senders) in allowed {
            let actual = Set(roles.filter { command.canBeSent(by: $0) }.map(\.description))
            #expect(actual == senders, "\(command)")
        }
    }
}
