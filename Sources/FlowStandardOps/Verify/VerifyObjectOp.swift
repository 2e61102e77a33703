public import Flow
import Foundation
import NIOCore
import NIOSSL

/// Checks one object a run uploaded against the store: the group op of `flow-coordinator
/// verify`, one element per `manifest {…}` line of the run's journal.
///
/// - Primary input `object`: the manifest entry as a map (`target`, `size`, `algorithm`,
///   `checksum`, `etag`, and for S3 `endpoint`, `region`), as ``UploadManifestEntry`` encodes it.
/// - Primary output `check`: ``ObjectCheck/flowValue``, `{target, status, detail}` with status
///   `ok`, `missing` or `changed`.
///
/// Parameters:
/// - `deep` (bool, default false): read the object back (a streamed `GET`, nothing kept) and
///   hash it, so that a change of the same size is found whatever the store keeps: against the
///   entry's whole-object checksum, else each recorded part's checksum, else each part's (or the
///   object's) MD5 against its recorded ETag; without it, a `HEAD`.
/// - `endpoint`, `region`, `pathStyle`: for `s3://` targets, as `UploadFileOp` takes them; the
///   op's `endpoint` and `region` win over those the entry recorded, which win over the
///   environment's (`AWS_ENDPOINT_URL_S3`, `AWS_REGION`, …).
/// - `headers` (map): extra request headers for HTTP targets (`Authorization`).
/// - `timeout` (seconds, default 300), `caFile`: as `UploadFileOp` takes them.
///
/// On S3 the `HEAD` asks for the stored checksum (`x-amz-checksum-mode: ENABLED`) and compares
/// the size and that checksum, else the ETag (an empty recorded ETag is none: a multipart
/// object's is then computed from its parts' ETags), else the size alone; ``ObjectCheck/basis``
/// says which. On HTTP it compares `Content-Length`, an
/// `x-amz-checksum-ALG` header if the server sends one, and the ETag when both the entry and
/// the answer have one. A 404 is `missing`; any other status outside 2xx, and a connection that
/// fails, fail the element (5xx and transport failures as transient, for the step's `retry`).
/// Credentials for S3 come from the machine running the op (``S3CredentialChain``).
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class VerifyObjectOp: FlowAsyncOperation, @unchecked Sendable {
    /// Whether the object is read back and hashed.
    public let deep: Bool
    /// The most one check may take, in seconds.
    public let timeout: Duration
    /// Extra request headers for HTTP targets.
    public let headers: [String: String]
    /// A PEM file of certificate authorities trusted besides the machine's own.
    public let caFile: String?
    /// The S3 parameters given (`endpoint`, `region`, `pathStyle`), sent to workers as they are.
    let s3Parameters: [String: FlowValue]

    /// Creates the op.
    ///
    /// - Parameters:
    ///   - deep: read each object back and hash it.
    ///   - endpoint: the S3 endpoint for `s3://` targets, over the entry's and the environment's.
    ///   - region: the S3 signing region, over the entry's and the environment's.
    ///   - headers: extra request headers for HTTP targets.
    ///   - timeout: the most one check may take.
    ///   - caFile: a PEM file of certificate authorities to trust besides the machine's own.
    public convenience init(deep: Bool = false, endpoint: String? = nil, region: String? = nil, headers: [String: String] = [:],
                            timeout: Duration = .seconds(300), caFile: String? = nil) {
        self.init(deep: deep, endpoint: endpoint, region: region, headers: headers, timeout: timeout, caFile: caFile, pathStyle: nil)
    }

    /// Creates the op, with `pathStyle` as given (`nil`: the S3 client's choice).
    init(deep: Bool, endpoint: String?, region: String?, headers: [String: String], timeout: Duration, caFile: String?, pathStyle: Bool?) {
        self.deep = deep
        self.timeout = timeout
        self.headers = headers
        self.caFile = caFile
        var s3: [String: FlowValue] = [:]
        s3["endpoint"] = endpoint.map(FlowValue.string)
        s3["region"] = region.map(FlowValue.string)
        s3["pathStyle"] = pathStyle.map(FlowValue.bool)
        s3Parameters = s3
    }

    /// Builds the op from `with:` parameters.
    ///
    /// - Throws: `FlowParameterError` for a parameter of the wrong type.
    public convenience init(parameters: FlowParameters) throws {
        self.init(deep: try parameters.bool("deep", default: false), endpoint: try parameters.optionalString("endpoint"),
                  region: try parameters.optionalString("region"), headers: try parameters.stringMap("headers"),
                  timeout: try parameters.seconds("timeout", default: 300), caFile: try parameters.optionalString("caFile"),
                  pathStyle: parameters["pathStyle"] != nil ? try parameters.bool("pathStyle") : nil)
    }

    public override var primaryInputParamKey: String { "object" }
    public override var primaryOutputParamKey: String { "check" }
    /// It only reads: a dry run runs it.
    public override var dryRunRole: FlowDryRunRole { .readsOnly }

    public override func run() async throws {
        let entry = try Self.entry(from: try value(primaryInputParamKey, as: Any.self), key: primaryInputParamKey)
        do {
            let check = S3Target.isS3(entry.target) ? try await checkS3(entry) : try await checkHTTP(entry)
            if check.status != .ok { log(message: "\(check.target): \(check.status == .missing ? "missing" : check.detail)") }
            set(primaryOutputParamKey, check.flowValue)
        } catch let error as FlowStandardOpError {
            log(message: error.message)
            throw error
        } catch let error as FlowParameterError {
            log(message: error.description)
            throw error
        }
    }

    /// The manifest entry an element holds: a map, or its JSON text.
    static func entry(from value: Any, key: String) throws -> UploadManifestEntry {
        let plain = (value as? FlowValue)?.anyValue ?? value
        let data: Data
        if let text = plain as? String {
            data = Data(text.utf8)
        } else if let map = plain as? [String: Any], JSONSerialization.isValidJSONObject(map) {
            data = try JSONSerialization.data(withJSONObject: map)
        } else {
            throw FlowDataError.mismatchInputDataType("<\(key)> in data bucket is <\(value)>, but NOT a manifest entry (a map with target and size)")
        }
        do {
            return try JSONDecoder().decode(UploadManifestEntry.self, from: data)
        } catch {
            throw FlowDataError.mismatchInputDataType("<\(key)> in data bucket is not a manifest entry (target, size, algorithm): \(error)")
        }
    }

    /// What the checks compare once the store answered: a 404 is missing, another status
    /// outside 2xx fails the element; a `HEAD` compares what the store says, a deep check what it read.
    func verdict(_ entry: UploadManifestEntry, head: ObjectHead, size: Int64?, checksum: String?) throws -> ObjectCheck {
        try verdict(entry, head: head) { ObjectCheck.compare(entry, size: size, checksum: checksum, etag: head.etag) }
    }

    func verdict(_ entry: UploadManifestEntry, head: ObjectHead, read: StreamedHash) throws -> ObjectCheck {
        try verdict(entry, head: head) { ObjectCheck.compare(entry, read: read.digests()) }
    }

    private func verdict(_ entry: UploadManifestEntry, head: ObjectHead,
                         compare: () -> (differences: [String], basis: ObjectCheck.Basis)) throws -> ObjectCheck {
        if head.status == 404 { return ObjectCheck(target: entry.target, status: .missing) }
        guard head.exists else {
            throw FlowStandardOpError(.httpStatus, "checking \(entry.target) failed: HTTP \(head.status)", status: head.status)
        }
        let (found, basis) = compare()
        return ObjectCheck(target: entry.target, status: found.isEmpty ? .ok : .changed, detail: found.joined(separator: ", "), basis: basis)
    }

    /// The TLS settings for `caFile`, read on this machine; `nil` without one.
    func tlsConfiguration() throws -> TLSConfiguration? {
        try caFile.map(CertificateAuthorityFile.tlsConfiguration(path:))
    }
}

extension VerifyObjectOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] {
        var parameters = s3Parameters
        parameters["deep"] = .bool(deep)
        parameters["timeout"] = .double(timeout.seconds)
        parameters["headers"] = .map(headers.mapValues(FlowValue.string))
        parameters["caFile"] = caFile.map(FlowValue.string)
        return parameters
    }
}
