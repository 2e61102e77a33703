import ArgumentParser
import Flow
import FlowCluster
import FlowStandardOps
import Foundation
import Logging

/// The checks of `verify` as a flow of one group of `VerifyObjectOp` over the manifest entries in
/// a file (``VerifyCommand/writeObjects(journal:endpointGiven:to:)``), its checks written to
/// another, run on a cluster the way `run` starts one (``ClusterRunOptions``: local workers,
/// `--bind` or `--pool`), with its progress line; no summary and no journal.
struct VerifyRun {
    /// The objects, one manifest entry a JSON line.
    let objects: String
    /// How many lines `objects` has.
    let count: Int
    /// Where the group writes each check as it comes (`output: {file:}`).
    let checks: String
    let options: ClusterRunOptions
    /// The group's `with:`.
    let parameters: [String: FlowValue]
    let maxConcurrent: Int

    /// The group step: every element runs whatever the others do. It has no `retry`: a group
    /// without one goes to the workers in batches (`FlowEngine.runBatched`), and a check that
    /// failed is reported as such, for `verify` to be run again.
    var definition: FlowDefinition {
        let step = FlowGroupStep(op: "VerifyObjectOp", input: "", output: "", maxConcurrent: maxConcurrent, allowFailure: true,
                                 parameters: parameters, inputFile: FlowGroupInputFile(path: objects, format: .lines), outputFile: checks)
        return FlowDefinition(name: "verify", steps: [.group(step)])
    }

    /// Runs the checks and returns what they found.
    ///
    /// - Throws: `ExitCode(2)` for options that do not make a cluster, `ExitCode(3)` when the
    ///   cluster cannot start or no worker comes.
    func run() async throws -> VerifyReport {
        guard count > 0 else { return VerifyReport(objects: 0) }
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
                     localStart: ClusterRun.LocalStart?) async throws -> VerifyReport {
        let run = ClusterRun(definition: definition, options: clusterOptions, logger: logger, localStart: localStart) { progress.report($0) }
        // Only failed elements keep their lines and records: the checks are in their file.
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
        return try report(of: run.flow)
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

    /// What the checks found: read from their file a line at a time; an object without a check
    /// is reported with why its element failed, or as not checked.
    private func report(of flow: Flow) throws -> VerifyReport {
        var report = VerifyReport(objects: count)
        var checked = [UInt64](repeating: 0, count: (count + 63) / 64)
        var checkedCount = 0
        try JSONLines.forEach(in: checks) { line in
            guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                  let index = object["index"] as? Int, (0..<count).contains(index),
                  let output = object["output"], let check = ObjectCheck(output) else { return }
            checked[index >> 6] |= 1 << UInt64(index & 63)
            checkedCount += 1
            report.add(check, at: index)
        }
        var failures: [Int: String] = [:]
        for record in flow.operationRecords where !record.state.isSuccess {
            guard let index = record.groupIndex else { continue }
            failures[index] = record.logLines.last?.text ?? "\(record.state)"
        }
        guard checkedCount < count else { return report }
        // The targets of those that have no check, from the objects' file.
        var index = 0
        try JSONLines.forEach(in: objects) { line in
            defer { index += 1 }
            guard index < count, checked[index >> 6] & (1 << UInt64(index & 63)) == 0 else { return }
            let target = (try? JSONDecoder().decode(UploadManifestEntry.self, from: line))?.target ?? "object \(index + 1)"
            report.notChecked(target, at: index, why: failures[index] ?? (flow.isCancelled ? "not checked: the run was cancelled" : "not checked"))
        }
        return report
    }
}
