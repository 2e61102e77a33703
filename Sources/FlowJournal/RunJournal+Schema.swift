extension RunJournal {
    /// The file format this version writes (SQLite `user_version`); it reads this one and the
    /// older ones. Format 2 moved the flow and its starting bucket to a table of their own;
    /// format 3 keeps a result's worker and times in its record alone (they were columns too),
    /// and an element has one result row at most (a resume that runs failed elements again
    /// deletes their rows first).
    public static let formatVersion = 3
    /// Marks a Flow journal among SQLite files (`application_id`, "FLOW").
    static let applicationID: Int32 = 0x464C_4F57

    /// The tables of a new journal (format 3).
    ///
    /// `result` has a plain rowid key and no index: rows are only appended, so the rowid alone
    /// keeps their order, and a resume reads them in that order, a page at a time. `AUTOINCREMENT`
    /// (its own `sqlite_sequence` row updated on every insert) and an index on `(step, element)`
    /// made each insert about three times the work, on a thread that shares two cores with the
    /// workers (measured: 100,000 rows in transactions of 512). Journals written before keep both,
    /// and formats 1 and 2 the `worker`, `started_at` and `finished_at` columns; the same
    /// statements read them all. A row costs about 60 bytes for a no-op element (it was about 100
    /// with the columns). Counting a run's results for `runs` scans the table.
    static let schema = """
        PRAGMA application_id = \(applicationID);
        PRAGMA user_version = \(formatVersion);
        CREATE TABLE run (
            id TEXT NOT NULL, flow_name TEXT NOT NULL, flow_file TEXT NOT NULL, flow_text TEXT NOT NULL,
            bucket BLOB NOT NULL, started_at REAL NOT NULL, finished_at REAL, state TEXT NOT NULL,
            exit_code INTEGER, pid INTEGER NOT NULL, host TEXT NOT NULL, resumes INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE run_input (flow_text TEXT NOT NULL, bucket BLOB NOT NULL);
        CREATE TABLE step (id TEXT PRIMARY KEY, total INTEGER NOT NULL);
        CREATE TABLE started (step TEXT PRIMARY KEY, through INTEGER NOT NULL);
        CREATE TABLE result (
            seq INTEGER PRIMARY KEY, step TEXT NOT NULL, element INTEGER, ok INTEGER NOT NULL, record BLOB NOT NULL);
        \(checkpointTable);
        """

    /// The latest checkpoint of each element whose op saved one (``FlowOperation/saveCheckpoint(_:)``),
    /// its value in the wire's value layout. A listing that feeds a group keeps where it had got
    /// to as its serial step's element 0 (``FlowOperation/emit(_:to:from:)``), and a group's input
    /// file as the group step's element -1. Added to format 2 without a new version: an older
    /// Flow ignores the table, and this one makes it in a journal that lacks it.
    static let checkpointTable = """
        CREATE TABLE IF NOT EXISTS checkpoint (
            step TEXT NOT NULL, element INTEGER NOT NULL, value BLOB NOT NULL, PRIMARY KEY (step, element))
        """

    /// Records an element's latest checkpoint.
    static let checkpointUpsert = "INSERT OR REPLACE INTO checkpoint (step, element, value) VALUES (?, ?, ?)"

    /// An element of a step, as checkpoints are kept by.
    struct CheckpointKey: Hashable {
        var step: String
        var element: Int
    }

    /// Records how far a step's elements may have started.
    static let startedUpsert = "INSERT INTO started (step, through) VALUES (?, ?) ON CONFLICT (step) DO UPDATE SET through = max(through, excluded.through)"
}
