extension RunJournal {
    /// The file format this version writes (SQLite `user_version`); it reads this one and the
    /// older ones. Format 2 moved the flow and its starting bucket to a table of their own.
    public static let formatVersion = 2
    /// Marks a Flow journal among SQLite files (`application_id`, "FLOW").
    static let applicationID: Int32 = 0x464C_4F57

    /// The tables of a new journal (format 2).
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
            seq INTEGER PRIMARY KEY AUTOINCREMENT, step TEXT NOT NULL, element INTEGER, ok INTEGER NOT NULL,
            worker TEXT, started_at REAL NOT NULL, finished_at REAL NOT NULL, record BLOB NOT NULL);
        CREATE INDEX result_step ON result (step, element);
        """

    /// Records how far a step's elements may have started.
    static let startedUpsert = "INSERT INTO started (step, through) VALUES (?, ?) ON CONFLICT (step) DO UPDATE SET through = max(through, excluded.through)"
}
