/// One request as ``NginxServer`` logged it.
public struct NginxAccessLogEntry: Sendable, Hashable {
    /// `PUT`, `POST`, …
    public let method: String
    /// The request URI, as sent (percent-encoded).
    public let uri: String
    /// The status nginx answered.
    public let status: Int
    /// The logged request headers (``NginxServer/loggedHeaders``) that were present, by the
    /// names given there.
    public let headers: [String: String]
}
