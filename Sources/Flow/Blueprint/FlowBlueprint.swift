/// Builds the flow tree from the seed's chained calls.
///
/// `add(operation:flowCase:)` opens a branch (a sibling of the open branches when cases are already
/// open); later `add` calls extend the branch; `combine()` closes the cases, and the next step
/// follows all branches.
struct FlowBlueprint {
    private final class Cases {
        var branches: [(FlowCase, [FlowPlanNode])] = []
    }

    private var root: [FlowPlanNode] = []
    private var openCases: Cases?

    mutating func add(_ node: FlowPlanNode, flowCase: FlowCase?) {
        if let flowCase {
            if openCases == nil { openCases = Cases() }
            openCases?.branches.append((flowCase, [node]))
        } else if let openCases, !openCases.branches.isEmpty {
            openCases.branches[openCases.branches.count - 1].1.append(node)
        } else {
            root.append(node)
        }
    }

    mutating func combine() {
        guard let cases = openCases else { return }
        root.append(.cases(branches: cases.branches, defaultSteps: nil))
        openCases = nil
    }

    /// The tree, with cases still open treated as combined at the end.
    var nodes: [FlowPlanNode] {
        var copy = self
        copy.combine()
        return copy.root
    }
}
