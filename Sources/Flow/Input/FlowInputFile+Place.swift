extension FlowInputFile {
    /// Where the next record begins: its byte (in the decompressed text of a gzipped file) and
    /// its line, with the file's size and modification time, so that a place is taken only in
    /// the file it was of.
    package struct Place: Equatable, Sendable {
        package var offset: Int64
        package var line: Int
        package var size: Int64
        package var modified: Int64

        /// As a checkpoint keeps it.
        package var value: FlowValue {
            .map(["offset": .integer(offset), "line": .integer(Int64(line)), "size": .integer(size), "modified": .integer(modified)])
        }

        /// The place a checkpoint holds, `nil` for a value that is none.
        package init?(_ value: FlowValue?) {
            guard case .map(let fields)? = value, case .integer(let offset)? = fields["offset"], case .integer(let line)? = fields["line"],
                  case .integer(let size)? = fields["size"], case .integer(let modified)? = fields["modified"], offset >= 0, line >= 1
            else { return nil }
            self.init(offset: offset, line: Int(line), size: size, modified: modified)
        }

        package init(offset: Int64, line: Int, size: Int64, modified: Int64) {
            self.offset = offset
            self.line = line
            self.size = size
            self.modified = modified
        }
    }
}
