public import Flow
import Foundation
import GRDB

extension RunJournal {
    /// What a run recorded, read without taking its journal over (for `flow-coordinator
    /// verify`): the flow it ran and every result, in the order they were recorded (an element
    /// run again, after a retry or a resume, appears once per record).
    ///
    /// - Throws: ``RunJournalError`` as ``read(at:)`` does.
    public static func readRecords(at path: String) throws(RunJournalError) -> (stored: Stored, records: [FlowJournalRecord]) {
        let database = try openExisting(at: path)
        do {
            return try database.read { db in
                let stored = try readStored(db, path: path)
                var records: [FlowJournalRecord] = []
                let rows = try Row.fetchCursor(db, sql: "SELECT record FROM result ORDER BY seq")
                while let row = try rows.next() { records.append(try JournalRecordCodec.decode(row["record"] as Data)) }
                return (stored, records)
            }
        } catch let error as RunJournalError {
            throw error
        } catch {
            throw RunJournalError(path: path, describe(error))
        }
    }
}
