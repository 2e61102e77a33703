import Foundation
import GRDB

/// Values kept by key on disk, the latest of each, in the order each key was first added: a
/// temporary SQLite file, so that ten million of them (`verify`'s objects of a run of ten million
/// uploads) take no memory. The file is removed when the value is released.
///
/// Pairs are written in transactions of ``batch``; ``forEach(_:)`` writes what waits first.
public final class LatestByKey {
    /// Pairs written in one transaction.
    static let batch = 4_096

    private let path: String
    private let database: DatabaseQueue
    private var waiting: [(key: String, value: String)] = []

    /// A new, empty one in a temporary file in `folder`.
    ///
    /// - Throws: `DatabaseError` when the file cannot be made.
    public init(folder: String) throws {
        path = (folder as NSString).appendingPathComponent("flow-latest-\(UUID().uuidString).sqlite")
        var configuration = Configuration()
        configuration.label = "flow-latest-by-key"
        configuration.prepareDatabase { db in
            // Scratch: nothing in it outlives the process.
            try db.execute(sql: "PRAGMA journal_mode = OFF")
            try db.execute(sql: "PRAGMA synchronous = OFF")
        }
        database = try DatabaseQueue(path: path, configuration: configuration)
        // The rowid is the order a key was first added: an upsert keeps the row, and so its place.
        try database.write { db in
            try db.execute(sql: "CREATE TABLE entry (position INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, value TEXT NOT NULL)")
        }
    }

    deinit {
        try? database.close()
        unlink(path)
    }

    /// Adds `value` under `key`: it replaces an earlier value of the key, in that one's place.
    ///
    /// - Throws: `DatabaseError` when a batch cannot be written (a full disk).
    public func add(_ value: String, forKey key: String) throws {
        waiting.append((key, value))
        if waiting.count >= Self.batch { try write() }
    }

    /// How many keys it holds.
    public func count() throws -> Int {
        try write()
        return try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entry") ?? 0 }
    }

    /// Each value, the latest of its key, in the order the keys were first added.
    public func forEach(_ body: (String) throws -> Void) throws {
        try write()
        try database.read { db in
            let values = try String.fetchCursor(db, sql: "SELECT value FROM entry ORDER BY position")
            while let value = try values.next() { try body(value) }
        }
    }

    private func write() throws {
        guard !waiting.isEmpty else { return }
        let pairs = waiting
        waiting.removeAll(keepingCapacity: true)
        try database.write { db in
            let statement = try db.cachedStatement(
                sql: "INSERT INTO entry (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            for pair in pairs { try statement.execute(arguments: [pair.key, pair.value]) }
        }
    }
}
