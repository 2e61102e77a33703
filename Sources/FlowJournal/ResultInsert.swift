import Flow
import Foundation
import GRDB
import GRDBSQLite

/// One `result` row, bound straight to SQLite: GRDB's `StatementArguments` boxed and converted
/// every value of every row, more work than SQLite's own insert (measured with perf on a
/// 100,000-element run: about 8% of the coordinator's CPU against SQLite's 2%).
///
/// Text and the record are bound from their own bytes with their length and `SQLITE_STATIC`, and
/// the row is stepped and the statement reset while those bytes are held: SQLite neither copies
/// them nor needs a C string. Passing a `String` where C wants one copied a short string to the
/// heap, and `SQLITE_TRANSIENT` had SQLite copy each value again (perf, probe on malloc: five
/// allocations a row between them).
struct ResultInsert {
    static let sql = "INSERT INTO result (step, element, ok, record) VALUES (?, ?, ?, ?)"
    /// Into a journal of format 2 or older, whose rows also have the worker and times as columns.
    static let legacySQL = "INSERT INTO result (step, element, ok, record, worker, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)"

    let statement: Statement
    let legacy: Bool

    /// The insert, prepared once per connection.
    ///
    /// - Parameter legacy: the table has the columns of format 2 and older.
    init(_ db: Database, legacy: Bool) throws {
        statement = try db.cachedStatement(sql: legacy ? Self.legacySQL : Self.sql)
        self.legacy = legacy
    }

    /// Inserts one row: a result's columns, and its record as ``JournalRecordCodec`` encoded it.
    ///
    /// - Throws: `DatabaseError` with SQLite's code and message when the insert fails.
    func insert(_ db: Database, step: String, result: FlowTaskResult, encoded record: [UInt8]) throws {
        // Reset and cleared after its last row (below), and each row binds every parameter.
        let handle = statement.sqliteStatement
        var step = step
        let element = result.groupIndex
        let ok = result.state.isSuccess
        let started = result.startedAt
        let finished = result.finishedAt
        let hasWorker = result.worker != nil
        var workerText = result.worker ?? ""
        let code: Int32 = step.withUTF8 { stepBytes in
            workerText.withUTF8 { workerBytes in
                record.withUnsafeBytes { recordBytes in
                    Self.bindText(stepBytes, at: 1, to: handle)
                    if let element { sqlite3_bind_int64(handle, 2, Int64(element)) } else { sqlite3_bind_null(handle, 2) }
                    sqlite3_bind_int64(handle, 3, ok ? 1 : 0)
                    // A zero-length blob still needs a non-null pointer to be a blob, not NULL.
                    _ = sqlite3_bind_blob(handle, 4, recordBytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(recordBytes.count), nil)
                    if legacy {
                        if hasWorker { Self.bindText(workerBytes, at: 5, to: handle) } else { sqlite3_bind_null(handle, 5) }
                        sqlite3_bind_double(handle, 6, started.timeIntervalSince1970)
                        sqlite3_bind_double(handle, 7, finished.timeIntervalSince1970)
                    }
                    let code = sqlite3_step(handle)
                    // Before the bytes go: the statement no longer refers to them.
                    sqlite3_reset(handle)
                    sqlite3_clear_bindings(handle)
                    return code
                }
            }
        }
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                                sql: legacy ? Self.legacySQL : Self.sql)
        }
    }

    /// Binds UTF-8 text by pointer and length (`SQLITE_STATIC`: the caller keeps the bytes until
    /// the statement is reset).
    private static func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32, to handle: OpaquePointer?) {
        // A zero-length text still needs a non-null pointer to be text, not NULL.
        let start = UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(bitPattern: 1)!
        _ = sqlite3_bind_text(handle, index, start.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
    }
}
