import Flow
import Foundation
import Synchronization
import Testing
@testable import FlowStandardOps

/// When `skipExisting` lists an S3 target instead of a `HEAD` per file: the coordinator names a
/// listing for the group's tasks (``UploadFileOp/prepareGroup(_:_:)``), and only where it should.
struct S3TargetListingTests {
    static let s3: [String: FlowValue] = ["url": "s3://photos/2026/", "skipExisting": true]

    @Test func aGroupOfMoreThanAThousandOrOfAnUnknownCountListsItsTarget() throws {
        #expect(UploadFileOp.prepareGroup(Self.s3, 1_000)["listing"] == nil)
        let large = try #require(UploadFileOp.prepareGroup(Self.s3, 1_001)["listing"]?.stringValue)
        #expect(UUID(uuidString: large) != nil)
        #expect(UploadFileOp.prepareGroup(Self.s3, nil)["listing"] != nil, "a count not known yet lists")
        // Each group started gets a listing of its own: a store that changed is listed again.
        #expect(UploadFileOp.prepareGroup(Self.s3, 1_001)["listing"]?.stringValue != large)
    }

    @Test func listTargetChoosesAndOnlyS3WithSkipExistingLists() throws {
        var always = Self.s3
        always["listTarget"] = true
        #expect(UploadFileOp.prepareGroup(always, 3)["listing"] != nil)
        var never = Self.s3
        never["listTarget"] = false
        #expect(UploadFileOp.prepareGroup(never, 50_000)["listing"] == nil)
        var modtime = Self.s3
        modtime["skipExisting"] = "modtime"
        #expect(UploadFileOp.prepareGroup(modtime, 50_000)["listing"] != nil)
        var off = Self.s3
        off["skipExisting"] = false
        #expect(UploadFileOp.prepareGroup(off, 50_000)["listing"] == nil)
        let http: [String: FlowValue] = ["url": "http://127.0.0.1:9/up", "skipExisting": true]
        #expect(UploadFileOp.prepareGroup(http, 50_000)["listing"] == nil)
        var named = Self.s3
        named["listing"] = "mine"
        #expect(UploadFileOp.prepareGroup(named, 50_000)["listing"] == "mine", "a listing already named is kept")
    }

    @Test func wrongListTargetsAreRefusedNamingThem() {
        #expect(throws: FlowParameterError.self) {
            try UploadFileOp(parameters: FlowParameters(["url": "s3://photos/", "listTarget": "sometimes"], operation: "UploadFileOp"))
        }
        #expect(throws: FlowParameterError.self) {
            try UploadFileOp(parameters: FlowParameters(["url": "http://127.0.0.1:9/up", "listTarget": true], operation: "UploadFileOp"))
        }
    }
}

/// `skipExisting` lists the target folder by folder (`UploadFileOp.listing(of:folder:…)`,
/// `S3TargetListings`): what a folder's listing holds, its bound, and which listings are shared.
struct S3TargetFolderListingTests {
    @Test func aKeysListedFolderIsItsParentNeverAboveTheTargetsPrefix() {
        #expect(UploadFileOp.listedFolder(of: "2026/a/b/x.jpg", under: "2026/") == "2026/a/b/")
        #expect(UploadFileOp.listedFolder(of: "2026/x.jpg", under: "2026/") == "2026/")
        #expect(UploadFileOp.listedFolder(of: "x.jpg", under: "") == "")
        #expect(UploadFileOp.listedFolder(of: "logs/day-1/x", under: "logs/day-") == "logs/day-1/")
        #expect(UploadFileOp.listedFolder(of: "logs/day-x", under: "logs/day-") == "logs/day-", "a prefix that is no folder lists itself")
    }

    /// Counts the listings it makes, by folder.
    private final class Lister: Sendable {
        let made = Mutex<[String]>([])
        func listing(_ folder: String, refused: Bool = false) -> @Sendable () async throws -> S3TargetListings.Listing {
            { [self] in
                made.withLock { $0.append(folder) }
                return (refused ? nil : [:], "listed \(folder)", refused)
            }
        }
    }

    @Test func eachFolderOfAGroupIsListedOnceAndARefusedGroupListsNoOtherFolder() async throws {
        let lister = Lister()
        let group = UUID().uuidString
        let first = try await S3TargetListings.objects(named: group, folder: "a/", list: lister.listing("a/"))
        let again = try await S3TargetListings.objects(named: group, folder: "a/", list: lister.listing("a/"))
        let other = try await S3TargetListings.objects(named: group, folder: "b/", list: lister.listing("b/"))
        #expect(lister.made.withLock { $0 } == ["a/", "b/"])
        #expect(first.line == "listed a/" && again.line == nil && other.line == "listed b/", "each folder's line once")
        #expect(first.objects != nil && other.objects != nil)

        let refusedGroup = UUID().uuidString
        let refused = try await S3TargetListings.objects(named: refusedGroup, folder: "a/", list: lister.listing("a/", refused: true))
        let after = try await S3TargetListings.objects(named: refusedGroup, folder: "b/", list: lister.listing("b/"))
        #expect(refused.objects == nil && refused.line == "listed a/")
        #expect(after.objects == nil && after.line == nil, "no listing and no line after a refusal")
        #expect(lister.made.withLock { $0 } == ["a/", "b/", "a/"])
    }

    @Test func listingsHeldPastTheBoundAreForgottenOldestFirstAndListedAgain() async throws {
        let made = Mutex<[String]>([])
        let half = S3TargetListings.heldObjects / 2 + 1
        let listing = { @Sendable (folder: String, count: Int) -> @Sendable () async throws -> S3TargetListings.Listing in
            {
                made.withLock { $0.append(folder) }
                let objects = Dictionary(uniqueKeysWithValues: (0..<count).map { index in
                    ("\(folder)\(index)", S3ObjectEntry(key: "\(folder)\(index)", size: 1, etag: "e", lastModified: ""))
                })
                return (objects, "listed \(folder)", false)
            }
        }
        let group = UUID().uuidString
        _ = try await S3TargetListings.objects(named: group, folder: "a/", list: listing("a/", half))
        _ = try await S3TargetListings.objects(named: group, folder: "a/", list: listing("a/", half))
        #expect(made.withLock { $0 } == ["a/"], "kept while within the bound")
        // b/ takes the listings past the bound: a/, used longest ago, is forgotten, b/ kept.
        _ = try await S3TargetListings.objects(named: group, folder: "b/", list: listing("b/", half))
        let again = try await S3TargetListings.objects(named: group, folder: "a/", list: listing("a/", half))
        #expect(made.withLock { $0 } == ["a/", "b/", "a/"])
        #expect(again.objects?.count == half)
    }
}
