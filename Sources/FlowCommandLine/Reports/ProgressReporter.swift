import Flow
import FlowCluster
import Foundation
import Logging
import Synchronization

/// Progress on stderr: a live line redrawn in place while a group runs when stderr is a terminal,
/// plain lines every few seconds otherwise; which worker runs each serial op; cluster events.
final class ProgressReporter: Sendable {
    private struct Group {
        var operation: String
        /// `nil` while a group reading a file has not read it to the end.
        var total: Int?
        /// Elements known so far (all of them once ``total`` is known).
        var listed = 0
        var done = 0
        var failed = 0
        var startedAt = Date()
        var lastPrinted = Date.distantPast
    }

    private let quiet: Bool

    private let pool: String?
    private let isTerminal: Bool
    private let plainInterval: Double
    /// `22:41:03`, for throttling notes.
    private static let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter
    }()
    /// What changes while a run goes on, changed by the engine's, the cluster's and the timer's
    /// threads.
    private struct State {
        var group: Group?
        /// The group that runs now or ran last, kept when progress is quiet too.
        var tracked: Group?
        var lineIsOpen = false
        var status: (@Sendable () -> FlowCoordinator.Status?)?
        var timer: (any DispatchSourceTimer)?
        var stopped = false

        /// Prints a whole line, above the live progress line if one is open.
        mutating func emit(_ text: String) {
            guard !stopped else { return }
            if lineIsOpen {
                ProgressReporter.write("\r\u{1B}[K")
                lineIsOpen = false
            }
            ProgressReporter.write(text + "\n")
        }
    }

    private let state = Mutex(State())

    /// - Parameters:
    ///   - quiet: no progress at all (diagnostics still print).
    ///   - plainInterval: seconds between plain progress lines when stderr is not a terminal.
    /// - Parameter pool: the pool the run's tasks go to (`--pool`): the line counts tasks there,
    ///   not the slots of its one "worker".
    init(quiet: Bool, plainInterval: Double = 2, pool: String? = nil) {
        self.quiet = quiet
        self.pool = pool
        self.isTerminal = isatty(STDERR_FILENO) == 1
        self.plainInterval = plainInterval
    }

    /// The group that runs now (or ran last): its op, elements done, failed and in all, and when
    /// it started; `nil` before the first group.
    /// `total` is `nil` while a group reading its input file has not read it to the end;
    /// `listed` counts the elements known so far.
    var groupSnapshot: (operation: String, done: Int, failed: Int, total: Int?, listed: Int, startedAt: Date)? {
        state.withLock { $0.tracked.map { ($0.operation, $0.done, $0.failed, $0.total, $0.listed, $0.startedAt) } }
    }

    /// Follows the groups for ``groupSnapshot``, quiet or not (`status RUN_ID` asks).
    private func track(_ event: FlowProgressEvent) {
        state.withLock { state in
            switch event {
            case .groupStarted(let operation, let total, _):
                state.tracked = Group(operation: operation, total: total, listed: total ?? 0)
            case .groupListed(_, let listed, let complete):
                state.tracked?.listed = listed
                if complete { state.tracked?.total = listed }
            case .groupElementFinished(_, let done, let failed, _), .groupFinished(_, let done, let failed, _):
                state.tracked?.done = done
                state.tracked?.failed = failed
            case .operationStarted, .operationFinished:
                break
            }
        }
    }

    /// Starts redrawing every half second, reading the cluster's busy slots from `status`.
    func start(status: @escaping @Sendable () -> FlowCoordinator.Status?) {
        guard !quiet else { return }
        // Made under the lock, where it is kept: the timer is not Sendable. Its handler takes the
        // lock on the timer's queue, later.
        state.withLock { state in
            state.status = status
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + 0.5, repeating: 0.5)
            timer.setEventHandler { [weak self] in self?.refresh(force: false) }
            timer.resume()
            state.timer = timer
        }
    }

    /// Ends progress output: the timer, and every note and event after it (the run's end, where
    /// its own workers leaving is not news and would cut into the summary on a terminal).
    func stop() {
        state.withLock { state in
            // Cancelling does not wait for a running handler, which would need the lock.
            state.timer?.cancel()
            if state.lineIsOpen { Self.write("\n") }
            state.lineIsOpen = false
            state.stopped = true
        }
    }

    /// Shows a cluster event: routine ones (a worker joined, a serial op dispatched) as notes;
    /// warnings reach stderr through the logger, and debug-level protocol noise not at all.
    func report(_ event: ClusterEvent) {
        if case .throttled = event {
            // When, for the user to match against the store's side.
            note(event.description + " at " + Self.clock.string(from: Date()))
        } else if case .dispatched = event {
            note(event.description)
        } else if event.logLevel == .info {
            note(event.description)
        }
    }

    func note(_ text: String) {
        guard !quiet else { return }
        state.withLock { $0.emit("[cluster] \(text)") }
    }

    /// A line the user must see even with `--quiet` (the run was steered from elsewhere): above
    /// the live line when there is one.
    func announce(_ text: String) {
        guard !quiet else { return CommandLineLogging.printDiagnostic("[run] \(text)") }
        state.withLock { $0.emit("[run] \(text)") }
    }

    func report(_ event: FlowProgressEvent) {
        track(event)
        guard !quiet else { return }
        switch event {
        case .groupStarted(let operation, let total, let limit):
            state.withLock { state in
                state.group = Group(operation: operation, total: total, listed: total ?? 0)
                let count = total.map { "\($0) element(s)" } ?? "elements taken as they are listed"
                state.emit("group \(operation): \(count), at most \(limit) at once")
            }
        case .groupListed(_, let listed, let complete):
            state.withLock { state in
                state.group?.listed = listed
                if complete { state.group?.total = listed }
            }
        case .groupElementFinished(_, let done, let failed, _):
            state.withLock { state in
                state.group?.done = done
                state.group?.failed = failed
            }
            refresh(force: false)
        case .groupFinished(let operation, let done, let failed, let total):
            if !isTerminal { refresh(force: true) }
            state.withLock { state in
                // The live line gives way to the group's closing line.
                if state.lineIsOpen { Self.write("\r\u{1B}[K") }
                state.lineIsOpen = false
                let seconds = state.group.map { Date().timeIntervalSince($0.startedAt) } ?? 0
                state.emit("group \(operation): \(done)/\(total.map(String.init) ?? "?") done, \(failed) failed in \(FlowDurationText.tenths(.seconds(seconds)))")
                state.group = nil
            }
        case .operationStarted, .operationFinished:
            break
        }
    }

    private func refresh(force: Bool) {
        guard !quiet else { return }
        let statusReader = state.withLock { $0.status }
        let cluster = statusReader?()
        state.withLock { state in
            guard var current = state.group, !state.stopped else { return }
            let now = Date()
            if !isTerminal && !force && now.timeIntervalSince(current.lastPrinted) < plainInterval { return }
            if isTerminal && !force && now.timeIntervalSince(current.lastPrinted) < 0.1 { return }
            current.lastPrinted = now
            state.group = current
            let elapsed = max(0.001, now.timeIntervalSince(current.startedAt))
            var line = Self.line(current, elapsed: elapsed)
            if let cluster, let pool {
                line += cluster.workers > 0 ? ", \(cluster.running) at the pool" : ", waiting for the pool at \(pool)"
            } else if let cluster {
                line += ", workers busy \(cluster.running)/\(cluster.slots) slots on \(cluster.workers)"
            }
            if isTerminal {
                Self.write("\r\u{1B}[K" + line)
                state.lineIsOpen = true
            } else {
                Self.write("progress: " + line + "\n")
            }
        }
    }

    /// The live line's counts: done of the total with an ETA, or, while the group's input file
    /// is still read, how many elements are known so far.
    private static func line(_ group: Group, elapsed: Double) -> String {
        let rate = Double(group.done) / elapsed
        let rateText = String(format: "%.1f", rate)
        guard let total = group.total else {
            return "\(group.operation): listed \(grouped(group.listed)) (still listing), done \(grouped(group.done)), "
                + "\(group.failed) failed, \(rateText)/s"
        }
        let eta = rate > 0 ? FlowDurationText.compact(seconds: Double(total - group.done) / rate) : "?"
        return "\(group.operation): \(group.done)/\(total) done, \(group.failed) failed, \(rateText)/s, ETA \(eta)"
    }

    /// `3,204,000`.
    static func grouped(_ number: Int) -> String {
        var text = String(number.magnitude)
        var index = text.endIndex
        while text.distance(from: text.startIndex, to: index) > 3 {
            index = text.index(index, offsetBy: -3)
            text.insert(",", at: index)
        }
        return number < 0 ? "-" + text : text
    }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
