import Flow
import Foundation
import Testing

/// Inputs of a million elements and more: they load, and the guard against alias bombs does not
/// take them for one. (Kept out of the ThreadSanitizer pass, where they would take minutes, and
/// run one at a time: each keeps a core busy for seconds in a debug build, and the other core is
/// for the rest of the suite.)
@Suite("Million-value inputs", .serialized)
struct MillionValueBucketTests {
    @Test(arguments: ["json", "yaml"])
    func aBucketFileOfMoreThanAMillionPlainValuesLoads(format: String) throws {
        // Past the old guard, which refused any file of more than 1,000,000 values.
        let count = 1_000_100
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("million-\(UUID().uuidString).\(format)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var text = format == "json" ? "{\"files\": [" : "files:\n"
        text.reserveCapacity(count * 12)
        for index in 0..<count {
            if format == "json" {
                text += index == 0 ? "\(index)" : ",\(index)"
            } else {
                text += "- \(index)\n"
            }
        }
        if format == "json" { text += "]}" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)

        let bucket = try FlowFileLoader().loadBucket(contentsOf: path)

        guard case .array(let files)? = bucket["files"] else {
            Issue.record("files is not a list: \(String(describing: bucket["files"]).prefix(100))")
            return
        }
        #expect(files.count == count)
        #expect(files.last == .integer(Int64(count - 1)))
    }
}
