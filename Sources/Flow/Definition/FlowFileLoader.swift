import Foundation
import Yams

/// Reads flow files, YAML or JSON, into validated ``FlowDefinition``s.
///
/// A flow file names the flow, gives an optional initial bucket, and lists its steps:
///
/// ```yaml
/// flow: upload-images
/// bucket:
///   images: [a, b, c, d]
///   target: A
/// steps:
///   - op: SimplePrintOp
///     with: {message: Step1}
///   - group: {op: UploadSingleImageOp, input: images, output: imageURLs, maxConcurrent: 3}
///   - cases:
///       key: target
///       branches:
///         A: [{op: SimplePrintOp, with: {message: Step2A1}}]
///       default: []
/// ```
///
/// Every problem in a file is reported at once, each as `FILE:LINE:COLUMN: message`, in a
/// ``FlowFileError``.
public struct FlowFileLoader: Sendable {
    /// When set, op names must be registered in it.
    public let registry: FlowOperationRegistry?
    /// The ops whose declared parameters (``FlowParameterDeclaration``) each step's `with:` keys
    /// are checked against: ``registry`` unless given apart. A step whose op is not in it, or was
    /// registered without declarations, may have any keys.
    public let parameterDeclarations: FlowOperationRegistry?

    /// Creates a loader.
    ///
    /// - Parameters:
    ///   - registry: when non-`nil`, an op name that is not registered in it is an error.
    ///   - parameterDeclarations: ops whose `with:` keys are checked against what they declare,
    ///     without making other op names errors (as `validate` without `--strict` checks the stock
    ///     ops); `registry` when `nil`.
    public init(registry: FlowOperationRegistry? = nil, parameterDeclarations: FlowOperationRegistry? = nil) {
        self.registry = registry
        self.parameterDeclarations = parameterDeclarations ?? registry
    }

    /// Reads and validates a flow file.
    ///
    /// - Parameter path: the file's path; messages name the file by this path.
    /// - Throws: ``FlowFileError`` with every problem found, or `PATH: cannot read: REASON`.
    /// - Returns: the flow, with the location of each step.
    public func load(contentsOf path: String) throws(FlowFileError) -> FlowDefinition {
        try load(text: Self.readText(at: path), file: path)
    }

    /// Validates flow file text.
    ///
    /// - Parameters:
    ///   - text: YAML or JSON.
    ///   - file: the name messages give the text, usually its path.
    /// - Throws: ``FlowFileError`` with every problem found.
    /// - Returns: the flow, with the location of each step.
    public func load(text: String, file: String) throws(FlowFileError) -> FlowDefinition {
        var reader = FlowFileReader(file: file, registry: registry, parameterDeclarations: parameterDeclarations)
        let root = try Self.document(text, file: file, expecting: "a flow file needs 'flow:' and 'steps:'")
        let definition = reader.prepared(root, sourceBytes: text.utf8.count).flatMap { reader.readDefinition($0) }
        guard let definition, reader.diagnostics.isEmpty else {
            throw FlowFileError(diagnostics: reader.sortedDiagnostics)
        }
        return definition
    }

    /// Reads a bucket file: a YAML or JSON map of values, as `--bucket FILE` takes.
    ///
    /// - Parameter path: the file's path.
    /// - Throws: ``FlowFileError`` when the file cannot be read, is not valid YAML or JSON, is not a
    ///   map, or holds a value with no ``FlowValue`` form.
    /// - Returns: the values by key.
    public func loadBucket(contentsOf path: String) throws(FlowFileError) -> [String: FlowValue] {
        let text = try Self.readText(at: path)
        // Big JSON files, the usual form of a big bucket, are read without the YAML parser's node
        // tree; a file that way refuses goes to the YAML reader, which says what is wrong and where.
        if case .map(let bucket) = FlowJSONValue.read(text) { return bucket }
        let root = try Self.document(text, file: path, expecting: "a bucket file holds a map of values")
        var reader = FlowFileReader(file: path, registry: registry)
        guard let merged = reader.prepared(root, sourceBytes: text.utf8.count) else { throw FlowFileError(diagnostics: reader.sortedDiagnostics) }
        guard case .mapping(let mapping) = merged else {
            reader.report("a bucket file must be a map of values by key, found \(FlowFileReader.describe(merged))", at: merged)
            throw FlowFileError(diagnostics: reader.sortedDiagnostics)
        }
        let bucket = reader.readMap(mapping)
        guard let bucket, reader.diagnostics.isEmpty else { throw FlowFileError(diagnostics: reader.sortedDiagnostics) }
        return bucket
    }

    /// A value written as a YAML scalar, as `--set key=value` takes it.
    ///
    /// Typed by the YAML 1.2 core schema, as values in flow files are (`FlowCoreSchema`): `3`
    /// and `0123` are integers (3 and 123), `0x1F` and `0o17` too, `1.5` and `1.10` doubles, `true`
    /// a bool, `null` or `~` null; `yes`, `off`, `12:30` and `2024-05-01` are text, as is anything
    /// else (a `#` is kept, not read as a comment). `"3"` or `'3'` is the text `3`. A flow-style
    /// `[a, b]` or `{k: v}` is an array or map. Empty text, and text that is not a valid value, is
    /// taken as it is. `--set-string` takes text as it is, without this.
    ///
    /// - Parameter text: the value as typed.
    /// - Returns: the value.
    public static func value(fromScalar text: String) -> FlowValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let first = trimmed.first else { return .string(text) }
        let node: Yams.Node
        if "\"'[{!".contains(first) {
            // Quoted text, flow collections and tags need the parser.
            guard case .document(let parsed) = FlowFileSyntax.parse(trimmed, file: "") else { return .string(text) }
            node = parsed
        } else {
            // Plain text is resolved without the parser, so `a: b` and `x # y` stay text.
            node = .scalar(.init(trimmed, FlowCoreSchema.implicitTag, .plain))
        }
        var reader = FlowFileReader(file: "")
        guard let value = reader.prepared(node, sourceBytes: trimmed.utf8.count).flatMap({ reader.readValue($0) }), reader.diagnostics.isEmpty else {
            return .string(text)
        }
        return value
    }

    /// The document in `text`, or an error for bad syntax or an empty file.
    private static func document(_ text: String, file: String, expecting: String) throws(FlowFileError) -> Yams.Node {
        switch FlowFileSyntax.parse(text, file: file) {
        case .document(let node):
            return node
        case .empty:
            let location = FlowSourceLocation(file: file, line: 1, column: 1)
            throw FlowFileError(diagnostics: [.init(location: location, message: "the file is empty: \(expecting)")])
        case .invalid(let diagnostic):
            throw FlowFileError(diagnostics: [diagnostic])
        }
    }

    /// A file's text as UTF-8, or `PATH: cannot read: REASON`.
    public static func readText(at path: String) throws(FlowFileError) -> String {
        func cannotRead(_ reason: String) -> FlowFileError {
            FlowFileError(diagnostics: [.init(location: .init(file: path, line: 0, column: 0), message: "cannot read: \(reason)")])
        }
        // Foundation's own sentences differ by platform; these say the common cases plainly.
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw cannotRead("no such file or directory")
        }
        guard !isDirectory.boolValue else { throw cannotRead("it is a directory, not a file") }
        guard FileManager.default.isReadableFile(atPath: path) else { throw cannotRead("permission denied") }
        let data: Data
        do {
            if isPipe(path) {
                // A named pipe or a process substitution (`--bucket <(make-bucket)`), which
                // `Data(contentsOf:)` refuses: read it to its end.
                guard let handle = FileHandle(forReadingAtPath: path) else { throw cannotRead("cannot open it") }
                defer { try? handle.close() }
                data = try handle.readToEnd() ?? Data()
            } else {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        } catch let error as FlowFileError {
            throw error
        } catch {
            throw cannotRead(error.localizedDescription)
        }
        guard let text = String(data: data, encoding: .utf8) else { throw cannotRead("the file is not UTF-8 text") }
        return text
    }

    /// Whether `path` (symbolic links followed) is a pipe.
    private static func isPipe(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO
    }
}
