/// Where a step's ops may run on a cluster (`on: {role: recorder}` in a flow file): only on
/// workers whose labels hold every pair. Every worker has `host` (its host name) and `name` (its
/// name) besides the labels it was given (`flow-worker --label KEY=VALUE`).
///
/// A run in one process has no workers to choose among: it runs placed steps as any other.
public struct FlowPlacement: Sendable, Hashable, CustomStringConvertible {
    /// The labels a worker must have, by key: at least one pair.
    public var labels: [String: String]

    /// A placement; `nil` when `labels` is empty or breaks the rules of ``problem(withKey:)`` and
    /// ``problem(withValue:)``.
    public init?(_ labels: [String: String]) {
        guard !labels.isEmpty, labels.allSatisfy({ Self.problem(withKey: $0.key) == nil && Self.problem(withValue: $0.value) == nil })
        else { return nil }
        self.labels = labels
    }

    /// Whether a worker with `workerLabels` (its `host` and `name` among them) may run the step.
    public func matches(_ workerLabels: [String: String]) -> Bool {
        labels.allSatisfy { workerLabels[$0.key] == $0.value }
    }

    /// A worker's label `key` as placement reads it: one the worker was given, else its `host`
    /// or its `name`. A label given with either key wins (a pod says `host=` its node).
    public static func label(_ key: String, given: [String: String], host: String, name: String) -> String? {
        given[key] ?? (key == "host" ? host : key == "name" ? name : nil)
    }

    /// Every label of a worker as placement reads it: `host` and `name`, then the labels it was
    /// given, which win over those two (``label(_:given:host:name:)``).
    public static func labels(given: [String: String], host: String, name: String) -> [String: String] {
        ["host": host, "name": name].merging(given) { $1 }
    }

    /// `role=recorder, zone=b`, sorted by key.
    public var description: String {
        labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }

    /// The most bytes a label's key may have: 63, as a Kubernetes label's name.
    public static let maximumKeyBytes = 63
    /// The most bytes (UTF-8) a label's value may have: 255, a host name's limit.
    public static let maximumValueBytes = 255

    /// Why `key` cannot be a label's key, `nil` when it can: 1 to 63 ASCII letters, digits and
    /// `.`, `_`, `-`, `/`, starting with a letter or a digit.
    public static func problem(withKey key: String) -> String? {
        let bytes = Array(key.utf8)
        if bytes.isEmpty { return "a label's key is empty" }
        if bytes.count > maximumKeyBytes { return "a label's key has \(bytes.count) bytes, more than the \(maximumKeyBytes) allowed" }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        guard isAlphanumeric(bytes[0]), bytes.allSatisfy({ isAlphanumeric($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D || $0 == 0x2F }) else {
            return "a label's key must be letters, digits and . _ - / (starting with a letter or a digit)"
        }
        return nil
    }

    /// Why `value` cannot be a label's value, `nil` when it can: at most 255 bytes of UTF-8, no
    /// control character.
    public static func problem(withValue value: String) -> String? {
        let count = value.utf8.count
        if count > maximumValueBytes { return "a label's value has \(count) bytes, more than the \(maximumValueBytes) allowed" }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "a label's value has a control character"
        }
        return nil
    }
}

/// Where a group sends each element (`affinity:`): back to the host that put it out.
public enum FlowAffinity: String, Sendable, Hashable {
    /// Each element runs only on a worker of the host it came from (its `host`, as a step with
    /// `each: worker` puts it out), or where its own `on:` says: never on a host that cannot read
    /// it. With none there, it waits, and fails after the worker time-out naming the host.
    case source
    /// As ``source`` while such a worker is connected; when none is, any worker runs it.
    case prefer

    /// The labels an element asks for: its own `on:` (a map of texts), else its `host`; `nil` for
    /// an element that says neither.
    public static func labels(of element: Any) -> [String: String]? {
        guard let map = element as? [String: Any] else { return nil }
        if let on = map["on"] as? [String: Any] {
            let labels = on.compactMapValues { $0 as? String }
            return labels.isEmpty ? nil : labels
        }
        if let host = map["host"] as? String, !host.isEmpty { return ["host": host] }
        return nil
    }
}
