public import Flow

extension FlowCoordinator {
    /// Resolves an op's `${key}` references the way its registry entry says (a `shell: true`
    /// `ShellOp` passes them as environment variables), as a run in one process does.
    public func resolveParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any]) throws -> [String: FlowValue] {
        try configuration.registry.resolveParameters(of: name, parameters, bucket: bucket)
    }

    /// Resolves and prepares a group's parameters the way its registry entry says, as a run in
    /// one process does.
    public func resolveGroupParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any],
                                       elementCount: Int?) throws -> [String: FlowValue] {
        try configuration.registry.resolveGroupParameters(of: name, parameters, bucket: bucket, elementCount: elementCount)
    }
}
