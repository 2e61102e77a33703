/// The body of READY: a worker announces itself, its capacity and the ops it offers.
package struct WireReady: Sendable, Hashable {
    /// The worker's name, as the summary shows it (unique per cluster by convention, not by rule).
    /// At most ``WireLimits/maximumReadyNameBytes`` bytes.
    package var workerName: String
    /// Protocol feature flags the worker supports (``Feature``); unknown bits are ignored.
    package var features: UInt32
    /// How many tasks the worker runs at once: the coordinator's credit for it. At least 1.
    package var slotCount: UInt32
    /// The registered op names the worker can run: at most ``WireLimits/maximumReadyOperations``,
    /// each at most ``WireLimits/maximumOperationNameBytes`` bytes.
    package var ops: [String]
    /// The worker machine's host name, for the summary and diagnostics. At most
    /// ``WireLimits/maximumReadyNameBytes`` bytes.
    package var hostname: String
    /// The worker's process id, for diagnostics.
    package var processID: UInt32
    /// How often the worker heartbeats, in milliseconds: the coordinator heartbeats this worker at
    /// the same interval and declares it dead after `LIVENESS` such intervals of silence, so the
    /// two sides never disagree about liveness. At least 1.
    package var heartbeatIntervalMilliseconds: UInt32

    /// Creates a READY body.
    package init(workerName: String, features: UInt32 = 0, slotCount: UInt32, ops: [String], hostname: String, processID: UInt32,
                heartbeatIntervalMilliseconds: UInt32 = 1000) {
        self.workerName = workerName
        self.features = features
        self.slotCount = slotCount
        self.ops = ops
        self.hostname = hostname
        self.processID = processID
        self.heartbeatIntervalMilliseconds = heartbeatIntervalMilliseconds
    }
}

extension WireReady {
    /// The feature bits of READY (PROTOCOL.md §7.1).
    package enum Feature {
        /// Bit 0: the worker reads a TASK's op attempt (flags bit 1) and gives it to the op.
        package static let operationAttempt: UInt32 = 1 << 0
        /// Bit 1: the worker reads a TASK's retry policy (flags bit 2) and gives it to the op.
        package static let retryPolicy: UInt32 = 1 << 1
        /// Bit 2: the worker queues up to its slot count of tasks beyond its free slots, starts
        /// them in arrival order as slots free, gives them back unrun (RETURNED) when one of its
        /// tasks fails or the coordinator sends RECALL.
        package static let queue: UInt32 = 1 << 2
        /// Bit 3: the worker takes CANCEL (a pool's): it stops the named tasks, running or queued,
        /// and answers each with a `cancelled` RESULT (§7.8).
        package static let cancel: UInt32 = 1 << 3
        /// Bit 4: the worker reads a TASK's budget (flags bit 3), holds its ops' progress to the
        /// bytes rates RATE gives it, and reports bytes sent with PROGRESS (§15).
        package static let progress: UInt32 = 1 << 4
        /// Bit 5: with bit 4, the worker also takes request-rate entries in RATE, holds the
        /// requests its ops report (each part of a multipart upload) to them, and reports them in
        /// PROGRESS as request entries (§15).
        package static let requests: UInt32 = 1 << 5
        /// Bit 6: the worker reads a TASK's checkpoint (flags bit 4), gives it to the op, and
        /// sends what the op saves as CHECKPOINT (§7.9).
        package static let checkpoint: UInt32 = 1 << 6
        /// Bit 7: the worker has labels (`flow-worker --label`) and answers a LABELS (§7.10).
        package static let labels: UInt32 = 1 << 7
    }

    /// Appends the body fields in spec order.
    package func write(to writer: inout WireWriter) {
        writer.writeString(workerName)
        writer.writeUInt32(features)
        writer.writeUInt32(slotCount)
        writer.writeStrings(ops)
        writer.writeString(hostname)
        writer.writeUInt32(processID)
        writer.writeUInt32(heartbeatIntervalMilliseconds)
    }

    /// Reads the body fields in spec order.
    ///
    /// - Throws: on truncation or invalid UTF-8, when the slot count is 0 or no op is named, and
    ///   (``WireDecodingError/Code/overLimit``) when a name or the op list is longer than
    ///   ``WireLimits`` allows: a list too long is refused at its count, before any array is made.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        workerName = try reader.readString("worker name", maximumBytes: WireLimits.maximumReadyNameBytes)
        features = try reader.readUInt32("features")
        let slotStart = reader.offset
        slotCount = try reader.readUInt32("slot count")
        guard slotCount > 0 else {
            throw WireDecodingError(.invalidField, offset: slotStart, "slot count: must be at least 1, got 0")
        }
        let opsStart = reader.offset
        ops = try reader.readStrings("op name", maximumCount: WireLimits.maximumReadyOperations,
                                     maximumBytes: WireLimits.maximumOperationNameBytes)
        guard !ops.isEmpty else {
            throw WireDecodingError(.invalidField, offset: opsStart, "op names: a worker must offer at least one op, got none")
        }
        hostname = try reader.readString("hostname", maximumBytes: WireLimits.maximumReadyNameBytes)
        processID = try reader.readUInt32("pid")
        let intervalStart = reader.offset
        heartbeatIntervalMilliseconds = try reader.readUInt32("heartbeat interval")
        guard heartbeatIntervalMilliseconds > 0 else {
            throw WireDecodingError(.invalidField, offset: intervalStart, "heartbeat interval: must be at least 1 ms, got 0")
        }
    }
}
