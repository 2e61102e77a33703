public import Flow

extension FlowCoordinator {
    /// Holds the group written at `location` to `rates` across every worker, and (with
    /// `adaptive`) lets it back off when the store says slow down; called again, changes its
    /// rates from now on (within one turn of the I/O thread).
    ///
    /// - Parameters:
    ///   - location: where the group step was written (its tasks' `FlowTask.location`).
    ///   - name: the group as `status` names it.
    ///   - rates: the rates in force; unlimited rates with `adaptive` still back off.
    ///   - maxConcurrent: the group's `maxConcurrent`, which adaptive concurrency never exceeds.
    ///   - adaptive: whether throttled answers lower the group's concurrency.
    public func setGroupBudget(at location: FlowSourceLocation, name: String, rates: FlowLimitRates, maxConcurrent: Int,
                               adaptive: Bool) {
        let id = mailbox.budgets.register(location).id
        let command = CoordinatorMailbox.Command.setBudget(id: id, name: name, rates: rates, maxConcurrent: maxConcurrent,
                                                          adaptive: adaptive)
        if case .queued(true) = mailbox.post(command) { loopExecutor.wake() }
    }

    /// The group budgets as the I/O thread last showed them: rates, adaptive concurrency, starts.
    public var groupBudgets: [GroupBudgetStatus] { mailbox.budgets.statuses }
}
