import Foundation

/// A bucket on a real S3 API for a test: moto's server (``MotoS3Server``) or a real Ceph object
/// gateway (``CephRGWServer``), so that one test can run against each.
///
/// ```swift
/// @Test(arguments: S3TestStoreKind.allCases)
/// func uploads(_ kind: S3TestStoreKind) async throws {
///     let s3 = try await kind.start()
///     defer { s3.stop() }
///     // try await s3.object(key), try await s3.objects(), try await s3.multipartUploads()
///     // flows name s3://\(s3.bucket)/ at s3.endpoint, signed with s3.credentialsEnvironment
/// }
/// ```
public protocol S3TestStore: AnyObject, Sendable {
    /// `http://127.0.0.1:PORT`.
    var endpoint: String { get }
    /// The test's bucket.
    var bucket: String { get }
    /// The access key id and secret that sign.
    var accessKeyID: String { get }
    var secretAccessKey: String { get }
    /// For files the test writes or reads back.
    var scratch: TemporaryDirectory { get }
    /// The environment that signs with the store's key (and clears any other AWS settings).
    var credentialsEnvironment: [String: String] { get }
    /// An object's bytes, read back with boto3 (a child process, waited for off the cooperative pool).
    func object(_ key: String) async throws -> Data
    /// The bucket's keys and sizes.
    func objects() async throws -> [String: Int]
    /// The keys of the multipart uploads in progress.
    func multipartUploads() async throws -> [String]
    /// Stops what the store started for the test.
    func stop()
}

/// The stores a test can run against.
public enum S3TestStoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// moto's server: every signature checked, checksums kept as sent.
    case moto
    /// radosgw 16.2 "Pacific": refuses the trailer form of a single `PUT`, keeps no checksum,
    /// answers `CompleteMultipartUpload` with an empty ETag.
    case ceph

    public var description: String { rawValue }

    /// Starts a store of this kind with a bucket named (or, on Ceph, starting with) `bucket`.
    public func start(bucket: String = "photos") async throws -> any S3TestStore {
        switch self {
        case .moto: return try await MotoS3Server.start(bucket: bucket)
        case .ceph: return try await CephRGWServer(bucket: bucket)
        }
    }

    /// Deletes and overwrites objects behind a run's back: `script` is Python with `s3`, a boto3
    /// client of the store, and `bucket`, the store's bucket. python3 is waited for off the
    /// cooperative pool (``TestCommand/run(_:timeout:)``).
    public static func boto3(_ s3: any S3TestStore, _ script: String) async throws {
        let code = """
            import boto3, sys
            s3 = boto3.client("s3", endpoint_url="\(s3.endpoint)", region_name="us-east-1")
            bucket = "\(s3.bucket)"
            \(script)
            """
        let result = try await TestCommand.run(s3.signed(["python3", "-c", code]))
        guard result.status == 0 else { throw TestSupportError("boto3 failed: \(result.output)") }
    }
}

extension S3TestStore {
    /// `command` run by `env` with the store's credentials set and every other AWS setting unset:
    /// empty means unset for Flow, and botocore would read `AWS_PROFILE=""` as a profile named "".
    public func signed(_ command: [String]) -> [String] {
        let sorted = credentialsEnvironment.sorted { $0.key < $1.key }
        let unset = sorted.filter { $0.value.isEmpty }.flatMap { ["-u", $0.key] }
        let set = sorted.filter { !$0.value.isEmpty }.map { "\($0.key)=\($0.value)" }
        return ["env"] + unset + set + command
    }

    /// `script ARGUMENTS` (by default `moto_s3.py`, whose get, list, uploads, create-bucket and
    /// delete-bucket speak plain S3 through boto3), signed with the store's key, waited for off
    /// the cooperative pool (``TestCommand/run(_:timeout:)``).
    func admin(_ arguments: [String], script: String = MotoS3Server.script) async throws -> TestCommand.Result {
        try await TestCommand.run(signed(["python3", script] + arguments))
    }

    /// As ``admin(_:script:)``, blocking the calling thread: for a synchronous `stop()`, which a
    /// `defer` calls.
    func adminBlocking(_ arguments: [String], script: String = MotoS3Server.script) throws -> TestCommand.Result {
        try TestCommand.runBlocking(signed(["python3", script] + arguments))
    }

    /// An object's bytes, read back through the S3 API (boto3, signed).
    func readObject(_ key: String, in bucket: String) async throws -> Data {
        let file = scratch.url.appendingPathComponent(UUID().uuidString)
        let result = try await admin(["get", endpoint, bucket, key, file.path])
        guard result.status == 0 else { throw TestSupportError("GetObject \(key) failed: \(result.output)") }
        defer { try? FileManager.default.removeItem(at: file) }
        return try Data(contentsOf: file)
    }

    /// A bucket's keys and sizes (`ListObjectsV2`).
    func listObjects(in bucket: String) async throws -> [String: Int] {
        let result = try await admin(["list", endpoint, bucket])
        guard result.status == 0 else { throw TestSupportError("ListObjectsV2 failed: \(result.output)") }
        return try JSONDecoder().decode([String: Int].self, from: Data(result.output.utf8))
    }

    /// The keys of a bucket's multipart uploads in progress (`ListMultipartUploads`).
    func listUploads(in bucket: String) async throws -> [String] {
        let result = try await admin(["uploads", endpoint, bucket])
        guard result.status == 0 else { throw TestSupportError("ListMultipartUploads failed: \(result.output)") }
        return try JSONDecoder().decode([[String: String]].self, from: Data(result.output.utf8)).compactMap { $0["key"] }
    }
}

extension MotoS3Server: S3TestStore {}

extension CephRGWServer: S3TestStore {
    public func object(_ key: String) async throws -> Data { try await object(key, in: nil) }

    public func objects() async throws -> [String: Int] { try await objects(in: nil) }
}
