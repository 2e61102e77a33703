import Flow
import FlowFuzzSupport
import Foundation

/// Feeds bytes to the flow-file loader as text, with the stock ops registered so steps are
/// checked in full, and to the `--set` scalar reader: every input either loads or is refused with
/// diagnostics, never crashes, hangs or runs out of memory. (Bucket files go through the same
/// reader.)
enum FuzzFlowFile {
    static let loader = FlowFileLoader(registry: registry)

    static let registry: FlowOperationRegistry = {
        var registry = FlowOperationRegistry()
        for name in ["SimplePrintOp", "UploadFileOp", "ShellOp", "SleepOp"] {
            registry.register(name, primaryInputParamKey: "item", primaryOutputParamKey: "result") { _ in FlowOperation() }
        }
        return registry
    }()

    static func run(_ input: Data) {
        let text = String(decoding: input, as: UTF8.self)
        if let definition = try? loader.load(text: text, file: "fuzz.yaml") {
            // What loads can be shown, as `show` does.
            _ = definition.outline()
        }
        _ = FlowFileLoader.value(fromScalar: text)
    }
}

#if FUZZING
// SwiftPM links an executable with `main` aliased to `flow_fuzz_flowfile_main`; here that is libFuzzer's
// driver, run with this target's input function.
@_cdecl("flow_fuzz_flowfile_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv) { FuzzFlowFile.run($0) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzFlowFile.run(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}
#else
/// Without the fuzzer: replays inputs (files, or every file in folders).
@main
enum Replay {
    static func main() {
        let count = FuzzReplay.each(CommandLine.arguments.dropFirst()) { FuzzFlowFile.run($0) }
        print("flow-fuzz-flowfile: \(count) input(s) replayed, none crashed")
    }
}
#endif
