import Flow
import FlowWire
import Foundation
import Testing

@Suite("FlowValue encoding")
struct WireValueRoundTripTests {
    private func roundTripValue(_ value: FlowValue) throws -> FlowValue {
        var writer = WireWriter()
        writer.writeValue(value)
        var reader = WireReader(writer.bytes)
        let decoded = try reader.readValue("value")
        try reader.expectEnd()
        return decoded
    }

    @Test("every FlowValue case survives the wire unchanged", arguments: everyValue.sorted { $0.key < $1.key })
    func everyCaseRoundTrips(entry: (key: String, value: FlowValue)) throws {
        #expect(try roundTripValue(entry.value) == entry.value)
    }

    @Test("a map holding every case survives the wire unchanged")
    func wholeMapRoundTrips() throws {
        #expect(try roundTripValue(.map(everyValue)) == .map(everyValue))
    }

    @Test("NaN keeps its exact bit pattern")
    func nanKeepsBits() throws {
        let nan = Double(bitPattern: 0x7FF8_0000_DEAD_BEEF)
        guard case .double(let decoded) = try roundTripValue(.double(nan)) else {
            Issue.record("not a double")
            return
        }
        #expect(decoded.bitPattern == nan.bitPattern)
    }

    @Test("large byte strings survive the wire unchanged")
    func largeBytesRoundTrip() throws {
        var generator = SeededGenerator(seed: 7)
        let data = Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        #expect(try roundTripValue(.bytes(data)) == .bytes(data))
    }

    @Test("integers use zig-zag varints: small magnitudes of either sign take one byte")
    func integerEncodingIsCompact() {
        let cases: [(Int64, String)] = [
            (0, "0300"), (-1, "0301"), (1, "0302"), (63, "037e"), (-64, "037f"), (64, "038001"),
            (.max, "03feffffffffffffffff01"), (.min, "03ffffffffffffffffff01"),
        ]
        for (number, expected) in cases {
            var writer = WireWriter()
            writer.writeValue(.integer(number))
            #expect(hexString(writer.bytes) == expected, "\(number)")
        }
    }

    @Test("map keys are written in increasing UTF-8 byte order whatever the insertion order")
    func mapKeysAreSorted() {
        var first: [String: FlowValue] = [:]
        for key in ["b", "é", "a", "Z", "aa"] { first[key] = .null }
        var second: [String: FlowValue] = [:]
        second.reserveCapacity(100)
        for key in ["aa", "Z", "é", "b", "a"] { second[key] = .null }

        var firstWriter = WireWriter()
        firstWriter.writeValueMap(first)
        var secondWriter = WireWriter()
        secondWriter.writeValueMap(second)

        // count 5; "Z" < "a" < "aa" < "b" < "é" (0xc3 0xa9), each followed by a null tag.
        let expected = "05" + "015a00" + "016100" + "02616100" + "016200" + "02c3a900"
        #expect(hexString(firstWriter.bytes) == expected)
        #expect(firstWriter.bytes == secondWriter.bytes)
    }

    @Test("dates keep microseconds, before and after 1970")
    func datesKeepMicroseconds() throws {
        for microseconds: Int64 in [0, 1, -1, 999_999, -1_000_001, sampleTime, -sampleTime, 4_102_444_800_000_001] {
            let date = wireDate(microseconds)
            #expect(date.wireMicroseconds == microseconds)
            #expect(try roundTripValue(.date(date)) == .date(date))
        }
    }

    @Test("dates are rounded to the nearest microsecond")
    func datesRoundToMicroseconds() {
        #expect(Date(timeIntervalSince1970: 1.000_000_4).wireMicroseconds == 1_000_000)
        #expect(Date(timeIntervalSince1970: 1.000_000_6).wireMicroseconds == 1_000_001)
        #expect(Date(timeIntervalSinceReferenceDate: 0.123_456_4).wireMicroseconds == 978_307_200_123_456)
        #expect(Date(timeIntervalSince1970: 1_735_787_045.678_901).wireMicroseconds == sampleTime)
    }

    @Test("dates an Int64 of microseconds cannot hold are clamped, not trapped")
    func extremeDatesClamp() {
        #expect(Date(timeIntervalSinceReferenceDate: .infinity).wireMicroseconds == .max)
        #expect(Date(timeIntervalSinceReferenceDate: -.infinity).wireMicroseconds == .min)
        #expect(Date(timeIntervalSinceReferenceDate: .nan).wireMicroseconds == 0)
        #expect(Date(timeIntervalSinceReferenceDate: 1e300).wireMicroseconds == .max)
        #expect(Date(timeIntervalSinceReferenceDate: -1e300).wireMicroseconds == .min)
        #expect(Date.distantFuture.wireMicroseconds > 0)
        #expect(Date.distantPast.wireMicroseconds < 0)
        #expect(Date(wireMicroseconds: .max).wireMicroseconds > 9_000_000_000_000_000_000)
        #expect(Date(wireMicroseconds: .min).wireMicroseconds < -9_000_000_000_000_000_000)
    }

    @Test("nesting depth counts arrays and maps on the deepest path")
    func nestingDepthIsMeasured() {
        #expect(FlowValue.integer(1).wireNestingDepth == 0)
        #expect(FlowValue.array([]).wireNestingDepth == 1)
        #expect(FlowValue.array([.map(["a": .array([.null])]), .integer(2)]).wireNestingDepth == 3)
        #expect(["a": FlowValue.array([.array([])]), "b": .null].wireNestingDepth == 2)
        #expect([String: FlowValue]().wireNestingDepth == 0)
    }
}
