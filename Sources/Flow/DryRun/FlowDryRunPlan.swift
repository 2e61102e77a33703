import Foundation

/// What a dry run found (``FlowDryRunExecutor/plan``): per step, whether it ran, and for ops
/// that rehearse (uploads), the items and bytes a real run would send, the items it would skip
/// and why, and the requests made and not made.
public struct FlowDryRunPlan: Sendable {
    /// One step of the flow as the dry run met it (a serial op, or a group: one step, its
    /// elements counted).
    public struct Step: Sendable {
        /// The op's name.
        public var operationName: String
        /// Where the step is written, when known.
        public var location: FlowSourceLocation?
        /// How the op took part: a ``FlowDryRunRole/writes`` step was not run.
        public var role: FlowDryRunRole
        /// Its tasks: 1 for a serial op, the elements for a group.
        public var tasks = 0
        /// Tasks that ran and failed (a listing of a missing folder, a HEAD that could not be made).
        public var failed = 0
        /// Items a real run would send.
        public var itemsToSend = 0
        /// The bytes of the items a real run would send.
        public var bytesToSend: Int64 = 0
        /// Items a real run would leave alone, with why, in the order met.
        public var skipped: [FlowDryRunNote] = []
        /// Requests the dry run made, by method.
        public var requestsMade: [String: Int] = [:]
        /// Requests a real run would make that the dry run did not, by method.
        public var requestsNotMade: [String: Int] = [:]

        /// Whether the dry run ran it: not for an op that writes.
        public var ran: Bool { role != .writes }

        /// Adds what one task noted.
        mutating func add(_ note: FlowDryRunNote) {
            switch note.action {
            case .send:
                itemsToSend += 1
                bytesToSend += note.bytes
            case .skip:
                skipped.append(note)
            }
            requestsMade.merge(note.requestsMade, uniquingKeysWith: +)
            requestsNotMade.merge(note.requestsNotMade, uniquingKeysWith: +)
        }
    }

    /// The steps, in the order they were first met.
    public var steps: [Step] = []

    /// Creates an empty plan.
    public init() {}

    /// Items a real run would send, over all steps.
    public var itemsToSend: Int { steps.reduce(0) { $0 + $1.itemsToSend } }
    /// Their bytes.
    public var bytesToSend: Int64 { steps.reduce(0) { $0 + $1.bytesToSend } }
    /// Items a real run would skip, over all steps.
    public var itemsSkipped: Int { steps.reduce(0) { $0 + $1.skipped.count } }
    /// Requests made, by method, over all steps.
    public var requestsMade: [String: Int] { steps.reduce(into: [:]) { $0.merge($1.requestsMade, uniquingKeysWith: +) } }
    /// Requests not made, by method, over all steps.
    public var requestsNotMade: [String: Int] { steps.reduce(into: [:]) { $0.merge($1.requestsNotMade, uniquingKeysWith: +) } }
    /// The steps not run because their op writes.
    public var stepsNotRun: [Step] { steps.filter { !$0.ran } }

    /// The plan as `flow-coordinator run --dry-run` prints it: a line per step (with up to
    /// `skippedShown` skipped items and why under it), then one line of totals that begins
    /// `Dry run: to send N files, B bytes; skipped M` (B exact, with MiB or GiB after it when that large).
    ///
    /// - Parameter skippedShown: how many skipped items each step names.
    public func text(skippedShown: Int = 20) -> String {
        var lines: [String] = []
        for (number, step) in steps.enumerated() {
            let place = step.location.map { " (\($0))" } ?? ""
            let count = step.tasks == 1 ? "" : " ×\(step.tasks)"
            var line = "step \(number + 1) \(step.operationName)\(count)\(place): "
            switch step.role {
            case .writes: line += "not run (writes)"
            case .readsOnly: line += "ran (reads only)"
            case .rehearses:
                line += "rehearsed: would send \(step.itemsToSend) (\(Self.bytes(step.bytesToSend))), skip \(step.skipped.count)"
            }
            if step.failed > 0 { line += "; \(step.failed) failed" }
            lines.append(line)
            for note in step.skipped.prefix(skippedShown) {
                if case .skip(let reason) = note.action { lines.append("    skipped \(note.item): \(reason)") }
            }
            if step.skipped.count > skippedShown { lines.append("    … \(step.skipped.count - skippedShown) more skipped") }
            if !step.requestsMade.isEmpty || !step.requestsNotMade.isEmpty {
                lines.append("    requests: made \(Self.requests(step.requestsMade)); not made \(Self.requests(step.requestsNotMade))")
            }
        }
        let notRun = stepsNotRun.map { step in step.operationName + (step.location.map { " at line \($0.line)" } ?? "") }
        lines.append("Dry run: to send \(itemsToSend) file\(itemsToSend == 1 ? "" : "s"), \(Self.exactBytes(bytesToSend)); skipped \(itemsSkipped); "
                     + "requests made \(Self.requests(requestsMade)), not made \(Self.requests(requestsNotMade)); "
                     + "steps not run \(notRun.count)\(notRun.isEmpty ? "" : ": " + notRun.joined(separator: ", ")). Nothing was written.")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `HEAD 3, PUT 2`, or `none`.
    static func requests(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// `1234 bytes`, and from a mebibyte `1258291 bytes (1.2 MiB)`.
    static func exactBytes(_ count: Int64) -> String {
        count < 1024 * 1024 ? "\(count) bytes" : "\(count) bytes (\(bytes(count)))"
    }

    /// `1234 bytes`, or `1.2 MiB` from a mebibyte.
    static func bytes(_ count: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard count >= 1024 * 1024 else { return "\(count) bytes" }
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }
}
