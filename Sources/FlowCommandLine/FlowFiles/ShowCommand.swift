import ArgumentParser
import Flow
import Foundation

/// `flow-coordinator show FLOW_FILE`: prints a flow file as an outline or a diagram.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a flow file as an outline, a Mermaid flowchart or a Graphviz graph.",
        discussion: """
            The rendering goes to stdout: pipe --format dot into `dot -Tsvg`, paste --format mermaid into \
            Markdown. Errors in the file are printed as FILE:LINE:COLUMN: message, and nothing else is.
            """
    )

    enum Format: String, CaseIterable, ExpressibleByArgument {
        case outline, mermaid, dot
    }

    @Argument(help: "The flow file (YAML or JSON).")
    var flowFile: String

    @Option(name: .long, help: "What to print.")
    var format: Format = .outline

    func run() async throws {
        let definition: FlowDefinition
        do {
            definition = try FlowFileLoader().load(contentsOf: flowFile)
        } catch {
            CommandLineLogging.printDiagnostic(String(describing: error))
            throw ExitCode(2)
        }
        switch format {
        case .outline: print(definition.outline(), terminator: "")
        case .mermaid: print(definition.mermaid(), terminator: "")
        case .dot: print(definition.dot(), terminator: "")
        }
    }
}
