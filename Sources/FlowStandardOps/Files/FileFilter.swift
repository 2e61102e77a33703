import Flow
import Foundation

/// Which files `ListFilesOp` keeps: its `include`, `exclude`, `minSize`, `maxSize` and `newerThan`
/// parameters, checked against each file's path relative to the listed folder, size and
/// modification time.
struct FileFilter {
    /// The files kept are those matching one of these (all when empty).
    var include: [PathGlob] = []
    /// Files matching one of these are left out, whatever `include` says.
    var exclude: [PathGlob] = []
    /// Folders whose files an `exclude` ending in `/**` leaves out all of (`cache/**` gives
    /// `/cache`): they are not entered at all.
    var excludedFolders: [PathGlob] = []
    /// The least size in bytes, inclusive.
    var minSize: Int64?
    /// The greatest size in bytes, inclusive.
    var maxSize: Int64?
    /// How recent a file must be.
    var newerThan: Age?

    /// How recent a file must be: `newerThan`.
    enum Age: Equatable {
        /// Modified less than this many seconds before the listing.
        case within(seconds: Double)
        /// Modified after this date.
        case after(Date)

        /// The earliest modification time kept, for a listing made at `now`.
        func cutoff(now: Date) -> Date {
            switch self {
            case .within(let seconds): return now.addingTimeInterval(-seconds)
            case .after(let date): return date
            }
        }
    }

    /// Whether no filter is set.
    var isEmpty: Bool { include.isEmpty && exclude.isEmpty && minSize == nil && maxSize == nil && newerThan == nil }

    /// Whether the relative path passes `include` and `exclude`.
    func admits(relativePath: String) -> Bool {
        guard !include.isEmpty || !exclude.isEmpty else { return true }
        let scalars = Array(relativePath.unicodeScalars)
        let nameStart = (scalars.lastIndex(of: "/") ?? -1) + 1
        if !include.isEmpty, !include.contains(where: { $0.matches(scalars, nameStart: nameStart) }) { return false }
        return !exclude.contains { $0.matches(scalars, nameStart: nameStart) }
    }

    /// Whether an `exclude` leaves out every file below the folder at `relativePath`.
    func excludesAll(below relativePath: String) -> Bool {
        !excludedFolders.isEmpty && excludedFolders.contains { $0.matches(relativePath) }
    }

    /// Whether a file of `size` bytes modified at `modified` passes the size and age limits.
    func admits(size: Int64, modified: Date, cutoff: Date?) -> Bool {
        if let minSize, size < minSize { return false }
        if let maxSize, size > maxSize { return false }
        if let cutoff, modified <= cutoff { return false }
        return true
    }

    /// Reads the filter parameters.
    ///
    /// - Throws: ``FlowParameterError`` naming the parameter for a pattern that cannot be
    ///   compiled, a size or an age that cannot be read, or `minSize` above `maxSize`.
    init(parameters: FlowParameters) throws {
        func globs(_ key: String) throws -> [PathGlob] {
            let patterns: [String]
            if case .string(let single)? = parameters[key] {
                patterns = [single]
            } else {
                patterns = try parameters.stringList(key) ?? []
            }
            return try patterns.map { pattern in
                do { return try PathGlob(pattern) } catch { throw parameters.error(key, String(describing: error)) }
            }
        }
        include = try globs("include")
        exclude = try globs("exclude")
        excludedFolders = exclude.compactMap { glob in
            guard glob.pattern.hasSuffix("/**"), !glob.pattern.hasSuffix("\\/**") else { return nil }
            let folder = String(glob.pattern.dropLast(3))
            guard !folder.isEmpty, folder != "/" else { return nil }
            return try? PathGlob(folder.hasPrefix("/") ? folder : "/" + folder)
        }
        func size(_ key: String) throws -> Int64? {
            guard let value = parameters[key] else { return nil }
            guard let bytes = Self.byteCount(value) else {
                throw parameters.error(key, "must be a number of bytes or a size like 512KiB, 10MiB, 2GiB, 5MB, not \(value)")
            }
            return bytes
        }
        minSize = try size("minSize")
        maxSize = try size("maxSize")
        if let minSize, let maxSize, minSize > maxSize {
            throw parameters.error("minSize", "(\(minSize) bytes) is more than maxSize (\(maxSize) bytes): no file could be listed")
        }
        if let value = parameters["newerThan"] {
            guard let age = Self.age(value) else {
                throw parameters.error("newerThan", "must be \(FlowDurationText.expected) or a date like 2026-01-31 or "
                                       + "2026-01-31T08:00:00Z, not \(value)")
            }
            newerThan = age
        }
    }

    /// An empty filter.
    init() {}

    /// A size: a whole number of bytes, or text with `B`, `KiB`, `MiB`, `GiB`, `TiB` (powers of
    /// 1024) or `KB`, `MB`, `GB`, `TB` (powers of 1000), in any case, with or without a space:
    /// `1500`, `512KiB`, `1.5 MiB`, `5MB`. `nil` for anything else or a negative size.
    static func byteCount(_ value: FlowValue) -> Int64? {
        switch value {
        case .integer(let bytes): return bytes >= 0 ? bytes : nil
        case .double(let bytes): return bytes >= 0 && bytes == bytes.rounded() && bytes < 9e18 ? Int64(bytes) : nil
        case .string(let text): return byteCount(text)
        default: return nil
        }
    }

    /// ``byteCount(_:)`` of text.
    static func byteCount(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [
            ("kib", 0x1p10), ("mib", 0x1p20), ("gib", 0x1p30), ("tib", 0x1p40), ("kb", 1e3), ("mb", 1e6), ("gb", 1e9), ("tb", 1e12), ("b", 1),
        ]
        let lower = trimmed.lowercased()
        var number = Substring(lower)
        var factor = 1.0
        for (suffix, unitFactor) in units where lower.hasSuffix(suffix) {
            number = lower.dropLast(suffix.count)
            factor = unitFactor
            break
        }
        let digits = number.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let amount = Double(digits) else { return nil }
        let bytes = (amount * factor).rounded()
        return bytes < 9e18 ? Int64(bytes) : nil
    }

    /// An age: a duration (`90s`, `30m`, `24h`, `7d`, `2w`, or several, `1h30m`; a bare number is
    /// seconds; `FlowDurationText.seconds(_:)`) or a date (`2026-01-31`, midnight UTC, or ISO 8601
    /// with a time and zone, `2026-01-31T08:00:00Z`, `2026-01-31T08:00:00+01:00`). `nil` for
    /// anything else.
    static func age(_ value: FlowValue) -> Age? {
        switch value {
        case .integer(let seconds): return seconds >= 0 ? .within(seconds: Double(seconds)) : nil
        case .double(let seconds): return seconds >= 0 && seconds.isFinite ? .within(seconds: seconds) : nil
        case .date(let date): return .after(date)
        case .string(let text): return age(text)
        default: return nil
        }
    }

    /// ``age(_:)`` of text.
    static func age(_ text: String) -> Age? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = FlowDurationText.seconds(trimmed) { return .within(seconds: seconds) }
        if let date = date(trimmed) { return .after(date) }
        return nil
    }

    /// A date `2026-01-31` (midnight UTC) or an ISO 8601 date and time with a zone; `nil` otherwise.
    static func date(_ text: String) -> Date? {
        let withTime = ISO8601DateFormatter()
        withTime.formatOptions = [.withInternetDateTime]
        if let date = withTime.date(from: text) { return date }
        withTime.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = withTime.date(from: text) { return date }
        let dayOnly = ISO8601DateFormatter()
        dayOnly.formatOptions = [.withFullDate]
        dayOnly.timeZone = TimeZone(identifier: "UTC")
        return text.count == 10 ? dayOnly.date(from: text) : nil
    }

    /// The parameters as given, for sending the op to a worker.
    static let parameterNames = ["include", "exclude", "minSize", "maxSize", "newerThan"]
}
