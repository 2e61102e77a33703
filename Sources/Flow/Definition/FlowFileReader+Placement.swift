import Yams

extension FlowFileReader {
    /// `on: {KEY: VALUE, …}`: the labels a worker must have to run the step (``FlowPlacement``);
    /// `nil`, reported, when it is not a map of at least one label.
    mutating func readPlacement(_ node: Yams.Node) -> FlowPlacement? {
        let example = "write on: {KEY: VALUE}, e.g. on: {role: recorder}, to run the step only on workers started with --label role=recorder"
        guard case .mapping(let mapping) = node, !mapping.isEmpty else {
            report("on must be a map of the labels a worker must have, found \(Self.describe(node)): \(example)", at: node)
            return nil
        }
        var labels: [String: String] = [:]
        var failed = false
        for (key, value) in mapping {
            guard case .scalar(let keyScalar) = key, case .scalar(let valueScalar) = value else {
                report("on: each label is KEY: VALUE, both text, found \(Self.describe(key)): \(Self.describe(value)): \(example)", at: key)
                failed = true
                continue
            }
            if let problem = FlowPlacement.problem(withKey: keyScalar.string) {
                report("on: '\(keyScalar.string)': \(problem)", at: key)
                failed = true
            } else if let problem = FlowPlacement.problem(withValue: valueScalar.string) {
                report("on: '\(keyScalar.string)': \(problem)", at: value)
                failed = true
            } else if labels[keyScalar.string] != nil {
                report("on: label '\(keyScalar.string)' appears more than once: keep one", at: key)
                failed = true
            }
            labels[keyScalar.string] = valueScalar.string
        }
        return failed ? nil : FlowPlacement(labels)
    }
}
