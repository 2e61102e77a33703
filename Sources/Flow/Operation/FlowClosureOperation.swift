/// An op made from a closure, for steps too small to deserve a type.
///
/// ```swift
/// flow.add(operation: FlowClosureOperation(name: "GreetOp") { op in
///     let name: String = try op.value("name")
///     op.log(message: "hello \(name)")
/// })
/// ```
// `@unchecked` restated, as Swift 6 asks of FlowOperation's subclasses: no state of its own beyond `let`s (a `@Sendable` closure).
public final class FlowClosureOperation: FlowAsyncOperation, @unchecked Sendable {
    private let body: @Sendable (FlowClosureOperation) async throws -> Void
    private let inputKey: String
    private let outputKey: String

    /// Creates a closure op.
    ///
    /// - Parameters:
    ///   - name: the name shown in the summary.
    ///   - primaryInputParamKey: the group input key, when used in a group.
    ///   - primaryOutputParamKey: the group output key, when used in a group.
    ///   - body: the logic; returning is success, throwing is failure.
    public init(
        name: String, primaryInputParamKey: String = "", primaryOutputParamKey: String = "",
        _ body: @escaping @Sendable (FlowClosureOperation) async throws -> Void
    ) {
        self.body = body
        self.inputKey = primaryInputParamKey
        self.outputKey = primaryOutputParamKey
        super.init()
        self.name = name
    }

    public override var primaryInputParamKey: String { inputKey }
    public override var primaryOutputParamKey: String { outputKey }

    public override func run() async throws {
        try await body(self)
    }
}
