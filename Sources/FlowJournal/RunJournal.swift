#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Flow
import FlowWire
import Foundation
import GRDB
import Synchronization

/// A run's journal: one SQLite file (WAL mode) holding the flow as it was started, every result
/// the engine accepted, and how the run ended. `flow-coordinator resume` reads it to go on where
/// the run stopped. While the run goes on, how far each step may have started is appended to a
/// notes file next to it (``StartMarkFile``, `<journal>-started`), folded into the `started`
/// table when the run ends or is resumed.
///
/// Results are kept in memory as they are accepted and written in batches by a thread of the
/// journal's own, at most ``flushInterval`` after they were accepted or as soon as 512 wait, in
/// transactions of at most 512 results, so the engine never waits for the disk. The thread sleeps
/// until there is something to write (no timer while the run has nothing new), and records the
/// run's end itself: ``finish(_:exitCode:)`` is resumed by it. With
/// `synchronous = NORMAL` a committed batch survives the coordinator's crash (it is in the WAL
/// file the moment it commits); a power loss can take the last batches committed before it, never
/// the file's consistency. What the journal lost runs again on resume: delivery is at least once.
///
/// A write that fails (a full disk) ends the writing: the transaction it was in is rolled back,
/// nothing more is written, ``mayStart(at:through:)`` refuses (so nothing more starts), and the handler
/// given to ``onWriteFailure(_:)`` is told at once, to stop the run. ``finish(_:exitCode:)``
/// then frees the room held for it (``JournalReserve``) and records how the run ended; a resume
/// re-runs exactly what the journal did not record.
public final class RunJournal: FlowJournal, Sendable {
    /// The longest an accepted result waits in memory before it is written.
    public static let flushInterval = Duration.milliseconds(100)
    /// Results written in one transaction at most.
    static let flushChunk = 512

    /// The run's id.
    public let runID: String
    /// The journal file.
    public let path: String
    /// What the file says of the run when it was opened.
    public let info: RunJournalInfo

    let database: DatabaseQueue
    /// What earlier lives of the run recorded: read a page at a time when a step asks for it
    /// (RunJournal+Replay.swift).
    let replay: Replay
    /// Per step, the highest element index earlier lives of the run said may have started.
    private let startedBefore: [String: Int]
    /// Per step and element, the latest checkpoint earlier lives of the run saved.
    private let checkpointsBefore: [String: [Int: FlowValue]]
    /// Where `mayStart` notes go (``StartMarkFile``); `nil` when it could not be opened, and they
    /// are rows of the `started` table at once.
    private let marks: StartMarkFile?
    /// Room on the disk for recording the run's end after a write failed for want of it.
    private let reserve: JournalReserve?
    let buffer = Mutex(Buffer())
    let failure = Mutex(FailureState())
    /// Whether a write failed: read for every result, where the mutex would cost a lock each.
    let hasFailed = Atomic<Bool>(false)
    /// Wakes the flushing thread: when the first result (or group, or checkpoint) since its last
    /// batch waits, when a transaction's worth of results waits, and at the end of the run.
    private let wake = FlusherWake()
    /// How the run ended and who waits for it to be recorded: set by ``finish(_:exitCode:)``
    /// before it wakes the flushing thread for the last time.
    private let ending = Mutex<Ending?>(nil)

    private struct Ending {
        var state: RunJournalInfo.State
        var exitCode: Int32
        var continuation: CheckedContinuation<Result<Void, RunJournalError>, Never>
    }

    struct Buffer {
        /// Encoded on the flushing thread, not the engine's (the coordinator's I/O thread in a
        /// cluster run, where encoding took about 3% of a no-op group's time).
        var results: [(step: String, record: FlowJournalRecord)] = []
        var groups: [(step: String, total: Int)] = []
        /// Checkpoints saved since the last flush, the latest per element.
        var checkpoints: [CheckpointKey: FlowValue] = [:]
        var closing = false
    }

    struct FailureState {
        /// The first write that failed; nothing is written after it but the run's end.
        var failure: RunJournalWriteFailure?
        var handler: (@Sendable (RunJournalWriteFailure) -> Void)?
        /// Whether a handler was told: ``finish(_:exitCode:)`` then does not throw it again.
        var told = false
    }

    init(path: String, database: DatabaseQueue, info: RunJournalInfo, replay: Replay,
                 startedBefore: [String: Int] = [:], checkpointsBefore: [String: [Int: FlowValue]] = [:]) {
        self.path = path
        // Emptied: a new run has no notes, and a resumed one folded them into its table.
        marks = StartMarkFile(journal: path, truncating: true)
        reserve = JournalReserve(journal: path)
        self.database = database
        self.info = info
        runID = info.runID
        self.replay = replay
        self.startedBefore = startedBefore
        self.checkpointsBefore = checkpointsBefore
        let thread = Thread { [weak self] in self?.flushLoop() }
        thread.name = "flow-journal"
        thread.start()
    }

    // MARK: FlowJournal

    public func groupStarted(at step: FlowStepID, total: Int) {
        buffer.withLock { $0.groups.append((step.path, total)) }
        wake.somethingWaits()
    }

    public func accepted(_ record: FlowJournalRecord, at step: FlowStepID) {
        // Not kept once writing has failed: it would never be written, and runs again on resume.
        if hasFailed.load(ordering: .acquiring) { return }
        let chunkFull = buffer.withLock { buffer in
            buffer.results.append((step.path, record))
            return buffer.results.count == Self.flushChunk
        }
        // A transaction's worth waits: written now, while the run goes on, not left to pile up
        // for the interval. A busy group accepted about 10,000 results in 100 ms, which the
        // journal then wrote after the group's last result, the run waiting for it (perf: 60 ms
        // at the end of a 20,000-element run on 2 cores).
        if chunkFull {
            wake.chunkWaits()
        } else {
            wake.somethingWaits()
        }
    }

    @discardableResult
    public func mayStart(at step: FlowStepID, through index: Int) -> Bool {
        // After a failed write nothing more starts: the run is stopping, and what it would start
        // could not be recorded.
        if hasFailed.load(ordering: .acquiring) { return false }
        // Written at once, not batched: an element must never start before its start is on disk.
        // Appended to the notes file (one system call, as safe against a crash as a commit); the
        // row comes at the end of the run, or from a resume after a crash.
        if let marks, marks.append(step: step.path, through: index) { return true }
        // No notes file, or it could not be appended to: one statement, prepared once, in
        // SQLite's autocommit mode: a transaction of its own without GRDB's BEGIN and COMMIT.
        do {
            try database.writeWithoutTransaction { db in
                try db.cachedStatement(sql: Self.startedUpsert).execute(arguments: [step.path, index])
            }
            return true
        } catch {
            // Told from another thread: the engine holds a group's lock here, and the handler
            // stops the run. The engine stops starting tasks by itself on `false`.
            writeFailed(error, writing: "how far step \(step.path) may start", tellAsynchronously: true)
            return false
        }
    }

    public func startedThrough(at step: FlowStepID) -> Int? {
        startedBefore[step.path]
    }

    public func checkpointed(_ value: FlowValue, at step: FlowStepID, element index: Int) {
        if hasFailed.load(ordering: .acquiring) { return }
        // One nested deeper than the journal's reader takes (the wire's 64, §6.2) is not kept: kept,
        // it would make `resume` unable to read the journal. The run goes on as if it had not been saved.
        guard value.wireNestingDepth <= WireLimits.maximumValueDepth else { return }
        // Written with the next batch (at most ``flushInterval`` later): a checkpoint lost with a
        // crash only means that a resumed op does more again.
        buffer.withLock { $0.checkpoints[CheckpointKey(step: step.path, element: index)] = value }
        wake.somethingWaits()
    }

    public func checkpoints(at step: FlowStepID) -> [Int: FlowValue] {
        checkpointsBefore[step.path] ?? [:]
    }

    /// How many results were recorded by earlier lives of the run and are given back.
    public var replayedCount: Int { replay.count }

    // MARK: Ending

    /// Writes what is still in memory and how the run ended, then closes the journal; returns
    /// once the journal's thread has done so, resumed by it (no thread of the caller's waits).
    ///
    /// After a failed write (``writeFailure``) the results still in memory are let go (they run
    /// again on resume), the room held for this is freed, and the run's end is still written.
    ///
    /// - Parameters:
    ///   - state: `succeeded`, `failed`, or `interrupted` (cancelled: resume goes on with it).
    ///   - exitCode: the exit code the run ends with.
    /// - Throws: ``RunJournalError`` when the journal could not be written: the run's end now, or
    ///   an earlier write no ``onWriteFailure(_:)`` handler was told of.
    public func finish(_ state: RunJournalInfo.State, exitCode: Int32) async throws(RunJournalError) {
        let alreadyFinished = buffer.withLock { buffer in
            defer { buffer.closing = true }
            return buffer.closing
        }
        guard !alreadyFinished else { return }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, RunJournalError>, Never>) in
            ending.withLock { $0 = Ending(state: state, exitCode: exitCode, continuation: continuation) }
            wake.close()
        }
        try outcome.get()
    }

    /// On the journal's thread, its last batch written: what is still in memory, then how the run
    /// ended; closes the database.
    private func record(_ state: RunJournalInfo.State, exitCode: Int32) -> Result<Void, RunJournalError> {
        if writeFailure == nil {
            do {
                try flush()
            } catch {
                writeFailed(error, writing: "the run's last results", tell: false)
            }
        }
        // Given back now: a write that failed for want of room leaves room for the run's end.
        reserve?.release()
        do {
            try database.write { db in
                _ = try Self.foldStartMarks(db, journal: path)
                try db.execute(sql: "UPDATE run SET state = ?, finished_at = ?, exit_code = ?",
                               arguments: [state.rawValue, Date().timeIntervalSince1970, Int(exitCode)])
            }
            try database.close()
            // Folded in: the notes file is no longer needed.
            StartMarkFile.remove(journal: path)
        } catch {
            let earlier = writeFailure.map { "; an earlier write failed too: \($0.reason)" } ?? ""
            return .failure(RunJournalError(path: path, "cannot record how the run ended: \(Self.describe(error))\(earlier)"))
        }
        let untold = failure.withLock { $0.told ? nil : $0.failure }
        if let untold { return .failure(RunJournalError(path: path, "an earlier write failed: \(untold.reason)")) }
        return .success(())
    }

    private func flushLoop() {
        // Asleep until something waits, then up to ``flushInterval`` more (or until a chunk's
        // worth waits): a batch at most that long after its first result.
        while !wake.waitForWork(within: Self.flushInterval) {
            // After a failure nothing more is written (``writeFailed(_:writing:)``).
            guard writeFailure == nil else { continue }
            do {
                try flush()
            } catch {
                writeFailed(error, writing: "the run's results")
            }
        }
        guard let ending = ending.withLock({ $0 }) else { return }
        ending.continuation.resume(returning: record(ending.state, exitCode: ending.exitCode))
    }

    /// Writes the buffered results and group sizes in one transaction.
    private func flush() throws {
        let (results, groups, checkpoints) = buffer.withLock { buffer in
            defer {
                // The next batch gets room for as many as this one had: grown by doubling, the
                // buffer copied its records again at each step (callgrind).
                let count = buffer.results.count
                buffer.results = []
                buffer.results.reserveCapacity(count)
                buffer.groups = []
                buffer.checkpoints = [:]
            }
            return (buffer.results, buffer.groups, buffer.checkpoints)
        }
        guard !results.isEmpty || !groups.isEmpty || !checkpoints.isEmpty else { return }
        // In transactions of at most `flushChunk` results: a `mayStart` that has no notes file
        // to append to waits for the one in progress, not for a whole batch of a busy run. Each
        // record is encoded into one reused buffer (a new `Data` a record cost a copy each).
        var writer = WireWriter(capacity: 512)
        var start = 0
        repeat {
            let end = min(results.count, start + Self.flushChunk)
            try database.write { db in
                if start == 0 {
                    for group in groups {
                        try db.execute(sql: "INSERT OR REPLACE INTO step (id, total) VALUES (?, ?)", arguments: [group.step, group.total])
                    }
                }
                let insert = try ResultInsert(db, legacy: replay.legacyColumns)
                for index in start..<end {
                    // Copied out once: each of three reads of `results[index]` copied the whole
                    // pair, retaining each of its strings (callgrind: 60,000 copies and as many
                    // releases for 20,000 records; so did reads through a buffer pointer).
                    let (step, record) = results[index]
                    writer.removeAll()
                    JournalRecordCodec.encode(record, into: &writer)
                    try insert.insert(db, step: step, result: record.result, encoded: writer.bytes)
                }
                // The checkpoints with the batch's last results, never before them: a listing's
                // checkpoint says that every element before its page succeeded
                // (FlowListingPositions), which must not be on disk while those results are not.
                if end == results.count {
                    for (key, value) in checkpoints {
                        writer.removeAll()
                        writer.writeValue(value)
                        try db.cachedStatement(sql: Self.checkpointUpsert).execute(arguments: [key.step, key.element, Data(writer.bytes)])
                    }
                }
            }
            start = end
        } while start < results.count
    }
}
