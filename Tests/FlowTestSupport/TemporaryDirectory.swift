import Foundation

/// A fresh folder under the system's temporary directory, removed with everything in it when the
/// value goes away (or on ``remove()``).
public final class TemporaryDirectory: @unchecked Sendable {
    /// The folder.
    public let url: URL

    /// The folder's path.
    public var path: String { url.path }

    /// Creates the folder.
    ///
    /// - Parameter prefix: the start of the folder's name, to tell test leftovers apart.
    /// - Throws: when the folder cannot be created.
    public init(prefix: String = "flow-test") throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/\(prefix)-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard made != nil else {
            throw TestSupportError("cannot create a temporary folder: \(String(cString: strerror(errno)))")
        }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        url = URL(fileURLWithPath: path, isDirectory: true)
    }

    deinit {
        remove()
    }

    /// The location of `name` inside the folder (`name` may contain `/`).
    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// Creates a subfolder (and its parents) and returns it.
    @discardableResult
    public func folder(_ name: String) throws -> URL {
        let folder = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Removes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A harness step that could not be done, with what to do about it.
public struct TestSupportError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
