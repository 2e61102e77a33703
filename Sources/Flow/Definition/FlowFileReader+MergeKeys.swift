import Yams

extension FlowFileReader {
    /// The most nodes a document may expand to beyond what its own text writes out. Aliases let a
    /// short file expand exponentially ("billion laughs"); past this the file is refused rather
    /// than walked.
    static let nodeLimit = 1_000_000

    /// The document ready to read: merge keys applied, or `nil` (with a diagnostic) when aliases
    /// expand it too far.
    ///
    /// Every value a file writes out takes at least one byte of it, so a document with more nodes
    /// than its text has bytes owes the rest to aliases; it is refused when that count passes
    /// ``nodeLimit``. A file of millions of plain values loads.
    ///
    /// - Parameters:
    ///   - root: the composed document.
    ///   - sourceBytes: the length of the text it was composed from, in UTF-8 bytes.
    mutating func prepared(_ root: Yams.Node, sourceBytes: Int) -> Yams.Node? {
        nodeBudget = Self.nodeLimit + sourceBytes
        let merged = applyingMergeKeys(root)
        guard visitedNodes <= nodeBudget else {
            report("the file expands to more than \(Self.nodeLimit) values beyond what it writes out, through aliases ('*name'): "
                   + "write it out smaller", at: root)
            return nil
        }
        return merged
    }

    /// The tree with YAML merge keys (`<<: *defaults`) applied, as Yams' composer leaves them in place.
    ///
    /// A merged entry takes the place of its `<<` key, so branch order stays file order; keys
    /// written in the map itself win over merged ones, and earlier merged maps over later ones.
    private mutating func applyingMergeKeys(_ node: Yams.Node) -> Yams.Node {
        visitedNodes += 1
        guard visitedNodes <= nodeBudget else { return node }
        switch node {
        case .scalar, .alias:
            return node
        case .sequence(let sequence):
            let nodes = sequence.map { applyingMergeKeys($0) }
            return .sequence(.init(nodes, sequence.tag, sequence.style, sequence.mark, sequence.anchor))
        case .mapping(let mapping):
            let pairs = mapping.map { (key: $0.key, value: applyingMergeKeys($0.value)) }
            guard pairs.contains(where: { Self.isMergeKey($0.key) }) else {
                return .mapping(.init(pairs.map { ($0.key, $0.value) }, mapping.tag, mapping.style, mapping.mark, mapping.anchor))
            }
            var seen = Set(pairs.filter { !Self.isMergeKey($0.key) }.map(\.key))
            var merged: [(Yams.Node, Yams.Node)] = []
            for pair in pairs {
                guard Self.isMergeKey(pair.key) else {
                    merged.append((pair.key, pair.value))
                    continue
                }
                for source in mergeSources(pair.value) {
                    for (key, value) in source where !seen.contains(key) {
                        seen.insert(key)
                        merged.append((key, value))
                    }
                }
            }
            return .mapping(.init(merged, mapping.tag, mapping.style, mapping.mark, mapping.anchor))
        }
    }

    private static func isMergeKey(_ node: Yams.Node) -> Bool {
        guard case .scalar = node else { return false }
        return tagName(of: node) == .merge
    }

    /// The maps a `<<` value merges: one map, or a list of maps.
    private mutating func mergeSources(_ value: Yams.Node) -> [Yams.Node.Mapping] {
        switch value {
        case .mapping(let mapping):
            return [mapping]
        case .sequence(let sequence):
            var sources: [Yams.Node.Mapping] = []
            for element in sequence {
                if case .mapping(let mapping) = element {
                    sources.append(mapping)
                } else {
                    report("'<<' merges maps, found \(Self.describe(element)) in its list", at: element)
                }
            }
            return sources
        default:
            report("'<<' merges a map or a list of maps, found \(Self.describe(value))", at: value)
            return []
        }
    }
}
