import Foundation

extension FlowDefinition {
    /// The flow as a Graphviz DOT graph, for `dot -Tsvg` or `dot -Tpng`.
    ///
    /// The same graph as ``mermaid()``: an oval start node named after the flow, a box per op, a
    /// `box3d` per group with its fan-out, a `diamond` per cases step with one labelled edge per
    /// branch, and an oval `end` node.
    ///
    /// ```text
    /// digraph flow {
    ///     rankdir=TB;
    ///     flow_start [label="demo", shape=oval];
    ///     s1 [label="SimplePrintOp\nmessage: A", shape=box, style=rounded];
    ///     flow_end [label="end", shape=oval];
    ///     flow_start -> s1;
    ///     s1 -> flow_end;
    /// }
    /// ```
    ///
    /// - Returns: the DOT source, ending with a line break.
    public func dot() -> String {
        let graph = FlowDiagramGraph(definition: self)
        var lines = [
            "digraph flow {",
            "    rankdir=TB;",
            "    node [fontname=\"Helvetica\", fontsize=11];",
            "    edge [fontname=\"Helvetica\", fontsize=10];",
        ]
        for node in graph.nodes {
            let label = node.lines.map(Self.dotEscaped).joined(separator: "\\n")
            let shape: String
            switch node.shape {
            case .start, .end: shape = "shape=oval"
            case .operation: shape = "shape=box, style=rounded"
            case .group: shape = "shape=box3d"
            case .decision: shape = "shape=diamond"
            }
            lines.append("    \(node.id) [label=\"\(label)\", \(shape)];")
        }
        for edge in graph.edges {
            let label = edge.label.map { " [label=\"\(Self.dotEscaped($0))\"]" } ?? ""
            lines.append("    \(edge.from) -> \(edge.to)\(label);")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text inside a quoted DOT string: backslashes and quotes escaped, so Graphviz reads no
    /// escape sequence (`\n`, `\l`, `\N`) the text did not mean.
    static func dotEscaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n", "\r", "\r\n": result += " "
            default: result.append(character)
            }
        }
        return result
    }
}
