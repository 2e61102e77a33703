import ArgumentParser
import Flow
import FlowStandardOps
import Foundation

/// `flow-coordinator validate FLOW_FILE`: checks a flow file without running it.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a flow file: syntax, structure, op names, and the stock ops' parameters.",
        discussion: """
            Every error is printed as FILE:LINE:COLUMN: message. Op names that the stock flow-worker does not \
            offer are warnings (your own workers may offer them); with --strict they are errors. A key under \
            'with:' that a stock op does not take is an error. The parameters of the stock ops are checked as \
            their workers will read them (a ${key} taken from the flow's starting \
            bucket; a step whose parameters name a key made later is checked when it runs).
            """
    )

    @Argument(help: "The flow file (YAML or JSON).")
    var flowFile: String

    @Flag(name: .long, help: "Treat op names the stock flow-worker does not offer as errors.")
    var strict = false

    func run() async throws {
        let standard = FlowOperationRegistry.standard
        let definition: FlowDefinition
        do {
            definition = try FlowFileLoader(registry: strict ? standard : nil, parameterDeclarations: standard).load(contentsOf: flowFile)
        } catch {
            CommandLineLogging.printDiagnostic(String(describing: error))
            throw ExitCode(2)
        }
        var warnings = 0
        definition.forEachOperation { name, location in
            guard !standard.contains(name) else { return }
            warnings += 1
            let place = location.map { "\($0): " } ?? ""
            let guess = standard.suggestion(for: name).map { " (did you mean '\($0)'?)" } ?? ""
            CommandLineLogging.printDiagnostic("\(place)warning: op '\(name)' is not offered by the stock flow-worker\(guess); run it with workers that register it")
        }
        var errors = 0
        let startingBucket = definition.bucket.mapValues(\.anyValue)
        definition.forEachOperation { name, parameters, location in
            guard standard.contains(name), let resolved = try? standard.resolveParameters(of: name, parameters, bucket: startingBucket) else { return }
            do {
                _ = try standard.makeOperation(named: name, parameters: resolved)
            } catch {
                errors += 1
                let place = location.map { "\($0): " } ?? "\(flowFile): "
                CommandLineLogging.printDiagnostic("\(place)error: \(error)")
            }
        }
        if errors > 0 { throw ExitCode(2) }
        print("\(flowFile): ok (flow '\(definition.name)', \(definition.stepCount) steps\(warnings > 0 ? ", \(warnings) warning(s)" : ""))")
    }
}
