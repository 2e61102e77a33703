public import Foundation

/// The endpoint workers connect to: the one a bound coordinator tells them, and what can keep a
/// worker from reaching it.
public enum WorkerEndpoint {
    /// The endpoint a worker on another machine connects to, for a coordinator bound to
    /// `endpoint` (as libzmq reports it): a wildcard address (`tcp://0.0.0.0:5555`, `tcp://[::]:5555`,
    /// `tcp://*:5555`) becomes this machine's name, which other machines can reach, where the
    /// wildcard is reachable from none; any other endpoint is given as it is.
    public static func toConnect(bound endpoint: String, hostName: String = ProcessInfo.processInfo.hostName) -> String {
        guard let host = host(of: endpoint), ["0.0.0.0", "::", "*"].contains(host), let colon = endpoint.lastIndex(of: ":") else {
            return endpoint
        }
        return "tcp://\(hostName)" + endpoint[colon...]
    }

    /// Why the host of a `tcp://` endpoint cannot be looked up now (`cannot resolve the host
    /// no-such-host: Name or service not known`), `nil` when it can, or for an address, a wildcard
    /// or another transport.
    public static func resolutionProblem(_ endpoint: String) -> String? {
        guard let host = host(of: endpoint), host != "*", !host.isEmpty else { return nil }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &result)
        if let result { freeaddrinfo(result) }
        guard status != 0 else { return nil }
        return "cannot resolve the host \(host) of \(endpoint): \(String(cString: gai_strerror(status)))"
    }

    /// The host of a `tcp://` endpoint: what follows a source address (`eth0;host`), without the
    /// port and without brackets; `nil` for another transport.
    public static func host(of endpoint: String) -> String? {
        guard endpoint.hasPrefix("tcp://") else { return nil }
        var address = String(endpoint.dropFirst("tcp://".count))
        if let semicolon = address.lastIndex(of: ";") { address = String(address[address.index(after: semicolon)...]) }
        if address.hasPrefix("[") { return String(address.dropFirst().prefix { $0 != "]" }) }
        guard let colon = address.lastIndex(of: ":") else { return address }
        return String(address[..<colon])
    }
}
