// A blueprint written in Swift with the seed's API, run on a local cluster: ops run on spawned
// flow-worker processes because the workers register them under the same names.
//   swift run blueprint-on-cluster-example
import Flow
import FlowCluster
import FlowStandardOps
import Foundation
import Logging

let logger = Logger(label: "blueprint-on-cluster")
let socket = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("flow-blueprint-\(getpid()).sock").path
let coordinator = try FlowCoordinator(configuration: .init(endpoint: "ipc://" + socket), logger: logger)
let endpoint = try await coordinator.start()
let workers = try LocalWorkerPool(count: 2, endpoint: endpoint, concurrency: 2, logger: logger)
_ = await coordinator.waitForWorkers(2, timeout: .seconds(15))

let flow = Flow()
    .setDataBucket(dataBucket: ["images": ["a", "b", "c", "d"]])
    .add(operation: SimplePrintOp(message: "hello from Swift"))
    .addGrouped(operationCreator: UploadSingleImageOp.self, dispatcher: FlowArrayGroupDispatcher(
        inputKey: "images", outputKey: "imageURLs", maxConcurrentOperationCount: 3, allowFailure: false))
    .setDidFinishBlock { flow in print(flow.generateSummary(), terminator: "") }
    .setExecutor(coordinator)
await flow.run()
// The workers first, while the coordinator still listens: each says goodbye and exits at once.
await workers.stop()
await coordinator.stop()
try? FileManager.default.removeItem(atPath: socket)
exit(flow.isSuccess ? 0 : 1)
