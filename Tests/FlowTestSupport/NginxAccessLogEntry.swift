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
    /// When nginx logged it (the request's end), seconds since 1970 to the millisecond.
    public let time: Double?

    public init(method: String, uri: String, status: Int, headers: [String: String], time: Double? = nil) {
        self.method = method
        self.uri = uri
        self.status = status
        self.headers = headers
        self.time = time
    }
}
