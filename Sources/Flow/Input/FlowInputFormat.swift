import Foundation

/// How the records of a group's input file become elements (`input: {file: PATH, format: …}`).
public enum FlowInputFormat: Sendable, Hashable {
    /// Each line a string element (`format: lines`); blank lines are skipped.
    case lines
    /// Each line a JSON value (`format: jsonl`), typed as a flow file's JSON is.
    case jsonLines
    /// RFC 4180 CSV (`format: csv`), each record a map of column name to text; the names come from
    /// `columns`, or from the file's first record when `columns` is `nil`.
    case csv(columns: [String]?)
    /// An S3 Inventory CSV list, gzipped or not (`format: s3-inventory`), its columns named as the
    /// inventory's `manifest.json` `fileSchema` names them (`Bucket, Key, Size, …`); each record a
    /// map with those names in lower camel case (`bucket`, `key`, `size`, …), the key decoded.
    case s3Inventory(columns: [String])

    /// The format a file's name suggests: `.jsonl` and `.ndjson` JSON lines, `.csv` CSV with a
    /// header, anything else plain lines; a `.gz` after them is looked through (`items.csv.gz`
    /// is CSV, read decompressed).
    public static func guess(path: String) -> FlowInputFormat {
        var name = path as NSString
        if name.pathExtension.lowercased() == "gz" { name = name.deletingPathExtension as NSString }
        switch name.pathExtension.lowercased() {
        case "jsonl", "ndjson": return .jsonLines
        case "csv": return .csv(columns: nil)
        default: return .lines
        }
    }
}

/// A group's input read from a file, a page at a time, never whole (`input: {file: PATH}`).
///
/// The group starts on the file's first page and ends when the file's last element is done;
/// memory stays flat whatever the file's size. A record that cannot be read fails the group with
/// the file's name and line.
public struct FlowGroupInputFile: Sendable, Hashable {
    /// The file's path, as given (a relative path is taken from the coordinator's working
    /// directory).
    public var path: String
    /// How its records become elements.
    public var format: FlowInputFormat

    /// Creates an input file; `format` defaults to what the path's extension suggests
    /// (``FlowInputFormat/guess(path:)``).
    public init(path: String, format: FlowInputFormat? = nil) {
        self.path = path
        self.format = format ?? .guess(path: path)
    }
}
