import FlowJournal
import Foundation
import Testing

/// Run ids: the start time in UTC with every field zero-padded, then a random part, so that they
/// sort by time as text and two runs started in the same second get different ids.
@Suite struct RunIDTests {
    @Test func theIdIsTheUTCTimeZeroPaddedThenSixHexDigits() throws {
        // 2026-01-02 03:04:05.9 UTC: every field needs its zero; the fraction is cut.
        let id = RunJournal.newRunID(at: Date(timeIntervalSince1970: 1_767_323_045.9))
        let match = try #require(id.wholeMatch(of: /(\d{8}-\d{6})-([0-9a-f]{6})/), "\(id)")
        #expect(match.1 == "20260102-030405")
        #expect(RunJournal.newRunID(at: Date(timeIntervalSince1970: 1_798_761_599)).hasPrefix("20261231-235959-"))
    }

    @Test func idsOfOneSecondDifferInTheirRandomPart() {
        let date = Date(timeIntervalSince1970: 1_767_323_045)
        let ids = Set((0..<20).map { _ in RunJournal.newRunID(at: date) })
        #expect(ids.count > 1)
        #expect(ids.allSatisfy { $0.hasPrefix("20260102-030405-") })
    }
}
