package import Flow
package import Foundation

/// One finished task in a RESULT batch.
package struct WireResult: Sendable, Hashable {
    /// The task id from the TASK.
    package var taskID: UInt64
    /// The attempt from the TASK; a coordinator discards a result for any other attempt.
    package var attempt: UInt32
    /// How the op finished.
    package var finishState: FlowFinishState { didSet { encodedTail.forgetHead() } }
    /// For a failure: whether trying again would fail the same way.
    package var isPermanent: Bool { didSet { encodedTail.forgetHead() } }
    /// For a transient failure: how long the op asked to wait before another try; 0 for none.
    package var retryAfterMilliseconds: UInt64 { didSet { encodedTail.forgetHead() } }
    /// When the op started, on the worker's clock (microsecond resolution on the wire).
    package var startedAt: Date { didSet { encodedTail.forgetHead() } }
    /// When the op finished, on the worker's clock (microsecond resolution on the wire).
    package var finishedAt: Date { didSet { encodedTail.forgetHead() } }
    /// What the op did, in the order it did it: log lines and bucket writes.
    package var events: [WireEvent] { didSet { encodedTail = EncodedTail() } }
    /// For a group element, its index in the group, from the TASK; `nil` for a serial op.
    package var elementIndex: Int? { didSet { encodedTail = EncodedTail() } }
    /// For a group element, the value the op left at its `primaryOutputParamKey`; `nil` when it
    /// left none. Only a group element's result carries one: it is not encoded without an
    /// ``elementIndex``.
    package var output: FlowValue? { didSet { encodedTail = EncodedTail() } }
    /// The events, element index and output as ``write(to:)`` writes them, when they were encoded
    /// ahead (``encodingTailAhead()``); forgotten when any of them changes.
    package internal(set) var encodedTail = EncodedTail()

    /// Creates a result.
    package init(
        taskID: UInt64,
        attempt: UInt32,
        finishState: FlowFinishState,
        startedAt: Date,
        finishedAt: Date,
        events: [WireEvent] = [],
        elementIndex: Int? = nil,
        output: FlowValue? = .none,
        isPermanent: Bool = false,
        retryAfterMilliseconds: UInt64 = 0
    ) {
        self.taskID = taskID
        self.attempt = attempt
        self.finishState = finishState
        let finish = WireFinish(finishState, isPermanent: isPermanent, retryAfterMilliseconds: retryAfterMilliseconds)
        self.isPermanent = finish.isPermanent
        self.retryAfterMilliseconds = finish.retryAfterMilliseconds
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.events = events
        self.elementIndex = elementIndex
        self.output = elementIndex == nil ? .none : output
    }
}

extension WireResult {
    /// The fewest bytes one result takes: fixed fields, empty text, no events, no output.
    static let minimumEncodedSize = 8 + 4 + 1 + 1 + 8 + 8 + 1 + 1

    /// Appends the result's fields in spec order.
    package func write(to writer: inout WireWriter) {
        writer.writeUInt64(taskID)
        writer.writeUInt32(attempt)
        if let kept = encodedTail.headAndTail {
            writer.writeRaw(kept)
            return
        }
        writer.writeFinish(WireFinish(finishState, isPermanent: isPermanent, retryAfterMilliseconds: retryAfterMilliseconds))
        writer.writeDate(startedAt)
        writer.writeDate(finishedAt)
        if let bytes = encodedTail.bytes {
            writer.writeRaw(bytes)
            return
        }
        writeTail(to: &writer)
    }

    /// Appends the events, the element index and the output.
    func writeTail(to writer: inout WireWriter) {
        writer.writeVarint(UInt64(events.count))
        for event in events {
            writer.writeEvent(event)
        }
        switch (elementIndex, output) {
        case (nil, _):
            writer.writeUInt8(0x00)
        case (let index?, nil):
            writer.writeUInt8(0x01)
            writer.writeVarint(UInt64(index))
        case (let index?, let output?):
            writer.writeUInt8(0x02)
            writer.writeVarint(UInt64(index))
            writer.writeValue(output)
        }
    }

    /// Reads the result's fields in spec order.
    ///
    /// - Parameter keepingTail: keep the bytes of the finish state, times, events, element index
    ///   and output as read (``encodedTail``), for a pool that relays the result into a DONE.
    /// - Throws: on any malformed field.
    package init(reading reader: inout WireReader, keepingTail: Bool = false) throws(WireDecodingError) {
        taskID = try reader.readUInt64("task id")
        attempt = try reader.readUInt32("attempt")
        let headStart = reader.offset
        let finish = try reader.readFinish("finish state")
        finishState = finish.state
        isPermanent = finish.isPermanent
        retryAfterMilliseconds = finish.retryAfterMilliseconds
        startedAt = try reader.readDate("started at")
        finishedAt = try reader.readDate("finished at")
        let tailStart = reader.offset
        let count = try reader.readCount(minimumElementSize: WireReader.minimumEventSize, "events")
        var events: [WireEvent] = []
        events.reserveCapacity(count)
        for _ in 0..<count {
            events.append(try reader.readEvent("event"))
        }
        self.events = events
        let outputStart = reader.offset
        switch try reader.readUInt8("element") {
        case 0x00:
            (elementIndex, output) = (nil, .none)
        case 0x01:
            (elementIndex, output) = (try reader.readIndex("element index"), .none)
        case 0x02:
            elementIndex = try reader.readIndex("element index")
            output = .some(try reader.readValue("output"))
        case let marker:
            throw WireDecodingError(.invalidField, offset: outputStart, "element: marker must be 0x00, 0x01 or 0x02, got 0x\(marker.hexDigits)")
        }
        if keepingTail {
            encodedTail = EncodedTail(reader.bytes[headStart..<reader.offset], tailStart: tailStart)
        }
    }
}
