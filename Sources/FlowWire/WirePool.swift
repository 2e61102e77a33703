/// The body of HELLO: a client (a coordinator running one flow with `--pool`) registers its run
/// with a pool (docs/PROTOCOL.md §14.2).
package struct WireHello: Sendable, Hashable {
    /// The client's name, for the pool's log and `status --pool`. At most 255 bytes.
    package var clientName: String
    /// The run's id, as the client's journal names it. At most 255 bytes.
    package var runID: String
    /// The flow's name. At most 255 bytes.
    package var flowName: String
    /// Where the run was started from (`user@host`). At most 255 bytes.
    package var origin: String
    /// The run's weight in the pool's fair share (`run --share`). At least 1.
    package var share: UInt32
    /// How often the client heartbeats, in milliseconds: the pool heartbeats the client at this
    /// interval and judges its liveness by it, as a coordinator does a worker's. At least 1.
    package var heartbeatIntervalMilliseconds: UInt32

    /// Creates a HELLO body.
    package init(clientName: String, runID: String, flowName: String, origin: String, share: UInt32 = 1,
                heartbeatIntervalMilliseconds: UInt32 = 1000) {
        self.clientName = clientName
        self.runID = runID
        self.flowName = flowName
        self.origin = origin
        self.share = share
        self.heartbeatIntervalMilliseconds = heartbeatIntervalMilliseconds
    }

    /// Appends the body fields in spec order.
    package func write(to writer: inout WireWriter) {
        writer.writeString(clientName)
        writer.writeString(runID)
        writer.writeString(flowName)
        writer.writeString(origin)
        writer.writeUInt32(share)
        writer.writeUInt32(heartbeatIntervalMilliseconds)
    }

    /// Reads the body fields in spec order.
    ///
    /// - Throws: on truncation or invalid UTF-8, a text over 255 bytes, a share or heartbeat
    ///   interval of 0.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        let limit = WireLimits.maximumReadyNameBytes
        clientName = try reader.readString("client name", maximumBytes: limit)
        runID = try reader.readString("run id", maximumBytes: limit)
        flowName = try reader.readString("flow name", maximumBytes: limit)
        origin = try reader.readString("origin", maximumBytes: limit)
        let shareStart = reader.offset
        share = try reader.readUInt32("share")
        guard share > 0 else { throw WireDecodingError(.invalidField, offset: shareStart, "share: must be at least 1, got 0") }
        let intervalStart = reader.offset
        heartbeatIntervalMilliseconds = try reader.readUInt32("heartbeat interval")
        guard heartbeatIntervalMilliseconds > 0 else {
            throw WireDecodingError(.invalidField, offset: intervalStart, "heartbeat interval: must be at least 1 ms, got 0")
        }
    }
}

/// The body of WELCOME: a pool accepts a client's HELLO (docs/PROTOCOL.md §14.2).
package struct WireWelcome: Sendable, Hashable {
    /// The feature bits of WELCOME (PROTOCOL.md §14.2).
    package enum Feature {
        /// Bit 0: the pool holds the client's group budgets (§15.2 "Pools"): it takes the budget
        /// of SUBMIT's tasks (flags bit 3) and RATE from the client, with request-rate entries,
        /// divides them among its workers, and relays their PROGRESS to the client.
        package static let budgets: UInt32 = 1 << 0
        /// Bit 1: the pool takes SUBMIT's checkpoints (flags bit 4), hands them to workers that
        /// read them, and relays their CHECKPOINTs to the client (§7.9).
        package static let checkpoints: UInt32 = 1 << 1
        /// Bit 2: the pool holds this run: its client has as many runs at the pool as one client
        /// may (the pool's `--max-runs-per-client`), so its tasks wait there until one of them
        /// ends. A client says so to its user; one that does not know the bit just waits.
        package static let held: UInt32 = 1 << 2
        /// Bit 3: the pool places tasks by labels: it takes SUBMIT's placement (flags bit 5) and
        /// sends each such task only to a worker with every label (§7.10, §14.4).
        package static let placement: UInt32 = 1 << 3
    }

    /// The pool's name (its host and endpoint), for the client's log. At most 255 bytes.
    package var poolName: String
    /// Feature flags of the pool (``Feature``); a client ignores those it does not know.
    package var features: UInt32
    /// The client's credit: how many of its tasks it may have submitted and not yet answered.
    /// At least 1.
    package var slotCount: UInt32
    /// How often the pool heartbeats the client, in milliseconds (the client's own interval).
    package var heartbeatIntervalMilliseconds: UInt32

    /// Creates a WELCOME body.
    package init(poolName: String, features: UInt32 = 0, slotCount: UInt32, heartbeatIntervalMilliseconds: UInt32) {
        self.poolName = poolName
        self.features = features
        self.slotCount = slotCount
        self.heartbeatIntervalMilliseconds = heartbeatIntervalMilliseconds
    }

    /// Appends the body fields in spec order.
    package func write(to writer: inout WireWriter) {
        writer.writeString(poolName)
        writer.writeUInt32(features)
        writer.writeUInt32(slotCount)
        writer.writeUInt32(heartbeatIntervalMilliseconds)
    }

    /// Reads the body fields in spec order.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        poolName = try reader.readString("pool name", maximumBytes: WireLimits.maximumReadyNameBytes)
        features = try reader.readUInt32("features")
        let slotStart = reader.offset
        slotCount = try reader.readUInt32("slot count")
        guard slotCount > 0 else { throw WireDecodingError(.invalidField, offset: slotStart, "slot count: must be at least 1, got 0") }
        let intervalStart = reader.offset
        heartbeatIntervalMilliseconds = try reader.readUInt32("heartbeat interval")
        guard heartbeatIntervalMilliseconds > 0 else {
            throw WireDecodingError(.invalidField, offset: intervalStart, "heartbeat interval: must be at least 1 ms, got 0")
        }
    }
}

/// One result a pool hands back to the client that submitted its task: the worker's RESULT
/// (with the client's task id and attempt) and the name of the worker that ran it (DONE, §14.2).
package struct WirePoolResult: Sendable, Hashable {
    /// The worker that ran the task, as the pool names it. At most 255 bytes.
    package var worker: String
    /// The result, with the client's task id and attempt.
    package var result: WireResult

    /// Creates a pool result.
    package init(worker: String, result: WireResult) {
        self.worker = worker
        self.result = result
    }
}
