import ArgumentParser
import Flow
import FlowCluster
import FlowStandardOps
import Foundation
import Logging

/// The checks of `verify` as a flow of one group of `VerifyObjectOp` over the manifest entries,
/// run on a cluster the way `run` starts one (``ClusterRunOptions``: local workers, `--bind` or
/// `--pool`), with its progress line; no summary and no journal.
struct VerifyRun {
    /// What became of one entry.
    enum Result: Sendable, Equatable {
        /// The store answered.
        case checked(ObjectCheck)
        /// The check failed (a connection, a status other than 404, credentials), with why.
        case failed(String)
    }

    let entries: [UploadManifestEntry]
    let options: ClusterRunOptions
    /// The group's `with:`.
    let parameters: [String: FlowValue]
    let maxConcurrent: Int

    /// The group step: every element runs whatever the others do. It has no `retry`: a group
    /// without one goes to the workers in batches (`FlowEngine.runBatched`), and a check that
    /// failed is reported as such, for `verify` to be run again.
    var definition: FlowDefinition {
        let step = FlowGroupStep(op: "VerifyObjectOp", input: "objects", output: "checks", maxConcurrent: maxConcurrent,
                                 allowFailure: true, parameters: parameters)
        var definition = FlowDefinition(name: "verify", steps: [.group(step)])
        definition.bucket = ["objects": .array(entries.map { .string($0.json) })]
        return definition
    }

    /// Runs the checks and returns one result per entry, in the entries' order.
    ///
    /// - Throws: `ExitCode(2)` for options that do not make a cluster, `ExitCode(3)` when the
    ///   cluster cannot start or no worker comes.
    func run() async throws -> [Result] {
        guard !entries.isEmpty else { return [] }
        let logger = CommandLineLogging.logger(label: "flow-coordinator", level: options.logLevel)
        let progress = ProgressReporter(quiet: options.quiet, pool: options.pool)
        var clusterOptions = options.cluster
        do {
            clusterOptions.curve = try options.curveServer()
            clusterOptions.pool = try options.poolOptions()
        } catch {
            CommandLineLogging.printError(error.description)
            throw ExitCode(2)
        }
        let localStart = options.bind == nil && options.pool == nil ? try? await ClusterRun.startLocal(options: clusterOptions, logger: logger) : nil
        // Stopped on every way out: a no-op once the run has taken them over.
        do {
            let results = try await run(clusterOptions: clusterOptions, logger: logger, progress: progress, localStart: localStart)
            await localStart?.stop()
            return results
        } catch {
            await localStart?.stop()
            throw error
        }
    }

    /// ``run()`` once the local workers are starting.
    private func run(clusterOptions: ClusterRun.Options, logger: Logger, progress: ProgressReporter,
                     localStart: ClusterRun.LocalStart?) async throws -> [Result] {
        let run = ClusterRun(definition: definition, options: clusterOptions, logger: logger, localStart: localStart) { progress.report($0) }
        // Only failed elements keep their lines and records: the checks are in the bucket.
        run.flow.setElementRetention(FlowElementRetention(groupsOver: 0, keepingFirst: 0))
        do {
            let endpoint = try await run.start()
            if options.bind != nil { progress.note("listening on \(endpoint); start workers with: flow-worker --connect \(WorkerEndpoint.toConnect(bound: endpoint))") }
        } catch {
            await run.stop()
            CommandLineLogging.printError(String(describing: error))
            throw ExitCode(3)
        }
        run.flow.setProgressHandler { progress.report($0) }
        progress.start { run.status }
        let interrupts = InterruptHandler { run.flow.cancel() }
        defer { interrupts.cancel() }
        try await waitForWorkers(run, progress: progress)
        let outcome = await run.run(ended: { progress.stop() })
        if outcome == .clusterError {
            CommandLineLogging.printError(run.flow.error.map { String(describing: $0) } ?? "the cluster failed")
            throw ExitCode(3)
        }
        return results(of: run.flow)
    }

    /// Waits for the workers as `run` does: local ones, a pool, `--min-workers`.
    private func waitForWorkers(_ run: ClusterRun, progress: ProgressReporter) async throws {
        if !(await run.waitForLocalWorkers()) { progress.note("not every local worker joined in time; going on with those that did") }
        if let pool = options.pool, !(await run.waitForPool(slow: { progress.note("waiting for the pool at \(pool)") })) {
            await run.stop()
            progress.stop()
            CommandLineLogging.printError("no pool answered at \(pool) within \(options.workerTimeout) s (--worker-timeout)")
            throw ExitCode(3)
        }
        if !(await run.waitForMinimumWorkers()) {
            await run.stop()
            progress.stop()
            CommandLineLogging.printError("fewer than \(options.minWorkers) worker(s) joined within \(options.workerTimeout) s (--min-workers)")
            throw ExitCode(3)
        }
    }

    /// Each entry's result: its check from the group's output, else why its element failed.
    private func results(of flow: Flow) -> [Result] {
        var checks: [String: ObjectCheck] = [:]
        for value in (flow.dataBucket["checks"] as? [Any]) ?? [] {
            if let check = ObjectCheck(value) { checks[check.target] = check }
        }
        var failures: [Int: String] = [:]
        for record in flow.operationRecords where !record.state.isSuccess {
            guard let index = record.groupIndex else { continue }
            failures[index] = record.logLines.last?.text ?? "\(record.state)"
        }
        return entries.enumerated().map { index, entry in
            if let check = checks[entry.target] { return .checked(check) }
            return .failed(failures[index] ?? (flow.isCancelled ? "not checked: the run was cancelled" : "not checked"))
        }
    }
}
