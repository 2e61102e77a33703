import Foundation

/// A proxy in front of an ``S3TestStore`` (moto, Ceph) that counts the requests of multipart uploads (part
/// `PUT`s by number and their bytes, starts, completions, aborts, listings), can fail the next try
/// of chosen parts with 503 `SlowDown` and hold part `PUT`s until released:
/// `Resources/s3_resume_proxy.py`. It also lists and aborts a key's unfinished uploads out of band.
///
/// ```swift
/// let proxy = try await S3ResumeProxy.start(in: s3)
/// defer { proxy.stop() }
/// // endpoint: proxy.endpoint
/// let stats = try proxy.stats()   // stats.parts[5] == 2: part 5 was sent twice
/// ```
public final class S3ResumeProxy: @unchecked Sendable {
    /// What the proxy counted.
    public struct Stats: Decodable, Sendable {
        /// Part `PUT`s by part number, failed ones included.
        public var parts: [String: Int]
        /// Bytes of every part `PUT`'s body.
        public var partBytes: Int
        public var creates: Int
        public var completes: Int
        public var aborts: Int
        public var listUploads: Int
        public var listParts: Int
        /// `HEAD` requests.
        public var heads: Int
        /// `ListObjectsV2` requests (`GET ?list-type=2`).
        public var listObjects: Int
        /// `PUT`s that are not a part of a multipart upload: objects sent whole.
        public var singlePuts: Int
        /// Part `PUT`s waiting for ``release()``.
        public var held: Int
        /// Part `PUT`s the store answered with 2xx.
        public var stored: Int
        /// When each start (`CreateMultipartUpload`) and part `PUT` arrived, in seconds since 1970
        /// by the proxy's clock, in arrival order.
        public var requestTimes: [Double]

        /// Tries of part `number`.
        public func tries(of number: Int) -> Int { parts[String(number)] ?? 0 }
        /// Part `PUT`s in all.
        public var partPuts: Int { parts.values.reduce(0, +) }
    }

    /// `http://127.0.0.1:PORT`: the endpoint to give the op.
    public let endpoint: String
    private let server: any S3TestStore
    private let process: Process
    private let stdinPipe = Pipe()

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/s3_resume_proxy.py").path

    /// Starts the proxy in front of `server` and waits for its readiness line on a thread of its
    /// own (``TestCommand/offThread(_:)``), the caller's task suspended meanwhile.
    ///
    /// - Throws: when it does not print its readiness line within 10 s, with its output.
    public static func start(in server: any S3TestStore) async throws -> S3ResumeProxy {
        try await TestCommand.offThread { try S3ResumeProxy(in: server) }
    }

    /// What ``start(in:)`` runs on its own thread.
    private init(in server: any S3TestStore) throws {
        self.server = server
        let port = try LoopbackPort.free()
        guard let process = try MotoS3Server.startScript(["proxy", String(port), server.endpoint], script: Self.script, listeningOn: port, stdin: stdinPipe,
                                                          within: 10) else {
            throw TestSupportError("the S3 resume proxy did not start on port \(port)")
        }
        self.process = process
        endpoint = "http://127.0.0.1:\(port)"
    }

    deinit { stop() }

    /// What the proxy counted so far.
    public func stats() throws -> Stats {
        try JSONDecoder().decode(Stats.self, from: Data(contentsOf: URL(string: endpoint + "/_proxy_stats")!))
    }

    /// The next try of each of `parts` fails with 503 `SlowDown`.
    public func failNextTry(ofParts parts: [Int]) throws {
        _ = try Data(contentsOf: URL(string: endpoint + "/_proxy_fail?parts=" + parts.map(String.init).joined(separator: ","))!)
    }

    /// Part `PUT`s from now on wait until ``release()``.
    public func hold() throws { _ = try Data(contentsOf: URL(string: endpoint + "/_proxy_hold")!) }

    /// Part `PUT`s wait until ``release()`` from when the store has taken `count` of them (at once
    /// when it has): the proxy holds them itself, with no race against a test polling its count.
    public func hold(afterStored count: Int) throws {
        _ = try Data(contentsOf: URL(string: endpoint + "/_proxy_hold?after=\(count)")!)
    }

    /// `ListMultipartUploads` is answered 403 `AccessDenied` from now on (a key without
    /// `s3:ListBucketMultipartUploads`).
    public func refuseListingUploads() throws { _ = try Data(contentsOf: URL(string: endpoint + "/_proxy_refuse_listing")!) }

    /// `ListObjectsV2` is answered 403 `AccessDenied` from now on (a key that may `PUT` but lacks
    /// `s3:ListBucket`, as upload-only roles do); the requests are still counted.
    public func refuseListingObjects() throws { _ = try Data(contentsOf: URL(string: endpoint + "/_proxy_refuse_object_listing")!) }

    /// Lets held part `PUT`s through, and later ones, and returns once the store has answered
    /// every part that was held. A killed worker's held parts land before the test goes on: let
    /// through while the next try lists the parts, one landed after the listing and was sent
    /// twice at once, which moto answered with an ETag of neither (`InvalidPart` at completion:
    /// the next try started the upload afresh, 2 starts, every part twice, the test's count off).
    public func release() throws { _ = try Data(contentsOf: URL(string: endpoint + "/_proxy_release")!) }

    /// The part numbers the store holds for each unfinished multipart upload of `key`, by upload id
    /// (`ListMultipartUploads` and `ListParts` on the server itself, signed).
    public func storedParts(of key: String) async throws -> [String: [Int]] {
        let result = try await admin(["parts", server.endpoint, server.bucket, key])
        guard result.status == 0 else { throw TestSupportError("listing the parts of \(key) failed: \(result.output)") }
        return try JSONDecoder().decode([String: [Int]].self, from: Data(result.output.utf8))
    }

    /// Aborts every unfinished multipart upload of `key` on the server, as a lifecycle rule would,
    /// and returns their ids. Requests naming them are answered 404 `NoSuchUpload` from then on,
    /// as S3 answers them (moto answers a part `PUT` or a completion of an aborted upload with 500).
    @discardableResult
    public func abortUploads(of key: String) async throws -> [String] {
        let result = try await admin(["abort", server.endpoint, server.bucket, key])
        guard result.status == 0 else { throw TestSupportError("aborting the uploads of \(key) failed: \(result.output)") }
        let ids = try JSONDecoder().decode([String].self, from: Data(result.output.utf8))
        for id in ids {
            let query = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
            _ = try Data(contentsOf: URL(string: endpoint + "/_proxy_gone?uploadId=" + query)!)
        }
        return ids
    }

    private func admin(_ arguments: [String]) async throws -> TestCommand.Result {
        try await server.admin(arguments, script: Self.script)
    }

    /// Stops the proxy and waits until it has exited.
    public func stop() {
        ProcessLaunch.kill(process)
    }
}
