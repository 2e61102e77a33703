import Foundation

extension FlowRunReport {
    /// How one group's elements ended.
    public struct GroupTotal: Encodable, Sendable, Hashable {
        /// The group's op.
        public var op: String
        /// The bucket key the group collects into.
        public var outputKey: String
        /// Elements that ran (finished one way or another).
        public var total: Int
        /// Elements that finished successfully.
        public var succeeded: Int
        /// Elements that failed or were cancelled.
        public var failed: Int

        /// Creates a total.
        public init(op: String, outputKey: String, total: Int, succeeded: Int, failed: Int) {
            self.op = op
            self.outputKey = outputKey
            self.total = total
            self.succeeded = succeeded
            self.failed = failed
        }

        /// One total per group (op and output key) among the records' group elements.
        static func totals(of records: [FlowOperationRecord]) -> [GroupTotal] {
            var totals: [GroupTotal] = []
            for record in records {
                guard let outputKey = record.groupOutputKey else { continue }
                let index = totals.firstIndex { $0.op == record.operationName && $0.outputKey == outputKey } ?? {
                    totals.append(GroupTotal(op: record.operationName, outputKey: outputKey, total: 0, succeeded: 0, failed: 0))
                    return totals.count - 1
                }()
                totals[index].total += 1
                if record.state.isSuccess { totals[index].succeeded += 1 } else { totals[index].failed += 1 }
            }
            return totals
        }
    }
}
