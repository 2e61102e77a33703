public import Flow
import Foundation
import GRDB

extension RunJournal {
    /// What a run recorded, read without taking its journal over (for `flow-coordinator
    /// verify`): the flow it ran and every result, in the order they were recorded (an element
    /// run again, after a retry or a resume, appears once per record).
    ///
    /// Holds every record in memory: for a run of millions use ``readStored(at:)`` and
    /// ``forEachRecord(at:_:)``, which read one at a time.
    ///
    /// - Throws: ``RunJournalError`` as ``read(at:)`` does.
    public static func readRecords(at path: String) throws(RunJournalError) -> (stored: Stored, records: [FlowJournalRecord]) {
        var records: [FlowJournalRecord] = []
        let stored = try readStored(at: path)
        do {
            try forEachRecord(at: path) { records.append($0) }
        } catch let error as RunJournalError {
            throw error
        } catch {
            throw RunJournalError(path: path, describe(error))
        }
        return (stored, records)
    }

    /// The flow a run ran and its starting bucket, read without taking its journal over.
    ///
    /// - Throws: ``RunJournalError`` as ``read(at:)`` does.
    public static func readStored(at path: String) throws(RunJournalError) -> Stored {
        let database = try openExisting(at: path)
        do {
            return try database.read { db in try readStored(db, path: path) }
        } catch let error as RunJournalError {
            throw error
        } catch {
            throw RunJournalError(path: path, describe(error))
        }
    }

    /// Calls `body` with each result the run recorded, one at a time in the order they were
    /// recorded, read without taking the journal over: a journal of ten million results is read
    /// in the memory of one.
    ///
    /// - Throws: ``RunJournalError`` as ``read(at:)`` does, or for a record this Flow cannot read;
    ///   an error `body` throws, as it threw it (the reading stops there).
    public static func forEachRecord(at path: String, _ body: (FlowJournalRecord) throws -> Void) throws {
        let database = try openExisting(at: path)
        var bodyError: (any Error)?
        do {
            try database.read { db in
                let rows = try Row.fetchCursor(db, sql: "SELECT record FROM result ORDER BY seq")
                while let row = try rows.next() {
                    let record = try JournalRecordCodec.decode(row["record"] as Data)
                    do {
                        try body(record)
                    } catch {
                        bodyError = error
                        return
                    }
                }
            }
        } catch let error as RunJournalError {
            throw error
        } catch {
            throw RunJournalError(path: path, describe(error))
        }
        if let bodyError { throw bodyError }
    }
}
