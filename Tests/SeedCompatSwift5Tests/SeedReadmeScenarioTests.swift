// Runs the seed README's scenarios and checks each summary line by line (times masked).
// Shared with SeedCompatSwift6Tests through a symbolic link.
import Foundation
import Flow
import Testing

/// Replaces what changes from run to run: time stamps, group ids, dates.
func maskedSummary(_ summary: String) -> [String] {
    summary.split(separator: "\n", omittingEmptySubsequences: false).map { line in
        var text = String(line)
        text = text.replacingOccurrences(of: #"^\d{1,2}:\d{2}:\d{2} (AM|PM) "#, with: "T ", options: .regularExpression)
        text = text.replacingOccurrences(of: #"\[(\w+) [0-9a-f]{4}\]"#, with: "[$1 ####]", options: .regularExpression)
        text = text.replacingOccurrences(of: #"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+0000"#, with: "DATE", options: .regularExpression)
        return text
    }
}

/// Runs one of the controller's fire-and-forget flows and waits for its did-finish block.
func summary(of start: (SeedDemoController) -> Void) async -> [String] {
    let controller = SeedDemoController()
    let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
        controller.onFinish = { continuation.resume(returning: $0) }
        start(controller)
    }
    return maskedSummary(text)
}

@Suite struct SeedReadmeScenarioTests {
    @Test func simpleChainPrintsBothMessagesInOrder() async {
        let lines = await summary { $0.simpleChainedFlow() }
        #expect(lines == [
            "====== Flow Summary ======",
            "T [DataBucket] start with:",
            "T [SimplePrintOp] WillStart",
            "T [SimplePrintOp] hello world",
            "T [SimplePrintOp] DidFinish: successfully",
            "T [SimplePrintOp] WillStart",
            "T [SimplePrintOp] good bye",
            "T [SimplePrintOp] DidFinish: successfully",
            "T [DataBucket] end with:",
            "Flow isSuccess: true",
            "======    Ending    ======",
            "",
        ])
    }

    @Test func loginThenProfileMatchesTheSeedSummary() async {
        let lines = await summary { $0.loginThenProfile(bucket: ["email": "test@gmail.com", "password": "123456"]) }
        #expect(lines == [
            "====== Flow Summary ======",
            "T [DataBucket] start with:",
            "email: test@gmail.com",
            "password: 123456",
            "T [MockAsyncLoginOp] WillStart",
            "T [MockAsyncLoginOp] simulation of login callback",
            "T [DataBucket] add for accessToken: sdaftadagasg",
            "T [MockAsyncLoginOp] DidFinish: successfully",
            "T [MockAsyncLoadProfileOp] WillStart",
            "T [MockAsyncLoadProfileOp] simulation of success load profile callback",
            "T [DataBucket] add for profileRefreshDate: DATE",
            "T [MockAsyncLoadProfileOp] DidFinish: successfully",
            "T [DataBucket] end with:",
            "accessToken: sdaftadagasg",
            "email: test@gmail.com",
            "password: 123456",
            "profileRefreshDate: DATE",
            "Flow isSuccess: true",
            "======    Ending    ======",
            "",
        ])
    }

    @Test func missingEmailStopsWithTheSeedMessage() async {
        let lines = await summary { $0.loginThenProfile(bucket: ["email_address": "test@gmail.com", "password": "123456"]) }
        #expect(lines == [
            "====== Flow Summary ======",
            "T [DataBucket] start with:",
            "email_address: test@gmail.com",
            "password: 123456",
            "T [MockAsyncLoginOp] WillStart",
            "T [MockAsyncLoginOp] DidFinish: withInsufficientInputData: can't find <email> in data bucket",
            "T [DataBucket] end with:",
            "email_address: test@gmail.com",
            "password: 123456",
            "Flow isSuccess: false",
            "======    Ending    ======",
            "",
        ])
    }

    @Test func failingLoginReportsTheErrorAndSkipsTheProfile() async {
        let lines = await summary { $0.failingLogin() }
        let error = String(describing: NSError(domain: "No such account", code: 404, userInfo: nil))
        #expect(lines == [
            "====== Flow Summary ======",
            "T [DataBucket] start with:",
            "email: nobody@gmail.com",
            "password: 123456",
            "T [MockAsyncLoginOp] WillStart",
            "T [MockAsyncLoginOp] simulation of login callback",
            "T [MockAsyncLoginOp] DidFinish: withError: \(error)",
            "T [DataBucket] end with:",
            "email: nobody@gmail.com",
            "password: 123456",
            "Flow isSuccess: false",
            "======    Ending    ======",
            "",
        ])
    }

    @Test func groupedUploadCollectsEveryURLInInputOrder() async {
        let lines = await summary { $0.groupedUpload() }
        let element = [
            "T [UploadSingleImageOp ####] WillStart",
            "T [UploadSingleImageOp ####] simulation of upload single image callback",
            "T [UploadSingleImageOp ####] DidFinish: successfully",
        ]
        #expect(lines == [
            "====== Flow Summary ======",
            "T [DataBucket] start with:",
            #"images: ["a", "b", "c", "d"]"#,
            "T [FlowArrayGroupDispatcher] group created: 4",
        ] + element + element + element + element + [
            #"T [DataBucket] add for imageURLs: ["url_of_a", "url_of_b", "url_of_c", "url_of_d"]"#,
            "T [FlowArrayGroupDispatcher] all finished. output size: 4",
            "T [DataBucket] end with:",
            #"imageURLs: ["url_of_a", "url_of_b", "url_of_c", "url_of_d"]"#,
            #"images: ["a", "b", "c", "d"]"#,
            "Flow isSuccess: true",
            "======    Ending    ======",
            "",
        ])
    }

    @Test func casesRunTheMatchingBranchThenCombine() async {
        let lines = await summary { $0.demoCases() }
        let messages = lines.filter { $0.hasPrefix("T [SimplePrintOp] Step") }
        #expect(messages == [
            "T [SimplePrintOp] Step1", "T [SimplePrintOp] Step2A1", "T [SimplePrintOp] Step2A2", "T [SimplePrintOp] Step3",
        ])
        #expect(lines.suffix(3) == ["Flow isSuccess: true", "======    Ending    ======", ""])
    }
}
