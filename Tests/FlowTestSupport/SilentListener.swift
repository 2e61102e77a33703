import Foundation

/// A TCP port on 127.0.0.1 that takes connections into its backlog and never answers: for
/// testing time limits against a server that hangs.
public final class SilentListener: @unchecked Sendable {
    /// The port it listens on.
    public let port: Int
    private let descriptor: Int32

    /// Binds and listens on a free port.
    ///
    /// - Throws: ``TestSupportError`` when no socket can be bound.
    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportError("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard listening else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw TestSupportError("cannot listen on 127.0.0.1: \(reason)")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        close(descriptor)
    }
}
