/// A group's budget for the whole run, across every worker (a flow file's group `limit:`).
///
/// ```yaml
/// limit: {bytesPerSecond: 200MiB, requestsPerSecond: 3000, schedule: "08:00,20MiB 19:00,off"}
/// ```
///
/// `nil` rates are unlimited. While a ``schedule`` is set, its entry active at the time replaces
/// the fixed rates it names.
public struct FlowGroupLimit: Sendable, Hashable {
    /// At most this many bytes a second sent by the group's ops, together; `nil`: no limit.
    public var bytesPerSecond: Int64?
    /// At most this many of the group's ops started a second, together; `nil`: no limit.
    public var requestsPerSecond: Double?
    /// A timetable of rates by time of day (rclone's `--bwlimit` form).
    public var schedule: FlowLimitSchedule?

    /// Creates a limit.
    public init(bytesPerSecond: Int64? = nil, requestsPerSecond: Double? = nil, schedule: FlowLimitSchedule? = nil) {
        self.bytesPerSecond = bytesPerSecond
        self.requestsPerSecond = requestsPerSecond
        self.schedule = schedule
    }

    /// The rates in force at a point of the week: the schedule's active entry where it names a
    /// rate, the fixed rates otherwise.
    ///
    /// - Parameter time: the weekday and minute of the day (local time) to look at.
    public func rates(at time: FlowLimitSchedule.WeekTime) -> FlowLimitRates {
        let fixed = FlowLimitRates(bytesPerSecond: bytesPerSecond, requestsPerSecond: requestsPerSecond)
        guard let entry = schedule?.entry(at: time) else { return fixed }
        return FlowLimitRates(bytesPerSecond: entry.bytes.isSet ? entry.bytes.value : fixed.bytesPerSecond,
                              requestsPerSecond: entry.requests.isSet ? entry.requests.value : fixed.requestsPerSecond)
    }
}

/// The rates a group is held to at one time; `nil` is unlimited.
public struct FlowLimitRates: Sendable, Hashable, Codable {
    /// Bytes a second, `nil`: unlimited.
    public var bytesPerSecond: Int64?
    /// Requests a second, `nil`: unlimited: each op start, and each further request an op reports
    /// (``FlowOperation/reportRequest()``; the parts of a multipart upload).
    public var requestsPerSecond: Double?

    /// Creates rates.
    public init(bytesPerSecond: Int64? = nil, requestsPerSecond: Double? = nil) {
        self.bytesPerSecond = bytesPerSecond
        self.requestsPerSecond = requestsPerSecond
    }

    /// Neither rate is limited.
    public var isUnlimited: Bool { bytesPerSecond == nil && requestsPerSecond == nil }
}
