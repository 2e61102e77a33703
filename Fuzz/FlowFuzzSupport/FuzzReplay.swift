import Foundation

/// Replays fuzz inputs outside the fuzzer: the committed corpus as a regression test.
public enum FuzzReplay {
    /// Calls `body` with the bytes of each file named, and of each file in each folder named.
    ///
    /// - Returns: how many inputs it replayed.
    public static func each(_ paths: some Sequence<String>, _ body: (Data) -> Void) -> Int {
        var count = 0
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                FileHandle.standardError.write(Data("no such file or folder: \(path)\n".utf8))
                exit(2)
            }
            let files = isFolder.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { "\(path)/\($0)" }
                : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                body(data)
                count += 1
            }
        }
        return count
    }
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// libFuzzer's driver (`LLVMFuzzerRunDriver`), for a target whose `main` SwiftPM names.
public enum FuzzDriver {
    nonisolated(unsafe) private static var body: ((Data) -> Void)?

    /// Runs libFuzzer with the program's arguments, calling `body` with each input.
    public static func run(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                           _ body: @escaping (Data) -> Void) -> Int32 {
        Self.body = body
        var argc = argc
        var argv = argv
        return LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
            FuzzDriver.body?(bytes.map { Data(bytes: $0, count: count) } ?? Data())
            return 0
        }
    }
}
#endif
