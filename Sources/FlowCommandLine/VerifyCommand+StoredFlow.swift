import Flow
import FlowJournal
import FlowStandardOps

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
