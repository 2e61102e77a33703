/// An op that a dry run rehearses in place of its logic: for an op whose logic cannot check
/// ``FlowOperation/isDryRun`` itself, since the conformance can be added in an extension.
///
/// ``FlowDryRunExecutor`` takes such an op as ``FlowDryRunRole/rehearses`` whatever its
/// ``FlowOperation/dryRunRole`` says, never runs its own logic, and runs ``rehearse(in:)`` in an
/// op standing in for it (same name, same primary keys, the same bucket). `UploadFileOp` does so:
/// it asks with `skipExisting`'s HEAD and notes what it would send.
public protocol FlowDryRunRehearsing: FlowOperation {
    /// Does what a dry run may in place of the op's logic: only reads, and notes what it would do.
    ///
    /// - Parameter rehearsal: the op running in this one's place: read the input with its
    ///   ``FlowAsyncOperation/value(_:as:)``, set the output with ``FlowAsyncOperation/set(_:_:)``,
    ///   and ``FlowOperation/log(message:)`` and ``FlowOperation/noteDryRun(_:)`` through it.
    ///   Returning is success, throwing is failure, as for ``FlowAsyncOperation/run()``.
    func rehearse(in rehearsal: FlowAsyncOperation) async throws
}

/// Runs a ``FlowDryRunRehearsing`` op's rehearsal under the op's name and keys.
// `@unchecked` restated, as Swift 6 asks of FlowOperation's subclasses: no state of its own beyond `let`s.
final class FlowRehearsalOperation: FlowAsyncOperation, @unchecked Sendable {
    let original: any FlowDryRunRehearsing

    init(_ original: any FlowDryRunRehearsing) {
        self.original = original
        super.init()
        name = original.operationName
    }

    override var primaryInputParamKey: String { original.primaryInputParamKey }
    override var primaryOutputParamKey: String { original.primaryOutputParamKey }
    override var dryRunRole: FlowDryRunRole { .rehearses }

    override func run() async throws {
        try await original.rehearse(in: self)
    }
}
