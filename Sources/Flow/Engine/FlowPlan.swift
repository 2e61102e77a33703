import Foundation

/// The tree the engine walks: a ``FlowDefinition`` or a Swift blueprint, with ops either as
/// instances or by registered name.
indirect enum FlowPlanNode: Sendable {
    case operation(FlowOperationReference, location: FlowSourceLocation?, policy: FlowTaskPolicy)
    case group(FlowGroupPlan)
    case cases(branches: [(FlowCase, [FlowPlanNode])], defaultSteps: [FlowPlanNode]?)
}

/// An op as a blueprint names it.
enum FlowOperationReference: Sendable {
    /// An instance built in Swift (`add(operation:)`).
    case instance(FlowOperation)
    /// A registered op with its parameters (flow files).
    case named(String, parameters: [String: FlowValue])
}

/// A grouped step ready to run.
struct FlowGroupPlan: Sendable {
    enum Source: Sendable {
        case creator(any FlowOperationCreator.Type)
        case named(String, parameters: [String: FlowValue])
    }

    var source: Source
    var inputKey: String
    /// Empty: no output array is collected.
    var outputKey: String
    /// Where the elements come from instead of ``inputKey`` (a flow file's `input: {file:}`).
    var inputFile: FlowGroupInputFile?
    /// Where each output goes instead of ``outputKey`` (a flow file's `output: {file:}`).
    var outputFile: String?
    /// The sequence the elements come from instead of ``inputKey`` (a Swift blueprint's).
    var elements: FlowGroupElementSequence?
    var maxConcurrent: Int
    var allowFailure: Bool
    var location: FlowSourceLocation?
    var policy = FlowTaskPolicy()
    var maxFailures: FlowFailureBudget?
}

/// How one step's tasks are tried: its retry policy and time limit, defaults applied.
struct FlowTaskPolicy: Sendable {
    var retry: FlowRetryPolicy = .none
    var timeout: Duration?
    /// The workers it may run on (`on:`); `nil`: any.
    var placement: FlowPlacement?
    /// A serial step that runs once on every such worker (`each: worker`).
    var eachWorker = false
    /// A group's elements go back to the host they came from (`affinity:`).
    var affinity: FlowAffinity?
    /// How long such an element waits for its host's worker (`affinityTimeout:`).
    var affinityTimeout: Duration?
}

extension FlowPlanNode {
    /// Converts a flow definition's steps, with its `defaults:` for steps that set no policy.
    static func nodes(from steps: [FlowStep], defaults: FlowStepDefaults = FlowStepDefaults()) -> [FlowPlanNode] {
        steps.map { step in
            switch step {
            case .operation(let op):
                let policy = FlowTaskPolicy(retry: op.retry ?? defaults.retry ?? .none, timeout: op.timeout ?? defaults.timeout,
                                            placement: op.placement, eachWorker: op.eachWorker)
                return .operation(.named(op.op, parameters: op.parameters), location: op.location, policy: policy)
            case .group(let group):
                var plan = FlowGroupPlan(
                    source: .named(group.op, parameters: group.parameters), inputKey: group.input,
                    outputKey: group.output, maxConcurrent: max(1, group.maxConcurrent),
                    allowFailure: group.allowFailure, location: group.location,
                    policy: FlowTaskPolicy(retry: group.retry ?? defaults.retry ?? .none, timeout: group.timeout ?? defaults.timeout,
                                           placement: group.placement, affinity: group.affinity,
                                           affinityTimeout: group.affinityTimeout),
                    maxFailures: group.maxFailures
                )
                plan.inputFile = group.inputFile
                plan.outputFile = group.outputFile
                return .group(plan)
            case .cases(let cases):
                return .cases(
                    branches: cases.branches.map { (FlowCase(key: $0.key, value: $0.value), nodes(from: $0.steps, defaults: defaults)) },
                    defaultSteps: cases.defaultSteps.map { nodes(from: $0, defaults: defaults) }
                )
            }
        }
    }
}
