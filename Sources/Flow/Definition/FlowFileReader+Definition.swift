import Yams

extension FlowFileReader {
    /// The keys a flow file may have at its top level.
    static let topLevelKeys = ["flow", "bucket", "defaults", "steps"]
    /// The keys a step may have.
    static let stepKeys = ["op", "with", "retry", "timeout", "on", "each", "group", "cases"]
    /// The keys that say what a step is; a step has exactly one.
    static let stepKinds = ["op", "group", "cases"]

    /// A whole flow file: `flow`, `bucket` and `steps`.
    mutating func readDefinition(_ root: Yams.Node) -> FlowDefinition? {
        guard case .mapping(let mapping) = root else {
            report("a flow file must be a map with 'flow' and 'steps', found \(Self.describe(root))", at: root)
            return nil
        }
        let fields = fields(of: mapping, allowed: Self.topLevelKeys, in: nil)

        var name: String?
        if let node = fields["flow"] {
            name = readString("flow", node, meaning: "the flow's name")
        } else {
            report("flow file has no name: add 'flow: <name>'", at: root)
        }

        var bucket: [String: FlowValue]? = [:]
        if let node = fields["bucket"] {
            bucket = readValueMap("bucket", node, meaning: "initial values by key")
        }

        var steps: [FlowStep]?
        if let node = fields["steps"] {
            steps = readSteps("steps", node, allowEmpty: false)
        } else {
            report("flow file has no steps: add 'steps:' with a list of steps", at: root)
        }

        var defaults: FlowStepDefaults? = FlowStepDefaults()
        if let node = fields["defaults"] {
            defaults = readDefaults(node)
        }

        guard let name, let bucket, let steps, let defaults else { return nil }
        return FlowDefinition(name: name, bucket: bucket, steps: steps, location: location(of: root), defaults: defaults)
    }

    /// A list of steps: `steps:`, a branch, or `default:`.
    ///
    /// - Parameters:
    ///   - name: what the list is, for messages ("steps", "branch 'A'", "default").
    ///   - allowEmpty: whether an empty list is fine (a branch or default that does nothing).
    mutating func readSteps(_ name: String, _ node: Yams.Node, allowEmpty: Bool) -> [FlowStep]? {
        switch node {
        case .sequence(let sequence):
            if sequence.isEmpty && !allowEmpty {
                report("\(name) is empty: add at least one step", at: node)
                return nil
            }
            var steps: [FlowStep] = []
            var failed = false
            for element in sequence {
                if let step = readStep(element) { steps.append(step) } else { failed = true }
            }
            return failed ? nil : steps
        case .scalar where Self.tagName(of: node) == .null && !allowEmpty:
            report("\(name) is empty: add at least one step", at: node)
        default:
            let hint = allowEmpty ? ": use [] for none" : ""
            report("\(name) must be a list of steps, found \(Self.describe(node))\(hint)", at: node)
        }
        return nil
    }

    /// One step: a map with exactly one of `op`, `group` or `cases`.
    mutating func readStep(_ node: Yams.Node) -> FlowStep? {
        guard case .mapping(let mapping) = node else {
            var message = "a step must be a map with one of 'op', 'group' or 'cases', found \(Self.describe(node))"
            if case .scalar(let scalar) = node, Self.tagName(of: node) == .str {
                message += ": write '- op: \(scalar.string)' to run an op"
            }
            report(message, at: node)
            return nil
        }
        let fields = fields(of: mapping, allowed: Self.stepKeys, in: "step")
        let kinds = Self.stepKinds.filter { fields[$0] != nil }
        if kinds.count > 1 {
            let quoted = kinds.map { "'\($0)'" }
            let found = quoted.dropLast().joined(separator: ", ") + " and " + quoted.last!
            report("step has \(found): a step has exactly one of 'op', 'group' or 'cases'; split it into separate steps", at: node)
        }
        for key in ["with", "retry", "timeout", "on", "each"] {
            guard let keyNode = fields.key(key), fields["op"] == nil else { continue }
            if fields["group"] != nil {
                report("'\(key)' belongs to 'op' steps: for a group, move it inside 'group'", at: keyNode)
            } else if fields["cases"] != nil {
                report("'\(key)' belongs to 'op' steps: a cases step \(key == "with" ? "takes no parameters" : "runs no op itself")", at: keyNode)
            }
        }

        let location = location(of: node)
        // Each kind present is read even when there are several, so its own problems show too.
        let operation = fields["op"].flatMap { readOperationStep(op: $0, fields: fields, location: location) }
        let group = fields["group"].flatMap { readGroupStep($0, key: fields.key("group")!, location: location) }
        let cases = fields["cases"].flatMap { readCasesStep($0, key: fields.key("cases")!, location: location) }

        switch kinds.count {
        case 0:
            report("step has none of 'op', 'group' or 'cases': add one to say what the step does", at: node)
            return nil
        case 1:
            if let operation { return .operation(operation) }
            if let group { return .group(group) }
            if let cases { return .cases(cases) }
            return nil
        default:
            return nil
        }
    }

    /// An op name, checked against the registry when there is one.
    mutating func readOpName(_ node: Yams.Node) -> String? {
        guard let name = readString("op", node, meaning: "a registered op name") else { return nil }
        guard let registry, !registry.contains(name) else { return name }
        let names = registry.names
        var message = "unknown op '\(name)'"
        if let suggestion = registry.suggestion(for: name) {
            message += "; did you mean '\(suggestion)'? registered ops: \(names.joined(separator: ", "))"
        } else {
            message += names.isEmpty ? "; no ops are registered" : "; registered ops: \(names.joined(separator: ", "))"
        }
        report(message, at: node)
        return nil
    }
}
