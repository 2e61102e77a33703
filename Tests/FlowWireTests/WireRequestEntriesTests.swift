import FlowWire
import Foundation
import Testing

/// Request entries in PROGRESS and request-rate entries in RATE (PROTOCOL.md §15, feature bit 5):
/// the existing layouts byte for byte as §15.3 writes them, round trips, and what a receiver
/// rejects.
@Suite("Request entries")
struct WireRequestEntriesTests {
    private func expectBody(_ message: WireMessage, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = bytes(hex: hex)
        #expect(hexString(body(of: message)) == hexString(expected), sourceLocation: sourceLocation)
        #expect(try WireCodec.decode(frames(message.command.rawValue, body: expected)) == message, sourceLocation: sourceLocation)
    }

    @Test("the feature bit and the marks have the values the spec gives them")
    func values() {
        #expect(WireReady.Feature.requests == 0x0000_0020)
        #expect(WireRate.requestsMark == 0x4000_0000_0000_0000)
        #expect(WireProgress.requests(taskID: 7, count: 3) == WireProgress(taskID: 7, attempt: 0, bytes: 3))
        #expect(WireProgress.requests(taskID: 7, count: 3).isRequests && !WireProgress(taskID: 7, attempt: 1, bytes: 3).isRequests)
        #expect(WireRate.requests(budget: 5, perMille: 1).requestsBudget == 5)
        #expect(WireRate(budget: 5, bytesPerSecond: 1).requestsBudget == nil)
        #expect(WireRate(budget: (1 << 62) - 1, bytesPerSecond: 1).requestsBudget == nil, "the highest budget id is still a bytes entry")
    }

    @Test("PROGRESS example: task 7 made 3 requests beyond its start (attempt 0), beside 1 MiB of bytes")
    func progressRequests() throws {
        try expectBody(.progress([WireProgress(taskID: 7, attempt: 1, bytes: 1_048_576), .requests(taskID: 7, count: 3)]),
                       "02  0700000000000000 01000000 808040  0700000000000000 00000000 03")
    }

    @Test("RATE example: budget 0 at 10 MiB a second and 3.5 requests a second (3,500 thousandths, at 2^62 + 0)")
    func rateRequests() throws {
        try expectBody(.rate([WireRate(budget: 0, bytesPerSecond: 10_485_760), .requests(budget: 0, perMille: 3_500)]),
                       "02  00 80808005  808080808080808040 ac1b")
        try expectBody(.rate([.requests(budget: 1, perMille: 0)]), "01  818080808080808040 00")
    }

    @Test("request entries decode to what was encoded")
    func roundTrips() throws {
        let messages: [WireMessage] = [
            .progress([.requests(taskID: .max, count: .max)]),
            .rate([.requests(budget: (1 << 62) - 1, perMille: .max), WireRate(budget: 3, bytesPerSecond: 1)]),
        ]
        for message in messages { #expect(try roundTrip(message) == message) }
    }

    @Test("a request entry of 0 requests and a truncated request-rate entry are malformed")
    func rejections() {
        expectRejection(frames(0x09, body: bytes(hex: "01  0700000000000000  00000000  00")), .invalidField)
        expectRejection(frames(0x0A, body: bytes(hex: "01  80")), .lengthExceedsBody)
        expectRejection(frames(0x0A, body: bytes(hex: "01  8080808080808080")), .truncated)
        expectRejection(frames(0x0A, body: bytes(hex: "01  808080808080808040")), .truncated)
        expectRejection(frames(0x0A, body: bytes(hex: "01  808080808080808040 ac")), .truncated)
        expectRejection(frames(0x0A, body: bytes(hex: "01  808080808080808040 01 00")), .trailingBytes)
    }
}
