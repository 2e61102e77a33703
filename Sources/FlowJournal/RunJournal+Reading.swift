#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Flow
import FlowWire
import Foundation
import GRDB

extension RunJournal {
    // MARK: Reading

    /// The flow file's text and the starting bucket.
    static func readStored(_ db: Database, path: String) throws -> Stored {
        // Format 1 kept the flow and its bucket in the run's row.
        let inputTable = try db.tableExists("run_input") ? "run_input" : "run"
        guard let row = try Row.fetchOne(db, sql: "SELECT flow_text, bucket FROM \(inputTable)") else {
            throw RunJournalError(path: path, "the journal has no run in it")
        }
        var reader = WireReader(row["bucket"] as Data)
        return Stored(flowText: row["flow_text"], bucket: try reader.readValueMap("bucket"))
    }

    /// Makes the recorded results ready to be given back a page at a time (``recordedPage(at:after:)``):
    /// with `retryFailed`, the failed ones are deleted, so that they run again and the journal keeps
    /// one row an element. A journal of an earlier Flow may hold an element more than once (its
    /// resumes kept the failure a retry replaced): only the latest row of each is kept.
    static func prepareReplay(_ db: Database, retryFailed: Bool) throws -> Replay {
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if version < 3 {
            try db.execute(sql: "DELETE FROM result WHERE seq NOT IN (SELECT MAX(seq) FROM result GROUP BY step, element)")
        }
        if retryFailed { try db.execute(sql: "DELETE FROM result WHERE ok = 0") }
        var replay = Replay()
        replay.throughRow = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM result") ?? 0
        replay.count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM result") ?? 0
        replay.legacyColumns = try db.columns(in: "result").contains { $0.name == "started_at" }
        return replay
    }

    /// How far each step's elements may have started (``mayStart(at:through:)``).
    static func readStarts(_ db: Database) throws -> [String: Int] {
        // Format 1 had no record of starts: its in-flight elements are not told apart.
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS started (step TEXT PRIMARY KEY, through INTEGER NOT NULL)")
        var started: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT step, through FROM started") { started[row["step"]] = row["through"] }
        return started
    }

    /// The latest checkpoint of each element by step (``checkpointed(_:at:element:)``); made
    /// for a journal written before checkpoints were kept.
    static func readCheckpoints(_ db: Database) throws -> [String: [Int: FlowValue]] {
        try db.execute(sql: checkpointTable)
        var checkpoints: [String: [Int: FlowValue]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT step, element, value FROM checkpoint") {
            var reader = WireReader(row["value"] as Data)
            checkpoints[row["step"], default: [:]][row["element"]] = try reader.readValue("checkpoint")
        }
        return checkpoints
    }

    /// Writes the notes in the journal's ``StartMarkFile`` into the `started` table (at the end
    /// of a run, or on resuming one that crashed) and returns them.
    static func foldStartMarks(_ db: Database, journal: String) throws -> [String: Int] {
        let marks = StartMarkFile.read(journal: journal)
        for (step, through) in marks {
            try db.cachedStatement(sql: startedUpsert).execute(arguments: [step, through])
        }
        return marks
    }

    static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.label = "flow-journal"
        configuration.prepareDatabase { db in
            // WAL: a commit is one append, readers (`runs`) never block the writer.
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        return configuration
    }

    /// What the journal at `path` says of its run, without taking it over.
    ///
    /// - Throws: ``RunJournalError`` as ``resume(at:retryFailed:)`` does.
    public static func read(at path: String) throws(RunJournalError) -> RunJournalInfo {
        let database = try openExisting(at: path)
        do {
            return try database.read { db in try readInfo(db, path: path) }
        } catch let error as RunJournalError {
            throw error
        } catch {
            throw RunJournalError(path: path, describe(error))
        }
    }

    /// Opens an existing file, checking that it is a Flow journal this version reads.
    static func openExisting(at path: String) throws(RunJournalError) -> DatabaseQueue {
        guard FileManager.default.fileExists(atPath: path) else {
            throw RunJournalError(path: path, "no such journal file")
        }
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration())
            let (application, version) = try database.read { db in
                (try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0, try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0)
            }
            guard application == applicationID else {
                throw RunJournalError(path: path, "not a Flow run journal (an SQLite file of something else)")
            }
            guard version <= formatVersion else {
                throw RunJournalError(path: path, "written by a newer Flow (journal format \(version)); this flow-coordinator reads "
                                      + "format \(formatVersion) and older: upgrade it to resume this run")
            }
            return database
        } catch let error as RunJournalError {
            throw error
        } catch {
            throw RunJournalError(path: path, describe(error))
        }
    }

    static func readInfo(_ db: Database, path: String) throws -> RunJournalInfo {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT id, flow_name, flow_file, started_at, finished_at, state, exit_code, pid, host, resumes FROM run
            """) else {
            throw RunJournalError(path: path, "the journal has no run in it")
        }
        // Format 3 keeps one row an element; an earlier one could keep more (see ``prepareReplay(_:retryFailed:)``).
        let distinct = (try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0) >= 3
        let done = try Int.fetchOne(db, sql: distinct ? "SELECT COUNT(*) FROM result"
                                    : "SELECT COUNT(*) FROM (SELECT DISTINCT step, element FROM result)") ?? 0
        let groupTotal = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(total), 0) FROM step") ?? 0
        let serialDone = try Int.fetchOne(db, sql: "SELECT COUNT(DISTINCT step) FROM result WHERE element IS NULL") ?? 0
        var state = RunJournalInfo.State(rawValue: row["state"]) ?? .interrupted
        let pid: Int = row["pid"]
        let host: String = row["host"]
        var runningProcess: String?
        if state == .running {
            if host == ProcessInfo.processInfo.hostName, LocalProcess.hasEnded(pid_t(pid)) {
                state = .interrupted
            } else {
                runningProcess = "pid \(pid) on \(host)"
            }
        }
        let finished: Double? = row["finished_at"]
        let exit: Int? = row["exit_code"]
        var info = RunJournalInfo(
            runID: row["id"], path: path, flowName: row["flow_name"], flowFile: row["flow_file"], state: state,
            startedAt: Date(timeIntervalSince1970: row["started_at"]), finishedAt: finished.map(Date.init(timeIntervalSince1970:)),
            exitCode: exit.map(Int32.init), done: done, total: groupTotal + serialDone, resumes: row["resumes"])
        info.runningProcess = runningProcess
        return info
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? RunJournalError { return error.reason }
        if let error = error as? DatabaseError {
            if error.resultCode == .SQLITE_NOTADB { return "not a Flow run journal (not an SQLite file, or a damaged one)" }
            if error.resultCode == .SQLITE_CORRUPT { return "the journal is damaged (\(error.message ?? "corrupt"))" }
            return "SQLite: \(error.message ?? String(describing: error))"
        }
        if let error = error as? WireDecodingError { return "the journal holds a record this Flow cannot read (\(error))" }
        return String(describing: error)
    }
}
