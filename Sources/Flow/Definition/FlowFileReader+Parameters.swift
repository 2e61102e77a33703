import Yams

extension FlowFileReader {
    /// The keys of an op step that are sometimes written under its `with:` by mistake.
    static let operationStepKeysBesideWith = ["retry", "timeout", "on", "each"]
    /// The keys of a group that are sometimes written under its `with:` by mistake.
    static let groupKeysBesideWith = ["input", "output", "maxConcurrent", "allowFailure", "maxFailures", "retry", "timeout", "limit", "adaptive", "on", "affinity", "affinityTimeout"]

    /// Reports each key of `with:` that the op does not declare (``FlowParameterDeclaration``),
    /// at the key: with the declared key it is likely a typo of, or a word that it belongs beside
    /// `op:` when it is a step key, or else the keys the op takes.
    ///
    /// Ops that ``parameterDeclarations`` does not know, or that declare nothing, take any key.
    /// Only the keys written are checked; values (`${key}` included) are the op's to read.
    ///
    /// - Parameters:
    ///   - node: the value of `with:`.
    ///   - operation: the op's name, `nil` when it could not be read.
    ///   - stepKeys: the keys of the step (or group) that hold `with:`, which belong beside `op:`.
    ///   - inGroup: whether `with:` is inside `group:`, for messages.
    mutating func checkParameterKeys(_ node: Yams.Node, of operation: String?, stepKeys: [String], inGroup: Bool) {
        guard let operation, case .mapping(let mapping) = node,
              let declared = parameterDeclarations?.entry(named: operation)?.parameters else { return }
        let names = declared.map(\.name)
        for key in mapping.keys {
            guard case .scalar(let scalar) = key, !names.contains(scalar.string) else { continue }
            let name = scalar.string
            let beside = inGroup ? "put it beside 'op:' in 'group:', not under 'with:'" : "put it beside 'op:', not under 'with:'"
            let unknown = "unknown parameter '\(name)' for \(operation)"
            if Self.looksLikeCredential(name) {
                report("\(unknown): credentials are read on the machine that runs the op (its environment or files), "
                       + "never from a flow file, which the journal keeps: remove it", at: key)
            } else if stepKeys.contains(name) {
                report("'\(name)' is a \(inGroup ? "group" : "step") key, not a parameter of \(operation): \(beside)", at: key)
            } else if let suggestion = FlowNameSuggestion.closest(to: name, among: names) {
                report("\(unknown); did you mean '\(suggestion)'?", at: key)
            } else if let suggestion = FlowNameSuggestion.closest(to: name, among: stepKeys) {
                report("\(unknown); did you mean '\(suggestion)'? it is a \(inGroup ? "group" : "step") key: \(beside)", at: key)
            } else {
                let takes = names.isEmpty
                    ? "\(operation) takes no parameters"
                    : "\(operation) takes \(names.map { "'\($0)'" }.joined(separator: ", "))"
                let note = name.hasPrefix("x-") ? "; write notes as YAML comments (# ...)" : ""
                report("\(unknown): \(takes)\(note)", at: key)
            }
        }
    }

    /// Whether an undeclared key names a credential (`secretAccessKey`, `password`, `apiToken`),
    /// which is refused with where credentials go instead of a did-you-mean.
    static func looksLikeCredential(_ key: String) -> Bool {
        let lower = key.lowercased()
        return ["secret", "accesskey", "access_key", "credential", "password", "token"].contains { lower.contains($0) }
    }
}
