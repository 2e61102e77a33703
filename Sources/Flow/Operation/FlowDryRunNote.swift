/// What a rehearsing op would have done with one item, for a dry run's plan
/// (``FlowOperation/noteDryRun(_:)``): send it, or skip it and why, and the requests it made and
/// did not make.
public struct FlowDryRunNote: Sendable, Equatable {
    /// What would happen to the item.
    public enum Action: Sendable, Equatable {
        /// It would be sent (written).
        case send
        /// It would be left alone, for this reason.
        case skip(reason: String)
    }

    /// The item, as the plan names it (a file's name or path).
    public var item: String
    /// What would happen to it.
    public var action: Action
    /// Its size in bytes.
    public var bytes: Int64
    /// Requests made by the dry run for it, by method (`["HEAD": 1]`).
    public var requestsMade: [String: Int]
    /// Requests a real run would make for it and the dry run did not, by method (`["PUT": 1]`).
    public var requestsNotMade: [String: Int]

    /// Creates a note.
    ///
    /// - Parameters:
    ///   - item: the item's name.
    ///   - action: send it, or skip it and why.
    ///   - bytes: its size in bytes.
    ///   - requestsMade: requests the dry run made, by method.
    ///   - requestsNotMade: requests a real run would make that the dry run did not, by method.
    public init(item: String, action: Action, bytes: Int64, requestsMade: [String: Int] = [:], requestsNotMade: [String: Int] = [:]) {
        self.item = item
        self.action = action
        self.bytes = bytes
        self.requestsMade = requestsMade
        self.requestsNotMade = requestsNotMade
    }
}
