import Foundation

/// A flow tree laid out as a graph: the one model the Mermaid and DOT renderings print.
///
/// Each step is a node; a cases step is a decision node with one labelled edge per branch, and the
/// last steps of every branch join into the step after the cases. An unmatched case without
/// default steps is an edge to the end node.
struct FlowDiagramGraph {
    enum Shape {
        case start, end, operation, group, decision
    }

    struct Node {
        /// A valid Mermaid and DOT id: letters, digits and `_`.
        var id: String
        var shape: Shape
        /// Label lines, not escaped.
        var lines: [String]
    }

    struct Edge {
        var from: String
        var to: String
        var label: String?
    }

    static let startID = "flow_start"
    static let endID = "flow_end"

    private(set) var nodes: [Node] = []
    private(set) var edges: [Edge] = []
    private var stepCount = 0

    /// An edge still waiting for the node it leads to.
    private typealias Opening = (from: String, label: String?)

    init(definition: FlowDefinition) {
        nodes.append(Node(id: Self.startID, shape: .start, lines: [FlowDiagramText.oneLine(definition.name)]))
        let openings = add(definition.steps, after: [(Self.startID, nil)])
        nodes.append(Node(id: Self.endID, shape: .end, lines: ["end"]))
        connect(openings, to: Self.endID)
    }

    private mutating func add(_ steps: [FlowStep], after openings: [Opening]) -> [Opening] {
        var openings = openings
        for step in steps {
            stepCount += 1
            let id = "s\(stepCount)"
            switch step {
            case .operation(let operation):
                nodes.append(Node(id: id, shape: .operation, lines: Self.lines(operation.op, [], operation.parameters)))
                connect(openings, to: id)
                openings = [(id, nil)]
            case .group(let group):
                let failures = group.allowFailure ? ", failures allowed" : ""
                let fanOut = ["for each \(group.inputName) (max \(group.maxConcurrent)\(failures))", "into \(group.outputName)"]
                nodes.append(Node(id: id, shape: .group, lines: Self.lines(group.op, fanOut, group.parameters)))
                connect(openings, to: id)
                openings = [(id, nil)]
            case .cases(let cases):
                let keys = cases.branchKeys
                nodes.append(Node(id: id, shape: .decision, lines: [(keys.isEmpty ? "cases" : keys.joined(separator: ", ")) + "?"]))
                connect(openings, to: id)
                openings = []
                for branch in cases.branches {
                    let value = FlowDiagramText.oneLine(branch.value)
                    let label = keys.count == 1 ? value : "\(branch.key) = \(value)"
                    openings += add(branch.steps, after: [(id, label)])
                }
                if let defaultSteps = cases.defaultSteps {
                    openings += add(defaultSteps, after: [(id, "default")])
                } else {
                    edges.append(Edge(from: id, to: Self.endID, label: "no match"))
                }
            }
        }
        return openings
    }

    private mutating func connect(_ openings: [Opening], to id: String) {
        for opening in openings { edges.append(Edge(from: opening.from, to: id, label: opening.label)) }
    }

    private static func lines(_ op: String, _ extra: [String], _ parameters: [String: FlowValue]) -> [String] {
        // One parameter a line: diagram boxes grow down more readably than across.
        [op] + extra + parameters.keys.sorted().map { "\($0): \(FlowDiagramText.value(parameters[$0]!))" }
    }
}
