import Flow
import Foundation

extension WireResult {
    /// A result's events, element index and output encoded ahead of its RESULT, or kept as a
    /// pool read them to relay them into a DONE (or nothing): a cache, equal to any other, so
    /// that a result compares and hashes by its fields alone.
    ///
    /// One slice holds what is kept, so that a copy of the result retains one buffer more, not two.
    package struct EncodedTail: Sendable, Hashable {
        /// The bytes kept: the finish state and both times first when ``head`` is kept too.
        private var kept: ArraySlice<UInt8>?
        /// Where in ``kept`` the events start.
        private var tailStart = 0
        /// Whether ``kept`` starts with the finish state and both times as read.
        private var keepsHead = false

        package init() {}

        /// The events, element index and output; `nil` when not kept.
        package var bytes: ArraySlice<UInt8>? { kept.map { $0[tailStart...] } }

        /// The finish state and both times as a pool read them; `nil` when not kept or one of
        /// them changed since.
        package var head: ArraySlice<UInt8>? { keepsHead ? kept.map { $0[..<tailStart] } : nil }

        /// The finish state, times and the tail together, when both are kept: one copy for the
        /// writer.
        var headAndTail: ArraySlice<UInt8>? { keepsHead ? kept : nil }

        /// Keeps `bytes` (``head`` first when `tailStart` is past their start).
        init(_ bytes: ArraySlice<UInt8>, tailStart: Int) {
            kept = bytes
            self.tailStart = tailStart
            keepsHead = tailStart > bytes.startIndex
        }

        /// Forgets the head: the finish state or a time changed.
        mutating func forgetHead() { keepsHead = false }

        package static func == (lhs: Self, rhs: Self) -> Bool { true }
        package func hash(into hasher: inout Hasher) {}
    }

    /// From how many bytes a worker encodes a result ahead, off its I/O thread: a RESULT of
    /// 100 MB took that thread seconds to encode in a debug build, and it sent no heartbeat
    /// meanwhile, so its coordinator declared it lost (§8.5).
    package static var encodeAheadThreshold: Int { 1 << 20 }

    /// Whether the events and output take at least `limit` bytes on the wire, counted no further
    /// than that (every value costs at least a byte, so the count stops within `limit` steps).
    package func tailReaches(_ limit: Int) -> Bool {
        var left = limit
        for event in events {
            switch event.kind {
            case .log(let line): left -= line.utf8.count + 9
            case .set(let key, let value): left -= key.utf8.count + 9 + Self.size(of: value, upTo: left)
            }
            if left <= 0 { return true }
        }
        if let output, elementIndex != nil { left -= Self.size(of: output, upTo: left) }
        return left <= 0
    }

    /// This result with its events, element index and output encoded now (``encodedTail``):
    /// called where encoding may take long, so that the RESULT later only copies the bytes.
    package func encodingTailAhead() -> WireResult {
        var writer = WireWriter(capacity: 64)
        writeTail(to: &writer)
        var copy = self
        copy.encodedTail = EncodedTail(writer.bytes[...], tailStart: 0)
        return copy
    }

    /// The bytes `value` takes on the wire, counted no further than `limit`.
    private static func size(of value: FlowValue, upTo limit: Int) -> Int {
        switch value {
        case .null, .bool: return 1
        case .integer, .double, .date: return 9
        case .string(let text): return text.utf8.count + 5
        case .bytes(let data): return data.count + 5
        case .array(let values):
            var total = 5
            for value in values where total < limit { total += size(of: value, upTo: limit - total) }
            return total
        case .map(let map):
            var total = 5
            for (key, value) in map where total < limit { total += key.utf8.count + 5 + size(of: value, upTo: limit - total) }
            return total
        }
    }
}
