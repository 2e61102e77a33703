/// An op built in Swift that can also run on a worker: it names the parameters a worker's registry
/// needs to build the same op (`SimplePrintOp(message:)` gives `["message": ...]`).
///
/// An op added to a blueprint with `add(operation:)` runs on the cluster as the op registered
/// under its ``FlowOperation/operationName``, built from these parameters. Ops that do not conform
/// are sent with no parameters, which is right for seed-style ops whose `create()` takes none.
public protocol FlowRemoteOperation {
    /// The parameters a worker builds this op from.
    var remoteParameters: [String: FlowValue] { get }
}
