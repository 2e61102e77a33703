// `flow-bench list-files TREE [REPEATS]`: ListFilesOp with `recursive: true` over TREE (made by
// scripts/bench-listing: 100,000 empty files in 1,000 folders), the op alone in an in-process flow,
// then what its output costs on the way to the coordinator: the bucket value made a `FlowValue`
// (as a worker sends it), written with the wire codec, read back and made a plain Swift value
// again (as the coordinator keeps it). Medians of REPEATS runs (default 5), with min and max.
import Flow
import FlowStandardOps
import FlowWire
import Foundation

enum ListingBench {
    /// One way of listing the tree: a name and the op's extra parameters.
    struct Variant {
        let name: String
        let parameters: [String: FlowValue]
    }

    static let variants: [Variant] = [
        Variant(name: "recursive", parameters: [:]),
        Variant(name: "include/exclude globs", parameters: [
            "include": .array([.string("**/*.bin"), .string("*.txt")]), "exclude": .array([.string("*9.bin"), .string("d0999/**")]),
        ]),
        Variant(name: "minSize/maxSize/newerThan", parameters: [
            "minSize": .integer(0), "maxSize": .string("1GiB"), "newerThan": .string("3650d"),
        ]),
        Variant(name: "followLinks", parameters: ["followLinks": .bool(true)]),
    ]

    static func run(_ arguments: [String]) async throws {
        guard let tree = arguments.first else {
            print("usage: flow-bench list-files TREE [REPEATS]")
            exit(2)
        }
        let repeats = arguments.dropFirst().first.flatMap(Int.init) ?? 5
        print("ListFilesOp recursive over \(tree), the op alone in an in-process flow (median of \(repeats), min-max)")
        var output: Any?
        for variant in variants {
            var times: [Double] = []
            var count = 0
            for _ in 0..<repeats {
                var parameters = variant.parameters
                parameters["path"] = .string(tree)
                parameters["recursive"] = .bool(true)
                let definition = FlowDefinition(name: "listing", bucket: [:], steps: [
                    .operation(FlowOperationStep(op: "ListFilesOp", parameters: parameters)),
                ])
                let flow = Flow(definition: definition, registry: .standard)
                let start = ContinuousClock.now
                await flow.run()
                times.append(seconds(ContinuousClock.now - start))
                guard flow.isSuccess, let files = flow.dataBucket["files"] as? [Any] else {
                    print("  \(variant.name): the run failed")
                    exit(1)
                }
                count = files.count
                if variant.name == "recursive" { output = flow.dataBucket["files"] }
            }
            print("  " + padded(variant.name, 26) + String(format: " %7d files  %7.3f s  (%.3f-%.3f)", count, median(times),
                                                              times.min() ?? 0, times.max() ?? 0))
        }
        guard let output else { return }
        // The output's way to the coordinator, each step timed on its own.
        var toValue: [Double] = [], encode: [Double] = [], decode: [Double] = [], toAny: [Double] = []
        var bytes = 0
        for _ in 0..<repeats {
            var start = ContinuousClock.now
            guard let value = FlowValue(any: output) else { print("  the output has no FlowValue"); exit(1) }
            toValue.append(seconds(ContinuousClock.now - start))
            start = ContinuousClock.now
            var writer = WireWriter(capacity: 1 << 20)
            writer.writeValue(value)
            encode.append(seconds(ContinuousClock.now - start))
            bytes = writer.count
            start = ContinuousClock.now
            var reader = WireReader(writer.bytes)
            let back = try reader.readValue("files")
            decode.append(seconds(ContinuousClock.now - start))
            start = ContinuousClock.now
            let plain = back.anyValue
            toAny.append(seconds(ContinuousClock.now - start))
            guard (plain as? [Any])?.count == (output as? [Any])?.count else { print("  the output did not come back whole"); exit(1) }
        }
        print(String(format: "  its output on the wire: %.1f MB (%.0f bytes a file)", Double(bytes) / 1e6,
                     Double(bytes) / Double(max((output as? [Any])?.count ?? 1, 1))))
        for (name, times) in [("bucket value to FlowValue (worker)", toValue), ("wire encoding (worker)", encode),
                              ("wire decoding (coordinator)", decode), ("FlowValue to bucket value (coordinator)", toAny)] {
            print("  " + padded(name, 40) + String(format: " %7.3f s  (%.3f-%.3f)", median(times), times.min() ?? 0, times.max() ?? 0))
        }
    }

    static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
