import FlowStandardOps
import Foundation

/// What `verify` prints: a line for each object that is missing, changed or could not be
/// checked, then `verified N objects: N ok (A by checksum, B by ETag, C by size only), M missing,
/// K changed` (and `, F not checked` when some could not be): what each object that is as
/// recorded was compared by, zero counts left out.
///
/// Made as the checks are read (``add(_:at:)``, ``notChecked(_:at:why:)``): it counts the objects
/// found as recorded and keeps only the others.
struct VerifyReport {
    /// An object that is not as recorded, or could not be checked.
    struct Problem {
        /// Its place in the objects, for the order of the lines.
        var index: Int
        var target: String
        /// `missing`, `changed`, or `notChecked`.
        var status: String
        var detail: String
    }

    /// How many objects there are.
    let objects: Int
    private var okBy: [ObjectCheck.Basis?: Int] = [:]
    private var problems: [Problem] = []

    init(objects: Int) {
        self.objects = objects
    }

    /// Takes the check of the object at `index`.
    mutating func add(_ check: ObjectCheck, at index: Int) {
        if check.status == .ok {
            okBy[check.basis, default: 0] += 1
        } else {
            problems.append(Problem(index: index, target: check.target, status: check.status.rawValue, detail: check.detail))
        }
    }

    /// The object at `index` could not be checked, for `why`.
    mutating func notChecked(_ target: String, at index: Int, why: String) {
        problems.append(Problem(index: index, target: target, status: "notChecked", detail: why))
    }

    private var ok: Int { okBy.values.reduce(0, +) }

    private func count(_ status: String) -> Int {
        problems.filter { $0.status == status }.count
    }

    /// The problems in the objects' order.
    private var sortedProblems: [Problem] {
        problems.sorted { $0.index < $1.index }
    }

    /// `(150 by checksum, 50 by size only)`, empty when no basis is known.
    private var okByText: String {
        let words: [ObjectCheck.Basis: String] = [.checksum: "by checksum", .etag: "by ETag", .size: "by size only"]
        let said = ObjectCheck.Basis.allCases.compactMap { basis -> String? in
            guard let count = okBy[basis], count > 0 else { return nil }
            return "\(count) \(words[basis] ?? basis.rawValue)"
        }
        return said.isEmpty ? "" : " (\(said.joined(separator: ", ")))"
    }

    /// Whether every object is as recorded.
    var allMatch: Bool { ok == objects }

    /// The lines: `TARGET: missing`, `TARGET: size 10 ≠ 12`, `TARGET: not checked: WHY`, then the totals.
    var text: String {
        var lines: [String] = []
        for problem in sortedProblems {
            switch problem.status {
            case ObjectCheck.Status.missing.rawValue: lines.append("\(problem.target): missing")
            case ObjectCheck.Status.changed.rawValue: lines.append("\(problem.target): \(problem.detail)")
            default: lines.append("\(problem.target): not checked: \(problem.detail)")
            }
        }
        let failed = count("notChecked")
        let notChecked = failed > 0 ? ", \(failed) not checked" : ""
        lines.append("verified \(objects) object\(objects == 1 ? "" : "s"): \(ok) ok\(okByText), \(count(ObjectCheck.Status.missing.rawValue)) missing, "
                     + "\(count(ObjectCheck.Status.changed.rawValue)) changed\(notChecked)")
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
        let report = Report(run: run, objects: objects, ok: ok, missing: count(ObjectCheck.Status.missing.rawValue),
                            changed: count(ObjectCheck.Status.changed.rawValue), notChecked: count("notChecked"),
                            okBy: Dictionary(uniqueKeysWithValues: ObjectCheck.Basis.allCases.map { ($0.rawValue, okBy[$0] ?? 0) }),
                            problems: sortedProblems.map { Problem(target: $0.target, status: $0.status, detail: $0.detail) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }
}
