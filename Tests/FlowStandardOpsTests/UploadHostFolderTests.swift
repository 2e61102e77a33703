import Flow
import Foundation
import Testing
@testable import FlowStandardOps

/// `UploadFileOp`'s `hostFolder` (issue 50 item 6): a file listed on a host goes to `HOST/NAME`.
@Suite struct UploadHostFolderTests {
    private func op(_ url: String, hostFolder: Bool) throws -> UploadFileOp {
        try UploadFileOp(parameters: FlowParameters(["url": .string(url), "hostFolder": .bool(hostFolder)], operation: "UploadFileOp"))
    }

    @Test(arguments: ["http://127.0.0.1:9/up", "s3://bucket/prefix"])
    func aFileGoesUnderItsHostsFolderAndWorkersAreToldSo(url: String) throws {
        let upload = try op(url, hostFolder: true)
        let listed: [String: Any] = ["path": "/data/2026/a.jpg", "name": "2026/a.jpg", "worker": "w1", "host": "b1"]
        #expect(try upload.fileInput(listed).name == "b1/2026/a.jpg")
        #expect(try upload.fileInput(FlowValue.map(["path": "/data/a.jpg", "host": "b2"])).name == "b2/a.jpg")
        // The worker builds the same op from what the coordinator sends.
        let rebuilt = try UploadFileOp(parameters: FlowParameters(upload.remoteParameters, operation: "UploadFileOp"))
        #expect(rebuilt.hostFolder)
        #expect(try op(url, hostFolder: false).fileInput(listed).name == "2026/a.jpg")
        #expect(try op(url, hostFolder: false).remoteParameters["hostFolder"] == nil)
    }

    @Test func anElementThatNamesNoHostFailsSayingHowToListIt() throws {
        let upload = try op("http://127.0.0.1:9/up", hostFolder: true)
        for element: Any in ["/data/a.jpg", ["path": "/data/a.jpg"] as [String: Any], ["path": "/data/a.jpg", "host": "../x"] as [String: Any]] {
            #expect {
                _ = try upload.fileInput(element)
            } throws: { error in
                "\(error)".contains("hostFolder") && "\(error)".contains("each: worker")
            }
        }
    }
}
