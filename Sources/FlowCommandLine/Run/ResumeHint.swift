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
        return quoted(path)
    }

    /// `text` as one word for a shell: as it is when it is plain, else in single quotes.
    static func quoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
            $0.properties.isAlphabetic || $0.properties.numericType != nil || "/._-+,:@%".unicodeScalars.contains($0)
        }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The command that resumes the run: its id or journal, then the options that say where its
    /// workers come from (``ClusterRunOptions/workerArguments``), so that a run on a standing
    /// cluster resumes on it rather than on local workers.
    static func command(runID: String, journal path: String, options: ClusterRunOptions) -> String {
        (["flow-coordinator resume", argument(runID: runID, journal: path)] + options.workerArguments.map(quoted)).joined(separator: " ")
    }

    /// The last line of a run that ended in `state`, `nil` when it succeeded. The first line says
    /// how to resume too, but a long run's progress and summary have scrolled it away by then.
    static func afterEnd(runID: String, journal path: String, options: ClusterRunOptions, _ state: RunJournalInfo.State) -> String? {
        let resume = command(runID: runID, journal: path, options: options)
        switch state {
        case .succeeded, .running: return nil
        case .interrupted: return "run \(runID) stopped before its end; go on where it stopped with: \(resume)"
        case .failed: return "run \(runID) failed; run its failed elements again with: \(resume) --retry-failed"
        }
    }
}
