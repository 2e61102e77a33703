import Yams

extension FlowFileReader {
    /// The most nodes a document may expand to beyond what its own text writes out. Aliases let a
    /// short file expand exponentially ("billion laughs"); past this the file is refused rather
    /// than walked.
    static let nodeLimit = 1_000_000

    /// The most bytes of text (keys and values, in UTF-8) a document may expand to beyond what its
    /// own text writes out: 64 MiB. A few aliases of a long value reach gigabytes with few nodes
    /// (a 100 KB text aliased 111,110 times is 11 GB from a 1.1 MB file), shared while read but
    /// copied out in full once a run writes or sends its values (it passed 3 GB in 7 s).
    static let expansionByteLimit = 64 << 20

    /// The document ready to read: merge keys applied, or `nil` (with a diagnostic) when aliases
    /// expand it too far.
    ///
    /// Every value a file writes out takes at least one byte of it, and every byte of text at
    /// least one byte, so a document with more nodes, or more bytes of text, than its text has
    /// bytes owes the rest to aliases; it is refused when that count passes ``nodeLimit`` nodes
    /// or ``expansionByteLimit`` bytes. Both are counted in one walk that stops at the limit,
    /// before anything is read: the aliased values are shared, not copied, until then. A file of
    /// millions of plain values loads.
    ///
    /// - Parameters:
    ///   - root: the composed document.
    ///   - sourceBytes: the length of the text it was composed from, in UTF-8 bytes.
    mutating func prepared(_ root: Yams.Node, sourceBytes: Int) -> Yams.Node? {
        nodeBudget = Self.nodeLimit + sourceBytes
        byteBudget = Self.expansionByteLimit + sourceBytes
        let merged = applyingMergeKeys(root)
        guard !isOverBudget else {
            let limit = visitedNodes > nodeBudget ? "\(Self.nodeLimit) values" : "\(Self.expansionByteLimit >> 20) MiB of text"
            // Yams keeps no anchor names once composed, and an alias is its anchored node, mark and
            // all: the value the walk was on when the budget ran out is where a repeated value is written.
            report("the file expands to more than \(limit) beyond what it writes out, through aliases ('*name') of values "
                   + "such as this one: alias them fewer times, or write the file out smaller", at: overBudgetNode ?? root)
            return nil
        }
        return merged
    }

    /// Whether the walk passed either budget.
    private var isOverBudget: Bool { visitedNodes > nodeBudget || visitedBytes > byteBudget }

    /// Counts a node and its text against the budgets; `false`, noting the node, once they are passed.
    private mutating func count(_ node: Yams.Node) -> Bool {
        visitedNodes += 1
        if case .scalar(let scalar) = node { visitedBytes += scalar.string.utf8.count }
        guard isOverBudget else { return true }
        if overBudgetNode == nil { overBudgetNode = node }
        return false
    }

    /// Counts a key (keys are not rewritten, but aliases repeat them too) against the budgets.
    private mutating func countKey(_ node: Yams.Node) {
        guard count(node) else { return }
        switch node {
        case .scalar, .alias:
            break
        case .sequence(let sequence):
            for element in sequence where !isOverBudget { countKey(element) }
        case .mapping(let mapping):
            for (key, value) in mapping where !isOverBudget {
                countKey(key)
                countKey(value)
            }
        }
    }

    /// The tree with YAML merge keys (`<<: *defaults`) applied, as Yams' composer leaves them in place.
    ///
    /// A merged entry takes the place of its `<<` key, so branch order stays file order; keys
    /// written in the map itself win over merged ones, and earlier merged maps over later ones.
    private mutating func applyingMergeKeys(_ node: Yams.Node) -> Yams.Node {
        guard count(node) else { return node }
        switch node {
        case .scalar, .alias:
            return node
        case .sequence(let sequence):
            var nodes: [Yams.Node] = []
            nodes.reserveCapacity(sequence.count)
            for element in sequence {
                guard !isOverBudget else { return node }
                nodes.append(applyingMergeKeys(element))
            }
            return .sequence(.init(nodes, sequence.tag, sequence.style, sequence.mark, sequence.anchor))
        case .mapping(let mapping):
            var pairs: [(key: Yams.Node, value: Yams.Node)] = []
            pairs.reserveCapacity(mapping.count)
            for (key, value) in mapping {
                guard !isOverBudget else { return node }
                countKey(key)
                pairs.append((key: key, value: applyingMergeKeys(value)))
            }
            guard !isOverBudget else { return node }
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
