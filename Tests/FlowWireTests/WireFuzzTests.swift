import Flow
import FlowWire
import Foundation
import Testing

@Suite("Fuzzing")
struct WireFuzzTests {
    /// Applies one random mutation to a body: the kinds of damage a buggy or hostile peer produces.
    private func mutate(_ body: inout [UInt8], using generator: inout SeededGenerator) {
        let interesting: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x08, 0x09, 0xC3]
        let position = body.isEmpty ? 0 : Int.random(in: 0..<body.count, using: &generator)
        switch Int.random(in: 0..<7, using: &generator) {
        case 0 where !body.isEmpty:
            body[position] ^= 1 << UInt8.random(in: 0...7, using: &generator)
        case 1 where !body.isEmpty:
            body[position] = UInt8.random(in: 0...255, using: &generator)
        case 2 where !body.isEmpty:
            body[position] = interesting.randomElement(using: &generator)!
        case 3:
            body.insert(UInt8.random(in: 0...255, using: &generator), at: position)
        case 4 where !body.isEmpty:
            body.remove(at: position)
        case 5 where !body.isEmpty:
            let end = min(body.count, position + Int.random(in: 1...16, using: &generator))
            body.insert(contentsOf: body[position..<end], at: Int.random(in: 0...body.count, using: &generator))
        default:
            body.removeLast(Int.random(in: 0...min(body.count, 4), using: &generator))
        }
    }

    @Test("mutated encodings either decode or throw, and what decodes re-encodes stably")
    func seededMutations() throws {
        var generator = SeededGenerator(seed: 0x464C_4F57_3031)
        let samples = sampleMessages.filter { $0.command.hasBody }.map { ($0.command.rawValue, body(of: $0)) }
        var decodedCount = 0
        var rejectedCount = 0
        for _ in 0..<20_000 {
            let (command, original) = samples.randomElement(using: &generator)!
            var mutated = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                mutate(&mutated, using: &generator)
            }
            // A pool decodes for a relay (tasks and results keep their bytes): it must accept and
            // refuse exactly what the plain decoder does, and write what it would write.
            var relayFrames = frames(command, body: mutated)
            let relayed = try? WireCodec.decode(taking: &relayFrames, relaying: true)
            do {
                let message = try WireCodec.decode(frames(command, body: mutated))
                decodedCount += 1
                // Whatever a peer accepts it must be able to send back: encoding is total and
                // decoding its own output gives the same bytes again.
                let encoded = WireCodec.encode(message)
                let again = try WireCodec.decode(encoded)
                #expect(WireCodec.encode(again) == encoded, "unstable re-encoding of \(hexString(mutated))")
                #expect(relayed == message, "relayed decoding differs for \(hexString(mutated))")
                // The bytes relayed are those received, which may say a value another way than
                // the encoder would (a time that is no whole number of microseconds apart): they
                // decode to what the plain decoding does.
                #expect(relayed.flatMap { try? WireCodec.decode(WireCodec.encode($0)) } == message,
                        "relayed encoding differs for \(hexString(mutated))")
            } catch {
                rejectedCount += 1
                #expect(!error.description.isEmpty)
                #expect(relayed == nil, "relayed decoding accepted \(hexString(mutated))")
            }
        }
        // Both outcomes must occur, or the mutations are not exercising the decoder.
        #expect(decodedCount > 100, "only \(decodedCount) mutations decoded")
        #expect(rejectedCount > 10_000, "only \(rejectedCount) mutations rejected")
    }

    @Test("random bytes as a body are rejected or decoded, never a crash", arguments: WireCommand.allCases.filter(\.hasBody))
    func randomBodies(command: WireCommand) {
        var generator = SeededGenerator(seed: UInt64(command.rawValue))
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...64, using: &generator)
            let body = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? WireCodec.decode(frames(command.rawValue, body: body))
        }
    }

    @Test("random frame counts and frame contents never crash the decoder")
    func randomFrames() {
        var generator = SeededGenerator(seed: 99)
        let valid = sampleMessages.map(WireCodec.encode)
        var decodedCount = 0
        for _ in 0..<5_000 {
            var message = valid.randomElement(using: &generator)!
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: message.append(Data([UInt8.random(in: 0...255, using: &generator)]))
            case 1: message.removeLast(Int.random(in: 0...message.count, using: &generator))
            case 2: message[1] = Data([UInt8.random(in: 0...7, using: &generator)])
            default: message[0] = Data("FLOW0\(Int.random(in: 0...2, using: &generator))".utf8)
            }
            if (try? WireCodec.decode(message)) != nil { decodedCount += 1 }
        }
        #expect(decodedCount > 0 && decodedCount < 5_000)
    }
}
