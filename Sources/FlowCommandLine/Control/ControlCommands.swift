import ArgumentParser
import Flow
import FlowJournal
import Foundation

/// Where a running run's control socket is: the run's id (or journal file) and the journal folder.
struct RunControlTarget: ParsableArguments {
    @Argument(help: ArgumentHelp("The run's id (see flow-coordinator runs) or its journal file.", valueName: "RUN_ID"))
    var run: String

    @Option(name: .long, help: ArgumentHelp("Where run journals are (default: $XDG_STATE_HOME/flow/runs, or ~/.local/state/flow/runs).", valueName: "DIR"))
    var dir: String?

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the run's answer.", valueName: "SECONDS"))
    var timeout: Double = 5

    /// The longest `--timeout`: an hour.
    static let longestTimeout = 3600.0

    func validate() throws {
        // Checked here: it becomes whole milliseconds, which `1e300` or `inf` would trap.
        guard timeout >= 0.1, timeout <= Self.longestTimeout else {
            throw ValidationError("--timeout \(timeout) is out of range: give 0.1 to \(Int(Self.longestTimeout)) seconds")
        }
    }

    /// The control socket's path.
    var socketPath: String {
        RunControl.socketPath(forJournal: RunsCommand.journalPath(for: run, folder: dir ?? RunJournal.defaultFolder()))
    }

    /// Sends `command` and exits 3 with the reason when the run does not take it.
    func send(_ command: String) throws -> RunControl.Reply {
        try send(RunControl.Request(command: command))
    }

    /// Sends `request` and exits 3 with the reason when the run does not take it.
    func send(_ request: RunControl.Request) throws -> RunControl.Reply {
        let command = request.command
        let reply: RunControl.Reply
        do {
            reply = try RunControl.send(request, to: socketPath, timeout: .milliseconds(Int64((min(max(0.1, timeout), Self.longestTimeout) * 1000).rounded())))
        } catch {
            CommandLineLogging.printError("\(error)")
            throw ExitCode(3)
        }
        guard reply.ok else {
            CommandLineLogging.printError(reply.error ?? "the run refused '\(command)'")
            throw ExitCode(3)
        }
        return reply
    }
}

/// `flow-coordinator pause RUN_ID`: no new task of the run starts; running ones finish.
struct PauseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause a running run: no task starts until continue; running ones finish.",
        discussion: "A run paused when its coordinator stops stays paused after resume. Exit codes: 0 done; 3 no such run going on.")

    @OptionGroup var target: RunControlTarget

    func run() throws {
        _ = try target.send("pause")
        print("paused \(target.run): go on with flow-coordinator continue \(target.run)")
    }
}

/// `flow-coordinator continue RUN_ID`: a paused run goes on.
struct ContinueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continue", abstract: "Let a paused run go on.", discussion: "Exit codes: 0 done; 3 no such run going on.")

    @OptionGroup var target: RunControlTarget

    func run() throws {
        _ = try target.send("continue")
        print("continued \(target.run)")
    }
}

/// `flow-coordinator cancel RUN_ID`: as Ctrl-C in the run's terminal.
struct CancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel a running run, as Ctrl-C in its terminal (resume continues it).",
        discussion: "Exit codes: 0 done; 3 no such run going on.")

    @OptionGroup var target: RunControlTarget

    func run() throws {
        _ = try target.send("cancel")
        print("cancelled \(target.run): flow-coordinator resume \(target.run) continues it")
    }
}

/// `flow-coordinator limit RUN_ID --step NAME --bytes-per-second 50MiB --requests-per-second 500`:
/// new rates for a group of a running run, for the whole cluster, from now on.
struct LimitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "limit",
        abstract: "Change a running group's budget: bytes or op starts a second, for the whole cluster.",
        discussion: """
            The new rates hold within a second, instead of the flow file's limit and its schedule, until the run ends. \
            A rate not given stays as it is; 'off' lifts it. Bytes a second go from 1 B to 1 TiB, requests a second from 0.001 \
            to 1000000. Exit codes: 0 done; 2 bad options (a rate out of range); 3 no such run or group.
            """)

    @OptionGroup var target: RunControlTarget

    @Option(name: .long, help: ArgumentHelp("The group: its op (as status shows it), OP@LINE, or the line it is written on.", valueName: "NAME"))
    var step: String

    @Option(name: .long, help: ArgumentHelp("Bytes a second (50MiB, 512KiB, 1000000) or off.", valueName: "SIZE"))
    var bytesPerSecond: String?

    @Option(name: .long, help: ArgumentHelp("Requests a second (op starts and the parts of multipart uploads), or off.", valueName: "N"))
    var requestsPerSecond: String?

    func validate() throws {
        guard bytesPerSecond != nil || requestsPerSecond != nil else {
            throw ValidationError("give --bytes-per-second or --requests-per-second (a rate, or off)")
        }
        // Refused here, with exit 2, rather than by the run (exit 3) or not at all: a rate out of
        // range once reached the run's coordinator and killed it.
        do {
            _ = try bytesPerSecond.map(FlowNumberRange.bytesPerSecond)
        } catch {
            throw ValidationError("--bytes-per-second: \(error)")
        }
        do {
            _ = try requestsPerSecond.map(FlowNumberRange.requestsPerSecond)
        } catch {
            throw ValidationError("--requests-per-second: \(error)")
        }
    }

    func run() throws {
        _ = try target.send(RunControl.Request(command: "limit", step: step, bytesPerSecond: bytesPerSecond?.lowercased() == "off" ? "off" : bytesPerSecond,
                                               requestsPerSecond: requestsPerSecond?.lowercased() == "off" ? "off" : requestsPerSecond))
        let rates = [bytesPerSecond.map { "\($0) bytes a second" }, requestsPerSecond.map { "\($0) requests a second" }].compactMap { $0 }
        print("limited \(step) of \(target.run) to \(rates.joined(separator: " and "))")
    }
}
