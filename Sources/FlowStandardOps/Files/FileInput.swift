import Flow
import Foundation

/// A file as a group element gives it to a file op: a path on this machine, or a file the
/// coordinator has already read (`{"name", "path", "bytes"}`, see ``UploadFileSource``).
enum FileInput {
    /// A file to read from disk here.
    case path(String, name: String)
    /// A file whose content arrived with the task.
    case bytes(Data, name: String, path: String?)

    /// The file's name, used for the uploaded object's URL.
    var name: String {
        switch self {
        case .path(_, let name), .bytes(_, let name, _): return name
        }
    }

    /// Where the file came from, for messages.
    var origin: String {
        switch self {
        case .path(let path, _): return path
        case .bytes(_, let name, let path): return path ?? name
        }
    }

    /// Reads the bucket value at `key`: a path string, a file URL, or the coordinator's map.
    ///
    /// - Throws: ``FlowDataError/mismatchInputDataType(_:)`` for any other value.
    init(bucketValue: Any, key: String) throws {
        let value = (bucketValue as? FlowValue)?.anyValue ?? bucketValue
        switch value {
        case let path as String:
            self = .path(path, name: Self.lastComponent(of: path))
        case let url as URL where url.isFileURL:
            self = .path(url.path, name: url.lastPathComponent)
        case let map as [String: Any]:
            let path = map["path"] as? String
            let name = (map["name"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? path.map(Self.lastComponent)
            if let bytes = map["bytes"] as? Data, let name {
                self = .bytes(bytes, name: name, path: path)
            } else if let path, let name {
                self = .path(path, name: name)
            } else {
                throw Self.mismatch(key: key, value: value)
            }
        default:
            throw Self.mismatch(key: key, value: value)
        }
    }

    /// The same file under `folder/` (``UploadFileOp``'s `hostFolder`).
    func inFolder(_ folder: String) -> FileInput {
        switch self {
        case .path(let path, let name): return .path(path, name: "\(folder)/\(name)")
        case .bytes(let bytes, let name, let path): return .bytes(bytes, name: "\(folder)/\(name)", path: path)
        }
    }

    static func lastComponent(of path: String) -> String {
        let trimmed = path.hasSuffix("/") ? String(path.reversed().drop { $0 == "/" }.reversed()) : path
        return trimmed.split(separator: "/").last.map(String.init) ?? trimmed
    }

    private static func mismatch(key: String, value: Any) -> FlowDataError {
        .mismatchInputDataType(
            "<\(key)> in data bucket is <\(value)> with type <\(type(of: value))>, but NOT a file path (String) "
                + "or a map with \"name\" and \"path\" or \"bytes\"")
    }
}
