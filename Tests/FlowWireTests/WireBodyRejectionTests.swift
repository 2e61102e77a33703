import Flow
import FlowWire
import Foundation
import Testing

@Suite("Body-level rejection")
struct WireBodyRejectionTests {
    /// A TASK body with one task: id 7, attempt 1, op "echo", parameters ["n": -2], limit 1000 ms.
    private let taskPrefix = "01  0700000000000000  01000000  04 6563686f  00"
    private let taskSuffix = "00  00  e8030000"

    private func task(parameters hex: String) -> [Data] {
        task(parameters: bytes(hex: hex))
    }

    private func task(parameters: [UInt8]) -> [Data] {
        frames(0x02, body: bytes(hex: taskPrefix) + parameters + bytes(hex: taskSuffix))
    }

    @Test("every strict prefix of every sample body is rejected as truncated", arguments: sampleMessages.filter { $0.command.hasBody })
    func everyCutPointIsRejected(message: WireMessage) {
        let full = body(of: message)
        #expect(throws: Never.self) { try WireCodec.decode(frames(message.command.rawValue, body: full)) }
        for length in 0..<full.count {
            do {
                let decoded = try WireCodec.decode(frames(message.command.rawValue, body: Array(full[..<length])))
                Issue.record("prefix of \(length)/\(full.count) bytes decoded as \(decoded)")
            } catch {
                #expect(error.code == .truncated || error.code == .lengthExceedsBody, "cut at \(length): \(error)")
                #expect(error.offset.map { $0 <= length } ?? false, "cut at \(length): \(error)")
            }
        }
    }

    @Test("trailing bytes after the last field are rejected", arguments: sampleMessages.filter { $0.command.hasBody })
    func trailingBytes(message: WireMessage) {
        let full = body(of: message)
        expectRejection(frames(message.command.rawValue, body: full + [0x00]), .trailingBytes)
        do {
            _ = try WireCodec.decode(frames(message.command.rawValue, body: full + [0x01, 0x02]))
        } catch {
            #expect(error.offset == full.count)
        }
    }

    @Test("invalid UTF-8 is rejected in every kind of string", arguments: [
        "c328",  // a lead byte without its continuation
        "c080",  // an overlong NUL
        "eda080",  // a UTF-16 surrogate
        "ff",  // never valid
        "f4908080",  // beyond U+10FFFF
    ])
    func invalidUTF8(hex: String) {
        let string = bytes(hex: hex)
        let length = [UInt8(string.count)]
        expectRejection(frames(0x05, body: length + string), .invalidUTF8)
        // As a map key and as a string value inside a TASK.
        expectRejection(task(parameters: "01" + hexString(length + string) + "00"), .invalidUTF8)
        expectRejection(task(parameters: "01 016b 05" + hexString(length + string)), .invalidUTF8)
        // As the worker name in READY.
        expectRejection(frames(0x01, body: length + string + bytes(hex: "00000000 01000000 00 00 00000000")), .invalidUTF8)
    }

    @Test("a huge declared length is rejected before anything is allocated")
    func hugeLength() {
        let maximumVarint = "ffffffffffffffffff01"
        expectRejection(frames(0x05, body: bytes(hex: maximumVarint)), .lengthExceedsBody)
        expectRejection(frames(0x05, body: bytes(hex: "ffffffff0f") + Array("short".utf8)), .lengthExceedsBody)
        expectRejection(task(parameters: "01 016b 06" + maximumVarint), .lengthExceedsBody)
    }

    @Test("a huge declared count is rejected before anything is allocated")
    func hugeCount() {
        let maximumVarint = "ffffffffffffffffff01"
        expectRejection(frames(0x02, body: bytes(hex: maximumVarint)), .lengthExceedsBody)
        expectRejection(frames(0x03, body: bytes(hex: "ffffffff0f") + [UInt8](repeating: 0, count: 100)), .lengthExceedsBody)
        expectRejection(task(parameters: maximumVarint), .lengthExceedsBody)
        expectRejection(task(parameters: "01 016b 08" + maximumVarint), .lengthExceedsBody)
        // 21 bytes remain, which fits one task but not two.
        expectRejection(frames(0x02, body: bytes(hex: "02") + [UInt8](repeating: 0, count: 21)), .lengthExceedsBody)
    }

    @Test("varints that overflow, run past 10 bytes or are not shortest are rejected", arguments: [
        "ffffffffffffffffff02",  // 10th byte carries more than bit 63
        "ffffffffffffffffff8101",  // 11 bytes
        "8000",  // zero in two bytes
        "ff00",  // 127 in two bytes
    ])
    func invalidVarint(hex: String) {
        expectRejection(frames(0x05, body: bytes(hex: hex)), .invalidVarint)
        expectRejection(task(parameters: "01 016b 03" + hex), .invalidVarint)
    }

    @Test("values nested exactly to the limit are accepted, one level more is rejected")
    func nestingLimit() throws {
        var deepest = FlowValue.integer(1)
        for _ in 0..<WireLimits.maximumValueDepth { deepest = .array([deepest]) }
        #expect(deepest.wireNestingDepth == 64)
        let accepted = WireMessage.task([WireTask(taskID: 1, op: "x", bucket: ["v": deepest])])
        #expect(try roundTrip(accepted) == accepted)

        let tooDeepArray = FlowValue.array([deepest])
        expectRejection(WireCodec.encode(.task([WireTask(taskID: 1, op: "x", bucket: ["v": tooDeepArray])])), .nestingTooDeep)
        let tooDeepMap = FlowValue.map(["k": deepest])
        let event = WireEvent(time: wireDate(0), kind: .set(key: "k", value: tooDeepMap))
        let result = WireResult(taskID: 1, attempt: 1, finishState: .successfully, startedAt: wireDate(0), finishedAt: wireDate(0), events: [event])
        expectRejection(WireCodec.encode(.result([result])), .nestingTooDeep)
    }

    @Test("a forged body of 100,000 nested arrays is rejected without exhausting the stack")
    func forgedDeepNesting() {
        var parameters = bytes(hex: "01 0176")
        for _ in 0..<100_000 { parameters += [0x08, 0x01] }
        parameters.append(0x00)
        expectRejection(task(parameters: parameters), .nestingTooDeep)
    }

    @Test("unknown value tags are rejected", arguments: [0x0A, 0x7F, 0xFF] as [UInt8])
    func unknownValueTag(tag: UInt8) {
        expectRejection(task(parameters: "01 016b" + hexString([tag])), .unknownValueTag)
    }

    @Test("map keys out of order or repeated are rejected")
    func invalidMaps() {
        expectRejection(task(parameters: "02 016200 016100"), .invalidMap)  // "b" then "a"
        expectRejection(task(parameters: "02 016100 016100"), .invalidMap)  // "a" twice
        // NFC "é" (c3a9) and NFD "é" (65cc81) are in byte order but equal as Swift strings.
        expectRejection(task(parameters: "02 0365cc8100 02c3a900"), .invalidMap)
    }

    @Test("empty TASK, RESULT, RECALL and RETURNED batches are rejected")
    func emptyBatches() {
        expectRejection(frames(0x02, body: [0x00]), .emptyBatch)
        expectRejection(frames(0x03, body: [0x00]), .emptyBatch)
        expectRejection(frames(0x06, body: [0x00]), .emptyBatch)
        expectRejection(frames(0x07, body: [0x00]), .emptyBatch)
    }

    @Test("a READY with no slots is rejected")
    func zeroSlots() {
        expectRejection(frames(0x01, body: bytes(hex: "02 7731  00000000  00000000  00  01 68  2a000000")), .invalidField)
    }

    @Test("TASK flags with reserved bits set are rejected")
    func reservedFlags() {
        // Bit 3 is a budget (PROTOCOL.md §15), bit 4 a checkpoint (§7.9), bits 5 and 6 a placement
        // and a preference (§14.4); bit 7 stays reserved.
        for flags in ["80", "ff"] {
            let body = taskPrefix + "00" + "00" + flags + "e8030000" + "03000000"
            expectRejection(frames(0x02, body: bytes(hex: body)), .invalidField)
        }
    }

    @Test("TASK op attempt: present only with flags bit 1, and then more than 1")
    func operationAttempt() throws {
        expectRejection(frames(0x02, body: bytes(hex: taskPrefix + "00" + "00" + "02" + "e8030000" + "01000000")), .invalidField)
        var task = WireTask(taskID: 9, op: "ShellOp", displayTag: "ab12", groupElement: .string("x"), elementIndex: 4)
        task.operationAttempt = 3
        var writer = WireWriter()
        task.write(to: &writer)
        var reader = WireReader(writer.data)
        let back = try WireTask(reading: &reader)
        #expect(back == task)
        #expect(back.operationAttempt == 3)
        // A first try is written as FLOW/01 always wrote it: no flag, no field.
        task.operationAttempt = 1
        var plain = WireWriter()
        task.write(to: &plain)
        #expect(plain.data.count == writer.data.count - 4)
    }

    @Test("TASK retry policy: present only with flags bit 2; at least 2 tries, a finite backoff of at least 1, jitter 0 or 1")
    func retryPolicy() throws {
        var task = WireTask(taskID: 9, op: "UploadFileOp", displayTag: "ab12", groupElement: .string("x"), elementIndex: 4)
        task.operationAttempt = 2
        task.retry = WireRetryPolicy(FlowRetryPolicy(attempts: 6, delay: .milliseconds(500), backoff: 2, maxDelay: .seconds(30), jitter: false))
        var writer = WireWriter()
        task.write(to: &writer)
        var reader = WireReader(writer.data)
        let back = try WireTask(reading: &reader)
        #expect(back == task)
        #expect(back.retry?.policy == FlowRetryPolicy(attempts: 6, delay: .milliseconds(500), backoff: 2, maxDelay: .seconds(30), jitter: false))
        // One try is no policy: nothing is written for it.
        #expect(WireRetryPolicy(.none) == nil)
        // attempts u32, delay u32, backoff f64, max delay u32, jitter u8 after the time limit.
        let serial = taskPrefix + "00" + "00" + "04" + "e8030000"
        let backoff2 = "0000000000000040"
        #expect(throws: Never.self) { try WireCodec.decode(frames(0x02, body: bytes(hex: serial + "03000000 64000000" + backoff2 + "10270000 01"))) }
        expectRejection(frames(0x02, body: bytes(hex: serial + "01000000 64000000" + backoff2 + "10270000 01")), .invalidField)
        expectRejection(frames(0x02, body: bytes(hex: serial + "03000000 64000000 000000000000e03f 10270000 01")), .invalidField)
        expectRejection(frames(0x02, body: bytes(hex: serial + "03000000 64000000 000000000000f87f 10270000 01")), .invalidField)
        expectRejection(frames(0x02, body: bytes(hex: serial + "03000000 64000000" + backoff2 + "10270000 02")), .invalidField)
        expectRejection(frames(0x02, body: bytes(hex: serial + "03000000 64000000" + backoff2)), .truncated)
    }

    @Test("unknown finish codes, text on a code without text, unknown event kinds and bad output markers are rejected")
    func invalidResultFields() {
        let times = "0000000000000000 0000000000000000"
        let head = "01 0700000000000000 01000000"
        // Each body: finish code and text, times, event count and events, output presence byte.
        #expect(throws: Never.self) { try WireCodec.decode(frames(0x03, body: bytes(hex: head + "00 00" + times + "00 00"))) }
        expectRejection(frames(0x03, body: bytes(hex: head + "06 00" + times + "00 00")), .invalidField)
        // A transient error carries the wait it asked for; a permanent one (0x05) does not.
        #expect(throws: Never.self) { try WireCodec.decode(frames(0x03, body: bytes(hex: head + "01 0178 00" + times + "00 00"))) }
        #expect(throws: Never.self) { try WireCodec.decode(frames(0x03, body: bytes(hex: head + "05 0178" + times + "00 00"))) }
        expectRejection(frames(0x03, body: bytes(hex: head + "00 0178" + times + "00 00")), .invalidField)
        expectRejection(frames(0x03, body: bytes(hex: head + "04 0178" + times + "00 00")), .invalidField)
        expectRejection(frames(0x03, body: bytes(hex: head + "00 00" + times + "01 0000000000000000 02 00 00")), .invalidField)
        expectRejection(frames(0x03, body: bytes(hex: head + "00 00" + times + "00 03 00")), .invalidField)
        // 0x01 and 0x02 carry an element index; 0x02 also an output.
        #expect(throws: Never.self) { try WireCodec.decode(frames(0x03, body: bytes(hex: head + "00 00" + times + "00 01 05"))) }
        expectRejection(frames(0x03, body: bytes(hex: head + "00 00" + times + "00 02 05")), .truncated)
    }

    @Test("a READY that offers no op is rejected")
    func readyWithoutOps() {
        let body = "02 7731  00000000  02000000  00  01 68  2a000000  e8030000"
        expectRejection(frames(0x01, body: bytes(hex: body)), .invalidField)
    }

    @Test("a group element flag without its element is truncated")
    func groupFlagWithoutElement() {
        let body = taskPrefix + "00" + "00" + "01" + "e8030000"
        expectRejection(frames(0x02, body: bytes(hex: body)), .truncated)
    }
}
