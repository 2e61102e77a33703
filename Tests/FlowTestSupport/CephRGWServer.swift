import Foundation

/// A bucket of its own on a real Ceph object gateway (radosgw 16.2 "Pacific", Debian's packages)
/// on 127.0.0.1, for S3 tests that must meet a store other than moto. The gateway is the process's
/// one ``CephRGWGateway`` (`scripts/lib/ceph-rgw`), started on first use and stopped at exit;
/// every request must carry a valid SigV4 signature of its S3 user's key.
///
/// ```swift
/// let s3 = try await CephRGWServer(bucket: "photos")
/// defer { s3.stop() }
/// // AWS_ACCESS_KEY_ID = s3.accessKeyID, AWS_SECRET_ACCESS_KEY = s3.secretAccessKey, endpoint s3.endpoint
/// let bytes = try await s3.object("2026/a.jpg")
/// ```
///
/// Objects are read back, and buckets made and removed, with boto3 (`Resources/moto_s3.py`, at the
/// versions `Resources/requirements-test.txt` pins).
public final class CephRGWServer: Sendable {
    /// `http://127.0.0.1:PORT`, the same for every server of the process.
    public let endpoint: String
    /// This server's bucket: the name asked for with a unique suffix (`photos-1a2b3c4d`).
    public let bucket: String
    /// The S3 user's access key id and secret.
    public let accessKeyID: String
    public let secretAccessKey: String
    /// For files read back.
    public let scratch: TemporaryDirectory
    /// The gateway's folder: its daemons' logs are in `log/`.
    public let cluster: String
    /// `scripts/lib/ceph-rgw`, for tests of the script itself.
    public static var script: String { CephRGWGateway.script }

    /// Starts the process's gateway when it is not running yet, and makes a bucket on it.
    ///
    /// - Parameter prefix: the start of the bucket's name (3 to 54 characters: lowercase letters,
    ///   digits, `-`).
    /// - Throws: when the gateway does not start (the message names its log) or the bucket cannot be made.
    public init(bucket prefix: String = "photos") async throws {
        try await MotoS3Server.installIfMissing()
        let gateway = try await CephRGWGateway.shared()
        endpoint = gateway.endpoint
        accessKeyID = gateway.accessKeyID
        secretAccessKey = gateway.secretAccessKey
        cluster = gateway.cluster
        bucket = "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
        scratch = try TemporaryDirectory(prefix: "ceph-s3")
        try await createBucket(bucket)
    }

    /// The environment that signs as the S3 user.
    public var credentialsEnvironment: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_SESSION_TOKEN": "",
         "AWS_REGION": "us-east-1", "AWS_PROFILE": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": ""]
    }

    /// Makes another bucket on the gateway (``stop()`` removes only ``bucket``).
    ///
    /// - Throws: when the gateway refuses (a name taken, a name S3 does not allow).
    public func createBucket(_ name: String) async throws {
        let result = try await admin(["create-bucket", endpoint, name])
        guard result.status == 0 else { throw TestSupportError("CreateBucket \(name) failed: \(result.output)") }
    }

    /// An object's bytes, read back through the S3 API (boto3, signed).
    public func object(_ key: String, in bucket: String? = nil) async throws -> Data { try await readObject(key, in: bucket ?? self.bucket) }

    /// The bucket's keys and sizes.
    public func objects(in bucket: String? = nil) async throws -> [String: Int] { try await listObjects(in: bucket ?? self.bucket) }

    /// The multipart uploads in progress in the bucket (`ListMultipartUploads`): their keys.
    public func multipartUploads() async throws -> [String] { try await listUploads(in: bucket) }

    /// Removes the bucket with everything in it (the OSD keeps objects in memory) and the scratch
    /// folder; the gateway runs on for the other tests. Synchronous, for a `defer`: it blocks
    /// while boto3 deletes the bucket.
    public func stop() {
        _ = try? adminBlocking(["delete-bucket", endpoint, bucket])
        scratch.remove()
    }
}
