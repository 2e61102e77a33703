/// RFC 4180 records read from bytes as they come (``FlowInputFile``'s `csv` and `s3-inventory`):
/// fields separated by commas, a record ended by a line break (`\n` or `\r\n`); a field in double
/// quotes may hold commas, line breaks and quotes doubled (`""`).
enum FlowCSV {
    /// The record that begins at `start`: its fields, the index just past it, and the lines it
    /// spans; `nil` when the bytes end before the record does and more may come (`final` false).
    ///
    /// - Parameter final: no more bytes come: what is left is the last record.
    /// - Throws: ``FlowInputFileError`` for a quote that is never closed in the last record, or
    ///   text after a closing quote.
    static func record(in bytes: [UInt8], from start: Int, final: Bool, path: String, line: Int) throws
        -> (fields: [String], end: Int, lines: Int)? {
        guard start < bytes.count else { return nil }
        var fields: [String] = []
        var field: [UInt8] = []
        var index = start
        var quoted = false
        var afterQuote = false
        var lines = 0
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), newline = UInt8(ascii: "\n"), ret = UInt8(ascii: "\r")
        while index < bytes.count {
            let byte = bytes[index]
            if quoted {
                if byte == quote {
                    if index + 1 < bytes.count, bytes[index + 1] == quote {
                        field.append(quote)
                        index += 2
                        continue
                    }
                    // A quote that may be the closing one or the first of a pair the next block
                    // completes: wait for it, unless nothing more comes.
                    if index + 1 == bytes.count, !final { return nil }
                    quoted = false
                    afterQuote = true
                } else {
                    if byte == newline { lines += 1 }
                    field.append(byte)
                }
                index += 1
                continue
            }
            switch byte {
            case comma:
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                afterQuote = false
            case newline:
                if field.last == ret, !afterQuote { field.removeLast() }
                fields.append(String(decoding: field, as: UTF8.self))
                return (fields, index + 1, lines + 1)
            case quote where field.isEmpty && !afterQuote:
                quoted = true
            case ret where afterQuote:
                break
            default:
                guard !afterQuote else {
                    throw FlowInputFileError(path: path, line: line + lines, "text after a closing quote in field \(fields.count + 1)")
                }
                field.append(byte)
            }
            index += 1
        }
        guard final else { return nil }
        guard !quoted else {
            throw FlowInputFileError(path: path, line: line, "a quote opened in field \(fields.count + 1) is never closed")
        }
        if field.last == ret, !afterQuote { field.removeLast() }
        fields.append(String(decoding: field, as: UTF8.self))
        return (fields, bytes.count, lines + 1)
    }
}
