package import Flow
import Foundation

extension WireResult {
    /// The RESULT for what a worker's run of `task` did: the one conversion from the executor's
    /// result to the wire.
    ///
    /// A group element's bucket writes stay in its temporary bucket; only its output and index
    /// travel. A value that cannot be sent (no wire form, or nested too deep) turns the result
    /// into a failure naming it, instead of a RESULT the coordinator would have to drop.
    ///
    /// - Parameters:
    ///   - result: what the executor returned.
    ///   - task: the TASK it answers.
    package init(_ result: FlowTaskResult, for task: WireTask) {
        var state = result.state
        var permanent = result.isPermanentFailure
        var events: [WireEvent] = []
        events.reserveCapacity(result.events.count)
        for event in result.events {
            switch event.kind {
            case .log(let text):
                events.append(WireEvent(time: event.time, kind: .log(text)))
            case .set(let key, let value):
                if task.isGroupElement { continue }
                do throws(WireEncodingError) {
                    guard let converted = FlowValue(any: value) else { throw .unsendable("\(task.op) set <\(key)>, which", value: value) }
                    try WireEncodingError.checkDepth(converted, "\(task.op) set <\(key)> to a value that")
                    events.append(WireEvent(time: event.time, kind: .set(key: key, value: converted)))
                } catch {
                    state = .withError(error.description)
                    permanent = true
                }
            }
        }
        var output: FlowValue?
        if task.isGroupElement, let value = result.groupOutput {
            do throws(WireEncodingError) {
                guard let converted = FlowValue(any: value) else { throw .unsendable("\(task.op)'s output", value: value) }
                try WireEncodingError.checkDepth(converted, "\(task.op)'s output")
                output = converted
            } catch {
                state = .withError(error.description)
                permanent = true
            }
        }
        let retryAfter = result.retryAfter.map(FlowSaturating.milliseconds) ?? 0
        self.init(taskID: task.taskID, attempt: task.attempt, finishState: state, startedAt: result.startedAt,
                  finishedAt: result.finishedAt, events: events, elementIndex: task.isGroupElement ? task.elementIndex : nil,
                  output: output, isPermanent: permanent, retryAfterMilliseconds: retryAfter)
    }
}

extension FlowTaskResult {
    /// What a worker's RESULT says the op did, for the engine: the one conversion from the wire.
    ///
    /// - Parameters:
    ///   - wire: the accepted RESULT.
    ///   - task: the TASK it answers, as the engine gave it: the op's name, and the try its op
    ///     saw (``WireTask/operationAttempt``; the RESULT's own attempt counts dispatches).
    ///   - worker: the worker that ran it.
    ///
    /// The texts a worker sent that are printed (its error, its log lines) have their control
    /// characters escaped (`String.escapingControlCharacters`): they come from a peer.
    package init(wire: WireResult, for task: WireTask, worker: String) {
        let events = wire.events.map { event -> FlowRecordedEvent in
            switch event.kind {
            case .log(let text): return FlowRecordedEvent(time: event.time, kind: .log(text.escapingControlCharacters))
            case .set(let key, let value): return FlowRecordedEvent(time: event.time, kind: .set(key: key, value: value.anyValue))
            }
        }
        var state = wire.finishState
        if case .withError(let text) = state { state = .withError(text.escapingControlCharacters) }
        self.init(operationName: task.op, state: state, events: events, bucket: [:],
                  startedAt: wire.startedAt, finishedAt: wire.finishedAt, worker: worker, attempt: Int(task.operationAttempt))
        groupIndex = wire.elementIndex
        groupOutput = wire.output?.anyValue
        if case .withError = wire.finishState { isPermanentFailure = wire.isPermanent }
        retryAfter = wire.retryAfterMilliseconds > 0 ? .milliseconds(Int64(clamping: wire.retryAfterMilliseconds)) : nil
    }
}
