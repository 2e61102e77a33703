import FlowCluster
import FlowJournal
import Foundation
import Synchronization

extension RunExecution {
    /// Serves the run's control socket beside its journal (`status`, `pause`, `continue`, `cancel`
    /// from another terminal); starts the run paused when it was paused as it stopped.
    ///
    /// - Returns: the server, `nil` without a journal or when the socket's path is too long for
    ///   `ipc://` (said once).
    static func startControl(run: ClusterRun, journal: RunJournal?, flowName: String, progress: ProgressReporter) -> RunControlServer? {
        guard let journal else { return nil }
        let path = RunControl.socketPath(forJournal: journal.path)
        guard path.utf8.count <= RunControl.longestSocketPath else {
            progress.announce("no control socket: \(path) is longer than the \(RunControl.longestSocketPath) bytes ipc:// allows "
                          + "(status, pause and cancel from another terminal need a shorter --journal path)")
            return nil
        }
        let marker = RunControl.pausedMarker(forJournal: journal.path)
        let paused = Mutex(FileManager.default.fileExists(atPath: marker))
        if paused.withLock({ $0 }) {
            run.setPaused(true)
            progress.announce("the run was paused when it stopped, and stays paused: go on with flow-coordinator continue \(journal.runID)")
        }
        let startedAt = Date()
        let runID = journal.runID
        let server: RunControlServer
        do {
            server = try RunControlServer(path: path) { request in
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
                    _ = FileManager.default.createFile(atPath: marker, contents: Data())
                } else {
                    unlink(marker)
                }
                progress.announce(pause ? "paused from another terminal: no task starts until flow-coordinator continue \(runID)"
                                    : "continued from another terminal")
                return RunControl.Reply(ok: true)
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
        if let group = progress.groupSnapshot {
            let elapsed = max(0.001, Date().timeIntervalSince(group.startedAt))
            let rate = Double(group.done) / elapsed
            (status.step, status.done, status.failed, status.total) = (group.operation, group.done, group.failed, group.total)
            status.perSecond = rate
            status.etaSeconds = rate > 0 ? Double(group.total - group.done) / rate : nil
        }
        return status
    }
}
