// Your own worker: the stock ops plus yours, with every flow-worker option.
//   custom-worker-example --connect tcp://127.0.0.1:5555
//   flow-coordinator run examples/custom-worker/reverse.yaml --bind tcp://127.0.0.1:5555
import Flow
import FlowCommandLine
import FlowStandardOps

var registry = FlowOperationRegistry.standard
registry.register("ReverseTextOp", summary: "reverses `text` into `reversed`; with: {uppercase: bool}") { parameters in
    ReverseTextOp(uppercase: try parameters.bool("uppercase", default: false))
}
await FlowWorkerCommand.main(registry: registry)
