public import Flow

/// Why one of the stock ops failed: a code to match on and a message naming what went wrong.
///
/// The code is a struct rather than an enum so that new kinds of failure do not break callers
/// that switch over the known ones.
public struct FlowStandardOpError: Error, CustomStringConvertible, Sendable, Equatable, FlowRetryAdvice {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// A file could not be opened or read; the message names the path.
        public static let unreadableFile = Code("unreadableFile")
        /// A folder could not be listed; the message names the folder.
        public static let unreadableFolder = Code("unreadableFolder")
        /// An HTTP server answered with a status outside 200–299.
        public static let httpStatus = Code("httpStatus")
        /// An HTTP request failed before a status arrived (connection refused, reset, a TLS
        /// handshake that broke off).
        public static let transport = Code("transport")
        /// An HTTPS server's certificate was not accepted: not trusted on this machine (self-signed,
        /// expired, from an unknown authority). Trying again cannot cure it.
        public static let untrustedCertificate = Code("untrustedCertificate")
        /// A temporary file the op needs could not be written.
        public static let temporaryFile = Code("temporaryFile")
        /// A program could not be found or started.
        public static let launchFailed = Code("launchFailed")
        /// A program exited with a non-zero status or was killed by a signal.
        public static let nonZeroExit = Code("nonZeroExit")
        /// The op ran past its `timeout`.
        public static let timeLimitExceeded = Code("timeLimitExceeded")
        /// An S3-compatible store refused a request; ``FlowStandardOpError/serviceCode`` holds the
        /// error's `Code` (`SignatureDoesNotMatch`, `SlowDown`, …).
        public static let s3 = Code("s3")
        /// The store does not take the checksum the flow asked for (a trailing checksum on Ceph
        /// RGW before Squid): permanent, its message says what to give instead.
        public static let storeRefusedChecksum = Code("storeRefusedChecksum")
        /// No credentials were found for a store that needs them; the message names where they
        /// were looked for.
        public static let missingCredentials = Code("missingCredentials")
        /// An upload's object name would leave its target's prefix (`..`, `.`, an empty segment, a
        /// leading `/`); the message names it.
        public static let invalidName = Code("invalidName")
        /// A resumed run's op cannot go on from where its earlier life left it (a listing whose
        /// parameters changed since); the message says what to do.
        public static let cannotResume = Code("cannotResume")

        public var description: String { name }
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, as the summary prints it.
    public let message: String
    /// For ``Code/httpStatus``: the status the server answered.
    public var status: Int?
    /// How long the server asked to wait before another try (HTTP `Retry-After`).
    public var retryAfter: Duration?
    /// For ``Code/s3``: the `Code` of the store's XML error, when it sent one.
    public var serviceCode: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, status: Int? = nil, retryAfter: Duration? = nil, serviceCode: String? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
        self.serviceCode = serviceCode
    }

    /// S3 error codes that trying again can cure, whatever the HTTP status (`RequestTimeout`
    /// comes with 400).
    public static let transientS3Codes: Set<String> = [
        "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling", "ThrottlingException",
        "RequestLimitExceeded", "TooManyRequestsException", "OperationAborted",
        // The body arrived changed (its checksum or SHA-256 did not match): sent again, it can arrive whole.
        "BadDigest", "XAmzContentChecksumMismatch", "XAmzContentSHA256Mismatch",
    ]
    /// S3 error codes that only repeat, whatever the HTTP status.
    public static let permanentS3Codes: Set<String> = [
        "SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied", "NoSuchBucket", "InvalidBucketName", "AllAccessDisabled",
        "ExpiredToken", "InvalidToken", "AuthorizationHeaderMalformed", "InvalidArgument", "EntityTooLarge", "EntityTooSmall",
    ]

    /// Whether `retry` would only repeat the failure: a file or folder that cannot be read, a
    /// program that cannot start, missing credentials, a server certificate that is not accepted, an
    /// upload name that would leave its prefix,
    /// and an HTTP status other than 408, 425,
    /// 429 and 5xx. A connection error, a time limit and a program's non-zero exit are transient.
    /// An S3 error is judged by its `Code` first (``transientS3Codes``, ``permanentS3Codes``), then
    /// by its status as HTTP's.
    public var isPermanent: Bool {
        switch code {
        case .transport, .timeLimitExceeded, .temporaryFile, .nonZeroExit: return false
        case .httpStatus, .s3:
            if let serviceCode {
                if Self.transientS3Codes.contains(serviceCode) { return false }
                if Self.permanentS3Codes.contains(serviceCode) { return true }
            }
            guard let status else { return false }
            return !([408, 425, 429].contains(status) || (500..<600).contains(status))
        default: return true
        }
    }

    public var description: String { message }
}
