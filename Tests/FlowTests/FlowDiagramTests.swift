import Foundation
import Testing
import Flow

/// A serial op, a group, cases with two branches and a default, a nested cases without default.
private let demo = FlowDefinition(
    name: "demo",
    bucket: ["images": ["a", "b"], "target": "A", "mode": "fast"],
    steps: [
        .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "Step1"])),
        .group(FlowGroupStep(op: "UploadOp", input: "images", output: "urls", maxConcurrent: 2, parameters: ["delay": 0.2])),
        .cases(FlowCasesStep(
            branches: [
                FlowCaseBranch(key: "target", value: "A", steps: [
                    .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "Step2A"])),
                    .cases(FlowCasesStep(branches: [
                        FlowCaseBranch(key: "mode", value: "fast", steps: [
                            .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "fast"])),
                        ]),
                    ])),
                ]),
                FlowCaseBranch(key: "target", value: "B", steps: [
                    .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "Step2B"])),
                ]),
            ],
            defaultSteps: [.operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "other"]))]
        )),
        .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "Step3"])),
    ]
)

/// One cases step without default: no match must end the flow.
private let noDefault = FlowDefinition(name: "pick", steps: [
    .cases(FlowCasesStep(branches: [
        FlowCaseBranch(key: "target", value: "A", steps: [.operation(FlowOperationStep(op: "PrintOp", parameters: ["message": "A"]))]),
        FlowCaseBranch(key: "target", value: "B", steps: []),
    ])),
    .operation(FlowOperationStep(op: "DoneOp")),
])

/// Quotes and backslashes in the flow name, a parameter and a case value.
private let awkward = FlowDefinition(name: #"say "hi""#, steps: [
    .operation(FlowOperationStep(op: "PrintOp", parameters: ["message": #"He said "go" \ now <b>"#])),
    .cases(FlowCasesStep(branches: [
        FlowCaseBranch(key: "target", value: #"a "q""#, steps: [.operation(FlowOperationStep(op: "DoneOp"))]),
    ], defaultSteps: [])),
])

@Suite struct FlowDiagramOutlineTests {
    @Test func outlineNumbersStepsAndIndentsBranchesTwoSpacesPerLevel() {
        #expect(demo.outline() == """
            flow: demo
            1. op PrintOp {message: Step1}
            2. group UploadOp over images -> urls (maxConcurrent 2, allowFailure false) {delay: 0.2}
            3. cases on target
              when "A":
                1. op PrintOp {message: Step2A}
                2. cases on mode
                  when "fast":
                    1. op PrintOp {message: fast}
                  no match: end the flow
              when "B":
                1. op PrintOp {message: Step2B}
              otherwise:
                1. op PrintOp {message: other}
            4. op PrintOp {message: Step3}
            bucket: images, mode, target

            """)
    }

    @Test func outlineShowsEmptyBranchesAndEmptyBucket() {
        #expect(noDefault.outline() == """
            flow: pick
            1. cases on target
              when "A":
                1. op PrintOp {message: A}
              when "B":
                (no steps)
              no match: end the flow
            2. op DoneOp
            bucket: (empty)

            """)
    }

    @Test func outlineSaysWhereAPlacedStepRuns() {
        var listing = FlowOperationStep(op: "ListFilesOp", parameters: ["path": "/data"])
        listing.placement = FlowPlacement(["role": "recorder", "host": "b1"])
        var upload = FlowGroupStep(op: "UploadFileOp", input: "files", output: "")
        upload.placement = FlowPlacement(["host": "b1"])
        let lines = FlowDefinition(name: "p", steps: [.operation(listing), .group(upload)]).outline().split(separator: "\n")
        #expect(lines[1] == "1. op ListFilesOp on host=b1, role=recorder {path: /data}")
        #expect(lines[2] == "2. group UploadFileOp over files -> nothing (maxConcurrent 3, allowFailure false) on host=b1")
        listing.eachWorker = true
        upload.affinity = .source
        let each = FlowDefinition(name: "p", steps: [.operation(listing), .group(upload)]).outline().split(separator: "\n")
        #expect(each[1] == "1. op ListFilesOp on every worker with host=b1, role=recorder {path: /data}")
        #expect(each[2] == "2. group UploadFileOp over files -> nothing (maxConcurrent 3, allowFailure false, affinity source) on host=b1")
    }

    @Test func outlineSortsParameterKeysAndCutsLongValues() {
        let long = String(repeating: "x", count: 100)
        let definition = FlowDefinition(name: "p", steps: [
            .operation(FlowOperationStep(op: "Op", parameters: [
                "zeta": 1, "alpha": .array([true, .null]), "text": .string(long), "lines": "one\ntwo",
            ])),
        ])
        let line = definition.outline().split(separator: "\n")[1]
        #expect(line == "1. op Op {alpha: [true, null], lines: one\\ntwo, text: \(String(repeating: "x", count: 37))..., zeta: 1}")
    }

    @Test func outlineQuotesCaseValuesWithTheirQuotesEscaped() {
        #expect(awkward.outline().contains(#"  when "a \"q\"":"#))
        #expect(awkward.outline().contains("  otherwise:\n    (no steps)"))
    }

    @Test func outlineNamesEachKeyWhenBranchesCompareDifferentKeys() {
        let definition = FlowDefinition(name: "k", steps: [
            .cases(FlowCasesStep(branches: [
                FlowCaseBranch(key: "a", value: "1", steps: []),
                FlowCaseBranch(key: "b", value: "2", steps: []),
            ])),
        ])
        let lines = definition.outline().split(separator: "\n")
        #expect(lines[1] == "1. cases on a, b")
        #expect(lines[2] == #"  when a = "1":"#)
        #expect(lines[4] == #"  when b = "2":"#)
    }
}

@Suite struct FlowDiagramMermaidTests {
    @Test func mermaidHasOneNodePerStepAndBranchesJoinTheNextStep() {
        #expect(demo.mermaid() == """
            flowchart TD
                flow_start(["demo"])
                s1["PrintOp<br/>message: Step1"]
                s2[["UploadOp<br/>for each images (max 2)<br/>into urls<br/>delay: 0.2"]]
                s3{"target?"}
                s4["PrintOp<br/>message: Step2A"]
                s5{"mode?"}
                s6["PrintOp<br/>message: fast"]
                s7["PrintOp<br/>message: Step2B"]
                s8["PrintOp<br/>message: other"]
                s9["PrintOp<br/>message: Step3"]
                flow_end(["end"])
                flow_start --> s1
                s1 --> s2
                s2 --> s3
                s3 -->|A| s4
                s4 --> s5
                s5 -->|fast| s6
                s5 -->|no match| flow_end
                s3 -->|B| s7
                s3 -->|default| s8
                s6 --> s9
                s7 --> s9
                s8 --> s9
                s9 --> flow_end

            """)
    }

    @Test func mermaidCasesWithoutDefaultHasANoMatchEdgeToTheEnd() {
        #expect(noDefault.mermaid() == """
            flowchart TD
                flow_start(["pick"])
                s1{"target?"}
                s2["PrintOp<br/>message: A"]
                s3["DoneOp"]
                flow_end(["end"])
                flow_start --> s1
                s1 -->|A| s2
                s1 -->|no match| flow_end
                s2 --> s3
                s1 -->|B| s3
                s3 --> flow_end

            """)
    }

    @Test func mermaidEscapesQuotesAndAngleBracketsInLabels() {
        let text = awkward.mermaid()
        #expect(text.contains(#"flow_start(["say #quot;hi#quot;"])"#))
        #expect(text.contains(#"s1["PrintOp<br/>message: He said #quot;go#quot; \ now #lt;b#gt;"]"#))
        #expect(text.contains(#"s2 -->|"a #quot;q#quot;"| s3"#))
        #expect(text.contains("s2 -->|default| flow_end"))
        // Every node line has exactly the two quotes that delimit its label.
        for line in text.split(separator: "\n") where line.contains("[") || line.contains("{") {
            #expect(line.filter { $0 == "\"" }.count == 2, "\(line)")
        }
    }

    @Test func mermaidGroupLabelShowsFanOutAndAllowedFailures() {
        let definition = FlowDefinition(name: "g", steps: [
            .group(FlowGroupStep(op: "UploadOp", input: "images", output: "urls", maxConcurrent: 3, allowFailure: true)),
        ])
        #expect(definition.mermaid().contains(#"s1[["UploadOp<br/>for each images (max 3, failures allowed)<br/>into urls"]]"#))
    }
}

@Suite struct FlowDiagramDOTTests {
    @Test func dotDeclaresEveryStepWithItsShapeAndConnectsThemLikeMermaid() throws {
        let graph = try ParsedDOT(demo.dot())
        #expect(graph.nodes.map(\.id) == ["flow_start", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "flow_end"])
        #expect(graph.node("flow_start")?.label == ["demo"])
        #expect(graph.node("s1")?.attributes == "shape=box, style=rounded")
        #expect(graph.node("s2")?.attributes == "shape=box3d")
        #expect(graph.node("s2")?.label == ["UploadOp", "for each images (max 2)", "into urls", "delay: 0.2"])
        #expect(graph.node("s3")?.attributes == "shape=diamond")
        #expect(graph.node("s3")?.label == ["target?"])
        #expect(graph.node("s5")?.label == ["mode?"])
        #expect(graph.edges == [
            ParsedDOT.Edge("flow_start", "s1"), ParsedDOT.Edge("s1", "s2"), ParsedDOT.Edge("s2", "s3"),
            ParsedDOT.Edge("s3", "s4", "A"), ParsedDOT.Edge("s4", "s5"), ParsedDOT.Edge("s5", "s6", "fast"),
            ParsedDOT.Edge("s5", "flow_end", "no match"), ParsedDOT.Edge("s3", "s7", "B"),
            ParsedDOT.Edge("s3", "s8", "default"), ParsedDOT.Edge("s6", "s9"), ParsedDOT.Edge("s7", "s9"),
            ParsedDOT.Edge("s8", "s9"), ParsedDOT.Edge("s9", "flow_end"),
        ])
    }

    @Test func dotCasesWithoutDefaultHasANoMatchEdgeToTheEnd() throws {
        let graph = try ParsedDOT(noDefault.dot())
        #expect(graph.edges.contains(ParsedDOT.Edge("s1", "flow_end", "no match")))
        #expect(graph.edges.contains(ParsedDOT.Edge("s1", "s3", "B")))
        #expect(!graph.edges.contains { $0.label == "default" })
    }

    @Test func dotEscapesQuotesAndBackslashesSoLabelsReadBackUnchanged() throws {
        let text = awkward.dot()
        #expect(text.contains(#"s1 [label="PrintOp\nmessage: He said \"go\" \\ now <b>", shape=box, style=rounded];"#))
        let graph = try ParsedDOT(text)
        #expect(graph.node("flow_start")?.label == [#"say "hi""#])
        #expect(graph.node("s1")?.label == ["PrintOp", #"message: He said "go" \ now <b>"#])
        #expect(graph.edges.contains(ParsedDOT.Edge("s2", "s3", #"a "q""#)))
    }
}

/// The line-per-statement DOT that ``FlowDefinition/dot()`` writes, read back; any other line is
/// an error, so a malformed statement fails the test.
private struct ParsedDOT {
    struct Node: Equatable {
        var id: String
        var label: [String]
        var attributes: String
    }

    struct Edge: Equatable {
        var from: String
        var to: String
        var label: String?
        init(_ from: String, _ to: String, _ label: String? = nil) {
            self.from = from
            self.to = to
            self.label = label
        }
    }

    struct Malformed: Error, CustomStringConvertible {
        var line: String
        var description: String { "not a statement dot() writes: \(line)" }
    }

    var nodes: [Node] = []
    var edges: [Edge] = []

    func node(_ id: String) -> Node? { nodes.first { $0.id == id } }

    init(_ text: String) throws {
        let quoted = #""((?:[^"\\]|\\.)*)""#
        let nodeLine = try Regex(#"    ([A-Za-z_][A-Za-z0-9_]*) \[label="# + quoted + #", ([a-z0-9=, ]+)\];"#)
        let edgeLine = try Regex(#"    ([A-Za-z_][A-Za-z0-9_]*) -> ([A-Za-z_][A-Za-z0-9_]*)(?: \[label="# + quoted + #"\])?;"#)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.first == "digraph flow {", lines.popLast() == "", lines.popLast() == "}" else {
            throw Malformed(line: text)
        }
        for line in lines.dropFirst() {
            if ["    rankdir=TB;", #"    node [fontname="Helvetica", fontsize=11];"#,
                #"    edge [fontname="Helvetica", fontsize=10];"#].contains(line) {
                continue
            }
            if let match = try nodeLine.wholeMatch(in: line) {
                let label = Self.unescaped(String(match.output[2].substring!))
                nodes.append(Node(id: String(match.output[1].substring!), label: label, attributes: String(match.output[3].substring!)))
            } else if let match = try edgeLine.wholeMatch(in: line) {
                let from = String(match.output[1].substring!), to = String(match.output[2].substring!)
                // Nodes are declared first: an edge to an undeclared id would be a new, unlabelled node.
                guard node(from) != nil, node(to) != nil else { throw Malformed(line: line) }
                edges.append(Edge(from, to, match.output[3].substring.map { Self.unescaped(String($0)).joined(separator: "\n") }))
            } else {
                throw Malformed(line: line)
            }
        }
    }

    /// A DOT string's lines: `\n` breaks a line, `\"` and `\\` stand for themselves.
    private static func unescaped(_ text: String) -> [String] {
        var lines = [""]
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "\\", let next = iterator.next() else {
                lines[lines.count - 1].append(character)
                continue
            }
            if next == "n" { lines.append("") } else { lines[lines.count - 1].append(next) }
        }
        return lines
    }
}
