#if canImport(Glibc)
import Glibc
#endif
import Foundation

extension FlowRunReport {
    /// Texts in the bucket longer than this many bytes are written straight to the file, not
    /// through `JSONEncoder`.
    static let streamedTextLength = 64 << 10

    /// Writes ``jsonData()``'s JSON to a file, replacing it atomically (a temporary file beside it,
    /// then renamed).
    ///
    /// Long texts in the bucket are not encoded in memory: `JSONEncoder` held a 200 MB output
    /// about five times over (its value tree, the escaped text, the growing `Data`), so the report
    /// is encoded with a short stand-in for each, and each stand-in is replaced by its text,
    /// escaped piece by piece, as the file is written. The file's bytes are those of
    /// ``jsonData()``.
    ///
    /// - Parameter path: the file's path.
    /// - Throws: the encoding error, or the file system's error.
    public func write(to path: String) throws {
        var long = LongTexts()
        var light = self
        light.bucket = bucket.mapValues { long.standIns(in: $0) }
        let json = try light.jsonData()
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            var output = JSONTextOutput(handle: handle)
            try long.write(json, to: &output)
            try output.flush()
            guard rename(temporary.path, url.path) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path,
                                                               NSLocalizedDescriptionKey: String(cString: strerror(errno))])
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// The bucket's long texts, each stood in for by `"\u{FFFF}flow-long-text-NONCE:N\u{FFFF}"`,
    /// with a nonce of this write's, so that no text of the bucket can pass for a stand-in.
    private struct LongTexts {
        let marker = "\u{FFFF}flow-long-text-\(UInt64.random(in: 0...UInt64.max)):"
        var texts: [String] = []

        /// `value` with each long text replaced by its stand-in.
        mutating func standIns(in value: BucketValue) -> BucketValue {
            guard case .value(let flowValue) = value else { return value }
            return .value(standIns(in: flowValue))
        }

        private mutating func standIns(in value: FlowValue) -> FlowValue {
            switch value {
            case .string(let text) where text.utf8.count > FlowRunReport.streamedTextLength:
                texts.append(text)
                return .string("\(marker)\(texts.count - 1)\u{FFFF}")
            case .array(let items):
                return .array(items.map { standIns(in: $0) })
            case .map(let items):
                return .map(items.mapValues { standIns(in: $0) })
            default:
                return value
            }
        }

        /// Writes `json`, with each stand-in's string literal replaced by its text's.
        func write(_ json: Data, to output: inout JSONTextOutput) throws {
            guard !texts.isEmpty else { return try output.write(json) }
            let opening = Data(("\"" + marker).utf8)
            var start = json.startIndex
            while let found = json.range(of: opening, in: start..<json.endIndex) {
                let digits = json[found.upperBound...].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                let closing = Data("\u{FFFF}\"".utf8)
                guard let number = Int(String(decoding: digits, as: UTF8.self)), texts.indices.contains(number),
                      json[digits.endIndex...].starts(with: closing)
                else {
                    try output.write(json[start..<found.upperBound])
                    start = found.upperBound
                    continue
                }
                try output.write(json[start..<found.lowerBound])
                try output.writeStringLiteral(texts[number])
                start = digits.endIndex + closing.count
            }
            try output.write(json[start...])
        }
    }
}

/// Buffered writes to a file, with JSON string literals escaped as they are written.
struct JSONTextOutput {
    let handle: FileHandle
    private var buffer: [UInt8] = []
    private static let capacity = 1 << 20

    init(handle: FileHandle) {
        self.handle = handle
        buffer.reserveCapacity(Self.capacity)
    }

    mutating func write(_ bytes: some Collection<UInt8>) throws {
        if buffer.count + bytes.count > Self.capacity { try flush() }
        if bytes.count >= Self.capacity {
            try handle.write(contentsOf: Data(bytes))
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// `text` as a JSON string, escaped as `JSONEncoder` escapes it with `.withoutEscapingSlashes`.
    mutating func writeStringLiteral(_ text: String) throws {
        let hex = Array("0123456789abcdef".utf8)
        buffer.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            // Room for the longest escape (`\u00XX`) and the closing quote.
            if buffer.count > Self.capacity - 8 { try flush() }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\")); buffer.append(byte)
            case 0x0A: buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "n"))
            case 0x0D: buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "r"))
            case 0x09: buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "t"))
            case 0x08: buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "b"))
            case 0x0C: buffer.append(UInt8(ascii: "\\")); buffer.append(UInt8(ascii: "f"))
            case 0..<0x20: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
