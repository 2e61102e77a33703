import Foundation
import Testing
@testable import Flow

/// A group's input file read a page at a time (issue 49, `input: {file:}`): each format's
/// elements, records across the reader's blocks, and errors that name the file and line.
struct FlowInputFileTests {
    /// A file with `text` in a folder of its own, removed when `body` returns.
    private func withFile<T>(_ name: String, _ bytes: [UInt8], _ body: (String) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flow-input-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try body(path)
    }

    private func withFile<T>(_ name: String, _ text: String, _ body: (String) throws -> T) throws -> T {
        try withFile(name, Array(text.utf8), body)
    }

    /// Every element of the file, in pages of `limit`.
    private func elements(_ path: String, _ format: FlowInputFile.Format, limit: Int = 1_000) throws -> (all: [FlowValue], pages: [Int]) {
        var file = try FlowInputFile(path: path, format: format)
        defer { file.close() }
        var all: [FlowValue] = []
        var pages: [Int] = []
        while true {
            let page = try file.nextPage(limit: limit)
            if page.isEmpty { break }
            pages.append(page.count)
            all += page
        }
        #expect(file.count == all.count)
        return (all, pages)
    }

    @Test func plainLinesSkipBlankOnesDropCarriageReturnsAndKeepALastLineWithoutABreak() throws {
        try withFile("files.txt", "a.jpg\r\n\n  \nb c.jpg\nlast.jpg") { (path: String) throws in
            #expect(FlowInputFile.Format.guess(path: path) == .lines)
            #expect(try elements(path, .lines).all == ["a.jpg", "b c.jpg", "last.jpg"])
        }
    }

    @Test func jsonLinesAreTypedAsTheFlowFilesJSONIsAndABadLineIsNamed() throws {
        try withFile("objects.ndjson", "{\"key\": \"a\", \"size\": 3}\n2.5\n\"text\"\n[1, null]\n") { (path: String) throws in
            #expect(FlowInputFile.Format.guess(path: path) == .jsonLines)
            #expect(try elements(path, .jsonLines).all == [.map(["key": "a", "size": 3]), .double(2.5), "text", .array([1, .null])])
        }
        try withFile("bad.jsonl", "{\"a\": 1}\n{\"a\": \n") { (path: String) throws in
            let error = #expect(throws: FlowInputFileError.self) { try elements(path, .jsonLines) }
            #expect(error?.line == 2)
            #expect(error?.description.hasPrefix("input file \(path), line 2: not JSON: {\"a\":") == true, "\(String(describing: error))")
        }
    }

    @Test func csvFieldsMayHoldCommasQuotesAndLineBreaksAndErrorsNameTheirLine() throws {
        let text = "path,note\r\na.jpg,\"one, two\"\n\"b\"\"c.jpg\",\"two\nlines\"\nd.jpg,\n"
        try withFile("list.csv", text) { (path: String) throws in
            #expect(FlowInputFile.Format.guess(path: path) == .csv(columns: nil))
            #expect(try elements(path, .csv(columns: nil)).all == [
                .map(["path": "a.jpg", "note": "one, two"]), .map(["path": "b\"c.jpg", "note": "two\nlines"]), .map(["path": "d.jpg", "note": ""]),
            ])
        }
        // Named columns and no header; the record after a two-line one is on line 4.
        try withFile("list.csv", "a,1\n\"b\nc\",2\nd,3,extra\n") { (path: String) throws in
            let error = #expect(throws: FlowInputFileError.self) { try elements(path, .csv(columns: ["path", "n"])) }
            #expect(error?.line == 4)
            #expect(error?.reason == "3 fields where the columns are 2 (path, n)")
        }
        try withFile("open.csv", "a,\"never closed\n") { (path: String) throws in
            let error = #expect(throws: FlowInputFileError.self) { try elements(path, .csv(columns: ["path", "note"])) }
            #expect(error?.reason == "a quote opened in field 2 is never closed")
        }
    }

    @Test func anS3InventoryListDecodesItsKeysAndTypesItsSizes() throws {
        let text = "\"photos\",\"2026%2Fa+b.jpg\",\"1024\",\"2026-11-02T10:00:00.000Z\",\"9b2cf535f27731c974343645a3985328\"\n"
            + "\"photos\",\"caf%C3%A9.txt\",\"0\",\"2026-11-03T10:00:00.000Z\",\"d41d8cd98f00b204e9800998ecf8427e\"\n"
        let schema = ["Bucket", " Key", " Size", " LastModifiedDate", " ETag"]
        try withFile("inventory.csv", text) { (path: String) throws in
            let all = try elements(path, .s3Inventory(columns: schema)).all
            #expect(all == [
                .map(["bucket": "photos", "key": "2026/a b.jpg", "size": 1024, "lastModified": "2026-11-02T10:00:00.000Z",
                      "etag": "9b2cf535f27731c974343645a3985328"]),
                .map(["bucket": "photos", "key": "café.txt", "size": 0, "lastModified": "2026-11-03T10:00:00.000Z",
                      "etag": "d41d8cd98f00b204e9800998ecf8427e"]),
            ])
        }
        try withFile("inventory.csv", "\"photos\",\"a.jpg\",\"big\"\n") { (path: String) throws in
            let error = #expect(throws: FlowInputFileError.self) { try elements(path, .s3Inventory(columns: ["Bucket", "Key", "Size"])) }
            #expect(error?.description == "input file \(path), line 1: the size \"big\" is not a whole number")
        }
        #expect(throws: FlowInputFileError.self) { try FlowInputFile(path: "/nonexistent", format: .s3Inventory(columns: ["Bucket", "Size"])) }
    }

    /// 100,000 records of both line and CSV formats, many of them across the reader's 256 KiB
    /// blocks (a quoted CSV field with a line break in it among them), come out whole, in
    /// order, in pages of at most the limit.
    @Test func recordsAcrossBlocksComeOutWholeInPagesOfTheLimit() throws {
        let count = 100_000
        let lines = (0..<count).map { "folder-\($0 % 97)/file-\($0).bin" }
        try withFile("many.txt", lines.joined(separator: "\n") + "\n") { (path: String) throws in
            let (all, pages) = try elements(path, .lines, limit: 1_000)
            #expect(all.count == count && pages.allSatisfy { $0 <= 1_000 } && pages.count == 100)
            #expect(all.first == .string(lines[0]) && all.last == .string(lines[count - 1]) && all[54_321] == .string(lines[54_321]))
        }
        let records = (0..<count).map { "\"folder-\($0)\nnext\",\"say \"\"\($0)\"\"\"" }
        try withFile("many.csv", records.joined(separator: "\r\n")) { (path: String) throws in
            let (all, pages) = try elements(path, .csv(columns: ["a", "b"]), limit: 777)
            #expect(all.count == count && pages.max() == 777)
            for index in [0, 1, 12_345, 99_999] {
                #expect(all[index] == .map(["a": .string("folder-\(index)\nnext"), "b": .string("say \"\(index)\"")]))
            }
        }
    }

    @Test func aRecordPastTheLimitIsRefusedNotHeld() throws {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: FlowInputFile.recordLimit + FlowInputFile.blockSize)
        try withFile("one.jsonl", [UInt8]("{\"a\":1}\n".utf8) + long + [10]) { (path: String) throws in
            let error = #expect(throws: FlowInputFileError.self) { try elements(path, .jsonLines) }
            #expect(error?.line == 2)
            #expect(error?.reason == "a record longer than 1 MiB: is this file JSON lines?")
        }
    }
}
