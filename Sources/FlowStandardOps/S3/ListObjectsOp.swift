public import Flow
import Foundation

/// Lists the objects of an S3-compatible bucket under a prefix: a serial step that feeds a group
/// (`ListObjectsOp`, then a group over its output), as ``ListFilesOp`` lists a folder.
///
/// Parameters:
/// - `url` (string, required): `s3://BUCKET` or `s3://BUCKET/PREFIX`. The prefix is matched as
///   S3 matches it, character by character: `s3://photos/2026` lists `2026/…` and `2026-old/…`;
///   `s3://photos/2026/` only the first.
/// - `output` (string, default `objects`): the bucket key the list goes under.
/// - `recursive` (bool, default true): every key below the prefix; false keeps those not below a
///   further `/` (one "folder").
/// - `concurrency` (integer 1–256, default 16): `ListObjectsV2` requests in flight. Above 1 the
///   prefix is split into its folders (the common prefixes of the delimiter `/`, level by level
///   until there are that many) and each folder is paged through by a paginator of its own, that
///   many at once; 1 lists with one paginator, page after page, as `aws s3 ls --recursive` does.
/// - `pageSize` (integer 1–1000, default 1000): keys asked for in one request (`max-keys`); each
///   page goes to the group as it comes. S3 answers at most 1,000; a store that is slow to
///   answer a large page may do better with fewer.
/// - `include`, `exclude`, `minSize`, `maxSize`, `newerThan`: as ``ListFilesOp`` takes them,
///   matched against each key's path below the prefix, its size and its `LastModified`; a folder
///   an `exclude` ending in `/**` leaves out whole is not listed.
/// - `endpoint`, `region`, `pathStyle`, `caFile`: as `UploadFileOp` takes them for S3.
/// - `timeout` (seconds, default 60): the most one page's request may take.
///
/// Before a group that reads its output, the op runs with the group and gives it the objects a
/// page of up to 1,000 at a time as they are listed (the group's first element starts after
/// the first page; memory stays flat at any size), in a fixed order: with one paginator the
/// store's, with several the objects of the top folder levels sorted, then each folder's in the
/// order of the folders' names.
///
/// Output: one map per object, sorted by key: `{"key": "2026/01/a.jpg", "size": 1234, "etag":
/// "9b2cf535f27731c974343645a3985328", "lastModified": "2026-11-29T09:30:00.000Z"}` (the whole
/// key; the ETag without its quotes; the time as the store wrote it). An empty prefix gives an
/// empty list. A missing bucket, refused credentials or a failed request fail the op with the
/// store's code and message (a 5xx or a lost connection as transient, for the step's `retry`).
///
/// Credentials come from the machine that runs the op (the coordinator: the op is placed there),
/// as ``S3CredentialChain`` finds them; a flow file cannot carry them.
// @unchecked: restated, as Swift 6 asks of FlowOperation's subclasses; no state of its own beyond `let`s.
public final class ListObjectsOp: FlowAsyncOperation, @unchecked Sendable {
    /// It only lists: a dry run runs it.
    public override var dryRunRole: FlowDryRunRole { .readsOnly }

    /// `s3://BUCKET/PREFIX`.
    public let url: String
    /// The bucket key the list goes under.
    public let outputKey: String
    /// Whether every key below the prefix is listed (not only one folder's).
    public let recursive: Bool
    /// Listing requests in flight.
    public let concurrency: Int
    /// Keys asked for in one request.
    public let pageSize: Int
    /// The most one page's request may take.
    public let timeout: Duration
    /// A PEM file of certificate authorities trusted besides the machine's own.
    public let caFile: String?
    /// The parameters as given, for the target and the filter, and for a worker.
    private let given: [String: FlowValue]
    /// Where the bucket is.
    private let target: S3Target
    /// Which objects are kept.
    private let filter: FileFilter

    /// The largest `concurrency`.
    static let maximumConcurrency = 256

    /// Builds the op from `with:` parameters.
    ///
    /// - Throws: `FlowParameterError` naming the parameter: no `url`, one that is not `s3://`,
    ///   a credential given, a `concurrency` out of range, a filter that cannot be read.
    public init(parameters: FlowParameters) throws {
        let url = try parameters.string("url")
        guard S3Target.isS3(url) else { throw parameters.error("url", "must be s3://BUCKET or s3://BUCKET/PREFIX, not \(url)") }
        try UploadFileOp.refuseCredentials(in: parameters)
        self.url = url
        outputKey = try parameters.string("output", default: "objects")
        guard !outputKey.isEmpty else { throw parameters.error("output", "must not be empty") }
        recursive = try parameters.bool("recursive", default: true)
        concurrency = try parameters.integer("concurrency", default: 16)
        guard (1...Self.maximumConcurrency).contains(concurrency) else {
            throw parameters.error("concurrency", "must be 1 to \(Self.maximumConcurrency), not \(concurrency)")
        }
        pageSize = try parameters.integer("pageSize", default: 1000)
        guard (1...1000).contains(pageSize) else { throw parameters.error("pageSize", "must be 1 to 1000, not \(pageSize)") }
        timeout = try parameters.seconds("timeout", default: 60)
        caFile = try parameters.optionalString("caFile")
        target = try S3Target(parameters: parameters)
        filter = try FileFilter(parameters: parameters)
        given = parameters.values
        super.init()
    }

    public override func run() async throws {
        let credentials: S3Credentials
        do {
            credentials = try S3CredentialChain().resolve()
        } catch {
            let failure = FlowStandardOpError(.missingCredentials, "listing \(url) failed: \(error.description)")
            log(message: failure.message)
            throw failure
        }
        do {
            let started = ContinuousClock.now
            if hasPageReader(for: outputKey) {
                try await listInPages(credentials: credentials, started: started)
                return
            }
            let result = try await list(credentials: credentials)
            log(message: Self.describe(result, url: url, took: ContinuousClock.now - started))
            set(outputKey, result.objects.map(\.element))
        } catch let error as FlowStandardOpError {
            log(message: error.message)
            throw error
        }
    }

    /// Lists the prefix a page at a time into the group that reads the output as it comes
    /// (`FlowOperation.emit(_:to:)`): its first element starts after the first page. The order
    /// is `S3Listing.stream`'s, the same every time, so
    /// a resumed run's group finds each element where it was.
    ///
    /// Each page goes with where the listing stood before it (`S3ListingPosition`): a run resumed
    /// after it was cut off goes on from the page its journal names instead of listing the
    /// prefix again.
    private func listInPages(credentials: S3Credentials, started: ContinuousClock.Instant) async throws {
        var count = 0
        var bytes: Int64 = 0
        let resumed = try resumedPosition()
        if let resumed { log(message: "listing \(url) goes on where the run's earlier life left it (\(Self.describe(resumed)))") }
        let result = try await stream(credentials: credentials, from: resumed) { page, position in
            count += page.count
            bytes += page.reduce(0) { $0 + $1.size }
            try await emit(page.map(\.element), to: outputKey, from: position.value)
        }
        log(message: Self.describe(result, url: url, took: ContinuousClock.now - started, objects: (count, bytes)))
        // Nothing emitted: the group reads an empty list from the bucket, as without pages.
        if count == 0 { set(outputKey, [Any]()) }
    }

    /// The position a resumed run's listing goes on from, `nil` to list from the beginning.
    ///
    /// - Throws: ``FlowStandardOpError`` when the journal's position was made by a listing of
    ///   the other kind (one paginator against several: `concurrency` changed between the lives).
    private func resumedPosition() throws -> S3ListingPosition? {
        guard let value = resumedPosition(for: outputKey) else { return nil }
        guard let position = S3ListingPosition(value), position.fits(parallel: recursive && concurrency > 1) else {
            throw FlowStandardOpError(.cannotResume, "listing \(url) cannot go on from where the run's earlier life left it "
                                      + "(\(value)): its concurrency or recursive parameter changed since; resume with the ones it had, "
                                      + "or start a new run")
        }
        return position
    }

    /// Where a resumed listing goes on from, in words.
    static func describe(_ position: S3ListingPosition) -> String {
        switch position {
        case .page(let token): token == nil ? "from its first page" : "from the continuation token its journal kept"
        case .top(let offset): "from object \(offset + 1) of the top folders"
        case .folder(let folder, let token): "from folder \(folder)" + (token == nil ? "" : ", past its pages the journal holds")
        }
    }

    /// Lists the prefix a page at a time, signing with `credentials` (`S3Listing.stream`), from
    /// `position` when a resumed run goes on.
    func stream(credentials: S3Credentials, pageSize: Int? = nil, from position: S3ListingPosition? = nil,
                deliver: ([S3ObjectEntry], S3ListingPosition) async throws -> Void) async throws -> S3Listing.Result {
        try await listing(credentials: credentials, pageSize: pageSize ?? self.pageSize).stream(prefix: target.keyPrefix, recursive: recursive,
                                                                               concurrency: concurrency, from: position, deliver: deliver)
    }

    /// Lists the prefix, signing with `credentials`.
    ///
    /// - Parameter pageSize: keys per page asked for (`max-keys`; S3's most is 1,000).
    func list(credentials: S3Credentials, pageSize: Int? = nil) async throws -> S3Listing.Result {
        try await listing(credentials: credentials, pageSize: pageSize ?? self.pageSize).list(prefix: target.keyPrefix, recursive: recursive,
                                                                             concurrency: concurrency)
    }

    /// The listing of the prefix, signing with `credentials`.
    private func listing(credentials: S3Credentials, pageSize: Int = 1000) throws -> S3Listing {
        let client = S3Client(target: target, signer: SigV4Signer(credentials: credentials, region: target.region), objectHeaders: [],
                              timeout: timeout.seconds, tls: try caFile.map(CertificateAuthorityFile.tlsConfiguration(path:)))
        let filter = self.filter
        let cutoff = filter.newerThan?.cutoff(now: Date())
        let listing = S3Listing(client: client, timeout: timeout, pageSize: pageSize, keeps: { relative, object in
            filter.admits(relativePath: relative)
                && filter.admits(size: object.size, modified: cutoff == nil ? Date() : S3Upload.date(object.lastModified) ?? .distantPast,
                                 cutoff: cutoff)
        }, skipsFolder: { filter.excludesAll(below: $0) })
        return listing
    }

    /// `listed 1,204 objects (3.1 GiB) under s3://photos/2026/ in 2 requests, 0.4 s (…)`.
    ///
    /// - Parameter objects: how many objects and bytes were listed, when they are not in `result`
    ///   (a listing given to a group page by page).
    static func describe(_ result: S3Listing.Result, url: String, took: Duration, objects: (count: Int, bytes: Int64)? = nil) -> String {
        let bytes = objects?.bytes ?? result.objects.reduce(Int64(0)) { $0 + $1.size }
        let byteText = ByteCountFormatter.string(fromByteCount: bytes, countStyle: .binary)
        var line = "listed \(objects?.count ?? result.objects.count) objects (\(byteText)) under \(url) in \(result.requests) request"
            + (result.requests == 1 ? "" : "s") + String(format: ", %.2f s", took.seconds)
        var notes: [String] = []
        if result.prefixes > 1 { notes.append("\(result.prefixes) prefixes") }
        if result.filteredOut > 0 { notes.append("\(result.filteredOut) left out by the filters") }
        if !notes.isEmpty { line += " (" + notes.joined(separator: ", ") + ")" }
        return line
    }
}

extension ListObjectsOp: FlowRemoteOperation {
    public var remoteParameters: [String: FlowValue] { given }
}
