/// A case branch condition: the branch runs when the bucket value at `key` is the string `value`.
public struct FlowCase: Sendable, Hashable {
    /// The bucket key compared.
    public let key: String
    /// The string the value must equal.
    public let value: String

    /// Creates a case.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}
