extension WireTask {
    /// The bytes a task was read from, kept by a pool that relays it (``WireCodec/decode(taking:relaying:)``):
    /// writing the task into a TASK then copies its op name, tag, parameters and bucket, and its
    /// group element, instead of encoding each again (a third of the pool's instructions went to
    /// encoding and decoding the four messages a task crosses).
    ///
    /// The fields between them (flags, time limit, op attempt, retry policy, budget, checkpoint,
    /// placement) are written from the task as it is now: a pool renames the task and sets its
    /// budget, and a worker that lacks a feature gets the task without its field. Changing any
    /// field the kept bytes hold forgets them. A cache, equal to any other: a task compares and
    /// hashes by its fields alone.
    struct ReceivedBytes: Sendable, Hashable {
        /// The op name, display tag, parameters and bucket, as read.
        let fields: ArraySlice<UInt8>?
        /// The element index and group element, as read; `nil` for a serial op.
        let element: ArraySlice<UInt8>?

        init() {
            fields = nil
            element = nil
        }

        /// Slices of `bytes`, which they keep alive: a pool keeps them only for a body no larger
        /// than ``WireCodec/relayedBodyLimit``, so a task waiting long never holds a large one.
        init(_ bytes: [UInt8], fields: Range<Int>, element: Range<Int>?) {
            self.fields = bytes[fields]
            self.element = element.map { bytes[$0] }
        }

        static func == (lhs: Self, rhs: Self) -> Bool { true }
        func hash(into hasher: inout Hasher) {}
    }
}
