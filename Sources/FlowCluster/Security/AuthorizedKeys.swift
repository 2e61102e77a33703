import Foundation

/// The workers a coordinator admits: one CURVE public key per line, in Z85 (40 characters),
/// optionally followed by a name; a line that starts with `#` is a comment (a key may hold `#`
/// itself), as is whatever follows ` #` after the key; blank lines are skipped.
///
/// ```
/// # workers of the render farm
/// rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7 render-1
/// Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID render-2
/// ```
public struct AuthorizedKeys: Sendable, Equatable {
    /// Names by key (an empty name when the line gives none).
    public var names: [String: String]

    /// Creates a list.
    public init(names: [String: String] = [:]) {
        self.names = names
    }

    /// Whether `key` may join.
    public func admits(_ key: String) -> Bool { names[key] != nil }

    /// Reads a file.
    ///
    /// - Throws: ``CurveKeyFileError`` with the line of a malformed key.
    public static func read(at path: String) throws(CurveKeyFileError) -> AuthorizedKeys {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CurveKeyFileError(path: path, "cannot read it: \(String(cString: strerror(errno)))")
        }
        var keys = AuthorizedKeys()
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") { continue }
            var fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if let comment = fields.dropFirst().firstIndex(where: { $0.hasPrefix("#") }) { fields = Array(fields[..<comment]) }
            guard let key = fields.first else { continue }
            guard CurveKey.isValid(key) else {
                throw CurveKeyFileError(path: path, line: offset + 1, "'\(key.prefix(60))' is not a public key (40 Z85 characters, as keygen prints)")
            }
            keys.names[key] = fields.dropFirst().joined(separator: " ")
        }
        return keys
    }
}
