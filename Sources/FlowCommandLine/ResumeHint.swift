import FlowJournal
import Foundation

/// How a run tells the user to go on with it: on its first line, and as its last line when it
/// did not succeed.
enum ResumeHint {
    /// What to give `flow-coordinator resume`: the run's id when its journal is where `resume`
    /// looks for ids (``RunsCommand/journalPath(for:folder:)`` in the default folder), else the journal's path (`run --journal FILE`), quoted
    /// for a shell when it needs to be.
    static func argument(runID: String, journal path: String) -> String {
        if path == RunsCommand.journalPath(for: runID, folder: RunJournal.defaultFolder()) { return runID }
        let plain = path.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil || "/._-+,:@%".unicodeScalars.contains($0) }
        return plain ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The last line of a run that ended in `state`, `nil` when it succeeded. The first line says
    /// how to resume too, but a long run's progress and summary have scrolled it away by then.
    static func afterEnd(runID: String, journal path: String, _ state: RunJournalInfo.State) -> String? {
        let run = argument(runID: runID, journal: path)
        switch state {
        case .succeeded, .running: return nil
        case .interrupted: return "run \(runID) stopped before its end; go on where it stopped with: flow-coordinator resume \(run)"
        case .failed: return "run \(runID) failed; run its failed elements again with: flow-coordinator resume \(run) --retry-failed"
        }
    }
}
