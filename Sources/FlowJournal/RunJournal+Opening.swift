public import Flow
import FlowWire
import Foundation
import GRDB

/// Opening a journal: a new one for a run, or an earlier run's to resume it.
extension RunJournal {
    /// Starts the journal of a new run at `path` (its folder is created).
    ///
    /// - Parameters:
    ///   - runID: the run's id.
    ///   - flowFile: the flow file's path as given, for messages.
    ///   - flowText: the flow file's text: a resume runs exactly this flow.
    ///   - definition: the flow as loaded, with the starting bucket (after `--bucket` and `--set`).
    /// - Throws: ``RunJournalError`` when the file cannot be made or already exists.
    public static func create(at path: String, runID: String, flowFile: String, flowText: String,
                              definition: FlowDefinition) throws(RunJournalError) -> RunJournal {
        try makePrivateFolder(of: path)
        guard !FileManager.default.fileExists(atPath: path) else {
            throw RunJournalError(path: path, "a file is already there; a journal is never overwritten (give another --journal)")
        }
        try makePrivateFile(at: path)
        var bucketWriter = WireWriter()
        bucketWriter.writeValueMap(definition.bucket)
        let started = Date()
        let info = RunJournalInfo(runID: runID, path: path, flowName: definition.name, flowFile: flowFile, state: .running,
                                  startedAt: started, finishedAt: nil, exitCode: nil, done: 0, total: 0, resumes: 0)
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration())
            try database.write { db in
                try db.execute(sql: schema)
                // The flow and its bucket (megabytes for a million-value bucket) have a table of
                // their own: updating the run's state then never copies them.
                try db.execute(
                    sql: "INSERT INTO run (id, flow_name, flow_file, flow_text, bucket, started_at, state, pid, host) VALUES (?, ?, ?, '', x'', ?, ?, ?, ?)",
                    arguments: [runID, definition.name, flowFile, started.timeIntervalSince1970,
                                RunJournalInfo.State.running.rawValue, Int(getpid()), ProcessInfo.processInfo.hostName])
                try db.execute(sql: "INSERT INTO run_input (flow_text, bucket) VALUES (?, ?)", arguments: [flowText, bucketWriter.data])
            }
            return RunJournal(path: path, database: database, info: info, replay: Replay())
        } catch {
            throw RunJournalError(path: path, describe(error))
        }
    }

    /// Opens a run's journal to resume it: this process takes the run over, and the results it
    /// holds are given back to the engine (``recordedResults(at:)``).
    ///
    /// - Parameter retryFailed: give back only successful results, so failed elements run again.
    /// - Throws: ``RunJournalError`` for a file that is not a Flow journal, is damaged, comes from
    ///   a newer Flow, or belongs to a run still going on.
    public static func resume(at path: String, retryFailed: Bool) throws(RunJournalError) -> (RunJournal, RunJournal.Stored) {
        // A journal an earlier Flow made readable to all is made the owner's alone as it resumes.
        for file in [path, path + "-wal", path + "-shm"] { _ = chmod(file, 0o600) }
        let database = try openExisting(at: path)
        do {
            let (info, stored, replay, started, checkpoints) = try database.write {
                db -> (RunJournalInfo, Stored, Replay, [String: Int], [String: [Int: FlowValue]]) in
                let info = try readInfo(db, path: path)
                if info.state == .running {
                    throw RunJournalError(path: path, "run \(info.runID) is still running (\(info.runningProcess ?? "another process")); "
                                          + "stop it before resuming it")
                }
                let stored = try readStored(db, path: path)
                let replay = try prepareReplay(db, retryFailed: retryFailed)
                // The notes an earlier life appended and did not fold in (it crashed) count too.
                var started = try readStarts(db)
                for (step, through) in try foldStartMarks(db, journal: path) {
                    started[step] = max(started[step] ?? through, through)
                }
                let resumes = info.resumes + 1
                try db.execute(sql: "UPDATE run SET state = ?, finished_at = NULL, exit_code = NULL, pid = ?, host = ?, resumes = ?",
                               arguments: [RunJournalInfo.State.running.rawValue, Int(getpid()), ProcessInfo.processInfo.hostName, resumes])
                var resumed = info
                resumed.resumes = resumes
                return (resumed, stored, replay, started, try readCheckpoints(db))
            }
            return (RunJournal(path: path, database: database, info: info, replay: replay, startedBefore: started,
                               checkpointsBefore: checkpoints), stored)
        } catch let error as RunJournalError {
            throw error
        } catch {
            throw RunJournalError(path: path, describe(error))
        }
    }

    /// What a resume needs besides the results: the flow file's text and the starting bucket.
    public struct Stored: Sendable {
        /// The flow file's text as it was when the run started.
        public var flowText: String
        /// The starting bucket, after `--bucket` and `--set`.
        public var bucket: [String: FlowValue]
    }
}
