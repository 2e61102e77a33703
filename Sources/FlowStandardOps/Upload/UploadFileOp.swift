public import Flow
public import Foundation
import NIOCore
import NIOSSL

/// Uploads one file to an HTTP or HTTPS server or to S3-compatible object storage: the group op
/// of the stock worker's main job (`ListFilesOp` then a group of `UploadFileOp`).
///
/// - Primary input `file`: the file's path on the machine running the op, or the map
///   `{"name": String, "path": String, "bytes": Data}` of a file the coordinator has already
///   read (``UploadFileSource/coordinatorElement(forPath:)``). Both forms are accepted whatever
///   `source` says.
/// - Primary output `url`: the uploaded object's URL, as a string (`s3://BUCKET/KEY` for S3).
///
/// Parameters:
/// - `url` (string, required): the base URL; the object's URL is the base, one `/`, and the
///   file's name (percent-encoded). `s3://BUCKET/PREFIX` uploads to S3 (below). A name given in
///   the element (`{name, path}`) may hold folders (`2026/a.jpg`, sent with its `/`); one with an
///   empty, `.` or `..` segment or a leading `/` fails that element, permanently. A recursive
///   `ListFilesOp` gives such elements, each file's path relative to the listed folder as its
///   name, so a tree uploads as a tree (`photos/2026/01/a.jpg` listed from `photos` goes to
///   `BASE/2026/01/a.jpg`, or the key `PREFIX/2026/01/a.jpg`). Each segment is percent-encoded
///   in the URL (spaces, letters outside ASCII, `+`, `#`, `?`, `%`, `;`).
/// - `method` (`PUT` or `POST`, default `PUT`): `PUT` sends the file as the body; `POST` sends a
///   `multipart/form-data` body with the file as the field `file`.
/// - `headers` (map of strings, optional): extra request headers, for example `Authorization`.
/// - `source` (`worker` or `coordinator`, default `worker`): who reads the file. With
///   `coordinator` the cluster sends each file's bytes with its task.
/// - `timeout` (seconds, default 300): the most the whole upload may take.
/// - `skipExisting` (`size`, `modtime`, `checksum`, or a Boolean; default false): ask first with
///   a `HEAD` request, and send nothing when the server already has the object by the rule
///   (``UploadSkipRule``); the output is the object's URL all the same. `true` (or `size`): the
///   same size (`Content-Length`), as `rclone copy --size-only` does. `modtime`: the same size and
///   the same modification time in `x-amz-meta-mtime`, which every upload with this rule stores
///   (as rclone does, seconds with a fraction; on HTTP the same header is sent, and a server
///   that does not keep it has every file sent again). `checksum`: the same size and the stored
///   checksum of the op's `checksum` algorithm (S3: `x-amz-checksum-ALG`, asked for with
///   `x-amz-checksum-mode: ENABLED`; HTTP: the same header if the server sends one, `md5` also
///   a hex-MD5 ETag), which costs a read of the file to compute. Any other answer (404, another
///   size, a server that refuses `HEAD`, a stored value missing or different) uploads the file.
///   A skipped file logs `skipped NAME: …` and a `manifest {…}` line with `"skipped": "same
///   size"` (or `same modtime`, `same checksum`) and the stored object's size, checksum and ETag.
/// - `listTarget` (`auto`, `true` or `false`; default `auto`): on S3 with `skipExisting`, whether
///   each worker lists each target folder its files go to, once, instead of a `HEAD` per file: for
///   groups of more than 1,000 elements (`auto`), always, or never (see `UploadFileOp+TargetListing`).
///   A file not listed is sent with no request before it; `size` judges a listed one by its listed
///   size, `modtime` and `checksum` still `HEAD` it. A refused listing (403, 405, 501) or a folder
///   of more than 50,000 objects falls back to a `HEAD` per file, logged once.
/// - `checksum` (`crc32c`, `crc64nvme`, `sha256`, `md5` or `none`; default `crc64nvme` for S3, as
///   the AWS CLI, `none` for HTTP): computed while the file is read, never in a second read. On S3
///   it is sent for the store to check (`x-amz-checksum-*`, per part in a multipart upload;
///   `Content-MD5` for `md5`), and a body refused for it (`BadDigest`) is a transient error. Its
///   value, the size, the ETag and the target are logged as a `manifest {…}` JSON line.
/// - `hostFolder` (Boolean, default false): each file goes under a folder named after the host its
///   element came from (`HOST/NAME`; a listing with `each: worker` gives each file its `host`), so
///   that the same path listed on four hosts makes four objects; an element without a host fails.
/// - `caFile` (string, optional): a PEM file of certificate authorities to trust besides the
///   machine's own, for an HTTPS server (or S3 endpoint) whose certificate a private authority
///   signed, as `curl --cacert` takes one. It is read on the machine that runs the op; a missing
///   file, or one without a certificate, fails the op at once, naming it.
///
/// Requests go through the process's one AsyncHTTPClient with a connection pool per host. A file
/// on disk is streamed with backpressure, `PUT` and multipart `POST` alike, with no temporary
/// copy: memory does not grow with its size. A status outside 200–299 fails the op; its error and
/// log line give the status and the start of the response body. Connection errors, time-outs, 408,
/// 425, 429 and 5xx are transient for a step's `retry` (with `Retry-After` honoured); any other
/// status, and a file that cannot be read, are permanent. A missing or
/// unreadable file fails the op with an error naming the path. Success logs
/// `uploaded NAME (N bytes) -> URL in 0.12 s`.
///
/// **S3-compatible storage** (AWS S3, MinIO, Cloudflare R2, Ceph, Backblaze B2, …): with
/// `url: s3://BUCKET/PREFIX` the object key is the prefix and the file's name, and the parameters
/// of ``S3Target`` apply (`endpoint`, `region`, `pathStyle`, `partSize`, `partConcurrency`).
/// Credentials come from the machine running the op (``S3CredentialChain``), never from the flow
/// file: parameters that look like credentials, an `Authorization` or `x-amz-*` header and
/// `method: POST` are refused. Files up to `partSize` go up in one signed `PUT`, larger ones in a
/// multipart upload that an interrupted try continues, aborted when it fails for good or the run is cancelled (`S3Upload`). The store's XML error
/// `Code` and `Message` are in the op's error; `SlowDown`, `RequestTimeout`, `InternalError`, 500
/// and 503 are transient, `SignatureDoesNotMatch`, `InvalidAccessKeyId`, `AccessDenied`,
/// `NoSuchBucket` and other 4xx permanent. `skipExisting` asks with a signed `HEAD`.
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; its settings are set in `init` and only read after.
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
    public let timeout: Duration
    /// Whether a file the server already has is left alone (``skipRule`` is not `off`).
    public var skipsExisting: Bool { skipRule != .off }
    /// What the server's copy must match for a file to be left alone: `skipExisting`.
    public internal(set) var skipRule: UploadSkipRule
    /// A PEM file of certificate authorities trusted besides the machine's own, `nil` for none.
    public let caFile: String?
    /// Whether each file goes under a folder named after the host it came from (`hostFolder`):
    /// `HOST/NAME`, the element's `host`, as a listing with `each: worker` gives it.
    public internal(set) var hostFolder = false
    /// Where files go when the URL is `s3://…`, `nil` for HTTP(S).
    public let s3Target: S3Target?
    /// The checksum computed while the file is read and sent for the store to check (S3), or
    /// recorded (HTTP): `checksum`, ``UploadChecksum/s3Default`` for S3 and none for HTTP unless given.
    public internal(set) var checksum: UploadChecksum = .none
    /// Whether S3's checksum is left to Flow (`checksum: auto`, or none given): CRC64NVME where
    /// the machine's `AWS_REQUEST_CHECKSUM_CALCULATION` is `when_supported` (the default), none
    /// where it is `when_required`; a store that refuses trailing checksums gets Content-MD5.
    public internal(set) var checksumIsAuto = false
    /// Whether the flow named no S3 checksum (or `auto`), whatever this machine's settings made of it.
    var checksumLeftToFlow = false
    /// Whether a `HEAD` asks for the stored checksum (`AWS_RESPONSE_CHECKSUM_VALIDATION`).
    var validatesStoredChecksums = true
    /// The S3 parameters as the flow gave them, sent to workers as they are so that each worker
    /// takes its own defaults (region, endpoint) from its own environment.
    let s3Parameters: [String: FlowValue]
    /// When `skipExisting` lists an S3 target instead of a `HEAD` per file: `listTarget`.
    var listTarget: ListTarget = .auto
    /// The name of the target's listing this op's group shares (`listing`, which the coordinator
    /// sets: ``prepareGroup(_:_:)``), `nil` for a `HEAD` per file.
    var targetListing: String?

    /// The parameters of an S3 target.
    static let s3ParameterNames = ["endpoint", "region", "pathStyle", "partSize", "partConcurrency"]

    /// Creates the op.
    ///
    /// - Parameters:
    ///   - baseURL: the URL the file's name is appended to.
    ///   - method: `PUT` (the default) or multipart `POST`.
    ///   - headers: extra request headers.
    ///   - source: who reads the file.
    ///   - timeout: the most the upload may take.
    ///   - skipExisting: whether a file the server already has with the same size is left alone.
    ///   - caFile: a PEM file of certificate authorities to trust besides the machine's own.
    public init(baseURL: URL, method: Method = .put, headers: [String: String] = [:], source: Source = .worker, timeout: Duration = .seconds(300),
                skipExisting: Bool = false, caFile: String? = nil) {
        self.baseURL = baseURL
        self.method = method
        self.headers = headers
        self.source = source
        self.timeout = timeout
        skipRule = skipExisting ? .size : .off
        self.caFile = caFile
        s3Target = nil
        s3Parameters = [:]
    }

    /// Creates an op that uploads to S3-compatible storage.
    ///
    /// - Parameters:
    ///   - target: the bucket, key prefix, endpoint and part settings.
    ///   - headers: extra headers for the object (`Content-Type`, `Cache-Control`,
    ///     `x-amz-storage-class`, …); they are signed.
    ///   - source: who reads the file.
    ///   - timeout: the most the whole upload, all parts included, may take.
    ///   - skipExisting: whether an object the store already has with the same size is left alone.
    ///   - caFile: a PEM file of certificate authorities to trust besides the machine's own.
    public convenience init(s3 target: S3Target, headers: [String: String] = [:], source: Source = .worker, timeout: Duration = .seconds(300),
                            skipExisting: Bool = false, caFile: String? = nil) {
        let given: [String: FlowValue] = [
            "url": .string(target.objectURI(key: target.keyPrefix)), "endpoint": .string(target.endpoint.absoluteString),
            "region": .string(target.region), "pathStyle": .bool(target.pathStyle), "partSize": .integer(Int64(target.partSize)),
            "partConcurrency": .integer(Int64(target.partConcurrency)),
        ]
        self.init(s3: target, given: given, headers: headers, source: source, timeout: timeout, skipExisting: skipExisting, caFile: caFile)
    }

    /// `given`: the S3 parameters sent to workers.
    private init(s3 target: S3Target, given: [String: FlowValue], headers: [String: String], source: Source, timeout: Duration,
                 skipExisting: Bool, caFile: String?) {
        baseURL = URL(string: target.objectURI(key: target.keyPrefix)) ?? URL(string: "s3://\(target.bucket)")!
        method = .put
        self.headers = headers
        self.source = source
        self.timeout = timeout
        skipRule = skipExisting ? .size : .off
        self.caFile = caFile
        s3Target = target
        s3Parameters = given
        checksum = .s3Default
    }

    /// Builds the op from `with:` parameters.
    ///
    /// - Throws: `FlowParameterError` when `url` is missing or not an http(s) URL, or another
    ///   parameter has the wrong type or value.
    public convenience init(parameters: FlowParameters) throws {
        let text = try parameters.string("url")
        if S3Target.isS3(text) {
            try Self.refuseCredentials(in: parameters)
            let target = try S3Target(parameters: parameters)
            var given: [String: FlowValue] = ["url": .string(text)]
            for name in Self.s3ParameterNames { given[name] = parameters[name] }
            self.init(s3: target, given: given, headers: try parameters.stringMap("headers"),
                      source: try parameters.choice("source", default: Source.worker), timeout: try parameters.seconds("timeout", default: 300),
                      skipExisting: false, caFile: try Self.caFile(parameters))
            try setS3Checksum(parameters)
            try setSkipRule(parameters)
            hostFolder = try parameters.bool("hostFolder", default: false)
            listTarget = try Self.listTarget(parameters)
            targetListing = try parameters.optionalString("listing")
            return
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty
        else {
            throw parameters.error("url", "must be an http:// or https:// URL, not \(text)")
        }
        self.init(
            baseURL: url, method: try parameters.choice("method", default: Method.put), headers: try parameters.stringMap("headers"),
            source: try parameters.choice("source", default: Source.worker), timeout: try parameters.seconds("timeout", default: 300),
            skipExisting: false, caFile: try Self.caFile(parameters))
        checksum = try parameters.choice("checksum", default: UploadChecksum.none)
        try setSkipRule(parameters)
        hostFolder = try parameters.bool("hostFolder", default: false)
        if try Self.listTarget(parameters) == .always {
            throw parameters.error("listTarget", "lists s3:// targets only: an http(s) server is asked with a HEAD per file")
        }
    }

    /// `caFile`, when given: a non-empty path.
    private static func caFile(_ parameters: FlowParameters) throws -> String? {
        guard parameters["caFile"] != nil else { return nil }
        let path = try parameters.string("caFile")
        guard !path.isEmpty else { throw parameters.error("caFile", "must be the path of a PEM file, not empty") }
        return path
    }

    public override var primaryInputParamKey: String { "file" }
    public override var primaryOutputParamKey: String { "url" }

    public override func run() async throws {
        let input = try fileInput(try value(primaryInputParamKey, as: Any.self))
        let started = Date()
        if let s3Target {
            try await upload(input, to: s3Target, started: started)
            return
        }
        do {
            let objectURL = try Self.objectURL(base: baseURL, name: input.name)
            let element = try? value(primaryInputParamKey, as: Any.self)
            let tls = try tlsConfiguration()
            let head = UploadRequest(method: method, headers: headers, timeout: timeout.seconds, tls: tls)
            if let copy = try await existingCopy(of: input, element: element, head: { try await head.head(of: objectURL) }) {
                log(message: "skipped \(input.name): the server has it already (\(copy.detail)) at \(objectURL.absoluteString)")
                log(message: copy.manifestEntry(target: objectURL.absoluteString, algorithm: checksum, s3: nil).logLine)
                set(primaryOutputParamKey, objectURL.absoluteString)
                return
            }
            let sending = headers.merging(modificationTimeHeaders(of: input, element: element)) { given, _ in given }
            let request = UploadRequest(method: method, headers: sending, timeout: timeout.seconds, tls: tls, checksum: checksum)
            let sent = try await request.sendRecording(input, to: objectURL)
            log(message: "uploaded \(input.name) (\(sent.size) bytes) -> \(objectURL.absoluteString) in \(DurationText.elapsed(since: started)) s")
            log(message: UploadManifestEntry(target: objectURL.absoluteString, size: Int64(sent.size), algorithm: checksum,
                                             checksum: sent.checksum, etag: sent.etag).logLine)
            set(primaryOutputParamKey, objectURL.absoluteString)
        } catch let error as FlowStandardOpError {
            let error = Self.withWhereItWasRead(error, input)
            log(message: error.message)
            throw error
        }
    }

    /// The TLS settings for `caFile`, read on this machine; `nil` without one.
    func tlsConfiguration() throws -> TLSConfiguration? {
        try caFile.map(CertificateAuthorityFile.tlsConfiguration(path:))
    }

    /// The object's URL: the base, exactly one `/`, and the name's segments, each percent-encoded.
    ///
    /// - Throws: ``FlowStandardOpError`` (``FlowStandardOpError/Code/invalidName``) for a name
    ///   that would leave the base (`ObjectName`).
    static func objectURL(base: URL, name: String) throws -> URL {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        let objectName = try ObjectName(name)
        guard let url = URL(string: text + "/" + objectName.urlPath) else {
            throw FlowStandardOpError(.transport, "cannot make a URL from \(text) and the file name \(name)")
        }
        return url
    }
}
