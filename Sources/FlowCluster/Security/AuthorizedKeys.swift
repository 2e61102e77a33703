import Foundation

/// The workers a coordinator admits: one CURVE public key per line, in Z85 (40 characters),
/// optionally followed by a name; a line that starts with `#` is a comment (a key may hold `#`
/// itself), as is whatever follows ` #` after the key; blank lines are skipped. A field
/// `share=N` after the key (N from 1 to ``maximumShare``) gives a pool client's key the largest
/// share its runs are granted (docs/PROTOCOL.md §14.5), in place of the pool's `--max-share`;
/// the other fields are the name.
///
/// ```
/// # workers of the render farm
/// rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7 render-1
/// Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID render-2
/// # a pool's clients: the nightly batch may weigh up to 8
/// Q8:^Nv0a!dLTeT3ivlN-!JOKV1F1gc6?1$p6{%0. nightly share=8
/// ```
public struct AuthorizedKeys: Sendable, Equatable {
    /// The largest `share=N` a line may give.
    public static let maximumShare: UInt32 = 10_000

    /// Names by key (an empty name when the line gives none).
    public var names: [String: String]
    /// The share a line gave its key (`share=N`); a key without one is not in it.
    public var shares: [String: UInt32]

    /// Creates a list.
    public init(names: [String: String] = [:], shares: [String: UInt32] = [:]) {
        self.names = names
        self.shares = shares
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
            var nameFields: [String] = []
            for field in fields.dropFirst() {
                guard field.hasPrefix("share=") else {
                    nameFields.append(field)
                    continue
                }
                guard let share = UInt32(field.dropFirst("share=".count)), (1...maximumShare).contains(share) else {
                    throw CurveKeyFileError(path: path, line: offset + 1,
                                            "'\(field.prefix(60))' is not a share: write share=N with N from 1 to \(maximumShare)")
                }
                keys.shares[key] = share
            }
            keys.names[key] = nameFields.joined(separator: " ")
        }
        return keys
    }
}
