import FlowStandardOps
import Foundation

/// What `verify` prints: a line for each object that is missing, changed or could not be
/// checked, then `verified N objects: N ok (A by checksum, B by ETag, C by size only), M missing,
/// K changed` (and `, F not checked` when some could not be): what each object that is as
/// recorded was compared by, zero counts left out.
struct VerifyReport {
    let entries: [UploadManifestEntry]
    let results: [VerifyRun.Result]

    private func count(_ status: ObjectCheck.Status) -> Int {
        results.filter { if case .checked(let check) = $0 { return check.status == status } else { return false } }.count
    }

    private var failed: Int {
        results.filter { if case .failed = $0 { return true } else { return false } }.count
    }

    /// The objects found as recorded by each basis, in ``ObjectCheck/Basis`` order.
    private var okBy: [(basis: ObjectCheck.Basis, count: Int)] {
        let bases = results.compactMap { result -> ObjectCheck.Basis? in
            if case .checked(let check) = result, check.status == .ok { return check.basis }
            return nil
        }
        return ObjectCheck.Basis.allCases.map { basis in (basis, bases.filter { $0 == basis }.count) }
    }

    /// `(150 by checksum, 50 by size only)`, empty when no basis is known.
    private var okByText: String {
        let words: [ObjectCheck.Basis: String] = [.checksum: "by checksum", .etag: "by ETag", .size: "by size only"]
        let said = okBy.filter { $0.count > 0 }.map { "\($0.count) \(words[$0.basis] ?? $0.basis.rawValue)" }
        return said.isEmpty ? "" : " (\(said.joined(separator: ", ")))"
    }

    /// Whether every object is as recorded.
    var allMatch: Bool { count(.ok) == entries.count }

    /// The lines: `TARGET: missing`, `TARGET: size 10 ≠ 12`, `TARGET: not checked: WHY`, then the totals.
    var text: String {
        var lines: [String] = []
        for (entry, result) in zip(entries, results) {
            switch result {
            case .checked(let check) where check.status == .missing: lines.append("\(entry.target): missing")
            case .checked(let check) where check.status == .changed: lines.append("\(entry.target): \(check.detail)")
            case .checked: break
            case .failed(let why): lines.append("\(entry.target): not checked: \(why)")
            }
        }
        let notChecked = failed > 0 ? ", \(failed) not checked" : ""
        lines.append("verified \(entries.count) object\(entries.count == 1 ? "" : "s"): \(count(.ok)) ok\(okByText), \(count(.missing)) missing, "
                     + "\(count(.changed)) changed\(notChecked)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `--json`: the totals and every object that is not as recorded.
    func json(run: String) throws -> Data {
        struct Problem: Encodable {
            var target: String
            var status: String
            var detail: String
        }
        struct Report: Encodable {
            var run: String
            var objects: Int
            var ok: Int
            var missing: Int
            var changed: Int
            var notChecked: Int
            /// The objects as recorded by what they were compared by: `checksum`, `etag`, `size`.
            var okBy: [String: Int]
            var problems: [Problem]
        }
        var problems: [Problem] = []
        for (entry, result) in zip(entries, results) {
            switch result {
            case .checked(let check) where check.status != .ok:
                problems.append(Problem(target: entry.target, status: check.status.rawValue, detail: check.detail))
            case .checked: break
            case .failed(let why): problems.append(Problem(target: entry.target, status: "notChecked", detail: why))
            }
        }
        let report = Report(run: run, objects: entries.count, ok: count(.ok), missing: count(.missing), changed: count(.changed),
                            notChecked: failed,
                            okBy: Dictionary(uniqueKeysWithValues: okBy.map { ($0.basis.rawValue, $0.count) }), problems: problems)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }
}
