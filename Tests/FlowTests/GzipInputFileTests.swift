import Foundation
import Testing
@testable import Flow

/// A group's input file may be gzipped (an S3 Inventory list comes as `.csv.gz`): it is read
/// decompressed a block at a time, found by its first bytes whatever its name, members after
/// members; one cut short or damaged is an error naming the file.
@Suite struct GzipInputFileTests {
    /// A new folder with `text` gzipped by the system's `gzip` into `name`.
    static func gzipped(_ text: String, named name: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flow-gzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let plain = folder.appendingPathComponent("plain").path
        try text.write(toFile: plain, atomically: true, encoding: .utf8)
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "gzip -c \"$1\" > \"$2\"", "sh", plain, folder.appendingPathComponent(name).path]
        try gzip.run()
        gzip.waitUntilExit()
        #expect(gzip.terminationStatus == 0)
        return folder.appendingPathComponent(name).path
    }

    /// Every element of the file, page after page.
    static func readAll(_ path: String, format: FlowInputFormat) throws -> [FlowValue] {
        var file = try FlowInputFile(path: path, format: format)
        defer { file.close() }
        var all: [FlowValue] = []
        while true {
            let page = try file.nextPage(limit: 1_000)
            if page.isEmpty { return all }
            all += page
        }
    }

    @Test func aGzippedFileOfManyBlocksIsReadWholeInOrderWhateverItsName() throws {
        // About 1 MB of text: several of the reader's blocks, decompressed and compressed.
        let lines = (0..<60_000).map { "line \($0) of a gzipped input" }
        let path = try Self.gzipped(lines.joined(separator: "\n") + "\n", named: "items.txt.gz")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        #expect(try Self.readAll(path, format: .guess(path: path)) == lines.map(FlowValue.string))
        // Found by its bytes, not its name.
        let renamed = (path as NSString).deletingLastPathComponent + "/items"
        try FileManager.default.copyItem(atPath: path, toPath: renamed)
        #expect(try Self.readAll(renamed, format: .lines).count == lines.count)
    }

    @Test func membersOneAfterAnotherAreAllRead() throws {
        let first = try Self.gzipped("a\nb\n", named: "one.gz")
        let second = try Self.gzipped("c\nd\n", named: "two.gz")
        defer {
            for path in [first, second] { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        }
        let both = (first as NSString).deletingLastPathComponent + "/both.gz"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: first))
        bytes.append(try Data(contentsOf: URL(fileURLWithPath: second)))
        try bytes.write(to: URL(fileURLWithPath: both))
        #expect(try Self.readAll(both, format: .lines) == ["a", "b", "c", "d"])
    }

    @Test func anInventoryListAsS3WritesItIsReadDecompressed() throws {
        let path = try Self.gzipped("\"photos\",\"2026/a+b.jpg\",\"12\"\n\"photos\",\"2026/%C3%A9t%C3%A9.jpg\",\"7\"\n", named: "inventory.csv.gz")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let elements = try Self.readAll(path, format: .s3Inventory(columns: ["Bucket", "Key", "Size"]))
        #expect(elements == [.map(["bucket": "photos", "key": "2026/a b.jpg", "size": 12]),
                             .map(["bucket": "photos", "key": "2026/été.jpg", "size": 7])])
        #expect(FlowInputFormat.guess(path: path) == .csv(columns: nil))
    }

    @Test func aGzipCutShortOrDamagedIsAnErrorNamingTheFile() throws {
        let path = try Self.gzipped((0..<20_000).map { "row \($0)" }.joined(separator: "\n"), named: "cut.gz")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try Self.readAll(path, format: .lines)
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("cut short")
        }
        var damaged = whole
        for index in 40..<80 { damaged[index] ^= 0x5A }
        try damaged.write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try Self.readAll(path, format: .lines)
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("damaged")
        }
    }
}
