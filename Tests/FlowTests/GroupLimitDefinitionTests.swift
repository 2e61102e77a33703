import Foundation
import Testing

@testable import Flow

/// A group's `limit:` and `adaptive:` as a flow file writes them, and the `schedule:` timetable.
@Suite struct GroupLimitDefinitionTests {
    private func load(_ group: String) throws -> FlowGroupStep {
        let text = "flow: x\nsteps:\n  - group:\n      op: A\n      input: items\n      output: outs\n" + group
        let definition = try FlowFileLoader().load(text: text, file: "f.yaml")
        guard case .group(let step) = definition.steps.first else { throw FlowFileTestError() }
        return step
    }

    private func diagnostics(_ group: String) -> [String] {
        let text = "flow: x\nsteps:\n  - group:\n      op: A\n      input: items\n      output: outs\n" + group
        do {
            _ = try FlowFileLoader().load(text: text, file: "f.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func theIssuesExampleLoads() throws {
        let step = try load("      limit: {bytesPerSecond: 200MiB, requestsPerSecond: 3000, schedule: \"08:00,20MiB 19:00,off\"}\n")
        #expect(step.limit?.bytesPerSecond == Int64(200 * 1_048_576))
        #expect(step.limit?.requestsPerSecond == 3000)
        #expect(step.limit?.schedule?.entries.count == 2)
        #expect(step.adaptive)
    }

    @Test func withoutLimitNothingIsSet() throws {
        let step = try load("      maxConcurrent: 4\n")
        #expect(step.limit == nil)
        #expect(step.adaptive)
    }

    @Test func offAndPlainNumbersAndAdaptiveFalse() throws {
        let step = try load("      limit: {bytesPerSecond: off, requestsPerSecond: 2.5}\n      adaptive: false\n")
        #expect(step.limit == FlowGroupLimit(bytesPerSecond: nil, requestsPerSecond: 2.5))
        #expect(!step.adaptive)
        #expect(try load("      limit: {bytesPerSecond: 1000000}\n").limit?.bytesPerSecond == 1_000_000)
    }

    @Test func wrongLimitsAreRefusedWithTheirPlace() {
        #expect(diagnostics("      limit: {bytesPerSecnd: 1MiB}\n")
                == ["f.yaml:7:15: unknown key 'bytesPerSecnd' in limit; did you mean 'bytesPerSecond'?"])
        #expect(diagnostics("      limit: {bytesPerSecond: 20 furlongs}\n")
                == ["f.yaml:7:31: bytesPerSecond must be a size a second from 1 B to 1 TiB (1099511627776 bytes), such as 200MiB, 512KiB "
                    + "or 1000000, or off, found the text '20 furlongs'"])
        #expect(diagnostics("      limit: {requestsPerSecond: 0}\n")
                == ["f.yaml:7:34: requestsPerSecond must be a number of op starts a second from 0.001 to 1000000, or off, found the integer 0"])
        #expect(diagnostics("      limit: {schedule: \"25:00,1MiB\"}\n")
                == ["f.yaml:7:25: schedule: '25:00,1MiB': '25:00' is not a time of day HH:MM (00:00 to 23:59)"])
        #expect(diagnostics("      limit: 5\n")
                == ["f.yaml:7:14: limit must be a map such as {bytesPerSecond: 200MiB, requestsPerSecond: 3000, "
                    + "schedule: \"08:00,20MiB 19:00,off\"}, found the integer 5"])
        #expect(diagnostics("      limits: {}\n") == ["f.yaml:7:7: unknown key 'limits' in group; did you mean 'limit'?"])
        #expect(diagnostics("      adaptive: sometimes\n") == ["f.yaml:7:17: adaptive must be true or false, found the text 'sometimes'"])
    }

    @Test func sizes() {
        #expect(FlowByteSize.parse("512") == 512)
        #expect(FlowByteSize.parse("512K") == 524_288)
        #expect(FlowByteSize.parse("64KiB") == 65_536)
        #expect(FlowByteSize.parse("10M") == 10_485_760)
        #expect(FlowByteSize.parse("1.5GiB") == 1_610_612_736)
        #expect(FlowByteSize.parse("2MB") == 2_000_000)
        #expect(FlowByteSize.parse("MiB") == nil)
        #expect(FlowByteSize.parse("3 parsecs") == nil)
    }

    // MARK: The timetable

    private let rclone = try! FlowLimitSchedule(parsing: "08:00,512K 12:00,10M 13:00,512K 18:00,30M 23:00,off")

    @Test func rclonesExampleSwitchesAtItsTimes() {
        func bytes(_ hour: Int, _ minute: Int, day: Int = 3) -> FlowLimitSchedule.Setting<Int64>? {
            rclone.entry(at: .init(weekday: day, minute: hour * 60 + minute))?.bytes
        }
        #expect(bytes(7, 59) == .off, "before the first entry: the last one of the day before")
        #expect(bytes(8, 0) == .limit(524_288))
        #expect(bytes(11, 59) == .limit(524_288))
        #expect(bytes(12, 0) == .limit(10_485_760))
        #expect(bytes(13, 30) == .limit(524_288))
        #expect(bytes(18, 0) == .limit(31_457_280))
        #expect(bytes(23, 0) == .off)
        #expect(bytes(0, 0, day: 1) == .off, "Monday midnight: Sunday's 23:00 entry")
    }

    @Test func dayFormsHoldForTheirDayOnly() throws {
        let schedule = try FlowLimitSchedule(parsing: "Mon-00:00,512K Fri-18:00,off Sat-10:00,1M")
        #expect(schedule.entry(at: .init(weekday: 1, minute: 0))?.bytes == .limit(524_288))
        #expect(schedule.entry(at: .init(weekday: 4, minute: 600))?.bytes == .limit(524_288))
        #expect(schedule.entry(at: .init(weekday: 5, minute: 18 * 60))?.bytes == .off)
        #expect(schedule.entry(at: .init(weekday: 7, minute: 23 * 60))?.bytes == .limit(1_048_576))
        #expect(schedule.minutesUntilNextSwitch(after: .init(weekday: 5, minute: 17 * 60)) == 60)
        #expect(schedule.minutesUntilNextSwitch(after: .init(weekday: 7, minute: 23 * 60 + 59)) == 1)
    }

    @Test func requestsInTheTimetableAndTheFixedRatesBesideIt() throws {
        let limit = FlowGroupLimit(bytesPerSecond: 1000, requestsPerSecond: 50,
                                   schedule: try FlowLimitSchedule(parsing: "08:00,:500 19:00,off:off 22:00,2K"))
        #expect(limit.rates(at: .init(weekday: 2, minute: 9 * 60)) == FlowLimitRates(bytesPerSecond: 1000, requestsPerSecond: 500))
        #expect(limit.rates(at: .init(weekday: 2, minute: 20 * 60)) == FlowLimitRates())
        #expect(limit.rates(at: .init(weekday: 2, minute: 22 * 60)) == FlowLimitRates(bytesPerSecond: 2048, requestsPerSecond: 50))
    }

    @Test func aWallClockTimeIsReadInTheCalendarsZone() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // 2026-11-27 was a Friday.
        let date = try #require(calendar.date(from: DateComponents(year: 2026, month: 11, day: 27, hour: 19, minute: 30)))
        #expect(FlowLimitSchedule.WeekTime(date, calendar: calendar) == .init(weekday: 5, minute: 19 * 60 + 30))
        let sunday = try #require(calendar.date(from: DateComponents(year: 2026, month: 11, day: 29, hour: 0, minute: 1)))
        #expect(FlowLimitSchedule.WeekTime(sunday, calendar: calendar) == .init(weekday: 7, minute: 1))
    }

    @Test func badTimetablesSayWhy() {
        func error(_ text: String) -> String? {
            do { _ = try FlowLimitSchedule(parsing: text); return nil } catch { return error.description }
        }
        #expect(error("") == "the timetable is empty: give entries such as \"08:00,20MiB 19:00,off\"")
        #expect(error("Xyz-08:00,1M") == "'Xyz-08:00,1M': 'Xyz' is not a day: use Mon, Tue, Wed, Thu, Fri, Sat or Sun")
        #expect(error("08:00") == "'08:00' is not an entry of the form [DAY-]HH:MM,BYTES[:REQUESTS] (such as 08:00,20MiB or Mon-19:00,off)")
        #expect(error("08:00,lots") == "'08:00,lots': 'lots' is not a rate of bytes a second: give a size such as 512KiB or 200MiB, from 1 B to 1 TiB, or off")
        #expect(error("08:00,1M:-3") == "'08:00,1M:-3': -3 requests a second is out of range: give 0.001 to 1000000 requests a second, or off")
    }
}

private struct FlowFileTestError: Error {}
