import Flow
import FlowJournal
import FlowStandardOps
import Foundation

/// Where `verify` finds an S3 object's store when its manifest line does not say (lines written
/// before they recorded `endpoint` and `region`): the run's flow, as its journal keeps it.
extension VerifyCommand {
    /// An S3 bucket's endpoint and region as the flow gave them.
    struct StoreSettings: Equatable {
        var endpoint: String?
        var region: String?
    }

    /// The `endpoint` and `region` the flow's `UploadFileOp` steps give, by the bucket of their
    /// `s3://` URL, with `${…}` taken from the starting bucket; steps whose values come from
    /// later in the run are left out. Empty for a flow that no longer loads.
    static func storeSettings(_ stored: RunJournal.Stored, file: String) -> [String: StoreSettings] {
        guard let definition = try? FlowFileLoader(registry: nil).load(text: stored.flowText, file: file) else { return [:] }
        let bucket = stored.bucket.mapValues(\.anyValue)
        let registry = FlowOperationRegistry.standard
        var settings: [String: StoreSettings] = [:]
        definition.forEachOperation { name, parameters, _ in
            guard name == "UploadFileOp", let resolved = try? registry.resolveParameters(of: name, parameters, bucket: bucket),
                  let url = resolved["url"]?.stringValue, S3Target.isS3(url) else { return }
            let name = String(url.dropFirst("s3://".count).prefix { $0 != "/" })
            settings[name] = StoreSettings(endpoint: resolved["endpoint"]?.stringValue, region: resolved["region"]?.stringValue)
        }
        return settings
    }

    /// Why an S3 entry is not checked where it says, `nil` when it may be: `verify` signs its
    /// requests with this machine's credentials, so it sends them only to an endpoint the run's
    /// flow uploads to (or to `--endpoint`, which replaces every entry's).
    /// The environment's endpoint (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`) and AWS's own
    /// (`*.amazonaws.com`) are trusted as well.
    static func endpointRefusal(_ entry: UploadManifestEntry, settings: [String: StoreSettings],
                                environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard S3Target.isS3(entry.target), let endpoint = entry.endpoint else { return nil }
        let trusted = settings.values.compactMap(\.endpoint) + ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"].compactMap { environment[$0] }
        let known = Set(trusted.compactMap(normalizedEndpoint))
        let mine = normalizedEndpoint(endpoint)
        if let mine, known.contains(mine) || URL(string: mine)?.host?.hasSuffix(".amazonaws.com") == true { return nil }
        return "not checking \(entry.target.escapingControlCharacters): its recorded endpoint \(endpoint.escapingControlCharacters) is "
            + "not one the run's flow uploads to, and this machine's credentials are sent only there (give --endpoint URL to "
            + "check it at a store you trust)"
    }

    /// `scheme://host:port/path` in lowercase (path as given, without a trailing `/`), `nil` for
    /// text that is no http(s) URL: two spellings of one endpoint compare equal.
    static func normalizedEndpoint(_ text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        return "\(scheme)://\(host):\(port)\(path)"
    }

    /// The entry with the flow's endpoint and region for its bucket where it recorded none.
    static func filled(_ entry: UploadManifestEntry, from settings: [String: StoreSettings]) -> UploadManifestEntry {
        guard S3Target.isS3(entry.target), entry.endpoint == nil || entry.region == nil else { return entry }
        let name = String(entry.target.dropFirst("s3://".count).prefix { $0 != "/" })
        guard let found = settings[name] else { return entry }
        var entry = entry
        entry.endpoint = entry.endpoint ?? found.endpoint
        entry.region = entry.region ?? found.region
        return entry
    }
}
