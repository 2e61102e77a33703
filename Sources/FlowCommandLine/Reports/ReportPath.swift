import Foundation

/// Checks a path a report will be written to at the end of a run (`--json`, `--timeline`), so a
/// typo stops the program before anything runs instead of losing the report after it.
enum ReportPath {
    /// What is wrong with writing a file at `path`, or `nil` when it can be written.
    static func problem(_ path: String) -> String? {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return "it is a folder; give a file name"
        }
        let folder = url.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            return "there is no folder \(folder)"
        }
        guard access(folder, W_OK) == 0 else { return "the folder \(folder) cannot be written" }
        return nil
    }
}
