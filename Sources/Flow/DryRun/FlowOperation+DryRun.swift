import Foundation

extension FlowOperation {
    /// Whether the op runs in a dry run (``FlowDryRunExecutor``): it must then write nothing. A
    /// ``FlowDryRunRole/rehearses`` op checks it first thing and only reads; false in a real run.
    public var isDryRun: Bool {
        lock.withLock { dryRunMode }
    }

    /// Notes, in a dry run, what the op would have done with one item (send it, or skip it and
    /// why), for the plan; ignored in a real run.
    ///
    /// - Parameter note: the item, its size, what would happen to it and the requests involved.
    public func noteDryRun(_ note: FlowDryRunNote) {
        lock.withLock {
            if dryRunMode { dryRunNotes.append(note) }
        }
    }

    /// Marks the op as running in a dry run.
    func beginDryRun() {
        lock.withLock { dryRunMode = true }
    }

    /// The notes it made, taken out.
    func takeDryRunNotes() -> [FlowDryRunNote] {
        lock.withLock {
            defer { dryRunNotes = [] }
            return dryRunNotes
        }
    }
}
