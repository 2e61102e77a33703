import Flow
import FlowCluster
import FlowJournal
import Foundation
import Synchronization

extension RunExecution {
    /// Hands the flow's group budgets to the coordinator, and serves the run's control socket
    /// beside its journal (`status`, `pause`, `continue`, `limit`, `cancel` from another
    /// terminal); starts the run paused when it was paused as it stopped.
    ///
    /// - Returns: what to stop when the run ends: the budgets' timetables, and the server, which
    ///   there is not without a journal or when the socket's path is too long for `ipc://`
    ///   (said once).
    static func startControl(run: ClusterRun, journal: RunJournal?, definition: FlowDefinition, progress: ProgressReporter) async -> RunSteering? {
        let limits = RunGroupLimits(definition: definition, run: run)
        limits.start()
        // A pool holds the run's budgets (PROTOCOL.md §15.2 "Pools"); one that predates them is
        // named as it welcomes the run (PoolLink).
        return RunSteering(server: await startControlServer(run: run, journal: journal, flowName: definition.name, limits: limits, progress: progress),
                           limits: limits)
    }

    private static func startControlServer(run: ClusterRun, journal: RunJournal?, flowName: String, limits: RunGroupLimits,
                                           progress: ProgressReporter) async -> RunControlServer? {
        guard let journal else { return nil }
        let path = RunControl.socketPath(forJournal: journal.path)
        guard path.utf8.count <= RunControl.longestSocketPath else {
            progress.announce("no control socket: \(path) is longer than the \(RunControl.longestSocketPath) bytes ipc:// allows "
                          + "(status, pause and cancel from another terminal need a shorter --journal path)")
            return nil
        }
        let marker = RunControl.pausedMarker(forJournal: journal.path)
        let paused = Mutex(RunControl.pausedMark(at: marker, names: journal.runID, resuming: journal.info.resumes > 0))
        if paused.withLock({ $0 }) {
            run.setPaused(true)
            progress.announce("the run was paused when it stopped, and stays paused: go on with flow-coordinator continue \(journal.runID)")
        }
        let startedAt = Date()
        let runID = journal.runID
        let server: RunControlServer
        do {
            server = try await RunControlServer.start(path: path) { request in
            switch request.command {
            case "status":
                let isPaused = paused.withLock { $0 }
                return RunControl.Reply(ok: true, status: status(of: run, id: runID, flow: flowName, paused: isPaused, since: startedAt,
                                                                  progress: progress))
            case "pause", "continue":
                let pause = request.command == "pause"
                paused.withLock { $0 = pause }
                run.setPaused(pause)
                if pause {
                    RunControl.writePausedMark(at: marker, runID: runID)
                } else {
                    unlink(marker)
                }
                progress.announce(pause ? "paused from another terminal: no task starts until flow-coordinator continue \(runID)"
                                    : "continued from another terminal")
                return RunControl.Reply(ok: true)
            case "limit":
                return limit(request, limits: limits, progress: progress)
            case "cancel":
                progress.announce("cancelled from another terminal")
                run.flow.cancel()
                return RunControl.Reply(ok: true)
            default:
                return RunControl.Reply(ok: false, error: "unknown command '\(request.command.prefix(40))'")
            }
            }
        } catch {
            progress.announce("no control socket at \(path): \(error); status, pause and cancel from another terminal will not reach this run")
            return nil
        }
        return server
    }

    /// Removes the mark of a paused run once the run has ended for good (not interrupted).
    static func clearPausedMark(journal: RunJournal?) {
        if let journal { unlink(RunControl.pausedMarker(forJournal: journal.path)) }
    }

    private static func status(of run: ClusterRun, id: String, flow: String, paused: Bool, since: Date,
                               progress: ProgressReporter) -> RunControl.Status {
        let cluster = run.status
        var status = RunControl.Status(run: id, flow: flow, paused: paused, elapsedSeconds: Date().timeIntervalSince(since),
                                       workers: cluster?.workers ?? 0, slots: cluster?.slots ?? 0, running: cluster?.running ?? 0,
                                       queued: cluster?.queued ?? 0)
        let connected = run.connectedWorkers
        status.workerList = connected.isEmpty ? nil : connected
        let budgets = run.groupBudgets
        status.limits = budgets.isEmpty ? nil : budgets
        if let group = progress.groupSnapshot {
            let elapsed = max(0.001, Date().timeIntervalSince(group.startedAt))
            let rate = Double(group.done) / elapsed
            (status.step, status.done, status.failed, status.total) = (group.operation, group.done, group.failed, group.total)
            status.listed = group.total == nil ? group.listed : nil
            status.perSecond = rate
            status.etaSeconds = rate > 0 ? group.total.map { Double($0 - group.done) / rate } : nil
        }
        return status
    }
}

extension RunExecution {
    /// `limit`: new rates for a group, from now on.
    fileprivate static func limit(_ request: RunControl.Request, limits: RunGroupLimits, progress: ProgressReporter) -> RunControl.Reply {
        guard let step = request.step else { return RunControl.Reply(ok: false, error: "limit needs --step NAME") }
        do {
            // Checked again here, for a client that did not: a rate out of range would trap the
            // coordinator's conversions (FlowNumberRange).
            let bytes = try request.bytesPerSecond.map { text throws -> Int64? in
                do { return try FlowNumberRange.bytesPerSecond(text) } catch { throw RunControlError("--bytes-per-second: \(error)") }
            }
            let requests = try request.requestsPerSecond.map { text throws -> Double? in
                do { return try FlowNumberRange.requestsPerSecond(text) } catch { throw RunControlError("--requests-per-second: \(error)") }
            }
            let changed = try limits.setLimit(step: step, bytesPerSecond: bytes, requestsPerSecond: requests)
            var said: [String] = []
            if let bytes { said.append("bytes a second " + (bytes.map { RunSteering.size($0) } ?? "off")) }
            if let requests { said.append("requests a second " + (requests.map { String(format: "%g", $0) } ?? "off")) }
            progress.announce("limit from another terminal: \(changed.joined(separator: ", ")) \(said.joined(separator: ", "))")
            return RunControl.Reply(ok: true)
        } catch {
            return RunControl.Reply(ok: false, error: "\(error)")
        }
    }
}

/// What a run's steering holds until the run ends: its control socket and its group budgets'
/// timetables.
final class RunSteering: Sendable {
    let server: RunControlServer?
    let limits: RunGroupLimits

    init(server: RunControlServer?, limits: RunGroupLimits) {
        self.server = server
        self.limits = limits
    }

    /// Stops serving and following timetables; returns once the control socket's thread has
    /// ended and its file is gone.
    func stop() async {
        limits.stop()
        await server?.stop()
    }

    /// `50 MiB` style, for messages.
    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: value == value.rounded() ? "%.0f %@" : "%.1f %@", value, units[unit])
    }
}
