import Foundation

/// A flow as data: what a flow file holds, and what the coordinator walks.
///
/// A blueprint built in Swift with ``Flow`` and a flow loaded from YAML or JSON with
/// ``FlowFileLoader`` describe the same tree: serial steps, groups and cases.
public struct FlowDefinition: Sendable, Hashable {
    /// The flow's name (`flow:` in a file).
    public var name: String
    /// The initial data bucket (`bucket:` in a file).
    public var bucket: [String: FlowValue]
    /// The steps, run in order (`steps:` in a file).
    public var steps: [FlowStep]
    /// Where the flow was read from, when it came from a file.
    public var location: FlowSourceLocation?
    /// The `retry` and `timeout` of every op step and group that sets none (`defaults:`).
    public var defaults: FlowStepDefaults

    /// Creates a flow definition.
    public init(name: String, bucket: [String: FlowValue] = [:], steps: [FlowStep], location: FlowSourceLocation? = nil,
                defaults: FlowStepDefaults = FlowStepDefaults()) {
        self.name = name
        self.bucket = bucket
        self.steps = steps
        self.location = location
        self.defaults = defaults
    }
}

/// How steps are tried when they set nothing themselves (a flow file's `defaults:`).
public struct FlowStepDefaults: Sendable, Hashable {
    /// Tries after transient failures; `nil`: one try.
    public var retry: FlowRetryPolicy?
    /// How long one try may run; `nil`: no limit.
    public var timeout: Duration?

    /// Creates defaults.
    public init(retry: FlowRetryPolicy? = nil, timeout: Duration? = nil) {
        self.retry = retry
        self.timeout = timeout
    }
}

/// One node of a flow tree.
public indirect enum FlowStep: Sendable, Hashable {
    /// One op run against the flow's data bucket.
    case operation(FlowOperationStep)
    /// One op instance per element of an array (``FlowArrayGroupDispatcher``).
    case group(FlowGroupStep)
    /// Branches chosen by a bucket value, combined again afterwards (``FlowCase``).
    case cases(FlowCasesStep)

    /// Where the step was written, when it came from a file.
    public var location: FlowSourceLocation? {
        switch self {
        case .operation(let step): return step.location
        case .group(let step): return step.location
        case .cases(let step): return step.location
        }
    }
}

/// A serial step: one op, by registered name, with its parameters (`- op: NAME` / `with:`).
public struct FlowOperationStep: Sendable, Hashable {
    /// The registered op name.
    public var op: String
    /// The op's parameters (`with:`).
    public var parameters: [String: FlowValue]
    /// Where the step was written.
    public var location: FlowSourceLocation?
    /// Tries after transient failures (`retry:`); `nil`: the flow's default.
    public var retry: FlowRetryPolicy?
    /// How long one try may run (`timeout:` seconds); `nil`: the flow's default.
    public var timeout: Duration?
    /// Which workers may run it on a cluster (`on:`); `nil`: any.
    public var placement: FlowPlacement?
    /// Whether it runs once on every worker (that ``placement`` allows) instead of once
    /// (`each: worker`): its list outputs are joined in worker-name order, each element saying
    /// where it came from (`worker`, `host`), the Flow files article says how.
    public var eachWorker = false

    /// Creates a serial step.
    public init(op: String, parameters: [String: FlowValue] = [:], location: FlowSourceLocation? = nil,
                retry: FlowRetryPolicy? = nil, timeout: Duration? = nil) {
        self.op = op
        self.parameters = parameters
        self.location = location
        self.retry = retry
        self.timeout = timeout
    }
}

/// A grouped step: the seed's `FlowArrayGroupDispatcher` as data (`- group:`).
public struct FlowGroupStep: Sendable, Hashable {
    /// The registered op name; one instance runs per input element.
    public var op: String
    /// The bucket key of the input array (`input:`, the dispatcher's `inputKey`); empty when the
    /// group reads its elements from ``inputFile``.
    public var input: String
    /// The bucket key the outputs are collected at, in input order (`output:`, `outputKey`); empty
    /// when no array is collected (a group reading ``inputFile`` may leave it out, or write its
    /// outputs to ``outputFile``).
    public var output: String
    /// The file the group reads its elements from, a page at a time (`input: {file: PATH}`), in
    /// place of a bucket array: for inputs too big for memory.
    public var inputFile: FlowGroupInputFile?
    /// The file each successful element's output is written to as it finishes, one JSON line
    /// `{"index": N, "output": VALUE}` each, in the order elements finish (`output: {file: PATH}`),
    /// in place of a bucket array.
    public var outputFile: String?
    /// At most this many of the group's ops run at once (`maxConcurrent:`, default 3).
    public var maxConcurrent: Int
    /// Whether the flow goes on when some elements fail (`allowFailure:`, default false).
    public var allowFailure: Bool
    /// Parameters given to every instance (`with:`).
    public var parameters: [String: FlowValue]
    /// Where the step was written.
    public var location: FlowSourceLocation?
    /// Tries of each element after transient failures (`retry:`); `nil`: the flow's default.
    public var retry: FlowRetryPolicy?
    /// How long one try of an element may run (`timeout:` seconds); `nil`: the flow's default.
    public var timeout: Duration?
    /// How many elements may fail with the group still succeeding (`maxFailures:`).
    public var maxFailures: FlowFailureBudget?
    /// The group's budget across the whole run (`limit:`); `nil`: none.
    public var limit: FlowGroupLimit?
    /// Whether the group lowers its concurrency when the store says it is overloaded (`503
    /// SlowDown`, `429`, `Retry-After`) and raises it again while answers are good (`adaptive:`,
    /// default true).
    public var adaptive: Bool
    /// Which workers may run its elements on a cluster (`on:`); `nil`: any.
    public var placement: FlowPlacement?
    /// Whether each element goes back to the host it came from (`affinity: source|prefer`).
    public var affinity: FlowAffinity?
    /// How long an element with `affinity: source` waits for a worker of its host before it
    /// fails (`affinityTimeout:`); `nil`: the run's `--worker-timeout`.
    public var affinityTimeout: Duration?

    /// What the group fans out, for outlines and diagrams: its input key, or `file PATH`.
    var inputName: String { inputFile.map { "file \($0.path)" } ?? input }
    /// Where its outputs go, for outlines and diagrams: its output key, `file PATH`, or `nothing`.
    var outputName: String { outputFile.map { "file \($0)" } ?? (output.isEmpty ? "nothing" : output) }

    /// Creates a grouped step.
    public init(
        op: String, input: String, output: String, maxConcurrent: Int = 3, allowFailure: Bool = false,
        parameters: [String: FlowValue] = [:], location: FlowSourceLocation? = nil,
        retry: FlowRetryPolicy? = nil, timeout: Duration? = nil, maxFailures: FlowFailureBudget? = nil,
        limit: FlowGroupLimit? = nil, adaptive: Bool = true, inputFile: FlowGroupInputFile? = nil, outputFile: String? = nil
    ) {
        self.inputFile = inputFile
        self.outputFile = outputFile
        self.limit = limit
        self.adaptive = adaptive
        self.retry = retry
        self.timeout = timeout
        self.maxFailures = maxFailures
        self.op = op
        self.input = input
        self.output = output
        self.maxConcurrent = maxConcurrent
        self.allowFailure = allowFailure
        self.parameters = parameters
        self.location = location
    }
}

/// Case branches (`- cases:`): the first branch whose key holds its value runs, then the flow goes
/// on with the next step (the seed's `combine()`).
public struct FlowCasesStep: Sendable, Hashable {
    /// The branches, in the order they are tried.
    public var branches: [FlowCaseBranch]
    /// Steps run when no branch matches (`default:`). Without them, no match ends the flow early
    /// and successfully, as in the seed.
    public var defaultSteps: [FlowStep]?
    /// Where the step was written.
    public var location: FlowSourceLocation?

    /// Creates a cases step.
    public init(branches: [FlowCaseBranch], defaultSteps: [FlowStep]? = nil, location: FlowSourceLocation? = nil) {
        self.branches = branches
        self.defaultSteps = defaultSteps
        self.location = location
    }
}

/// One case branch: runs when `bucket[key]` is the string `value`.
public struct FlowCaseBranch: Sendable, Hashable {
    /// The bucket key compared.
    public var key: String
    /// The string the bucket value must equal.
    public var value: String
    /// The branch's steps.
    public var steps: [FlowStep]

    /// Creates a branch.
    public init(key: String, value: String, steps: [FlowStep]) {
        self.key = key
        self.value = value
        self.steps = steps
    }
}

/// A place in a flow file, for messages in the `FILE:LINE:COLUMN: message` form.
public struct FlowSourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file's path as given.
    public var file: String
    /// 1-based line.
    public var line: Int
    /// 1-based column.
    public var column: Int

    /// Creates a location.
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}
