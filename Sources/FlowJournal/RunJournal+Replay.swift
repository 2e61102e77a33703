public import Flow
import Foundation
import GRDB

/// What earlier lives of a resumed run recorded, given back to the engine a page at a time.
extension RunJournal {
    /// The rows earlier lives of a run recorded, and the table they are in.
    struct Replay {
        /// Rows up to this `seq` were recorded before this life: the results it gives back.
        var throughRow: Int64 = 0
        /// How many results it gives back.
        var count = 0
        /// The table has the columns of format 2 and older (``ResultInsert``).
        var legacyColumns = false
    }

    /// Results taken back a page at a time (``recordedPage(at:after:)``).
    static let replayPage = 4_096

    public func recordedResults(at step: FlowStepID) -> [FlowJournalRecord] {
        var records: [FlowJournalRecord] = []
        var position: Int? = 0
        while let after = position {
            let page = recordedPage(at: step, after: after)
            records += page.records
            position = page.next
        }
        return records
    }

    public func recordedPage(at step: FlowStepID, after position: Int) -> (records: [FlowJournalRecord], next: Int?) {
        guard replay.count > 0 else { return ([], nil) }
        do {
            return try database.read { db in
                let rows = try Row.fetchCursor(db, sql: "SELECT seq, record FROM result WHERE step = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
                                               arguments: [step.path, position, replay.throughRow, Self.replayPage])
                var records: [FlowJournalRecord] = []
                var last = position
                while let row = try rows.next() {
                    last = row["seq"]
                    records.append(try JournalRecordCodec.decode(row["record"] as Data))
                }
                return (records, records.count == Self.replayPage ? last : nil)
            }
        } catch {
            // Read once whole at the resume's start before this: a failure now is the disk's.
            writeFailed(error, writing: "the results recorded at step \(step.path)", reading: true, tellAsynchronously: true)
            return ([], nil)
        }
    }
}
