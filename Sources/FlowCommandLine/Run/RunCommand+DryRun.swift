import ArgumentParser
import Flow
import FlowStandardOps
import Foundation

/// `run --dry-run`: the flow runs in this process with a ``FlowDryRunExecutor`` over the stock
/// ops; no worker starts, no journal is made, and nothing is written: ops that only read run,
/// `UploadFileOp` rehearses (its `skipExisting` HEAD only), every other op is listed as not run.
/// The plan goes to stdout; exit 0, or 1 when an op that ran failed (its summary is printed first).
extension RunCommand {
    func runDry() async throws {
        let (definition, _) = try loadDefinition()
        if let remote = options.bind ?? options.pool {
            CommandLineLogging.printDiagnostic("dry run: runs here, not on the workers at \(remote): the HEADs go from this machine, "
                                               + "and ops only those workers offer are listed as not run")
        }
        let registry = FlowOperationRegistry.standard
        let executor = FlowDryRunExecutor(registry: registry)
        let flow = Flow(definition: definition, registry: registry).setExecutor(executor)
        let interrupts = InterruptHandler { flow.cancel() }
        await flow.run()
        interrupts.cancel()
        if !flow.isSuccess {
            print(flow.generateSummary(condensingGroupsOver: RunExecution.condenseOver, showingFirst: RunExecution.condensedShown,
                                       maxLineLength: 500) { count in "[Group] … \(count) more elements" }, terminator: "")
        }
        print(executor.plan.text(), terminator: "")
        fflush(nil)
        if !flow.isSuccess { throw ExitCode(1) }
    }
}
