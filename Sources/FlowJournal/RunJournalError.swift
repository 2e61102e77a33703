/// A journal that cannot be made, read or written.
public struct RunJournalError: Error, CustomStringConvertible, Sendable {
    /// The journal file.
    public let path: String
    /// What went wrong.
    public let reason: String

    init(path: String, _ reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}
