import Flow
import FlowWire
import Foundation

/// Runs one TASK on this worker and turns what the op did into a RESULT.
struct WorkerTaskRunner: Sendable {
    let registry: FlowOperationRegistry
    let workerName: String

    func run(_ task: WireTask) async -> WireResult {
        let startedAt = Date()
        let operation: FlowOperation
        do {
            operation = try registry.makeOperation(named: task.op, parameters: task.parameters)
        } catch FlowError.unknownOperation(let name) {
            return failure(task, startedAt, "worker \(workerName) has no op named \(name); its ops: \(registry.names.joined(separator: ", "))")
        } catch {
            return failure(task, startedAt, String(describing: error))
        }

        let result: FlowTaskResult
        if task.timeLimitMilliseconds > 0 {
            result = await withTimeLimit(milliseconds: task.timeLimitMilliseconds, operation: operation) {
                await execute(operation, task)
            }
        } else {
            result = await execute(operation, task)
        }
        return wireResult(task, result, isGroupElement: task.groupElement != nil)
    }

    private func execute(_ operation: FlowOperation, _ task: WireTask) async -> FlowTaskResult {
        if let element = task.groupElement {
            return await FlowOperationRunner.runGroupElement(operation, element: element.anyValue, index: 0, groupTag: task.displayTag)
        }
        return await FlowOperationRunner.run(operation, bucket: task.bucket.mapValues(\.anyValue), groupTag: nil)
    }

    private func withTimeLimit(
        milliseconds: UInt32, operation: FlowOperation, _ body: @escaping @Sendable () async -> FlowTaskResult
    ) async -> FlowTaskResult {
        await withTaskGroup(of: FlowTaskResult?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(milliseconds)))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            if let first { return first }
            let partial = await group.next() ?? nil
            var result = partial ?? FlowTaskResult.failure(FlowError.cancelled, operationName: operation.operationName)
            result.state = .withError("time limit of \(milliseconds) ms exceeded")
            return result
        }
    }

    private func wireResult(_ task: WireTask, _ result: FlowTaskResult, isGroupElement: Bool) -> WireResult {
        var state = result.state
        var events: [FlowOperationEvent] = []
        events.reserveCapacity(result.events.count)
        for event in result.events {
            switch event.kind {
            case .log(let text):
                events.append(FlowOperationEvent(time: event.time, kind: .log(text)))
            case .set(let key, let value):
                // A group element's writes stay in its temporary bucket; only its output travels.
                if isGroupElement { continue }
                guard let converted = FlowValue(any: value) else {
                    state = .withError("\(task.op) set <\(key)> to a value of type \(type(of: value)), which cannot be sent back to the coordinator")
                    continue
                }
                events.append(FlowOperationEvent(time: event.time, kind: .set(key: key, value: converted)))
            }
        }
        var output: FlowValue?
        if isGroupElement, let value = result.groupOutput {
            output = FlowValue(any: value)
            if output == nil {
                state = .withError("\(task.op) output of type \(type(of: value)) cannot be sent back to the coordinator")
            }
        }
        return WireResult(taskID: task.taskID, attempt: task.attempt, finishState: state, startedAt: result.startedAt,
                          finishedAt: result.finishedAt, events: events, output: output)
    }

    private func failure(_ task: WireTask, _ startedAt: Date, _ text: String) -> WireResult {
        WireResult(taskID: task.taskID, attempt: task.attempt, finishState: .withError(text), startedAt: startedAt,
                   finishedAt: Date(), events: [])
    }
}
