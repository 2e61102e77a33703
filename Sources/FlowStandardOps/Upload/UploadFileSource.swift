public import Flow

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
    /// With `skipExisting: modtime` the element also holds the file's modification time
    /// (`mtime`), which the worker cannot read from a disk it does not see.
    @Sendable public static func prepareInput(_ parameters: [String: FlowValue], _ input: FlowValue) throws -> FlowValue {
        guard readsOnCoordinator(parameters) else { return input }
        let prepared: FlowValue
        switch input {
        case .string(let path):
            prepared = try coordinatorElement(forPath: path)
        case .map(var element) where element["bytes"] == nil:
            guard case .string(let path)? = element["path"] else { return input }
            element["bytes"] = .bytes(try ReadableFile(path: path).readAll())
            if element["name"]?.stringValue?.isEmpty ?? true { element["name"] = .string(FileInput.lastComponent(of: path)) }
            prepared = .map(element)
        default:
            return input
        }
        guard parameters["skipExisting"]?.stringValue?.lowercased() == UploadSkipRule.modtime.rawValue, case .map(var element) = prepared,
              let path = element["path"]?.stringValue, let time = FileModificationTime(path: path) else { return prepared }
        element["mtime"] = .string(time.text)
        return .map(element)
    }

    /// Whether an `UploadFileOp`'s parameters ask the coordinator to read the files
    /// (`source: coordinator`, in any case).
    ///
    /// - Parameter parameters: the step's `with:` parameters.
    public static func readsOnCoordinator(_ parameters: [String: FlowValue]) -> Bool {
        parameters["source"]?.stringValue?.lowercased() == UploadFileOp.Source.coordinator.rawValue
    }
}
