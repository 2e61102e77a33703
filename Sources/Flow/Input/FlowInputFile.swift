import Foundation

/// A group's input read from a file a page at a time, never whole (issue 49, `input: {file:}`):
/// JSON lines, plain lines, CSV, or an S3 Inventory list.
///
/// The file is read in blocks of ``blockSize``; a page holds at most the elements asked for, and
/// one record may be at most ``recordLimit`` long, so memory stays flat whatever the file's size.
/// A record that cannot be read is an error naming the file and its line, never a crash. A
/// gzip file (by its first bytes, whatever its name) is read decompressed as it goes
/// (``FlowGzipReader``): an S3 Inventory list comes as `.csv.gz`.
///
/// - `lines`: each line a string element; blank lines are skipped, a `\r` before the `\n` is
///   dropped.
/// - `jsonl` (`.jsonl`, `.ndjson`): each line a JSON value, typed as the flow file's JSON is
///   (a number with a fraction or an exponent a double, one without an integer).
/// - `csv` (`.csv`): RFC 4180 records (quoted fields may hold commas, quotes doubled and line
///   breaks), each a map of column name to text; the names come from the first record
///   (`header: true`, the default without `columns`) or from `columns`.
/// - `s3-inventory`: an S3 Inventory CSV list (gzipped, as S3 writes it, or not), its columns named by `columns` as
///   the inventory's `manifest.json` `fileSchema` names them (`Bucket, Key, Size, LastModifiedDate,
///   ETag`, …): each record a map with those names in lower camel case (`bucket`, `key`, `size`,
///   `lastModified`, `etag`), the URL-encoded key decoded, the size an integer.
package struct FlowInputFile {
    /// How the file's records become elements.
    package typealias Format = FlowInputFormat

    /// Bytes read from the file at a time.
    package static let blockSize = 256 << 10
    /// The longest record taken: a longer one is an error (a file that is not what its format
    /// says, a missing line break), not a reason to hold the whole file.
    package static let recordLimit = 1 << 20

    package let path: String
    package let format: Format
    private let descriptor: Int32
    /// Set for a gzip file: its bytes come through it.
    private let gzip: FlowGzipReader?
    private var buffer: [UInt8] = []
    /// Where the unread bytes of ``buffer`` begin.
    private var start = 0
    /// Bytes of the file (decompressed) before ``buffer``'s first.
    private var dropped: Int64 = 0
    /// The file's size and modification time when it was opened, in nanoseconds.
    private let identity: (size: Int64, modified: Int64)
    private var atEnd = false
    private var columns: [String]?
    /// The line the next record begins on (1-based).
    package private(set) var line = 1
    /// Elements handed out so far.
    package private(set) var count = 0

    /// Opens `path` to read as `format`.
    ///
    /// - Throws: ``FlowInputFileError`` when the file cannot be opened, or its format's options
    ///   are wrong (an `s3-inventory` list without a `Key` column).
    package init(path: String, format: Format) throws {
        self.path = path
        self.format = format
        switch format {
        case .csv(let columns): self.columns = columns
        case .s3Inventory(let schema):
            let names = schema.map(Self.inventoryName)
            guard names.contains("key") else {
                throw FlowInputFileError(path: path, line: nil, "an s3-inventory list needs a Key column in its columns "
                                         + "(the manifest.json fileSchema, e.g. \"Bucket, Key, Size\"), got \(schema)")
            }
            columns = names
        case .lines, .jsonLines: columns = nil
        }
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FlowInputFileError(path: path, line: nil, "cannot open it: \(String(cString: strerror(errno)))")
        }
        var status = stat()
        identity = fstat(descriptor, &status) == 0
            ? (Int64(status.st_size), Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)) : (-1, -1)
        do {
            gzip = FlowGzipReader.isGzip(descriptor: descriptor) ? try FlowGzipReader(descriptor: descriptor) : nil
        } catch {
            _ = Foundation.close(descriptor)
            throw FlowInputFileError(path: path, line: nil, error.reason)
        }
    }

    /// Closes the file.
    package func close() {
        _ = Foundation.close(descriptor)
    }

    /// Up to `limit` more elements, in the file's order; an empty page at the end of the file.
    ///
    /// - Throws: ``FlowInputFileError`` naming the file and line of a record that cannot be read,
    ///   or a read that failed.
    package mutating func nextPage(limit: Int = 1_000) throws -> [FlowValue] {
        var page: [FlowValue] = []
        page.reserveCapacity(min(limit, 1_000))
        while page.count < limit, let record = try nextRecord() {
            if let element = try element(record.fields, text: record.text, line: record.line) {
                page.append(element)
            }
        }
        count += page.count
        return page
    }

    // MARK: Places

    /// Where the next record begins.
    package var place: Place {
        Place(offset: dropped + Int64(start), line: line, size: identity.size, modified: identity.modified)
    }

    /// Goes on reading at `place` (where an earlier life of a run had got to), after reading a
    /// CSV header first when the file has one; `false`, reading nothing, when `place` is of
    /// another file or another version of this one (its size or modification time differs):
    /// the file is then read from its start.
    ///
    /// - Throws: ``FlowInputFileError`` when the file cannot be read up to `place`.
    package mutating func skip(to place: Place) throws -> Bool {
        guard place.size == identity.size, place.modified == identity.modified, place.size >= 0, place.offset <= place.size || gzip != nil
        else { return false }
        if case .csv(columns: nil) = format {
            // The header, for the names of the columns.
            while columns == nil, let record = try nextRecord() { _ = try element(record.fields, text: record.text, line: record.line) }
            // A place before the header's end is the file's start: read on after the header, as
            // from the start (gone back to, the header would be read again as a row).
            if place.offset <= self.place.offset { return true }
        }
        if gzip == nil {
            guard lseek(descriptor, off_t(place.offset), SEEK_SET) == off_t(place.offset) else {
                throw FlowInputFileError(path: path, line: nil, "cannot go to byte \(place.offset): \(String(cString: strerror(errno)))")
            }
            buffer = []
            start = 0
            dropped = place.offset
            atEnd = false
        } else {
            // A gzip stream cannot be sought in: read and let go up to the place.
            while self.place.offset < place.offset {
                let wanted = Int(min(Int64(buffer.count - start), place.offset - self.place.offset))
                start += wanted
                if self.place.offset < place.offset {
                    if atEnd { throw FlowInputFileError(path: path, line: nil, "it ends before byte \(place.offset)") }
                    try fill()
                }
            }
        }
        line = place.line
        return true
    }

    // MARK: Records

    /// One record: for line formats its text, for CSV its fields.
    private struct Record {
        var text: String?
        var fields: [String]?
        var line: Int
    }

    private mutating func nextRecord() throws -> Record? {
        while true {
            let first = line
            switch format {
            case .lines, .jsonLines:
                let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) ?? (atEnd && start < buffer.count ? buffer.count : nil)
                if let end {
                    var stop = end
                    if stop > start, buffer[stop - 1] == UInt8(ascii: "\r") { stop -= 1 }
                    let text = String(decoding: buffer[start..<stop], as: UTF8.self)
                    start = min(buffer.count, end + 1)
                    line += 1
                    return Record(text: text, fields: nil, line: first)
                }
            case .csv, .s3Inventory:
                if let (fields, end, lines) = try FlowCSV.record(in: buffer, from: start, final: atEnd, path: path, line: line) {
                    start = end
                    line += lines
                    return Record(text: nil, fields: fields, line: first)
                }
            }
            if atEnd { return nil }
            try fill()
        }
    }

    /// Reads the next block, keeping the unread bytes.
    private mutating func fill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            dropped += Int64(start)
            start = 0
        }
        guard buffer.count <= Self.recordLimit else {
            throw FlowInputFileError(path: path, line: line, "a record longer than \(Self.recordLimit >> 20) MiB: is this file \(formatName)?")
        }
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: Self.blockSize))
        let got: Int
        if let gzip {
            do {
                got = try buffer.withUnsafeMutableBytes { bytes in
                    try gzip.read(into: bytes.baseAddress! + old, count: Self.blockSize)
                }
            } catch {
                buffer.removeSubrange(old...)
                throw FlowInputFileError(path: path, line: line, (error as? FlowGzipError)?.reason ?? String(describing: error))
            }
        } else {
            got = buffer.withUnsafeMutableBytes { bytes in
                read(descriptor, bytes.baseAddress! + old, Self.blockSize)
            }
        }
        guard got >= 0 else {
            buffer.removeSubrange(old...)
            throw FlowInputFileError(path: path, line: line, "cannot read it: \(String(cString: strerror(errno)))")
        }
        buffer.removeSubrange((old + got)...)
        if got == 0 { atEnd = true }
    }

    private var formatName: String {
        switch format {
        case .lines: return "plain lines"
        case .jsonLines: return "JSON lines"
        case .csv: return "CSV"
        case .s3Inventory: return "an S3 Inventory CSV list"
        }
    }

    // MARK: Elements

    /// The element of a record, `nil` for one that stands for nothing (a blank line, a CSV header).
    private mutating func element(_ fields: [String]?, text: String?, line: Int) throws -> FlowValue? {
        switch format {
        case .lines:
            guard let text, !text.allSatisfy({ $0 == " " || $0 == "\t" }) else { return nil }
            return .string(text)
        case .jsonLines:
            guard let text, !text.allSatisfy({ $0 == " " || $0 == "\t" }) else { return nil }
            return try json(Data(text.utf8), line: line)
        case .csv, .s3Inventory:
            guard let fields else { return nil }
            guard let columns else {
                // The header: the names of the columns.
                columns = fields
                return nil
            }
            if fields == [""] { return nil }
            guard fields.count == columns.count else {
                throw FlowInputFileError(path: path, line: line, "\(fields.count) fields where the columns are \(columns.count) "
                                         + "(\(columns.joined(separator: ", ")))")
            }
            if case .s3Inventory = format { return try inventoryElement(fields, columns: columns, line: line) }
            return .map(Dictionary(zip(columns, fields.map(FlowValue.string)), uniquingKeysWith: { _, last in last }))
        }
    }

    private func json(_ data: Data, line: Int) throws -> FlowValue {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw FlowInputFileError(path: path, line: line, "not JSON: \(String(decoding: data.prefix(80), as: UTF8.self))")
        }
        guard let value = FlowJSONValue.value(object) else {
            throw FlowInputFileError(path: path, line: line, "a JSON value Flow cannot hold (an integer past 64 bits?)")
        }
        return value
    }
}
