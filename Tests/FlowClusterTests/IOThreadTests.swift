import Flow
import FlowCluster
import FlowStandardOps
import FlowTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The calling thread's name as the kernel shows it (`/proc/thread-self/comm`).
func kernelThreadName() -> String {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? ""
}

/// Writes the name of the thread its `run()` ran on to `key`; with `hold`, first holds that thread
/// (a blocking call, as a long computation would).
final class ThreadNameOp: FlowAsyncOperation, @unchecked Sendable {
    let key: String
    let mayRun: Bool
    let hold: Duration

    init(key: String, mayRunOnIOThread: Bool, hold: Duration = .zero) {
        self.key = key
        mayRun = mayRunOnIOThread
        self.hold = hold
    }

    override var mayRunOnIOThread: Bool { mayRun }

    override func run() async throws {
        if hold > .zero { usleep(UInt32(hold / .microseconds(1))) }
        set(key, kernelThreadName())
    }
}

/// Writes the name of the thread its mainLogic ran on, which is the engine's (it runs inline).
final class InlineThreadNameOp: FlowOperation, @unchecked Sendable {
    override var runsMainLogicInline: Bool { true }

    override func mainLogic() {
        setData(name: "engine", value: kernelThreadName())
        finishSuccessfully()
    }
}

/// Strings a test's callbacks noted, in order.
final class StringLog: Sendable {
    private let names = Mutex<[String]>([])
    private let changes = EventWaiters()

    func record(_ name: String) {
        names.withLock { $0.append(name) }
        changes.changed()
    }

    var all: [String] { names.withLock { $0 } }

    /// Waits until the strings noted satisfy `condition`; whether they did within `timeout`.
    func wait(timeout: Duration, until condition: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        await changes.wait(timeout: timeout) { condition(self.all) }
    }
}

/// The cluster events a coordinator reported, in order.
final class EventLog: Sendable {
    private let events = Mutex<[ClusterEvent]>([])
    private let changes = EventWaiters()

    func record(_ event: ClusterEvent) {
        events.withLock { $0.append(event) }
        changes.changed()
    }

    var all: [ClusterEvent] { events.withLock { $0 } }

    /// Waits until the events reported satisfy `condition`; whether they did within `timeout`.
    func wait(timeout: Duration, until condition: @escaping @Sendable ([ClusterEvent]) -> Bool) async -> Bool {
        await changes.wait(timeout: timeout) { condition(self.all) }
    }
}

extension ClusterIntegrationTests {
    /// The coordinator runs the engine on its I/O thread, and a worker runs there the ops that say
    /// ``FlowAsyncOperation/mayRunOnIOThread``; every other op's code runs off those threads.
    @Suite struct IOThreads {
        /// A coordinator with ops placed on it, and one worker in this process with ops of its own.
        private func withCoordinatorAndWorker(
            _ cluster: ClusterScope, workerOps: FlowOperationRegistry, heartbeat: Duration = .seconds(1),
            prepare: FlowOperationRegistry.InputPreparer? = nil, _ body: (FlowCoordinator, EventLog) async throws -> Void
        ) async throws {
            var configuration = FlowCoordinator.Configuration(endpoint: cluster.ipcEndpoint("io-\(UInt32.random(in: 0...UInt32.max)).sock"))
            if let prepare {
                configuration.registry.register("PreparedOp", primaryInputParamKey: "item", primaryOutputParamKey: "item",
                                                prepareInput: prepare) { _ in ThreadNameOp(key: "ran", mayRunOnIOThread: true) }
            }
            configuration.registry.register("InlineOp", placement: .coordinator) { _ in InlineThreadNameOp() }
            configuration.registry.register("HereAsyncOp", placement: .coordinator) { _ in
                ThreadNameOp(key: "hereAsync", mayRunOnIOThread: false)
            }
            let events = EventLog()
            let coordinator = try FlowCoordinator(configuration: configuration, logger: Logger(label: "test")) { event in
                events.record(event)
            }
            let endpoint = try await coordinator.start()
            var workerConfiguration = FlowWorker.Configuration(endpoint: endpoint, name: "w1", concurrency: 2)
            workerConfiguration.heartbeatInterval = heartbeat
            let worker = try FlowWorker(configuration: workerConfiguration, registry: workerOps, logger: Logger(label: "test"))
            let serving = Task { try await worker.run() }
            #expect(await coordinator.waitForWorkers(1, timeout: .seconds(10)))
            try await body(coordinator, events)
            worker.drain()
            try await serving.value
            await coordinator.stop()
        }

        @Test func theEngineAndTheOpsThatMayRunThereRunOnTheIOThreadsAndNoOtherOps() async throws {
            var workerOps = FlowOperationRegistry()
            workerOps.register("MayOp") { _ in ThreadNameOp(key: "may", mayRunOnIOThread: true) }
            workerOps.register("MayNotOp") { _ in ThreadNameOp(key: "mayNot", mayRunOnIOThread: false) }
            try await withCluster { cluster in
                try await withCoordinatorAndWorker(cluster, workerOps: workerOps) { coordinator, _ in
                    let flow = Flow(definition: FlowDefinition(name: "threads", steps: [
                        .operation(FlowOperationStep(op: "MayOp")), .operation(FlowOperationStep(op: "MayNotOp")),
                        .operation(FlowOperationStep(op: "InlineOp")), .operation(FlowOperationStep(op: "HereAsyncOp")),
                    ])).setExecutor(coordinator)
                    await flow.run()
                    #expect(flow.isSuccess, "\(flow.generateSummary())")
                    let bucket = flow.dataBucket
                    #expect(bucket["may"] as? String == "flow-worker-io")
                    let mayNot = bucket["mayNot"] as? String
                    #expect(mayNot != nil && mayNot != "flow-worker-io", "an op that did not say it may ran on the worker's I/O thread")
                    #expect(bucket["engine"] as? String == "flow-coord-io", "the engine ran on \(bucket["engine"] ?? "nothing")")
                    let hereAsync = bucket["hereAsync"] as? String
                    #expect(hereAsync != nil && hereAsync != "flow-coord-io", "an async op placed on the coordinator ran on its I/O thread")
                }
            }
        }

        /// An op that holds its thread for 20 heartbeat intervals: the worker's I/O thread goes on
        /// heartbeating meanwhile, so the coordinator never counts the worker lost.
        @Test func anOpThatHoldsItsThreadLeavesTheWorkersHeartbeatsGoing() async throws {
            var workerOps = FlowOperationRegistry()
            workerOps.register("HoldOp") { _ in ThreadNameOp(key: "held", mayRunOnIOThread: false, hold: .seconds(1)) }
            try await withCluster { cluster in
                try await withCoordinatorAndWorker(cluster, workerOps: workerOps, heartbeat: .milliseconds(50)) { coordinator, events in
                    let flow = Flow(definition: FlowDefinition(name: "hold", steps: [.operation(FlowOperationStep(op: "HoldOp"))]))
                        .setExecutor(coordinator)
                    await flow.run()
                    #expect(flow.isSuccess, "\(flow.generateSummary())")
                    let lost = events.all.filter { if case .workerLost = $0 { true } else { false } }
                    #expect(lost.isEmpty, "the worker was counted lost while its op held a thread: \(lost)")
                    let held = flow.dataBucket["held"] as? String
                    #expect(held != nil && held != "flow-worker-io", "the op held the worker's I/O thread")
                }
            }
        }
        /// The engine prefers the coordinator's I/O thread; once that thread has ended (the
        /// coordinator stopped mid-run, or before the run began), the run still ends.
        @Test func aRunEndsWhenItsCoordinatorStopsUnderIt() async throws {
            var workerOps = FlowOperationRegistry()
            workerOps.register("HoldOp") { _ in ThreadNameOp(key: "held", mayRunOnIOThread: true) }
            workerOps.register("SlowOp") { _ in SleepOp(milliseconds: 10_000) }
            try await withCluster { cluster in
                try await withCoordinatorAndWorker(cluster, workerOps: workerOps) { coordinator, events in
                    let flow = Flow(definition: FlowDefinition(name: "stopped", steps: [
                        .operation(FlowOperationStep(op: "HoldOp")), .operation(FlowOperationStep(op: "SlowOp")),
                        .operation(FlowOperationStep(op: "HoldOp")),
                    ])).setExecutor(coordinator)
                    let running = Task { await flow.run() }
                    // Mid-run: the second op's task went to the worker.
                    let slowSent = await events.wait(timeout: .seconds(30)) { reported in
                        reported.contains { if case .dispatched(op: "SlowOp", worker: _) = $0 { true } else { false } }
                    }
                    try #require(slowSent, "SlowOp was not dispatched within 30 s: \(events.all)")
                    await coordinator.stop()
                    await running.value
                    #expect(!flow.isSuccess)
                    // A run started on the stopped coordinator ends at once as well.
                    let late = Flow(definition: FlowDefinition(name: "late", steps: [.operation(FlowOperationStep(op: "HoldOp"))]))
                        .setExecutor(coordinator)
                    await late.run()
                    #expect(!late.isSuccess)
                }
            }
        }
        /// An op whose input the coordinator prepares (`UploadFileOp` with `source: coordinator`
        /// reads whole files so): the preparation runs off the coordinator's I/O thread, for a
        /// serial step and for each element of a group.
        @Test func inputPreparationRunsOffTheCoordinatorsIOThread() async throws {
            var workerOps = FlowOperationRegistry()
            workerOps.register("PreparedOp", primaryInputParamKey: "item", primaryOutputParamKey: "item") { _ in
                ThreadNameOp(key: "ran", mayRunOnIOThread: true)
            }
            let threads = StringLog()
            try await withCluster { cluster in
                try await withCoordinatorAndWorker(cluster, workerOps: workerOps, prepare: { _, input in
                    threads.record(kernelThreadName())
                    return input
                }) { coordinator, _ in
                    let flow = Flow(definition: FlowDefinition(name: "prepared", bucket: ["item": "a", "items": ["b", "c", "d"]], steps: [
                        .operation(FlowOperationStep(op: "PreparedOp")),
                        .group(FlowGroupStep(op: "PreparedOp", input: "items", output: "out", maxConcurrent: 2)),
                    ])).setExecutor(coordinator)
                    await flow.run()
                    #expect(flow.isSuccess, "\(flow.generateSummary())")
                    #expect(flow.dataBucket["out"] as? [String] == ["b", "c", "d"])
                }
            }
            let names = threads.all
            #expect(names.count == 4)
            #expect(!names.contains("flow-coord-io"), "inputs were prepared on the coordinator's I/O thread: \(names)")
        }
        /// A run on a coordinator that was never started ends at once with an error, as it did
        /// before the engine preferred the coordinator's I/O thread: that thread does not exist.
        @Test func aRunOnACoordinatorThatWasNeverStartedEndsAtOnce() async throws {
            try await withCluster { cluster in
                let coordinator = try FlowCoordinator(configuration: .init(endpoint: cluster.ipcEndpoint("never.sock")),
                                                      logger: Logger(label: "test"))
                let flow = Flow(definition: FlowDefinition(name: "never", steps: [.operation(FlowOperationStep(op: "SleepOp"))]))
                    .setExecutor(coordinator)
                // Not awaited: a run that never ends must fail this test, not hang it.
                let ended = StringLog()
                Task {
                    await flow.run()
                    ended.record("ended")
                }
                #expect(await ended.wait(timeout: .seconds(10)) { !$0.isEmpty }, "the run did not end within 10 s")
                #expect(!flow.isSuccess)
            }
        }
    }
}
