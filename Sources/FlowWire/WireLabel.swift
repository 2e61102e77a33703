package import Flow

/// One label of a worker (LABELS, docs/PROTOCOL.md §7.10): a key and its value, which a step's
/// `on:` matches (`role=recorder`, `zone=b`).
package struct WireLabel: Sendable, Hashable, Comparable {
    /// 1 to ``WireLimits/maximumLabelKeyBytes`` bytes of ASCII letters, digits and `.`, `_`, `-`,
    /// `/`, starting with a letter or digit.
    package var key: String
    /// At most ``WireLimits/maximumLabelValueBytes`` bytes of UTF-8, no control character.
    package var value: String

    /// Creates a label.
    package init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    package static func < (lhs: WireLabel, rhs: WireLabel) -> Bool { (lhs.key, lhs.value) < (rhs.key, rhs.value) }

    /// Why `key` cannot be a label's key, `nil` when it can (``FlowPlacement/problem(withKey:)``).
    package static func problem(withKey key: String) -> String? { FlowPlacement.problem(withKey: key) }

    /// Why `value` cannot be a label's value, `nil` when it can (``FlowPlacement/problem(withValue:)``).
    package static func problem(withValue value: String) -> String? { FlowPlacement.problem(withValue: value) }

    /// Appends the label: its key, then its value.
    package func write(to writer: inout WireWriter) {
        writer.writeString(key)
        writer.writeString(value)
    }

    /// Reads one label, refusing a key or value the rules above do not allow.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        let keyStart = reader.offset
        key = try reader.readString("label key", maximumBytes: WireLimits.maximumLabelKeyBytes)
        if let problem = Self.problem(withKey: key) {
            throw WireDecodingError(.invalidField, offset: keyStart, "label key: \(problem)")
        }
        let valueStart = reader.offset
        value = try reader.readString("label value", maximumBytes: WireLimits.maximumLabelValueBytes)
        if let problem = Self.problem(withValue: value) {
            throw WireDecodingError(.invalidField, offset: valueStart, "label value: \(problem)")
        }
    }

    /// Appends a list as LABELS carries it (§7.10): a count, then each label.
    package static func writeList(_ labels: [WireLabel], to writer: inout WireWriter) {
        writer.writeVarint(UInt64(labels.count))
        for label in labels { label.write(to: &writer) }
    }

    /// Reads a list a task's flags bit says follows (§14.4: placement, preference): as
    /// ``readList(_:)``, and refused when empty, since the bit would then have been clear.
    package static func readNonEmptyList(_ reader: inout WireReader, field: String, flagBit: Int) throws(WireDecodingError) -> [WireLabel] {
        let start = reader.offset
        let labels = try readList(&reader)
        guard !labels.isEmpty else {
            throw WireDecodingError(.invalidField, offset: start, "\(field): flags bit \(flagBit) says labels follow, but the list is empty")
        }
        return labels
    }

    /// Reads a LABELS body: a count of at most ``WireLimits/maximumLabels`` (refused at the count),
    /// then the labels, no key twice.
    package static func readList(_ reader: inout WireReader) throws(WireDecodingError) -> [WireLabel] {
        let countStart = reader.offset
        let count = try reader.readCount(minimumElementSize: 3, "label count")
        guard count <= WireLimits.maximumLabels else {
            throw WireDecodingError(.overLimit, offset: countStart, "labels: \(count) of them, more than the \(WireLimits.maximumLabels) allowed")
        }
        var labels: [WireLabel] = []
        labels.reserveCapacity(count)
        var keys: Set<String> = []
        for _ in 0..<count {
            let start = reader.offset
            let label = try WireLabel(reading: &reader)
            guard keys.insert(label.key).inserted else {
                throw WireDecodingError(.invalidField, offset: start, "label key: \(label.key) is given twice")
            }
            labels.append(label)
        }
        return labels
    }
}
