@testable import Flow
import Foundation
import Testing

/// The summary's time stamp is formatted without ICU; it must read exactly as the seed's
/// `DateFormatter` (`h:mm:ss a`, en_US_POSIX) writes it, in every zone and at every hour.
@Suite struct SummaryTimeStampTests {
    private func seedFormatter(_ timeZone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "h:mm:ss a"
        return formatter
    }

    /// Midnight, noon, the minutes and seconds around them, a leap day, a DST change in New York
    /// (2026-03-08 and 2026-11-01), and times before 1970.
    private var dates: [Date] {
        var dates: [Date] = []
        for base in [1_772_928_000.0, 1_793_491_200.0, 1_709_164_800.0, -1_000_000.5, 0] {
            for hours in 0..<26 {
                for offset in [0.0, 59.999, 61, 1_799, 3_599.5] {
                    dates.append(Date(timeIntervalSince1970: base + Double(hours) * 3_600 + offset))
                }
            }
        }
        return dates
    }

    @Test(arguments: ["UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "America/St_Johns"])
    func readsAsTheSeedFormatterInAZone(_ identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        let seed = seedFormatter(zone)
        let stamp = FlowSummary.timeFormatter(timeZone: zone)
        for date in dates {
            let seedText = seed.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
            #expect(stamp.string(from: date) == seedText, "\(identifier) at \(date.timeIntervalSince1970)")
        }
    }

    @Test func theLocalZoneIsTheOneTimeZoneCurrentNames() {
        let seed = seedFormatter(.current)
        let stamp = FlowSummary.timeFormatter()
        for date in dates {
            let seedText = seed.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
            #expect(stamp.string(from: date) == seedText, "\(TimeZone.current.identifier) at \(date.timeIntervalSince1970)")
        }
    }

    @Test func aSummaryLineHasTheStampThenTheText() {
        let entry = FlowLogEntry(time: Date(timeIntervalSince1970: 1_764_080_238.9), text: "[SleepOp] WillStart")
        #expect(FlowSummary.lineText(entry, formatter: FlowSummary.timeFormatter(timeZone: TimeZone(identifier: "UTC")))
            == "2:17:18 PM [SleepOp] WillStart\n")
    }
}
