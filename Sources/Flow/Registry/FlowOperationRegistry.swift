import Foundation

/// Maps op names, as flow files and the wire protocol use them, to factories that build the op
/// from its parameters.
public struct FlowOperationRegistry: Sendable {
    /// Where an op runs when its flow runs on a cluster.
    public enum Placement: Sendable, Equatable {
        /// On a worker that offers it (the default).
        case worker
        /// On the coordinator itself: for ops about the coordinator's own machine, such as
        /// `ListFilesOp` listing the folder that the coordinator then reads files from.
        case coordinator
    }

    /// Work the coordinator does for an op before its task leaves for a worker: it is given the
    /// op's parameters and its primary input (a group element, or a serial op's bucket value at
    /// ``Entry/primaryInputParamKey``) and returns the input to send instead. `UploadFileOp` with
    /// `source: coordinator` turns a path into the file's bytes this way. It runs only for tasks
    /// about to be dispatched, so memory holds no more than the in-flight tasks' data; a thrown
    /// error fails the task with the error's text.
    public typealias InputPreparer = @Sendable (_ parameters: [String: FlowValue], _ input: FlowValue) throws -> FlowValue

    /// How an op's `${key}` references take bucket values, given its parameters as written and
    /// the bucket; ``FlowParameterTemplate/resolve(_:bucket:)`` (the value pasted in) unless an
    /// op needs otherwise, as `ShellOp` does for a `shell: true` command, where a pasted value
    /// would be code.
    public typealias ParameterResolver = @Sendable (_ parameters: [String: FlowValue], _ bucket: [String: Any]) throws -> [String: FlowValue]

    /// Work the coordinator does once for a group of an op, before its first task leaves: it is
    /// given the op's parameters, resolved, and how many elements the group has (`nil` when that
    /// is not known yet), and returns the parameters every task of the group carries.
    /// `UploadFileOp` with `skipExisting` on an S3 target names a listing of the target this way
    /// for a group of more than 1,000 elements, so that its workers list the target once instead
    /// of sending a `HEAD` per file.
    public typealias GroupPreparer = @Sendable (_ parameters: [String: FlowValue], _ elementCount: Int?) -> [String: FlowValue]

    /// One registered op.
    public struct Entry: Sendable {
        /// The name used in flow files (`op: NAME`).
        public let name: String
        /// The key a group puts each element under.
        public let primaryInputParamKey: String
        /// The key a group collects each output from.
        public let primaryOutputParamKey: String
        /// One line for `flow-worker --list-ops`.
        public let summary: String
        /// Builds a fresh op from its parameters (`with:`).
        public let make: @Sendable (FlowParameters) throws -> FlowOperation
        /// Where the op runs on a cluster.
        public let placement: Placement
        /// What the coordinator does to the op's input before dispatch, if anything.
        public let prepareInput: InputPreparer?
        /// How its `${key}` references are resolved, `nil` for ``FlowParameterTemplate``'s way.
        public let resolveParameters: ParameterResolver?
        /// What the coordinator does to a group's parameters before the group starts, if anything.
        public let prepareGroup: GroupPreparer?
        /// The keys it takes under `with:`; `nil` when not declared, and then it takes any key.
        public let parameters: [FlowParameterDeclaration]?

        /// Whether the op takes `key` under `with:`: a declared key, or any key when none are declared.
        public func accepts(parameter key: String) -> Bool {
            parameters?.contains { $0.name == key } ?? true
        }
    }

    private var entries: [String: Entry] = [:]

    /// Creates an empty registry.
    public init() {}

    /// Registers an op under a name.
    ///
    /// - Parameters:
    ///   - name: the name flow files use.
    ///   - summary: one line describing the op and its parameters.
    ///   - primaryInputParamKey: the op's group input key; read from an op built with no
    ///     parameters when `nil`.
    ///   - primaryOutputParamKey: the op's group output key; likewise.
    ///   - placement: where the op runs on a cluster: a worker (the default) or the coordinator.
    ///   - prepareInput: work the coordinator does on the op's input before dispatch.
    ///   - resolveParameters: how `${key}` references in its parameters take bucket values, when
    ///     not pasted in as ``FlowParameterTemplate`` does.
    ///   - prepareGroup: what the coordinator does to a group's parameters before it starts.
    ///   - parameters: the keys the op takes under `with:`; a flow file giving another key is
    ///     refused when loaded (see ``FlowFileLoader``). `nil` (the default) takes any key; `[]`
    ///     takes none.
    ///   - make: builds the op; throws ``FlowParameterError`` for bad parameters.
    public mutating func register(
        _ name: String, summary: String = "", primaryInputParamKey: String? = nil, primaryOutputParamKey: String? = nil,
        placement: Placement = .worker, prepareInput: InputPreparer? = nil, resolveParameters: ParameterResolver? = nil,
        prepareGroup: GroupPreparer? = nil, parameters: [FlowParameterDeclaration]? = nil,
        make: @escaping @Sendable (FlowParameters) throws -> FlowOperation
    ) {
        let probe = (primaryInputParamKey == nil || primaryOutputParamKey == nil)
            ? try? make(FlowParameters([:], operation: name)) : nil
        entries[name] = Entry(
            name: name,
            primaryInputParamKey: primaryInputParamKey ?? probe?.primaryInputParamKey ?? "",
            primaryOutputParamKey: primaryOutputParamKey ?? probe?.primaryOutputParamKey ?? "",
            summary: summary, make: make, placement: placement, prepareInput: prepareInput, resolveParameters: resolveParameters,
            prepareGroup: prepareGroup, parameters: parameters
        )
    }

    /// Registers a seed-style group op that takes no parameters, under its type name (or `name`).
    ///
    /// - Parameters:
    ///   - type: an op type conforming to ``FlowOperationCreator``.
    ///   - name: the registered name; the type's name when `nil`.
    ///   - summary: one line describing the op.
    ///   - parameters: the keys it takes under `with:` (`[]` for none); `nil` takes any key.
    public mutating func register<Op: FlowOperation & FlowOperationCreator>(
        _ type: Op.Type, name: String? = nil, summary: String = "", parameters: [FlowParameterDeclaration]? = nil
    ) {
        register(name ?? String(describing: type), summary: summary, parameters: parameters) { _ in type.create() }
    }

    /// Adds every entry of another registry, replacing same-named ones.
    public mutating func merge(_ other: FlowOperationRegistry) {
        entries.merge(other.entries) { _, new in new }
    }

    /// The registered names, sorted.
    public var names: [String] { entries.keys.sorted() }

    /// Whether an op is registered under `name`.
    public func contains(_ name: String) -> Bool { entries[name] != nil }

    /// The registered name `name` is likely a typo of (`UploadFileOP` → `UploadFileOp`), as flow
    /// files' "did you mean" uses it; `nil` when none is close.
    public func suggestion(for name: String) -> String? { FlowNameSuggestion.closest(to: name, among: names) }

    /// The entry registered under `name`.
    public func entry(named name: String) -> Entry? { entries[name] }

    /// The parameters of the op registered as `name` with their `${key}` references resolved
    /// against `bucket`, the op's own way (``Entry/resolveParameters``) or
    /// ``FlowParameterTemplate``'s.
    ///
    /// - Throws: ``FlowParameterTemplate/MissingKey`` for a reference to a key the bucket lacks.
    public func resolveParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any]) throws -> [String: FlowValue] {
        try (entries[name]?.resolveParameters ?? FlowParameterTemplate.resolve)(parameters, bucket)
    }

    /// The parameters of a group of the op registered as `name`: resolved as
    /// ``resolveParameters(of:_:bucket:)`` resolves them, then prepared for a group of
    /// `elementCount` elements (`nil`: not known yet) by the op's ``Entry/prepareGroup``.
    ///
    /// - Throws: ``FlowParameterTemplate/MissingKey`` for a reference to a key the bucket lacks.
    public func resolveGroupParameters(of name: String, _ parameters: [String: FlowValue], bucket: [String: Any],
                                       elementCount: Int?) throws -> [String: FlowValue] {
        let resolved = try resolveParameters(of: name, parameters, bucket: bucket)
        return entries[name]?.prepareGroup?(resolved, elementCount) ?? resolved
    }

    /// Builds an op.
    ///
    /// - Throws: ``FlowError/unknownOperation(_:)`` for an unknown name, or the factory's
    ///   ``FlowParameterError``.
    public func makeOperation(named name: String, parameters: [String: FlowValue]) throws -> FlowOperation {
        guard let entry = entries[name] else { throw FlowError.unknownOperation(name) }
        let operation = try entry.make(FlowParameters(parameters, operation: name))
        if operation.name == nil, FlowTypeName.of(type(of: operation)) != name { operation.name = name }
        return operation
    }
}
