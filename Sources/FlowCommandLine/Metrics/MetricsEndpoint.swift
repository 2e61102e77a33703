/// Where `--metrics` serves: `HOST:PORT`, `[IPv6]:PORT`, or a bare `PORT` (or `:PORT`) on loopback.
struct MetricsEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// The address to bind.
    var host: String
    /// The port; 0 lets the system pick one.
    var port: Int

    /// Reads `HOST:PORT`; a missing host is 127.0.0.1, so a metrics endpoint is private unless the
    /// user names an address others can reach.
    ///
    /// - Throws: a message that says what was wrong with the text.
    init(parsing text: String) throws(MetricsEndpointError) {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw MetricsEndpointError(text: text, reason: "an IPv6 address goes in brackets before the port, e.g. [::1]:9464")
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":") {
            if text[..<colon].contains(":") {
                throw MetricsEndpointError(text: text, reason: "put an IPv6 address in brackets, e.g. [::1]:9464")
            }
            if colon != text.startIndex { host = String(text[..<colon]) }
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw MetricsEndpointError(text: text, reason: "the port must be a number from 0 to 65535")
        }
        self.host = host
        self.port = port
    }

    /// Whether only this machine can reach it.
    var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A `--metrics` value that is not `HOST:PORT`.
struct MetricsEndpointError: Error, CustomStringConvertible {
    var text: String
    var reason: String
    var description: String { "--metrics \(text): \(reason)" }
}
