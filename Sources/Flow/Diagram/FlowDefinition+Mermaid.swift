import Foundation

extension FlowDefinition {
    /// The flow as a Mermaid flowchart, for Markdown that renders Mermaid (GitHub, GitLab, DocC).
    ///
    /// A stadium start node named after the flow, one node per step (groups as subroutine boxes
    /// with their fan-out, cases as `{key?}` decisions with one labelled edge per branch), and an
    /// `end` node. A cases step without default steps has a `no match` edge to the end node.
    ///
    /// ```text
    /// flowchart TD
    ///     flow_start(["demo"])
    ///     s1{"target?"}
    ///     s2["SimplePrintOp<br/>message: A"]
    ///     flow_end(["end"])
    ///     flow_start --> s1
    ///     s1 -->|A| s2
    ///     s1 -->|no match| flow_end
    ///     s2 --> flow_end
    /// ```
    ///
    /// - Returns: the flowchart source, ending with a line break.
    public func mermaid() -> String {
        let graph = FlowDiagramGraph(definition: self)
        var lines = ["flowchart TD"]
        for node in graph.nodes {
            let label = "\"" + node.lines.map(Self.mermaidEscaped).joined(separator: "<br/>") + "\""
            switch node.shape {
            case .start, .end: lines.append("    \(node.id)([\(label)])")
            case .operation: lines.append("    \(node.id)[\(label)]")
            case .group: lines.append("    \(node.id)[[\(label)]]")
            case .decision: lines.append("    \(node.id){\(label)}")
            }
        }
        for edge in graph.edges {
            lines.append("    \(edge.from) -->" + (edge.label.map(Self.mermaidEdgeLabel) ?? "") + " \(edge.to)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `|text|`, quoted when the text holds anything but letters, digits, spaces and `_`.
    private static func mermaidEdgeLabel(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == " " || scalar == "_")
        }
        return plain ? "|\(text)|" : "|\"\(mermaidEscaped(text))\"|"
    }

    /// Text inside a quoted Mermaid label: characters the parser or the HTML label would take as
    /// syntax become Mermaid entity codes.
    static func mermaidEscaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "#": result += "#35;"
            case "\"": result += "#quot;"
            case "<": result += "#lt;"
            case ">": result += "#gt;"
            case "|": result += "#124;"
            case "\n", "\r", "\r\n": result += " "
            default: result.append(character)
            }
        }
        return result
    }
}
