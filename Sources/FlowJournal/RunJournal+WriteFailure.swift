import Foundation
import Synchronization

/// What the journal does when a write fails (a full disk): it records the first failure, tells the
/// run once so that it stops starting tasks, and writes nothing more but the run's end.
extension RunJournal {
    /// Calls `handler` once, on the journal's writing thread or a thread of its own (at once when
    /// a write already failed), when a write fails while the run goes on: the run should then
    /// stop starting tasks and end interrupted; ``finish(_:exitCode:)`` still records its end.
    /// Set it before the run starts; a later call replaces it.
    public func onWriteFailure(_ handler: @escaping @Sendable (RunJournalWriteFailure) -> Void) {
        let failed = failure.withLock { state -> RunJournalWriteFailure? in
            state.handler = handler
            guard let failed = state.failure, !state.told else { return nil }
            state.told = true
            return failed
        }
        if let failed { handler(failed) }
    }

    /// The first write that failed, `nil` while all went well.
    public var writeFailure: RunJournalWriteFailure? { failure.withLock { $0.failure } }

    /// Records the first failed write (later ones follow from it) and tells the handler, unless
    /// `tell` is false (at the run's end, when there is no run left to stop: ``finish(_:exitCode:)``
    /// throws it instead).
    ///
    /// A read that fails while the run goes on (a resumed group's recorded results) is handled as
    /// one: the run stops, as going on would run again what was done (`reading: true`).
    func writeFailed(_ error: any Error, writing what: String, reading: Bool = false, tell: Bool = true, tellAsynchronously: Bool = false) {
        // Measured now, before anything is freed: the room there was when the write failed.
        let free = RunJournalWriteFailure.freeBytes(at: RunJournalWriteFailure.folder(of: path))
        let (failed, handler) = failure.withLock { state -> (RunJournalWriteFailure?, (@Sendable (RunJournalWriteFailure) -> Void)?) in
            guard state.failure == nil else { return (nil, nil) }
            let failed = RunJournalWriteFailure(path: path, reason: "cannot \(reading ? "read" : "write") \(what): \(Self.describe(error))", freeBytes: free)
            state.failure = failed
            hasFailed.store(true, ordering: .releasing)
            guard tell, let handler = state.handler else { return (failed, nil) }
            state.told = true
            return (failed, handler)
        }
        if let failed, let handler {
            if tellAsynchronously {
                DispatchQueue.global().async { handler(failed) }
            } else {
                handler(failed)
            }
        }
        // What waits in memory would never be written.
        if failed != nil { buffer.withLock { $0.results = []; $0.groups = [] } }
    }
}
