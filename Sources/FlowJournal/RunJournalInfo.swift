public import Foundation

/// A run as its journal describes it (`flow-coordinator runs`).
public struct RunJournalInfo: Sendable {
    /// How the run stands.
    public enum State: String, Sendable {
        /// A coordinator is running it now.
        case running
        /// It ended and its flow succeeded.
        case succeeded
        /// It ended and its flow failed.
        case failed
        /// It stopped before its end (a crash, a kill, Ctrl-C): `resume` goes on with it.
        case interrupted
    }

    public var runID: String
    public var path: String
    public var flowName: String
    public var flowFile: String
    public var state: State
    public var startedAt: Date
    public var finishedAt: Date?
    public var exitCode: Int32?
    /// Results recorded (group elements and serial ops).
    public var done: Int
    /// What the run had to do as far as it got: its groups' elements and its serial ops so far.
    public var total: Int
    /// How many times it was resumed.
    public var resumes: Int
    /// For a running run: which process runs it.
    public var runningProcess: String?
}
