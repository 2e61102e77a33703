#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Flow
import Foundation

/// Lists a folder's regular files: a serial step that feeds a group (`ListFilesOp` then a group
/// of `UploadFileOp` over its output). Not meant for groups: it has no primary input or output.
///
/// Parameters:
/// - `path` (string, required): the folder; a relative path is taken from the current directory.
/// - `glob` (string, optional): keeps only names matching this `fnmatch(3)` pattern (`*`, `?`,
///   `[abc]`), for example `"*.jpg"`.
/// - `output` (string, optional, default `files`): the bucket key the list is put under.
///
/// Output: the sorted absolute paths of the folder's regular files (symbolic links to regular
/// files count; folders do not; the listing is not recursive). Hidden files (names starting with
/// `.`) are left out unless the glob itself starts with `.`. An empty folder gives an empty list.
/// A missing or unreadable folder fails the op with an error naming the folder.
public final class ListFilesOp: FlowOperation, @unchecked Sendable {
    /// The folder to list.
    public let path: String
    /// The `fnmatch(3)` pattern names must match, or `nil` for all.
    public let glob: String?
    /// The bucket key the paths are put under.
    public let outputKey: String

    /// Creates the op.
    ///
    /// - Parameters:
    ///   - path: the folder.
    ///   - glob: an `fnmatch(3)` pattern, or `nil` for every file.
    ///   - outputKey: the bucket key for the list.
    public init(path: String, glob: String? = nil, outputKey: String = "files") {
        self.path = path
        self.glob = glob
        self.outputKey = outputKey
    }

    /// Builds the op from `with:` parameters.
    ///
    /// - Throws: ``FlowParameterError`` when `path` is missing or a parameter is not a string.
    public convenience init(parameters: FlowParameters) throws {
        let output = try parameters.string("output", default: "files")
        guard !output.isEmpty else { throw parameters.error("output", "must not be empty") }
        self.init(path: try parameters.string("path"), glob: try parameters.optionalString("glob"), outputKey: output)
    }

    public override func mainLogic() {
        do {
            let files = try Self.regularFiles(in: path, glob: glob)
            log(message: "listed \(files.count) files in \(Self.absolute(path))" + (glob.map { " matching \($0)" } ?? ""))
            setData(name: outputKey, value: files)
            finishSuccessfully()
        } catch {
            log(message: String(describing: error))
            finishWithError(error: error)
        }
    }

    /// The sorted absolute paths of the regular files in `folder` whose names match `glob`.
    ///
    /// - Throws: ``FlowStandardOpError/Code/unreadableFolder`` naming the folder.
    static func regularFiles(in folder: String, glob: String?) throws -> [String] {
        let folderPath = absolute(folder)
        guard let directory = opendir(folderPath) else {
            throw FlowStandardOpError(.unreadableFolder, "cannot list folder \(folderPath): \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        let showsHidden = glob?.hasPrefix(".") ?? false
        var files: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 {
                    throw FlowStandardOpError(.unreadableFolder, "cannot list folder \(folderPath): \(String(cString: strerror(errno)))")
                }
                break
            }
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { String(cString: $0) }
            }
            if name.hasPrefix(".") && !showsHidden { continue }
            if let glob, fnmatch(glob, name, 0) != 0 { continue }
            let filePath = folderPath == "/" ? "/" + name : folderPath + "/" + name
            var status = stat()
            guard stat(filePath, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            files.append(filePath)
        }
        return files.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// `path` made absolute against the current directory, without `.`, `..` or a trailing `/`.
    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

extension ListFilesOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] {
        var parameters: [String: FlowValue] = ["path": .string(path), "output": .string(outputKey)]
        if let glob { parameters["glob"] = .string(glob) }
        return parameters
    }
}
