import Foundation

extension FlowDefinition {
    /// The flow as an indented outline, one line per step, for reading in a terminal.
    ///
    /// ```text
    /// flow: cases-demo
    /// 1. op SimplePrintOp {message: Step1}
    /// 2. cases on target
    ///   when "A":
    ///     1. op SimplePrintOp {message: Step2A1}
    ///   no match: end the flow
    /// 3. group UploadSingleImageOp over images -> imageURLs (maxConcurrent 3, allowFailure false) {delay: 0.2}
    /// bucket: images, target
    /// ```
    ///
    /// Steps are numbered from 1 in each list; a branch's steps are indented two spaces under
    /// their `when` line. Parameters are shown with sorted keys and long values cut.
    ///
    /// - Returns: the outline, ending with a line break.
    public func outline() -> String {
        var lines = ["flow: \(name)"]
        Self.appendOutline(of: steps, depth: 0, to: &lines)
        let keys = bucket.keys.sorted()
        lines.append(keys.isEmpty ? "bucket: (empty)" : "bucket: " + keys.joined(separator: ", "))
        return lines.joined(separator: "\n") + "\n"
    }

    /// ` on role=recorder` for a step placed by labels, nothing for one that runs anywhere.
    private static func placed(_ placement: FlowPlacement?) -> String {
        placement.map { " on \($0.description)" } ?? ""
    }

    private static func appendOutline(of steps: [FlowStep], depth: Int, to lines: inout [String]) {
        let indent = String(repeating: "  ", count: depth)
        if steps.isEmpty {
            lines.append(indent + "(no steps)")
            return
        }
        for (offset, step) in steps.enumerated() {
            let number = "\(indent)\(offset + 1). "
            switch step {
            case .operation(let operation):
                let placement = operation.eachWorker
                    ? " on every worker" + (operation.placement.map { " with \($0.description)" } ?? "")
                    : placed(operation.placement)
                lines.append(number + "op \(operation.op)" + placement + braces(operation.parameters))
            case .group(let group):
                lines.append(number + "group \(group.op) over \(group.inputName) -> \(group.outputName) "
                    + "(maxConcurrent \(group.maxConcurrent), allowFailure \(group.allowFailure)"
                    + (group.affinity.map { ", affinity \($0.rawValue)" } ?? "") + ")" + placed(group.placement) + braces(group.parameters))
            case .cases(let cases):
                let keys = cases.branchKeys
                lines.append(number + (keys.isEmpty ? "cases" : "cases on " + keys.joined(separator: ", ")))
                let branchIndent = indent + "  "
                for branch in cases.branches {
                    let condition = keys.count == 1
                        ? FlowDiagramText.quoted(branch.value)
                        : "\(branch.key) = \(FlowDiagramText.quoted(branch.value))"
                    lines.append(branchIndent + "when \(condition):")
                    appendOutline(of: branch.steps, depth: depth + 2, to: &lines)
                }
                if let defaultSteps = cases.defaultSteps {
                    lines.append(branchIndent + "otherwise:")
                    appendOutline(of: defaultSteps, depth: depth + 2, to: &lines)
                } else {
                    lines.append(branchIndent + "no match: end the flow")
                }
            }
        }
    }

    private static func braces(_ parameters: [String: FlowValue]) -> String {
        FlowDiagramText.parameterBraces(parameters).map { " " + $0 } ?? ""
    }
}

extension FlowCasesStep {
    /// The bucket keys the branches compare, each once, in branch order.
    var branchKeys: [String] {
        var keys: [String] = []
        for branch in branches where !keys.contains(branch.key) { keys.append(branch.key) }
        return keys
    }
}
