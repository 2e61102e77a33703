import Foundation

/// What a worker is told to connect to.
public enum WorkerEndpoint {
    /// The endpoint a worker on another machine connects to, for a coordinator bound to
    /// `endpoint` (as libzmq reports it): a wildcard address (`tcp://0.0.0.0:5555`, `tcp://[::]:5555`,
    /// `tcp://*:5555`) becomes this machine's name, which other machines can reach, where the
    /// wildcard is reachable from none; any other endpoint is given as it is.
    public static func toConnect(bound endpoint: String, hostName: String = ProcessInfo.processInfo.hostName) -> String {
        guard endpoint.hasPrefix("tcp://") else { return endpoint }
        let address = endpoint.dropFirst("tcp://".count)
        for wildcard in ["0.0.0.0:", "[::]:", "*:"] where address.hasPrefix(wildcard) {
            return "tcp://\(hostName):" + address.dropFirst(wildcard.count)
        }
        return endpoint
    }
}
