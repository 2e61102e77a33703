import Flow

/// The coordinator's side of `UploadFileOp`'s `source: coordinator`: the coordinator reads each
/// file and sends its bytes with the task, for workers that cannot see the coordinator's disk.
public enum UploadFileSource {
    /// Reads a file into the group element `UploadFileOp` accepts in place of a path:
    /// `{"name": String, "path": String, "bytes": Data}`.
    ///
    /// - Parameter path: the file's path on the coordinator.
    /// - Returns: the map, with `name` the path's last component.
    /// - Throws: ``FlowStandardOpError`` (code ``FlowStandardOpError/Code/unreadableFile``) naming
    ///   the path when it is missing, unreadable or not a regular file.
    public static func coordinatorElement(forPath path: String) throws -> FlowValue {
        let bytes = try ReadableFile(path: path).readAll()
        return .map(["name": .string(FileInput.lastComponent(of: path)), "path": .string(path), "bytes": .bytes(bytes)])
    }

    /// `UploadFileOp`'s `FlowOperationRegistry.InputPreparer`: with `source: coordinator` (in any
    /// case), a path becomes ``coordinatorElement(forPath:)``, and a map `{name, path}` without
    /// bytes (a recursive `ListFilesOp`'s element) the same with its own `name` kept, so that the
    /// file keeps its place in the tree; anything else is sent as it is.
    @Sendable public static func prepareInput(_ parameters: [String: FlowValue], _ input: FlowValue) throws -> FlowValue {
        guard readsOnCoordinator(parameters) else { return input }
        switch input {
        case .string(let path):
            return try coordinatorElement(forPath: path)
        case .map(var element) where element["bytes"] == nil:
            guard case .string(let path)? = element["path"] else { return input }
            element["bytes"] = .bytes(try ReadableFile(path: path).readAll())
            if element["name"]?.stringValue?.isEmpty ?? true { element["name"] = .string(FileInput.lastComponent(of: path)) }
            return .map(element)
        default:
            return input
        }
    }

    /// Whether an `UploadFileOp`'s parameters ask the coordinator to read the files
    /// (`source: coordinator`, in any case).
    ///
    /// - Parameter parameters: the step's `with:` parameters.
    public static func readsOnCoordinator(_ parameters: [String: FlowValue]) -> Bool {
        parameters["source"]?.stringValue?.lowercased() == UploadFileOp.Source.coordinator.rawValue
    }
}
