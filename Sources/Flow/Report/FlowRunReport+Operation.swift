import Foundation

extension FlowRunReport {
    /// One op run, from its ``FlowOperationRecord``.
    public struct Operation: Encodable, Sendable, Hashable {
        /// The record it was made from.
        public var record: FlowOperationRecord

        /// Makes an entry from a record.
        public init(record: FlowOperationRecord) {
            self.record = record
        }

        /// How the op finished: `successfully`, `withError`, `withInsufficientInputData`,
        /// `withMismatchInputDataType` or `cancelled`.
        public var state: String { Self.stateName(record.state) }

        static func stateName(_ state: FlowFinishState) -> String {
            switch state {
            case .successfully: return "successfully"
            case .withError: return "withError"
            case .withInsufficientInputData: return "withInsufficientInputData"
            case .withMismatchInputDataType: return "withMismatchInputDataType"
            case .cancelled: return "cancelled"
            }
        }

        /// The failure's text, `nil` for success and cancellation.
        public var error: String? {
            switch record.state {
            case .successfully, .cancelled: return nil
            case .withError(let text), .withInsufficientInputData(let text), .withMismatchInputDataType(let text): return text
            }
        }

        private enum CodingKeys: String, CodingKey {
            case op, tag, groupIndex, groupOutputKey, worker, startedAt, finishedAt, durationSeconds, state, error
            case logLines, location, attempt, attempts
        }

        private enum AttemptKeys: String, CodingKey {
            case attempt, worker, startedAt, finishedAt, state, error, retryAfterSeconds
        }

        private enum LogLineKeys: String, CodingKey {
            case time, text
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(record.operationName, forKey: .op)
            // Absent values are written as null, so every entry has the same keys.
            try container.encode(record.tag, forKey: .tag)
            try container.encode(record.groupIndex, forKey: .groupIndex)
            try container.encode(record.groupOutputKey, forKey: .groupOutputKey)
            try container.encode(record.worker, forKey: .worker)
            try container.encode(FlowRunReport.timestamp(record.startedAt), forKey: .startedAt)
            try container.encode(FlowRunReport.timestamp(record.finishedAt), forKey: .finishedAt)
            try container.encode(record.finishedAt.timeIntervalSince(record.startedAt), forKey: .durationSeconds)
            try container.encode(state, forKey: .state)
            try container.encode(error, forKey: .error)
            var lines = container.nestedUnkeyedContainer(forKey: .logLines)
            for line in record.logLines {
                var entry = lines.nestedContainer(keyedBy: LogLineKeys.self)
                try entry.encode(FlowRunReport.timestamp(line.time), forKey: .time)
                try entry.encode(line.text, forKey: .text)
            }
            try container.encode(record.location?.description, forKey: .location)
            try container.encode(record.attempt, forKey: .attempt)
            // Every try, the last (this record) included, so a reader sees the whole story.
            var attempts = container.nestedUnkeyedContainer(forKey: .attempts)
            for earlier in record.earlierAttempts {
                var entry = attempts.nestedContainer(keyedBy: AttemptKeys.self)
                try entry.encode(earlier.attempt, forKey: .attempt)
                try entry.encode(earlier.worker, forKey: .worker)
                try entry.encode(FlowRunReport.timestamp(earlier.startedAt), forKey: .startedAt)
                try entry.encode(FlowRunReport.timestamp(earlier.finishedAt), forKey: .finishedAt)
                try entry.encode(Self.stateName(earlier.state), forKey: .state)
                try entry.encode(earlier.state.failureText, forKey: .error)
                try entry.encode(earlier.retryWait.seconds, forKey: .retryAfterSeconds)
            }
            var last = attempts.nestedContainer(keyedBy: AttemptKeys.self)
            try last.encode(record.attempt, forKey: .attempt)
            try last.encode(record.worker, forKey: .worker)
            try last.encode(FlowRunReport.timestamp(record.startedAt), forKey: .startedAt)
            try last.encode(FlowRunReport.timestamp(record.finishedAt), forKey: .finishedAt)
            try last.encode(state, forKey: .state)
            try last.encode(error, forKey: .error)
            try last.encodeNil(forKey: .retryAfterSeconds)
        }
    }
}
