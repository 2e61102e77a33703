import FlowStandardOps
import Foundation

/// What `verify` prints: a line for each object that is missing, changed or could not be
/// checked, then `verified N objects: N ok, M missing, K changed` (and `, F not checked` when
/// some could not be).
struct VerifyReport {
    let entries: [UploadManifestEntry]
    let results: [VerifyRun.Result]

    private func count(_ status: ObjectCheck.Status) -> Int {
        results.filter { if case .checked(let check) = $0 { return check.status == status } else { return false } }.count
    }

    private var failed: Int {
        results.filter { if case .failed = $0 { return true } else { return false } }.count
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
        lines.append("verified \(entries.count) object\(entries.count == 1 ? "" : "s"): \(count(.ok)) ok, \(count(.missing)) missing, "
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
                            notChecked: failed, problems: problems)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }
}
