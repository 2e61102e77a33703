import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ZMQMonitorEvent {
    /// For an ``ZMQMonitorEvents/accepted`` event: the peer of the connection, read from the
    /// descriptor the event names (`getpeername`), as an address and a port.
    ///
    /// libzmq's monitor events (version 1) name only the listening side's endpoint, so this is
    /// the one way to learn who connected. It is a race: the connection may be gone, and its
    /// descriptor even reused, by the time the event is read; the caller must judge the answer by
    /// the events around it.
    ///
    /// - Returns: `nil` when the descriptor is no connected TCP socket (any more).
    public func acceptedPeer() -> (address: String, port: UInt16)? {
        guard event == .accepted, value <= UInt32(Int32.max) else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(Int32(value), $0, &length) }
        }
        guard named == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address -> (String, UInt16)? in
                    var ip = address.pointee.sin_addr
                    guard inet_ntop(AF_INET, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                    return (String(cString: text), UInt16(bigEndian: address.pointee.sin_port))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address -> (String, UInt16)? in
                    var ip = address.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                    return (String(cString: text), UInt16(bigEndian: address.pointee.sin6_port))
                }
            }
        default:
            return nil
        }
    }
}
