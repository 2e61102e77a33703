import Flow
import FlowCluster
import Foundation
import Synchronization

/// A run's group budgets: what the flow file sets (`limit:`, `adaptive:`), the entry of each
/// group's timetable in force, and `flow-coordinator limit` from another terminal, handed to the
/// coordinator, which holds them for the whole cluster.
final class RunGroupLimits: Sendable {
    /// A group step of the flow.
    struct Group: Sendable, Equatable {
        var location: FlowSourceLocation
        /// Its op, with `@LINE` when another group runs the same op.
        var name: String
        var op: String
        var limit: FlowGroupLimit?
        var maxConcurrent: Int
        var adaptive: Bool
    }

    let groups: [Group]
    private let run: ClusterRun
    /// Rates set from another terminal, by group: they hold instead of the file's and the
    /// timetable's until the run ends.
    private let overrides = Mutex<[Int: FlowLimitRates]>([:])
    private let timetable = Mutex<Task<Void, Never>?>(nil)

    /// The groups of `definition` that have a budget (a `limit:`, or adaptive concurrency).
    init(definition: FlowDefinition, run: ClusterRun) {
        groups = Self.groups(of: definition)
        self.run = run
    }

    /// Every group step with a location, in file order, named by its op (`OP@LINE` when two
    /// groups run the same op).
    static func groups(of definition: FlowDefinition) -> [Group] {
        var found: [Group] = []
        func walk(_ steps: [FlowStep]) {
            for step in steps {
                switch step {
                case .operation: break
                case .group(let group):
                    guard let location = group.location else { continue }
                    found.append(Group(location: location, name: group.op, op: group.op, limit: group.limit,
                                       maxConcurrent: group.maxConcurrent, adaptive: group.adaptive))
                case .cases(let cases):
                    for branch in cases.branches { walk(branch.steps) }
                    if let defaultSteps = cases.defaultSteps { walk(defaultSteps) }
                }
            }
        }
        walk(definition.steps)
        let counts = Dictionary(found.map { ($0.op, 1) }, uniquingKeysWith: +)
        return found.map { group in
            var group = group
            if counts[group.op, default: 0] > 1 { group.name = "\(group.op)@\(group.location.line)" }
            return group
        }
    }

    /// The rates group `index` is held to at `date`: set from another terminal, else its
    /// timetable's entry, else its `limit:`.
    func rates(of index: Int, at date: Date) -> FlowLimitRates {
        if let rates = overrides.withLock({ $0[index] }) { return rates }
        return groups[index].limit?.rates(at: FlowLimitSchedule.WeekTime(date)) ?? FlowLimitRates()
    }

    /// Hands every group with a budget to the coordinator; with a timetable, again at each of
    /// its switches until ``stop()``.
    func start() {
        apply(at: Date())
        guard groups.contains(where: { $0.limit?.schedule != nil }) else { return }
        let task = Task { [self] in
            while !Task.isCancelled {
                let now = Date()
                let minutes = groups.compactMap { $0.limit?.schedule?.minutesUntilNextSwitch(after: FlowLimitSchedule.WeekTime(now)) }.min() ?? 1440
                // To the start of the minute the switch is in, and a second past it.
                let seconds = Double(minutes * 60) - now.timeIntervalSince1970.truncatingRemainder(dividingBy: 60) + 1
                try? await Task.sleep(for: .seconds(max(1, seconds)))
                guard !Task.isCancelled else { return }
                apply(at: Date())
            }
        }
        timetable.withLock { $0 = task }
    }

    /// Stops following the timetables.
    func stop() {
        timetable.withLock { $0 }?.cancel()
    }

    private func apply(at date: Date) {
        for (index, group) in groups.enumerated() where group.limit != nil || group.adaptive || overrides.withLock({ $0[index] }) != nil {
            run.setGroupBudget(at: group.location, name: group.name, rates: rates(of: index, at: date),
                               maxConcurrent: group.maxConcurrent, adaptive: group.adaptive)
        }
    }

    /// `flow-coordinator limit`: new rates for the groups `step` names (a group's name, its op,
    /// or the line it was written on); a rate not given stays as it is in force, `.some(nil)` is
    /// off.
    ///
    /// - Returns: the names of the groups changed.
    /// - Throws: a message for the user when `step` names no group.
    func setLimit(step: String, bytesPerSecond: Int64??, requestsPerSecond: Double??) throws -> [String] {
        let chosen = groups.indices.filter {
            groups[$0].name == step || groups[$0].op == step || String(groups[$0].location.line) == step
        }
        guard !chosen.isEmpty else {
            let names = groups.map(\.name)
            throw RunControlError("no group step '\(step.prefix(80))' in this run" + (names.isEmpty ? " (it has no groups)" : "; its groups: \(names.joined(separator: ", "))"))
        }
        let now = Date()
        for index in chosen {
            var rates = rates(of: index, at: now)
            if let bytesPerSecond { rates.bytesPerSecond = bytesPerSecond }
            if let requestsPerSecond { rates.requestsPerSecond = requestsPerSecond }
            overrides.withLock { $0[index] = rates }
        }
        apply(at: now)
        return chosen.map { groups[$0].name }
    }
}
