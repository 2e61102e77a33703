/// "Did you mean" for misspelt keys and op names, for the flow-file reader and the op registry
/// alike: in `Support/`, so that the registry does not reach into the reader's folder for it.
enum FlowNameSuggestion {
    /// The candidate closest to `word`, when it is close enough to be a likely typo.
    ///
    /// Case is ignored when measuring, so `maxconcurrent` suggests `maxConcurrent`. A candidate
    /// counts as close when at most a third of its letters (at least one, at most three) differ.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let lowered = Array(word.lowercased())
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != word {
            let distance = editDistance(lowered, Array(candidate.lowercased()))
            let allowed = max(1, min(3, candidate.count / 3))
            guard distance <= allowed else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// The Levenshtein distance: insertions, deletions and substitutions needed to turn `a` into `b`.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
