extension String {
    /// The string with every control character written out, for a terminal or a log line:
    /// C0 controls, DEL, C1 controls (U+0080–U+009F) and the bidirectional embeddings, overrides
    /// and isolates (U+202A–U+202E, U+2066–U+2069) become `\n`, `\r`, `\t` or `\u{1B}`-style
    /// escapes; everything else is kept.
    ///
    /// Text a peer supplied (a worker's name, its host, an op name, a DISCONNECT reason, an op's
    /// error or log line from a worker) goes through this before it is printed: a newline in it
    /// could forge a line of the coordinator's own (`[cluster] worker … joined`), an escape
    /// sequence could rewrite the terminal, and a right-to-left override could make a name read
    /// as another (`evil\u{202E}txt.exe`). The result has no control character left, so applying
    /// it twice changes nothing (a backslash is kept as it is, which is why).
    package var escapingControlCharacters: String { escapingControls(keepingLineBreaks: false) }

    /// The string with every control character but line feed and tab written out, as
    /// ``escapingControlCharacters`` does: for a text that may span lines, such as a bucket value
    /// in the summary (a program's output a worker sent), where an escape sequence could still
    /// rewrite the terminal.
    package var escapingTerminalControls: String { escapingControls(keepingLineBreaks: true) }

    private func escapingControls(keepingLineBreaks: Bool) -> String {
        // Nearly every name is printable ASCII: returned as it is, without a copy.
        guard utf8.contains(where: { ($0 < 0x20 && !(keepingLineBreaks && ($0 == 0x0A || $0 == 0x09))) || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 })
        else { return self }
        var escaped = ""
        escaped.reserveCapacity(utf8.count + 8)
        for scalar in unicodeScalars {
            switch scalar.value {
            case 0x0A where keepingLineBreaks, 0x09 where keepingLineBreaks: escaped.unicodeScalars.append(scalar)
            case 0x0A: escaped += "\\n"
            case 0x0D: escaped += "\\r"
            case 0x09: escaped += "\\t"
            case 0x00..<0x20, 0x7F, 0x80..<0xA0, 0x202A...0x202E, 0x2066...0x2069:
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
