import FlowTestSupport
import Foundation

/// Debian's `chromium`, headless, for looking at a page the way a person's browser draws it:
/// the DOM after the page's scripts ran, and a screenshot. Each call gets a profile folder of its
/// own (tests run at once), and `timeout` ends a browser that hangs. Each call is `async`: the
/// browser (or python3) is waited for off the cooperative pool (``TestCommand/run(_:timeout:)``).
enum HeadlessChromium {
    /// `scripts/lib/check-timeline.py`: tells a drawn screenshot from a blank one.
    static let screenshotChecker = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/lib/check-timeline.py").path

    /// The page's DOM once it has loaded and its scripts have run.
    static func dumpDOM(of page: String) async throws -> String {
        let result = try await run(["--dump-dom", URL(fileURLWithPath: page).absoluteString])
        guard result.status == 0, result.output.contains("<body") else {
            throw HarnessError("chromium --dump-dom \(page) failed (exit \(result.status)): \(result.output.prefix(500))")
        }
        return result.output
    }

    /// Takes a `width`×`height` screenshot of the page into `png`.
    static func screenshot(of page: String, to png: String, width: Int = 1400, height: Int = 900) async throws {
        try? FileManager.default.removeItem(atPath: png)
        let result = try await run(["--hide-scrollbars", "--window-size=\(width),\(height)", "--screenshot=\(png)",
                              URL(fileURLWithPath: page).absoluteString])
        guard result.status == 0, FileManager.default.fileExists(atPath: png) else {
            throw HarnessError("chromium --screenshot of \(page) failed (exit \(result.status)): \(result.output.prefix(500))")
        }
    }

    /// `check-timeline.py` on a screenshot: the share of pixels that are neither white nor the
    /// background, and whether that is above its threshold (1%).
    static func drawnShare(of png: String) async throws -> (share: Double, drawn: Bool) {
        let result = try await TestCommand.run(["python3", screenshotChecker, png])
        guard let value = result.output.firstMatch(of: /non-blank: ([0-9.]+)/).flatMap({ Double($0.1) }) else {
            throw HarnessError("check-timeline.py said: \(result.output)")
        }
        return (value, result.status == 0)
    }

    private static func run(_ arguments: [String]) async throws -> TestCommand.Result {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        return try await TestCommand.run(["timeout", "120", "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                    "--no-first-run", "--user-data-dir=\(profile.path)", "--virtual-time-budget=5000"] + arguments)
    }
}
