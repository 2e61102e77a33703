import Synchronization

/// Short random ids that tell a group's ops apart in the summary (`[UploadOp 3f2a]`).
///
/// SplitMix64 over an atomic counter seeded once from the system: as unpredictable as a summary
/// needs, without a `getrandom` system call per element.
enum FlowGroupTag {
    private static let counter = Atomic<UInt64>(UInt64.random(in: .min ... .max))
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)
    /// SplitMix64's step between two states.
    static let step: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// A fresh tag.
    static func make() -> String {
        text(of: counter.wrappingAdd(step, ordering: .relaxed).newValue)
    }

    /// A fresh state to draw tags from (``FlowGroupTags``).
    static func seed() -> UInt64 {
        counter.wrappingAdd(step, ordering: .relaxed).newValue
    }

    /// The four hex digits SplitMix64 mixes out of `state`.
    static func text(of state: UInt64) -> String {
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        let value = UInt16(truncatingIfNeeded: z ^ (z >> 31))
        return String(unsafeUninitializedCapacity: 4) { buffer in
            for index in 0..<4 { buffer[index] = digits[Int(value >> (12 - 4 * index)) & 0xF] }
            return 4
        }
    }
}

/// The tags of one group's elements, each made from the group's seed and the element's index:
/// a result finds its element's tag again from its index alone, so no tag travels with a task
/// and back (a cluster's RESULT carries the index, not the tag) and none is kept per element.
struct FlowGroupTags: Sendable {
    private let seed: UInt64

    /// The tags of a new group.
    init() {
        seed = FlowGroupTag.seed()
    }

    /// Element `index`'s tag.
    func tag(for index: Int) -> String {
        FlowGroupTag.text(of: seed &+ UInt64(truncatingIfNeeded: index) &* FlowGroupTag.step)
    }
}
