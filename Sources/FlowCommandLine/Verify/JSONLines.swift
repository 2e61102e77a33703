#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A file of JSON lines read a line at a time (`getline`), never whole.
enum JSONLines {
    /// Calls `body` with each non-empty line of the file at `path`, without its newline.
    ///
    /// - Throws: `CocoaError` when the file cannot be opened; what `body` throws.
    static func forEach(in path: String, _ body: (Data) throws -> Void) throws {
        guard let file = fopen(path, "r") else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { fclose(file) }
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        while true {
            let length = getline(&buffer, &capacity, file)
            guard length >= 0, let buffer else { return }
            var count = length
            if count > 0, buffer[count - 1] == 0x0A { count -= 1 }
            if count == 0 { continue }
            try body(Data(bytes: buffer, count: count))
        }
    }
}
