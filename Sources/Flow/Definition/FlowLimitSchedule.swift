public import Foundation

/// A timetable of rates, in the form of rclone's `--bwlimit`:
/// `"08:00,512KiB 12:00,10MiB 13:00,512KiB 18:00,30MiB 23:00,off"`.
///
/// Each entry is `[DAY-]HH:MM,BYTES[:REQUESTS]`: from that time (local), the group sends at most
/// `BYTES` a second (a size such as `20MiB`, or `off`) and, when given, starts at most
/// `REQUESTS` ops a second (a number, or `off`). An empty `BYTES` (`08:00,:500`) leaves the bytes
/// rate as it was. `DAY` is `Mon` … `Sun`; an entry without one holds every day. Unlike rclone,
/// the part after `:` is requests, not the download rate. The entry in force is the latest one
/// at or before the time, in the week; before the first one, the last one of the week.
public struct FlowLimitSchedule: Sendable, Hashable {
    /// A rate as an entry sets it.
    public enum Setting<Value: Sendable & Hashable>: Sendable, Hashable {
        /// The entry does not name this rate: the group's fixed rate holds.
        case unchanged
        /// No limit.
        case off
        /// This limit.
        case limit(Value)

        /// Whether the entry names the rate (off or a limit).
        public var isSet: Bool { if case .unchanged = self { false } else { true } }
        /// The limit, `nil` when off or unchanged.
        public var value: Value? { if case .limit(let value) = self { value } else { nil } }
    }

    /// One entry of the timetable.
    public struct Entry: Sendable, Hashable {
        /// 1 (Monday) to 7 (Sunday); `nil`: every day.
        public var weekday: Int?
        /// Minutes after midnight, 0 to 1439.
        public var minute: Int
        /// Bytes a second from then on.
        public var bytes: Setting<Int64>
        /// Requests a second from then on (op starts, and the further requests ops report).
        public var requests: Setting<Double>

        /// Creates an entry.
        public init(weekday: Int? = nil, minute: Int, bytes: Setting<Int64>, requests: Setting<Double> = .unchanged) {
            self.weekday = weekday
            self.minute = minute
            self.bytes = bytes
            self.requests = requests
        }
    }

    /// A point of the week: what the timetable looks at.
    public struct WeekTime: Sendable, Hashable {
        /// 1 (Monday) to 7 (Sunday).
        public var weekday: Int
        /// Minutes after midnight, 0 to 1439.
        public var minute: Int

        /// Creates a point of the week.
        public init(weekday: Int, minute: Int) {
            self.weekday = weekday
            self.minute = minute
        }

        /// `date` in `calendar`'s time zone (the local one by default).
        public init(_ date: Date, calendar: Calendar = .current) {
            let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
            // Foundation counts Sunday as 1.
            weekday = ((parts.weekday ?? 2) + 5) % 7 + 1
            minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        }

        var minuteOfWeek: Int { (weekday - 1) * 1440 + minute }
    }

    /// The entries, in the order written.
    public var entries: [Entry]

    /// Creates a timetable of `entries`.
    public init(entries: [Entry]) {
        self.entries = entries
    }

    static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// Every entry at each minute of the week where it starts, in order of the week.
    private var weekly: [(minute: Int, entry: Entry)] {
        var starts: [(minute: Int, entry: Entry)] = []
        for entry in entries {
            let days = entry.weekday.map { [$0] } ?? Array(1...7)
            for day in days { starts.append(((day - 1) * 1440 + entry.minute, entry)) }
        }
        // Stable: of two entries at one minute, the later written wins.
        return starts.enumerated().sorted { ($0.element.minute, $0.offset) < ($1.element.minute, $1.offset) }.map(\.element)
    }

    /// The entry in force at `time`; `nil` when the timetable is empty.
    public func entry(at time: WeekTime) -> Entry? {
        let starts = weekly
        return starts.last { $0.minute <= time.minuteOfWeek }?.entry ?? starts.last?.entry
    }

    /// Minutes from `time` until the next entry starts (at most a week); `nil` when empty.
    public func minutesUntilNextSwitch(after time: WeekTime) -> Int? {
        let now = time.minuteOfWeek
        return weekly.map { ($0.minute - now + 10080 - 1) % 10080 + 1 }.min()
    }

    /// Reads a timetable in the form above.
    ///
    /// - Throws: ``FlowLimitScheduleError`` naming the entry that is wrong and why.
    public init(parsing text: String) throws(FlowLimitScheduleError) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard !words.isEmpty else { throw FlowLimitScheduleError("the timetable is empty: give entries such as \"08:00,20MiB 19:00,off\"") }
        entries = try words.map { word throws(FlowLimitScheduleError) in try Self.entry(String(word)) }
    }

    private static func entry(_ word: String) throws(FlowLimitScheduleError) -> Entry {
        let fail = FlowLimitScheduleError("'\(word)' is not an entry of the form [DAY-]HH:MM,BYTES[:REQUESTS] (such as 08:00,20MiB or Mon-19:00,off)")
        guard let comma = word.firstIndex(of: ",") else { throw fail }
        var when = Substring(word[..<comma])
        let rates = word[word.index(after: comma)...]
        var weekday: Int?
        if let dash = when.firstIndex(of: "-") {
            guard let day = dayNames.firstIndex(of: when[..<dash].lowercased()) else {
                throw FlowLimitScheduleError("'\(word)': '\(when[..<dash])' is not a day: use Mon, Tue, Wed, Thu, Fri, Sat or Sun")
            }
            weekday = day + 1
            when = when[when.index(after: dash)...]
        }
        let clock = when.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 2, clock[0].count <= 2, clock[1].count == 2, let hour = Int(clock[0]), let minute = Int(clock[1]),
              (0..<24).contains(hour), (0..<60).contains(minute) else {
            throw FlowLimitScheduleError("'\(word)': '\(when)' is not a time of day HH:MM (00:00 to 23:59)")
        }
        let parts = rates.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { throw fail }
        var bytes = Setting<Int64>.unchanged
        var requests = Setting<Double>.unchanged
        do {
            if !parts[0].isEmpty { bytes = try FlowNumberRange.bytesPerSecond(String(parts[0])).map { .limit($0) } ?? .off }
            if parts.count == 2 { requests = try FlowNumberRange.requestsPerSecond(String(parts[1])).map { .limit($0) } ?? .off }
        } catch {
            throw FlowLimitScheduleError("'\(word)': \(error.description)")
        }
        guard bytes.isSet || requests.isSet else { throw fail }
        return Entry(weekday: weekday, minute: hour * 60 + minute, bytes: bytes, requests: requests)
    }
}

/// Why a `schedule:` timetable could not be read.
public struct FlowLimitScheduleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for the user.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Sizes as a flow file and the command line write them: `512`, `64KiB`, `20MiB`, `1.5GiB`.
public enum FlowByteSize {
    /// `K`, `Ki`, `KiB` are 1024 (rclone's meaning of `K`); `KB`, `MB`, `GB`, `TB` are powers of
    /// 1000; a plain number or `B` is bytes.
    ///
    /// - Returns: the whole number of bytes, `nil` when `text` is no size.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        guard !digits.isEmpty, let number = Double(digits), number.isFinite else { return nil }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let factor: Double
        switch unit {
        case "", "b": factor = 1
        case "k", "ki", "kib": factor = 1024
        case "m", "mi", "mib": factor = 1_048_576
        case "g", "gi", "gib": factor = 1_073_741_824
        case "t", "ti", "tib": factor = 1_099_511_627_776
        case "kb": factor = 1e3
        case "mb": factor = 1e6
        case "gb": factor = 1e9
        case "tb": factor = 1e12
        default: return nil
        }
        let bytes = (number * factor).rounded()
        guard bytes < 9e18 else { return nil }
        return Int64(bytes)
    }
}
