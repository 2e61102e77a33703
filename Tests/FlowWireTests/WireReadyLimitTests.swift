import FlowWire
import Foundation
import Testing

/// READY's caps (§7.1): names of at most 255 bytes, at most 1,024 op names; a longer list is
/// refused at its count, before the decoder reads (or makes an array for) a single name.
@Suite("READY limits")
struct WireReadyLimitTests {
    private func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value)
        var bytes: [UInt8] = []
        repeat {
            let low = UInt8(value & 0x7F)
            value >>= 7
            bytes.append(value == 0 ? low : low | 0x80)
        } while value != 0
        return bytes
    }

    private func string(_ text: [UInt8]) -> [UInt8] { varint(text.count) + text }

    /// A READY body by hand, so the encoder's own checks (if any) cannot hide a decoder's.
    private func ready(name: [UInt8] = Array("w".utf8), ops: [[UInt8]] = [Array("EchoOp".utf8)], host: [UInt8] = Array("h".utf8)) -> [UInt8] {
        var body = string(name)
        body += [0, 0, 0, 0, 1, 0, 0, 0]  // features 0, 1 slot
        body += varint(ops.count)
        for op in ops { body += string(op) }
        body += string(host)
        body += [42, 0, 0, 0, 0xE8, 0x03, 0, 0]  // pid 42, heartbeat 1000 ms
        return body
    }

    private func decodeReady(_ body: [UInt8]) throws(WireDecodingError) -> WireReady {
        guard case .ready(let ready) = try WireCodec.decode(frames(0x01, body: body)) else {
            Issue.record("not a READY")
            throw WireDecodingError(.invalidField, "not a READY")
        }
        return ready
    }

    @Test func namesAtTheLimitAreTaken() throws {
        let name = [UInt8](repeating: 0x61, count: 255)
        let ops = (0..<1_024).map { Array(String(format: "%04d", $0).utf8) + [UInt8](repeating: 0x62, count: 251) }
        let body = ready(name: name, ops: ops, host: name)
        #expect(body.count == WireLimits.maximumReadyBodySize, "the longest READY there can be")
        let ready = try decodeReady(body)
        #expect(ready.workerName.utf8.count == 255 && ready.hostname.utf8.count == 255)
        #expect(ready.ops.count == 1_024 && ready.ops.allSatisfy { $0.utf8.count == 255 })
        // And the limits are the ones the spec names.
        #expect(WireLimits.maximumReadyNameBytes == 255)
        #expect(WireLimits.maximumOperationNameBytes == 255)
        #expect(WireLimits.maximumReadyOperations == 1_024)
    }

    @Test func aWorkerNameOfMoreThan255BytesIsRefusedAtItsLength() {
        let body = ready(name: [UInt8](repeating: 0x61, count: 256))
        expectRejection(frames(0x01, body: body), .overLimit)
        #expect(throws: WireDecodingError.self) { try decodeReady(body) }
        do {
            _ = try decodeReady(ready(name: [UInt8](repeating: 0x61, count: 100_000)))
        } catch {
            #expect(error.code == .overLimit)
            #expect(error.offset == 0, "at the name's length: \(error)")
            #expect(error.description.contains("worker name: 100000 bytes long, longer than the 255 allowed"), "\(error)")
        }
    }

    @Test func aHostnameOrOpNameOfMoreThan255BytesIsRefused() {
        expectRejection(frames(0x01, body: ready(host: [UInt8](repeating: 0x68, count: 256))), .overLimit)
        expectRejection(frames(0x01, body: ready(ops: [Array("EchoOp".utf8), [UInt8](repeating: 0x6F, count: 256)])), .overLimit)
    }

    /// Too many op names: the decoder stops at the list's count, at body offset 10 after the
    /// 1-byte name "w", before it reads a name or makes an array.
    @Test func aListOfTooManyOpNamesIsRefusedAtItsCountBeforeAnyNameIsRead() {
        let ops = [[UInt8]](repeating: Array("op".utf8), count: 5_000)
        do {
            let ready = try decodeReady(ready(ops: ops))
            Issue.record("decoded \(ready.ops.count) op names")
        } catch {
            #expect(error.code == .overLimit)
            #expect(error.offset == 10, "at the count, before the first name: \(error)")
            #expect(error.description.contains("op names: 5000 of them, more than the 1024 allowed"), "\(error)")
        }
        expectRejection(frames(0x01, body: ready(ops: [[UInt8]](repeating: Array("op".utf8), count: 1_025))), .overLimit)
    }

    /// The READY that took a coordinator to 931 MB: a 100 KB name and 100,000 op names. Its body
    /// is longer than any READY within the limits, and is refused on its size before a field is read.
    @Test func aReadyBodyLongerThanTheLimitsAllowIsRefusedOnItsSize() {
        let body = ready(name: [UInt8](repeating: 0x61, count: 100_000), ops: [[UInt8]](repeating: Array("op".utf8), count: 100_000))
        do {
            let ready = try decodeReady(body)
            Issue.record("decoded \(ready.ops.count) op names")
        } catch {
            #expect(error.code == .overLimit)
            #expect(error.offset == nil, "before any field: \(error)")
            #expect(error.description == "READY body of \(body.count) bytes, longer than the 263700 a READY within the name and op "
                    + "limits can have", "\(error)")
        }
        #expect(WireLimits.maximumReadyBodySize == 263_700)
    }

    @Test func peerTextHasItsControlCharactersEscaped() {
        #expect("plain name-1".escapingControlCharacters == "plain name-1")
        #expect("a\nb\r\tc\u{1B}".escapingTerminalControls == "a\nb\\r\tc\\u{1B}", "lines and tabs kept")
        #expect("a\nb\r\tc".escapingControlCharacters == "a\\nb\\r\\tc")
        #expect("\u{1B}[2J\u{07}\u{7F}\u{9B}31m\u{0}".escapingControlCharacters == "\\u{1B}[2J\\u{7}\\u{7F}\\u{9B}31m\\u{0}")
        // Printable text beyond ASCII (U+00A0 onwards, which shares the 0xC2 lead byte) is kept.
        #expect("Zoë\u{A0}→ü".escapingControlCharacters == "Zoë\u{A0}→ü")
        // Applying it again changes nothing: nothing it writes is a control character.
        let once = "x\n\u{1B}y\\n".escapingControlCharacters
        #expect(once.escapingControlCharacters == once)
        #expect(!once.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) })
    }

    @Test func bidirectionalOverridesInPeerTextAreEscaped() {
        // A worker named "gpu\u{202E}1-rekrow" would print as "gpu" then its name reversed.
        #expect("gpu\u{202E}1-rekrow".escapingControlCharacters == "gpu\\u{202E}1-rekrow")
        let all = "a\u{202A}b\u{202B}c\u{202C}d\u{202D}e\u{202E}f\u{2066}g\u{2067}h\u{2068}i\u{2069}j"
        #expect(all.escapingControlCharacters
                == "a\\u{202A}b\\u{202B}c\\u{202C}d\\u{202D}e\\u{202E}f\\u{2066}g\\u{2067}h\\u{2068}i\\u{2069}j")
        #expect("log \u{2069}".escapingTerminalControls == "log \\u{2069}")
        // Their neighbours, and other text with the same lead byte (U+2014, U+2192, U+20AC), are kept.
        #expect("\u{2029}\u{202F}\u{2065}\u{206A}—→€".escapingControlCharacters == "\u{2029}\u{202F}\u{2065}\u{206A}—→€")
    }
}
