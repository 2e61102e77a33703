import Flow
import Foundation

/// Uploads one file to an HTTP or HTTPS server: the group op of the stock worker's main job
/// (`ListFilesOp` then a group of `UploadFileOp`).
///
/// - Primary input `file`: the file's path on the machine running the op, or the map
///   `{"name": String, "path": String, "bytes": Data}` of a file the coordinator has already
///   read (``UploadFileSource/coordinatorElement(forPath:)``). Both forms are accepted whatever
///   `source` says.
/// - Primary output `url`: the uploaded object's URL, as a string.
///
/// Parameters:
/// - `url` (string, required): the base URL; the object's URL is the base, one `/`, and the
///   file's name (percent-encoded).
/// - `method` (`PUT` or `POST`, default `PUT`): `PUT` sends the file as the body; `POST` sends a
///   `multipart/form-data` body with the file as the field `file`.
/// - `headers` (map of strings, optional): extra request headers, for example `Authorization`.
/// - `source` (`worker` or `coordinator`, default `worker`): who reads the file. With
///   `coordinator` the cluster sends each file's bytes with its task.
/// - `timeout` (seconds, default 300): the most the whole upload may take.
/// - `skipExisting` (bool, default false): ask first with a `HEAD` request, and send nothing when
///   the server already has the object with the same size (`Content-Length`), as `rclone copy`
///   does; the output is the object's URL all the same. Any other answer (404, another size, a
///   server that refuses `HEAD`) uploads the file.
///
/// Requests go through the process's one AsyncHTTPClient with a connection pool per host. A file
/// on disk is streamed with backpressure, `PUT` and multipart `POST` alike, with no temporary
/// copy: memory does not grow with its size. A status outside 200–299 fails the op; its error and
/// log line give the status and the start of the response body. Connection errors, time-outs, 408,
/// 425, 429 and 5xx are transient for a step's `retry` (with `Retry-After` honoured); any other
/// status, and a file that cannot be read, are permanent. A missing or
/// unreadable file fails the op with an error naming the path. Success logs
/// `uploaded NAME (N bytes) -> URL in 0.12 s`.
public final class UploadFileOp: FlowAsyncOperation, @unchecked Sendable {
    /// How the file is sent.
    public enum Method: String, Sendable, CaseIterable {
        /// The file is the request body.
        case put = "PUT"
        /// The file is the field `file` of a `multipart/form-data` body.
        case post = "POST"
    }

    /// Who reads the file.
    public enum Source: String, Sendable, CaseIterable {
        /// The op reads the path on the machine it runs on.
        case worker
        /// The coordinator reads the file and sends its bytes with the task.
        case coordinator
    }

    /// The base URL the file's name is appended to.
    public let baseURL: URL
    /// How the file is sent.
    public let method: Method
    /// Extra request headers.
    public let headers: [String: String]
    /// Who reads the file.
    public let source: Source
    /// The most the upload may take, in seconds.
    public let timeout: Double
    /// Whether a file the server already has with the same size is left alone.
    public let skipsExisting: Bool

    /// Creates the op.
    ///
    /// - Parameters:
    ///   - baseURL: the URL the file's name is appended to.
    ///   - method: `PUT` (the default) or multipart `POST`.
    ///   - headers: extra request headers.
    ///   - source: who reads the file.
    ///   - timeout: the most the upload may take, in seconds.
    ///   - skipExisting: whether a file the server already has with the same size is left alone.
    public init(baseURL: URL, method: Method = .put, headers: [String: String] = [:], source: Source = .worker, timeout: Double = 300,
                skipExisting: Bool = false) {
        self.baseURL = baseURL
        self.method = method
        self.headers = headers
        self.source = source
        self.timeout = timeout
        skipsExisting = skipExisting
    }

    /// Builds the op from `with:` parameters.
    ///
    /// - Throws: ``FlowParameterError`` when `url` is missing or not an http(s) URL, or another
    ///   parameter has the wrong type or value.
    public convenience init(parameters: FlowParameters) throws {
        let text = try parameters.string("url")
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty
        else {
            throw parameters.error("url", "must be an http:// or https:// URL, not \(text)")
        }
        self.init(
            baseURL: url, method: try parameters.choice("method", default: Method.put), headers: try parameters.stringMap("headers"),
            source: try parameters.choice("source", default: Source.worker), timeout: try parameters.duration("timeout", default: 300),
            skipExisting: try parameters.bool("skipExisting", default: false))
    }

    public override var primaryInputParamKey: String { "file" }
    public override var primaryOutputParamKey: String { "url" }

    public override func run() async throws {
        let input = try FileInput(bucketValue: try value(primaryInputParamKey, as: Any.self), key: primaryInputParamKey)
        let started = Date()
        do {
            let objectURL = try Self.objectURL(base: baseURL, name: input.name)
            let request = UploadRequest(method: method, headers: headers, timeout: timeout)
            if skipsExisting, let size = try await request.existingSize(of: input, at: objectURL) {
                log(message: "skipped \(input.name): the server has it already (\(size) bytes) at \(objectURL.absoluteString)")
                set(primaryOutputParamKey, objectURL.absoluteString)
                return
            }
            let size = try await request.send(input, to: objectURL)
            log(message: "uploaded \(input.name) (\(size) bytes) -> \(objectURL.absoluteString) in \(DurationText.elapsed(since: started)) s")
            set(primaryOutputParamKey, objectURL.absoluteString)
        } catch let error as FlowStandardOpError {
            log(message: error.message)
            throw error
        }
    }

    /// The object's URL: the base, exactly one `/`, and the percent-encoded name.
    static func objectURL(base: URL, name: String) throws -> URL {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
        guard let url = URL(string: text + "/" + encoded) else {
            throw FlowStandardOpError(.transport, "cannot make a URL from \(text) and the file name \(name)")
        }
        return url
    }
}

extension UploadFileOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] {
        [
            "url": .string(baseURL.absoluteString), "method": .string(method.rawValue), "headers": .map(headers.mapValues(FlowValue.string)),
            "source": .string(source.rawValue), "timeout": .double(timeout), "skipExisting": .bool(skipsExisting),
        ]
    }
}
