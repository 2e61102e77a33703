import Yams

extension FlowFileReader {
    /// The keys a group's `limit:` map may have.
    static let limitKeys = ["bytesPerSecond", "requestsPerSecond", "schedule"]

    /// `limit: {bytesPerSecond: 200MiB, requestsPerSecond: 3000, schedule: "08:00,20MiB 19:00,off"}`;
    /// every key is optional, `off` is no limit.
    mutating func readLimit(_ node: Yams.Node) -> FlowGroupLimit? {
        guard case .mapping(let mapping) = node else {
            report("limit must be a map such as {bytesPerSecond: 200MiB, requestsPerSecond: 3000, schedule: \"08:00,20MiB 19:00,off\"}, "
                   + "found \(Self.describe(node))", at: node)
            return nil
        }
        let fields = fields(of: mapping, allowed: Self.limitKeys, in: "limit")
        var limit = FlowGroupLimit()
        var failed = false
        if let value = fields["bytesPerSecond"] {
            switch readBytesPerSecond(value) {
            case .some(let bytes): limit.bytesPerSecond = bytes
            case .none: failed = true
            }
        }
        if let value = fields["requestsPerSecond"] {
            switch readRequestsPerSecond(value) {
            case .some(let requests): limit.requestsPerSecond = requests
            case .none: failed = true
            }
        }
        if let value = fields["schedule"] {
            if case .scalar(let scalar) = value, Self.tagName(of: value) == .str {
                do {
                    limit.schedule = try FlowLimitSchedule(parsing: scalar.string)
                } catch {
                    report("schedule: \(error.description)", at: value)
                    failed = true
                }
            } else {
                report("schedule must be text such as \"08:00,20MiB 19:00,off\", found \(Self.describe(value))", at: value)
                failed = true
            }
        }
        return failed ? nil : limit
    }

    /// A size a second (`200MiB`, `1048576`) in ``FlowNumberRange/bytesPerSecond``, or `off`:
    /// `.some(nil)` for off, `nil` when wrong.
    private mutating func readBytesPerSecond(_ node: Yams.Node) -> Int64?? {
        if case .scalar(let scalar) = node {
            let text = scalar.string
            if text.lowercased() == "off" { return .some(nil) }
            if let bytes = FlowByteSize.parse(text), FlowNumberRange.bytesPerSecond.contains(bytes) { return .some(bytes) }
        }
        report("bytesPerSecond must be a size a second from \(FlowNumberRange.bytesPerSecondText) (1099511627776 bytes), such as 200MiB, "
               + "512KiB or 1000000, or off, found \(Self.describe(node))", at: node)
        return nil
    }

    /// A number in ``FlowNumberRange/requestsPerSecond``, or `off`: `.some(nil)` for off, `nil`
    /// when wrong.
    private mutating func readRequestsPerSecond(_ node: Yams.Node) -> Double?? {
        if case .scalar(let scalar) = node {
            if scalar.string.lowercased() == "off" { return .some(nil) }
            switch Self.tagName(of: node) {
            case .int, .float:
                if let number = FlowCoreSchema.double(scalar.string), FlowNumberRange.requestsPerSecond.contains(number) { return .some(number) }
            default:
                break
            }
        }
        report("requestsPerSecond must be a number of op starts a second from \(FlowNumberRange.requestsPerSecondText), or off, "
               + "found \(Self.describe(node))", at: node)
        return nil
    }
}
