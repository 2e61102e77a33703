/// A group whose tasks the engine hands over ahead of need (``Flow/FlowBatchExecutor``'s
/// lookahead): the coordinator runs at most `limit` of them at once, and starts none after one
/// failed until the engine says the group goes on.
struct TaskGroupLimit: Sendable, Hashable {
    /// The group's inbox (``Flow/FlowResultInbox/id``).
    var id: UInt64
    /// Its `maxConcurrent`.
    var limit: Int
}
