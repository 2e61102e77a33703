import Yams

extension FlowFileReader {
    /// The keys a `group:` map may have.
    static let groupKeys = ["op", "input", "output", "maxConcurrent", "allowFailure", "maxFailures", "retry", "timeout", "limit", "adaptive", "on",
                            "affinity", "affinityTimeout", "with"]
    /// The keys a `cases:` map may have.
    static let casesKeys = ["key", "branches", "default"]

    /// `- op: NAME` with optional `with:`, `retry:` and `timeout:`.
    mutating func readOperationStep(op: Yams.Node, fields: FlowFileFields, location: FlowSourceLocation) -> FlowOperationStep? {
        let name = readOpName(op)
        var parameters: [String: FlowValue]? = [:]
        if let with = fields["with"] {
            parameters = readValueMap("with", with, meaning: "the op's parameters")
            checkParameterKeys(with, of: name, stepKeys: Self.operationStepKeysBesideWith, inGroup: false)
        }
        var failed = false
        var step = FlowOperationStep(op: name ?? "", location: location)
        if let value = fields["retry"] {
            step.retry = readRetry(value)
            failed = failed || step.retry == nil
        }
        if let value = fields["timeout"] {
            step.timeout = readTimeout(value)
            failed = failed || step.timeout == nil
        }
        if let value = fields["on"] {
            step.placement = readPlacement(value)
            failed = failed || step.placement == nil
        }
        if let value = fields["each"] {
            if case .scalar(let scalar) = value, scalar.string == "worker" {
                step.eachWorker = true
            } else {
                report("each must be 'worker' (run the op once on every worker, or every worker on: allows), found \(Self.describe(value))",
                       at: value)
                failed = true
            }
        }
        guard name != nil, let parameters, !failed else { return nil }
        step.parameters = parameters
        return step
    }

    /// `- group:` with `op`, `input`, `output` and optional `maxConcurrent`, `allowFailure`, `with`,
    /// `retry`, `timeout`, `maxFailures`, `limit` and `adaptive`.
    ///
    /// - Parameters:
    ///   - node: the value of `group:`.
    ///   - key: the `group` key, where missing fields are reported.
    ///   - location: the step's location.
    mutating func readGroupStep(_ node: Yams.Node, key: Yams.Node, location: FlowSourceLocation) -> FlowGroupStep? {
        guard case .mapping(let mapping) = node else {
            report("group must be a map with 'op', 'input' and 'output', found \(Self.describe(node))", at: node)
            return nil
        }
        let fields = fields(of: mapping, allowed: Self.groupKeys, in: "group")
        // Every part is read, so that one file shows every mistake at once.
        let target = readGroupTarget(fields, key: key)
        var step = FlowGroupStep(op: target.op ?? "", input: target.input?.key ?? "", output: target.output?.key ?? "", location: location,
                                 inputFile: target.input?.file, outputFile: target.output?.file)
        let concurrencyRead = readGroupConcurrency(fields, op: target.op, into: &step)
        let failuresRead = readGroupFailurePolicy(fields, into: &step)
        let budgetRead = readGroupBudget(fields, into: &step)
        guard target.op != nil, target.input != nil, target.output != nil,
              concurrencyRead, failuresRead, budgetRead else { return nil }
        return step
    }

    /// The fields a group cannot do without: `op`, `input` and `output`, each `nil` when missing
    /// (reported at `key`) or wrong. A group may leave `output` out: it collects nothing (an
    /// empty key).
    private mutating func readGroupTarget(_ fields: FlowFileFields, key: Yams.Node)
        -> (op: String?, input: (key: String, file: FlowGroupInputFile?)?, output: (key: String, file: String?)?) {
        var op: String?
        if let value = fields["op"] {
            op = readOpName(value)
        } else {
            report("group has no op: add 'op: <registered op name>'", at: key)
        }
        var input: (key: String, file: FlowGroupInputFile?)?
        if let value = fields["input"] {
            input = readGroupInput(value)
        } else {
            report("group has no input: add 'input: <bucket key of the array>' or 'input: {file: <path>}'", at: key)
        }
        // Without `output`, nothing is collected: a group of millions keeps no array.
        var output: (key: String, file: String?)? = ("", nil)
        if let value = fields["output"] { output = readGroupOutput(value) }
        return (op, input, output)
    }

    /// How the group's elements run: `maxConcurrent`, `allowFailure` and the op's `with:`
    /// parameters (checked against `op`'s parameter names when it is known); `false` when one is wrong.
    private mutating func readGroupConcurrency(_ fields: FlowFileFields, op: String?, into step: inout FlowGroupStep) -> Bool {
        var read = true
        if let value = fields["maxConcurrent"] {
            if let number = readInteger("maxConcurrent", value, in: FlowNumberRange.maxConcurrent) { step.maxConcurrent = number } else { read = false }
        }
        if let value = fields["allowFailure"] {
            if let flag = readBool("allowFailure", value) { step.allowFailure = flag } else { read = false }
        }
        if let value = fields["with"] {
            checkParameterKeys(value, of: op, stepKeys: Self.groupKeysBesideWith, inGroup: true)
            if let map = readValueMap("with", value, meaning: "parameters for every op in the group") {
                step.parameters = map
            } else {
                read = false
            }
        }
        return read
    }

    /// What an element's failure does: `retry`, `timeout` and `maxFailures`, which `allowFailure:
    /// true` (read before) leaves without effect and so refuses; `false` when one is wrong.
    private mutating func readGroupFailurePolicy(_ fields: FlowFileFields, into step: inout FlowGroupStep) -> Bool {
        var read = true
        if let value = fields["retry"] {
            step.retry = readRetry(value)
            read = read && step.retry != nil
        }
        if let value = fields["timeout"] {
            step.timeout = readTimeout(value)
            read = read && step.timeout != nil
        }
        if let value = fields["maxFailures"] {
            step.maxFailures = readMaxFailures(value)
            read = read && step.maxFailures != nil
            if step.allowFailure, let key = fields.key("maxFailures") {
                report("maxFailures has no effect with allowFailure: true, which lets any number fail: keep one of them", at: key)
                read = false
            }
        }
        return read
    }

    /// The group's share of the store across the run: `limit` and `adaptive`; `false` when one is wrong.
    private mutating func readGroupBudget(_ fields: FlowFileFields, into step: inout FlowGroupStep) -> Bool {
        var read = true
        if let value = fields["limit"] {
            step.limit = readLimit(value)
            read = read && step.limit != nil
        }
        if let value = fields["adaptive"] {
            if let flag = readBool("adaptive", value) { step.adaptive = flag } else { read = false }
        }
        if let value = fields["on"] {
            step.placement = readPlacement(value)
            read = read && step.placement != nil
        }
        if let value = fields["affinity"] {
            if case .scalar(let scalar) = value, let affinity = FlowAffinity(rawValue: scalar.string) {
                step.affinity = affinity
            } else {
                report("affinity must be 'source' (each element runs on the host it came from) or 'prefer' (there when that host has "
                       + "a worker, else anywhere), found \(Self.describe(value))", at: value)
                read = false
            }
        }
        if let value = fields["affinityTimeout"] {
            step.affinityTimeout = readAffinityTimeout(value)
            read = read && step.affinityTimeout != nil
            if step.affinity == nil, let key = fields.key("affinityTimeout") {
                report("affinityTimeout goes with affinity: source (how long an element waits for its host): add the affinity or remove it",
                       at: key)
                read = false
            }
        }
        return read
    }

    /// `- cases:` with `key`, `branches` and optional `default`.
    ///
    /// - Parameters:
    ///   - node: the value of `cases:`.
    ///   - key: the `cases` key, where missing fields are reported.
    ///   - location: the step's location.
    mutating func readCasesStep(_ node: Yams.Node, key: Yams.Node, location: FlowSourceLocation) -> FlowCasesStep? {
        guard case .mapping(let mapping) = node else {
            report("cases must be a map with 'key' and 'branches', found \(Self.describe(node))", at: node)
            return nil
        }
        let fields = fields(of: mapping, allowed: Self.casesKeys, in: "cases")

        var bucketKey: String?
        if let value = fields["key"] {
            bucketKey = readString("key", value, meaning: "the bucket key whose value picks the branch")
        } else {
            report("cases has no key: add 'key: <bucket key to compare>'", at: key)
        }

        var branches: [(value: String, steps: [FlowStep])]?
        if let value = fields["branches"] {
            branches = readBranches(value)
        } else {
            report("cases has no branches: add 'branches:' mapping each case value to a list of steps", at: key)
        }

        var defaultSteps: [FlowStep]?
        var failed = false
        if let value = fields["default"] {
            defaultSteps = readSteps("default", value, allowEmpty: true)
            failed = defaultSteps == nil
        }

        guard let bucketKey, let branches, !failed else { return nil }
        return FlowCasesStep(
            branches: branches.map { FlowCaseBranch(key: bucketKey, value: $0.value, steps: $0.steps) },
            defaultSteps: defaultSteps, location: location)
    }

    /// `branches:`: case value to steps, in file order. A plain `1` or `true` key is its text.
    private mutating func readBranches(_ node: Yams.Node) -> [(value: String, steps: [FlowStep])]? {
        guard case .mapping(let mapping) = node else {
            if Self.tagName(of: node) == .null {
                report("branches is empty: add at least one 'VALUE: [steps]'", at: node)
            } else {
                report("branches must be a map from case value to a list of steps, found \(Self.describe(node))", at: node)
            }
            return nil
        }
        guard !mapping.isEmpty else {
            report("branches is empty: add at least one 'VALUE: [steps]'", at: node)
            return nil
        }
        var branches: [(value: String, steps: [FlowStep])] = []
        var seen: Set<String> = []
        var failed = false
        for (key, value) in mapping {
            guard case .scalar(let scalar) = key else {
                report("a branch key must be a case value (text), found \(Self.describe(key))", at: key)
                failed = true
                continue
            }
            let caseValue = scalar.string
            if !seen.insert(caseValue).inserted {
                report("branch '\(caseValue)' appears more than once: keep one", at: key)
                failed = true
            }
            if let steps = readSteps("branch '\(caseValue)'", value, allowEmpty: true) {
                branches.append((caseValue, steps))
            } else {
                failed = true
            }
        }
        return failed ? nil : branches
    }

    /// An integer in `range`.
    private mutating func readInteger(_ name: String, _ node: Yams.Node, in range: ClosedRange<Int>) -> Int? {
        if case .scalar(let scalar) = node, Self.tagName(of: node) == .int,
           let number = Self.integer(scalar), range.contains(number) {
            return number
        }
        report("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound), found \(Self.describe(node))", at: node)
        return nil
    }

    /// `true` or `false`.
    private mutating func readBool(_ name: String, _ node: Yams.Node) -> Bool? {
        if case .scalar(let scalar) = node, Self.tagName(of: node) == .bool, let flag = FlowCoreSchema.bool(scalar.string) {
            return flag
        }
        report("\(name) must be true or false, found \(Self.describe(node))", at: node)
        return nil
    }
}

extension FlowFileReader {
    /// A scalar's core-schema integer as an `Int`, `nil` when it is none or does not fit.
    static func integer(_ scalar: Yams.Node.Scalar) -> Int? {
        FlowCoreSchema.integer(scalar.string).flatMap { Int(exactly: $0) }
    }
}
