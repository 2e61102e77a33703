import Foundation
import GRDB
import GRDBSQLite

/// One `result` row, bound straight to SQLite: GRDB's `StatementArguments` boxed and converted
/// every value of every row, more work than SQLite's own insert (measured with perf on a
/// 100,000-element run: about 8% of the coordinator's CPU against SQLite's 2%).
struct ResultInsert {
    static let sql = "INSERT INTO result (step, element, ok, worker, started_at, finished_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)"

    /// SQLite copies text and blobs it is given with this destructor.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    let statement: Statement

    /// The insert, prepared once per connection.
    init(_ db: Database) throws {
        statement = try db.cachedStatement(sql: Self.sql)
    }

    /// Binds `text` with its length, from its own UTF-8 bytes: passing a `String` where C wants a
    /// NUL-terminated string copies a short one to the heap first (perf: two allocations a row).
    private static func bindText(_ text: String, at index: Int32, to handle: OpaquePointer?) {
        var text = text
        text.withUTF8 { bytes in
            // A zero-length text still needs a non-null pointer to be text, not NULL.
            let start = UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(bitPattern: 1)!
            _ = sqlite3_bind_text(handle, index, start.assumingMemoryBound(to: CChar.self), Int32(bytes.count), transient)
        }
    }

    /// Inserts one row.
    ///
    /// - Throws: `DatabaseError` with SQLite's code and message when the insert fails.
    func insert(_ db: Database, step: String, element: Int?, ok: Bool, worker: String?, started: Date, finished: Date,
                record: Data) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        Self.bindText(step, at: 1, to: handle)
        if let element { sqlite3_bind_int64(handle, 2, Int64(element)) } else { sqlite3_bind_null(handle, 2) }
        sqlite3_bind_int64(handle, 3, ok ? 1 : 0)
        if let worker { Self.bindText(worker, at: 4, to: handle) } else { sqlite3_bind_null(handle, 4) }
        sqlite3_bind_double(handle, 5, started.timeIntervalSince1970)
        sqlite3_bind_double(handle, 6, finished.timeIntervalSince1970)
        record.withUnsafeBytes { bytes in
            // A zero-length blob still needs a non-null pointer to be a blob, not NULL.
            _ = sqlite3_bind_blob(handle, 7, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
        }
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                                sql: Self.sql)
        }
    }
}
