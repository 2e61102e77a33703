import Flow
import Foundation
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
