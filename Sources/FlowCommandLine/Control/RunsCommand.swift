import ArgumentParser
import FlowJournal
import Foundation

/// `flow-coordinator runs`: the runs whose journals are in a folder.
struct RunsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List runs from their journals: id, flow, state, start, progress.",
        discussion: """
            State is running, succeeded, failed, or interrupted (stopped before its end: flow-coordinator resume \
            ID goes on with it). Progress is results recorded / what the run had to do as far as it got.
            """
    )

    @Option(name: .long, help: ArgumentHelp("Where run journals are (default: $XDG_STATE_HOME/flow/runs, or ~/.local/state/flow/runs).", valueName: "DIR"))
    var dir: String?

    func run() async throws {
        let folder = dir ?? RunJournal.defaultFolder()
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sqlite") }
        } catch {
            if !FileManager.default.fileExists(atPath: folder) {
                print("no runs in \(folder)")
                return
            }
            CommandLineLogging.printError("cannot read \(folder): \(error.localizedDescription)")
            throw ExitCode(2)
        }
        var runs: [RunJournalInfo] = []
        for name in names {
            do {
                runs.append(try RunJournal.read(at: folder + "/" + name))
            } catch {
                CommandLineLogging.printDiagnostic("warning: \(error)")
            }
        }
        guard !runs.isEmpty else {
            print("no runs in \(folder)")
            return
        }
        runs.sort { $0.startedAt < $1.startedAt }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let rows = runs.map { run in
            [run.runID, run.flowName, run.state.rawValue + (run.resumes > 0 ? " (resumed \(run.resumes)x)" : ""),
             formatter.string(from: run.startedAt), "\(run.done)/\(run.total)"]
        }
        let header = ["ID", "FLOW", "STATE", "STARTED", "PROGRESS"]
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            print(row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }

    /// The journal a run id names in `folder`, or the argument itself when it is a file's path.
    static func journalPath(for run: String, folder: String) -> String {
        if run.contains("/") || run.hasSuffix(".sqlite") || FileManager.default.fileExists(atPath: run) { return run }
        return folder + "/" + run + ".sqlite"
    }
}
