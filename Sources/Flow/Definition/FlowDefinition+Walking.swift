extension FlowDefinition {
    /// Calls `body` with every op name in the tree (serial steps and groups, in every branch).
    public func forEachOperation(_ body: (String, FlowSourceLocation?) -> Void) {
        func walk(_ steps: [FlowStep]) {
            for step in steps {
                switch step {
                case .operation(let op): body(op.op, op.location)
                case .group(let group): body(group.op, group.location)
                case .cases(let cases):
                    for branch in cases.branches { walk(branch.steps) }
                    if let defaultSteps = cases.defaultSteps { walk(defaultSteps) }
                }
            }
        }
        walk(steps)
    }

    /// Calls `body` with every op step's op name, `with:` parameters and location, in file order,
    /// branches included.
    public func forEachOperation(_ body: (String, [String: FlowValue], FlowSourceLocation?) -> Void) {
        func walk(_ steps: [FlowStep]) {
            for step in steps {
                switch step {
                case .operation(let op): body(op.op, op.parameters, op.location)
                case .group(let group): body(group.op, group.parameters, group.location)
                case .cases(let cases):
                    for branch in cases.branches { walk(branch.steps) }
                    if let defaultSteps = cases.defaultSteps { walk(defaultSteps) }
                }
            }
        }
        walk(steps)
    }

    /// How many steps the tree has, counting those inside branches.
    public var stepCount: Int {
        var count = 0
        forEachOperation { _, _ in count += 1 }
        return count
    }
}
