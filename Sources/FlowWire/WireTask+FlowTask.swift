package import Flow

extension WireTask {
    /// The TASK that runs `task` on a worker: the one conversion from the engine's task to the wire.
    ///
    /// A serial op carries the whole bucket; a group element carries its element and index. Every
    /// value is checked before anything is sent, so a worker never receives a TASK it must drop.
    ///
    /// - Parameters:
    ///   - task: what the engine asked for.
    ///   - taskID: the coordinator's id for it.
    /// - Throws: ``WireEncodingError`` naming the parameter, bucket key or element that has no wire
    ///   form or nests too deep.
    package init(_ task: FlowTask, taskID: UInt64) throws(WireEncodingError) {
        let (name, parameters) = task.registeredOperation
        for (key, value) in parameters { try WireEncodingError.checkDepth(value, "parameter <\(key)> of \(name)") }
        if let index = task.groupIndex {
            guard let element = FlowValue(any: task.groupElement as Any) else {
                throw .unsendable("group element \(index)", value: task.groupElement as Any)
            }
            try WireEncodingError.checkDepth(element, "group element \(index)")
            self.init(taskID: taskID, op: name, displayTag: task.groupTag ?? "", parameters: parameters,
                      groupElement: element, elementIndex: index)
        } else {
            var bucket = [String: FlowValue](minimumCapacity: task.bucket.count)
            for (key, value) in task.bucket {
                guard let converted = FlowValue(any: value) else { throw .unsendable("bucket value <\(key)>", value: value) }
                try WireEncodingError.checkDepth(converted, "bucket value <\(key)>")
                bucket[key] = converted
            }
            self.init(taskID: taskID, op: name, parameters: parameters, bucket: bucket)
        }
        operationAttempt = UInt32(clamping: task.operationAttempt)
        retry = WireRetryPolicy(task.retry)
        // A task whose steps keep checkpoints asks the worker for them (§7.9), with what an
        // earlier try saved (`null`: nothing yet).
        // One nested deeper than the protocol carries (§6.2) goes as `null`: never sent, as §7.9 says.
        if task.checkpoints != nil {
            let starting = task.startingCheckpoint.flatMap { $0.wireNestingDepth <= WireLimits.maximumValueDepth ? $0 : nil }
            checkpoint = .some(starting ?? .null)
        }
        if let placement = task.placement {
            self.placement = placement.labels.map { WireLabel(key: $0.key, value: $0.value) }.sorted()
        }
        placementWait = task.placementWait
        if let preferred = task.preferredPlacement {
            preference = preferred.labels.map { WireLabel(key: $0.key, value: $0.value) }.sorted()
        }
        if let limit = task.timeLimit {
            // At least 1 ms: 0 on the wire means no limit.
            timeLimitMilliseconds = UInt32(clamping: max(1, FlowSaturating.int64((limit.seconds * 1000).rounded(.up))))
        }
    }
}

extension FlowTask {
    /// The task a worker runs for a TASK: the registered op with its parameters, against the
    /// TASK's bucket, or its group element at its index. Its time limit is left to the worker's
    /// protocol state machine, which stops the op and answers for it.
    ///
    /// - Parameter wire: the TASK.
    package init(wire: WireTask) {
        if let element = wire.groupElement {
            self.init(operation: .named(wire.op, parameters: wire.parameters), bucket: [:], groupTag: wire.displayTag,
                      groupIndex: wire.elementIndex, groupElement: element.anyValue, operationName: wire.op)
        } else {
            self.init(operation: .named(wire.op, parameters: wire.parameters), bucket: wire.bucket.mapValues(\.anyValue),
                      operationName: wire.op)
        }
        // The op's try as the coordinator counts it; retries are new TASKs, so this is the
        // worker's only way to know.
        attempt = Int(wire.operationAttempt)
        retry = wire.retry?.policy ?? .none
        // What an earlier try saved (§7.9); `null` says the coordinator takes checkpoints, none yet.
        if case .some(let saved) = wire.checkpoint, saved != .null { checkpoint = saved }
    }

    /// The registered op name a worker builds this task's op from, and the parameters it builds
    /// it with: an op instance from a Swift blueprint runs as the op registered under its
    /// ``FlowOperation/operationName`` (with ``FlowRemoteOperation/remoteParameters`` when it has
    /// them).
    package var registeredOperation: (name: String, parameters: [String: FlowValue]) {
        switch operation {
        case .named(let name, let parameters):
            return (name, parameters)
        case .instance(let instance):
            return (instance.operationName, (instance as? any FlowRemoteOperation)?.remoteParameters ?? [:])
        }
    }
}
