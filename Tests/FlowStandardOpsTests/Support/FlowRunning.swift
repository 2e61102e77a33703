import Flow
import FlowStandardOps
import Foundation

/// Runs a flow made of the given steps on the standard registry, in this process.
func runFlow(bucket: [String: FlowValue] = [:], steps: [FlowStep]) async -> Flow {
    let flow = Flow(definition: FlowDefinition(name: "test", bucket: bucket, steps: steps), registry: .standard)
    await flow.run()
    return flow
}

/// A serial step.
func step(_ op: String, _ parameters: [String: FlowValue] = [:]) -> FlowStep {
    .operation(FlowOperationStep(op: op, parameters: parameters))
}

/// A group step.
func group(_ op: String, input: String, output: String, maxConcurrent: Int = 3, allowFailure: Bool = false,
           _ parameters: [String: FlowValue] = [:]) -> FlowStep {
    .group(FlowGroupStep(op: op, input: input, output: output, maxConcurrent: maxConcurrent, allowFailure: allowFailure,
                         parameters: parameters))
}

/// A list of strings as a bucket value.
func strings(_ values: [String]) -> FlowValue {
    .array(values.map(FlowValue.string))
}

extension Flow {
    /// The summary lines' texts.
    var lines: [String] { logEntries.map(\.text) }

    /// The flow's error in words, or "" when it has none.
    var errorText: String { error.map { String(describing: $0) } ?? "" }
}

/// Runs one registered op on a bucket, as a serial step would.
func runOperation(_ name: String, _ parameters: [String: FlowValue] = [:], bucket: [String: Any] = [:]) async throws -> FlowTaskResult {
    let operation = try FlowOperationRegistry.standard.makeOperation(named: name, parameters: parameters)
    return await FlowOperationRunner.run(operation, bucket: bucket, groupTag: nil)
}

extension FlowTaskResult {
    /// The op's log lines.
    var logLines: [String] {
        events.compactMap { event in
            if case .log(let line) = event.kind { return line }
            return nil
        }
    }
}
