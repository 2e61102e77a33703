import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests {
    /// `run --timeline FILE.html`: one self-contained page that shows which worker ran which
    /// attempt when, looked at in a real (headless) browser.
    @Suite struct Timeline {
        /// The data a timeline page carries, as its script reads it.
        struct PageData: Decodable {
            struct Step: Decodable {
                var name: String
                var kind: String
                var elements: Int?
                var failed: Int?
            }
            struct Event: Decodable {
                var kind: String
                var worker: Int
            }
            struct Mark: Decodable {
                var kind: String
                var atMs: Double
                var step: String?
                var concurrency: Int?
            }
            struct Attempts: Decodable {
                var op: [Int]
                var element: [Int]
                var worker: [Int]
                var startMs: [Double]
                var endMs: [Double]
                var state: [Int]
                var log: [String?]
            }
            var flow: String
            var succeeded: Bool
            var workers: [String]
            var slots: [Int]
            var ops: [String]
            var steps: [Step]
            var attempts: Attempts
            var stateNames: [String]
            var events: [Event]
            var marks: [Mark]?
            var earlierElements: Int?

            /// How many attempts ended in the state named `name`.
            func count(_ name: String) -> Int {
                guard let state = stateNames.firstIndex(of: name) else { return 0 }
                return attempts.state.count { $0 == state }
            }

            /// The data in the page's `flow-timeline-data` script element.
            static func read(_ page: String) throws -> PageData {
                guard let open = page.range(of: #"<script id="flow-timeline-data" type="application/json">"#),
                      let close = page.range(of: "</script>", range: open.upperBound..<page.endIndex) else {
                    throw HarnessError("no flow-timeline-data element in the page")
                }
                return try JSONDecoder().decode(PageData.self, from: Data(page[open.upperBound..<close.lowerBound].utf8))
            }
        }

        static let fileCount = 48

        /// A listing, then a grouped upload through a slow server that refuses every 5th PUT and
        /// holds the first try of one file (uploaded after the loss) past the step's time limit
        /// (3 s: the first wave of uploads waits at the server while the test kills a worker).
        static let flow = """
            flow: photos
            steps:
              - op: ShellOp
                with: {shell: true, command: "echo 'listing </script><h1 id=injected>'"}
              - op: ListFilesOp
                with: {path: "${folder}"}
              - group:
                  op: UploadFileOp
                  input: files
                  output: urls
                  maxConcurrent: 12
                  retry: {attempts: 6, delay: 0.05, maxDelay: 0.2}
                  timeout: 3
                  with: {url: "${uploadURL}"}
            """

        /// Links, scripts, styles or images the page would fetch from elsewhere.
        static func externalReferences(in page: String) -> [String] {
            let patterns = [#/(?:src|href)\s*=\s*["']?(?:https?:|//)[^"'\s>]*/#, #/url\(\s*["']?(?:https?:|//)[^)]*/#, #/@import/#]
            return patterns.flatMap { page.matches(of: $0).map { String($0.output) } }
        }

        @Test func aGroupedUploadWithRetriesAndALostWorkerIsDrawnWithEveryWorkerInChromium() async throws {
            let server = try await FaultyHTTPServer.start(rules: [
                .init(kind: "stall", first: 1, names: ["photo-44.jpg"], seconds: 8),
                .init(kind: "503", every: 5),
                // The first wave (the first 12 PUTs, the 503s aside) waits until the test has
                // killed edge-3, so that edge-3 surely dies with uploads in flight.
                .init(kind: "stall", seconds: 30, untilReleased: true, upTo: 12),
                .init(kind: "stall", seconds: 0.3),
            ])
            defer { server.stop() }
            try await withCluster { cluster in
                let folder = cluster.directory.appendingPathComponent("photos")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for index in 1...Self.fileCount {
                    let name = String(format: "photo-%02d.jpg", index)
                    try PseudoRandomFile.write(to: folder.appendingPathComponent(name), size: 64 * 1024, seed: UInt64(index))
                }
                let file = try cluster.write("photos.yaml", Self.flow)
                let page = cluster.path("timeline.html")
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--min-workers", "3",
                                                           "--timeline", page, "--set", "folder=\(folder.path)",
                                                           "--set", "uploadURL=\(server.url("/up"))"] + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let workers = try ["edge-1", "edge-2", "edge-3"].map { try cluster.worker(connect: endpoint, name: $0, concurrency: 4) }
                // edge-3 dies with uploads in flight: its lanes end with a loss, its tasks run elsewhere.
                // Once 9 uploads are held at the server, at least one is edge-3's (the other two
                // workers have 4 slots each), and it cannot end before the release. The server's
                // count is the only place the PUTs show (it logs none): it is asked every 20 ms,
                // until a deadline that fails the test.
                let deadline = Date().addingTimeInterval(30)
                while Date() < deadline, (try? server.stats().held) ?? 0 < 9 { try await Task.sleep(for: .milliseconds(20)) }
                #expect((try? server.stats().held) ?? 0 >= 9, "the server never held 9 PUTs within 30 s\n\(coordinator.transcript)")
                workers[2].send(SIGKILL)
                try server.release()

                #expect(await coordinator.waitForExit(timeout: 60) == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stderr.contains("worker edge-3 lost"), "\(coordinator.stderr)")
                #expect(try server.stats().stored.count == Self.fileCount)
                let html = try String(contentsOfFile: page, encoding: .utf8)
                #expect(Self.externalReferences(in: html).isEmpty, "the page must need nothing from the network: \(Self.externalReferences(in: html))")

                // The data: every attempt, on the worker that made it, retries and the loss marked.
                let data = try PageData.read(html)
                #expect(data.flow == "photos" && data.succeeded)
                #expect(Set(data.workers).isSuperset(of: ["edge-1", "edge-2", "edge-3"]), "\(data.workers)")
                let edge3 = try #require(data.workers.firstIndex(of: "edge-3"))
                #expect(data.events.contains { $0.kind == "workerLost" && $0.worker == edge3 }, "no loss event for edge-3")
                #expect(data.slots[edge3] == 4)
                // The uploads edge-3 had running when it died are bars of their own, ending at the
                // loss, and each of those files was then uploaded by another worker.
                let lostState = try #require(data.stateNames.firstIndex(of: "lost"))
                let lostBars = data.attempts.state.indices.filter { data.attempts.state[$0] == lostState }
                #expect(!lostBars.isEmpty, "edge-3 died with uploads in flight, but no lost bar was drawn")
                #expect(lostBars.allSatisfy { data.attempts.worker[$0] == edge3 })
                for bar in lostBars {
                    let element = data.attempts.element[bar]
                    #expect(data.attempts.state.indices.contains {
                        data.attempts.element[$0] == element && data.attempts.worker[$0] != edge3 && data.stateNames[data.attempts.state[$0]] == "succeeded"
                    }, "element \(element), lost with edge-3, never succeeded elsewhere")
                }
                #expect(data.steps.map(\.kind) == ["serial", "serial", "group"], "\(data.steps.map(\.name))")
                #expect(data.steps.last?.elements == Self.fileCount && data.steps.last?.failed == 0)
                let upload = try #require(data.ops.firstIndex(of: "UploadFileOp"))
                let succeededUploads = zip(data.attempts.op, data.attempts.state).filter {
                    $0.0 == upload && data.stateNames[$0.1] == "succeeded"
                }
                #expect(succeededUploads.count == Self.fileCount, "each file succeeds once")
                let stats = try server.stats()
                // One retried bar per 503 answered to a live worker, and one for the stalled try
                // (a 503 to edge-3 as it died has no bar: that task was lost, not tried).
                #expect(data.count("retried") >= 2 && data.count("retried") <= (stats.status["503"] ?? 0) + 1,
                        "\(data.count("retried")) retried bars against \(stats.status)")
                let retriedLogs = zip(data.attempts.state, data.attempts.log).filter { data.stateNames[$0.0] == "retried" }.compactMap(\.1)
                #expect(retriedLogs.contains { $0.contains("HTTP 503") }, "\(retriedLogs)")
                #expect(retriedLogs.contains { $0.contains("time limit of 3 s exceeded") }, "\(retriedLogs)")
                for index in data.attempts.startMs.indices {
                    #expect(data.attempts.startMs[index] >= 0 && data.attempts.endMs[index] >= data.attempts.startMs[index])
                }
                #expect(data.attempts.log.contains { $0?.contains("listing </script><h1 id=injected>") == true },
                        "the op's log line is kept as it was written")

                // The browser: the chart is drawn, the lanes name every worker, and what the op
                // logged stayed text.
                let dom = try await HeadlessChromium.dumpDOM(of: page)
                #expect(dom.contains(#"data-rendered="true""#), "the page never drew:\n\(dom.prefix(3000))")
                for name in ["edge-1", "edge-2", "edge-3"] { #expect(dom.contains(">\(name)<"), "no lane label for \(name)") }
                #expect(dom.contains("lost at "), "edge-3's lanes do not say it was lost")
                #expect(dom.contains("<b>3</b> workers"), "the header counts the three workers, not the coordinator's lane")
                #expect(!dom.contains(#"id="injected""#), "an op's log line became markup")
                let shot = cluster.path("timeline.png")
                try await HeadlessChromium.screenshot(of: page, to: shot)
                let drawn = try await HeadlessChromium.drawnShare(of: shot)
                #expect(drawn.drawn, "the screenshot is blank: \(drawn.share) of its pixels drawn")
                // `FLOW_TIMELINE_SCREENSHOT=docs/images/timeline.png swift test --filter Timeline` keeps it for the README.
                if let keep = ProcessInfo.processInfo.environment["FLOW_TIMELINE_SCREENSHOT"], !keep.isEmpty {
                    try? FileManager.default.removeItem(atPath: keep)
                    try FileManager.default.copyItem(atPath: shot, toPath: keep)
                }
                for worker in workers.prefix(2) { #expect(await worker.terminate() == .exit(0), "\(worker.transcript)") }
            }
        }

        @Test func aResumedRunDrawsWhatItRanAndCountsWhatItsJournalHad() async throws {
            try await withCluster { cluster in
                let log = cluster.path("ran.log")
                let count = 300
                let runID = try await ResumingRuns.killedShellGroup(cluster, count: count, log: log, line: "$1", killAfter: 100)

                let page = cluster.path("resumed.html")
                let resumed = try cluster.coordinator(["resume", runID, "--quiet", "--workers", "1", "--timeline", page], label: "resume")
                #expect(await resumed.waitForExit(timeout: 120) == .exit(0), "\(resumed.transcript)")
                let data = try PageData.read(try String(contentsOfFile: page, encoding: .utf8))
                let earlier = data.earlierElements ?? 0
                #expect(earlier > 0 && earlier < count, "\(earlier) elements taken from the journal")
                #expect(data.count("succeeded") + earlier == count, "drawn \(data.count("succeeded")) + earlier \(earlier)")
                #expect(data.attempts.startMs.allSatisfy { $0 >= 0 }, "an element of the earlier run is drawn before this one began")
                let dom = try await HeadlessChromium.dumpDOM(of: page)
                #expect(dom.contains("elements done before this resume"), "the page does not say what it left out")
            }
        }

        @Test(arguments: ["--timeline", "--json"])
        func aReportPathThatCannotBeWrittenStopsTheRunBeforeItStarts(flag: String) async throws {
            try await withCluster { cluster in
                let marker = cluster.path("ran")
                let file = try cluster.write("touch.yaml", """
                    flow: touch
                    steps:
                      - op: ShellOp
                        with: {command: [touch, "\(marker)"]}
                    """)
                for (path, says) in [(cluster.path("missing/run.html"), "there is no folder"), (cluster.directory.path, "it is a folder")] {
                    let coordinator = try cluster.coordinator(["run", file, flag, path, "--workers", "1"])
                    #expect(await coordinator.waitForExit(timeout: 30) == .exit(2), "\(coordinator.transcript)")
                    #expect(coordinator.stderr.contains("cannot write \(flag) \(path): \(says)"), "\(coordinator.stderr)")
                    #expect(!FileManager.default.fileExists(atPath: marker), "the flow ran although its report could not be written")
                }
            }
        }

        @Test func aHundredThousandElementRunStaysOneDrawablePage() async throws {
            let count = 100_000
            try await withCluster { cluster in
                let bucket = cluster.directory.appendingPathComponent("items.json")
                let items = (0..<count).map { String(format: "\"file-%06d.jpg\"", $0) }.joined(separator: ",")
                try Data(#"{"items": [\#(items)]}"#.utf8).write(to: bucket)
                let file = try cluster.write("big.yaml", """
                    flow: big
                    steps:
                      - group: {op: SleepOp, input: items, output: done, maxConcurrent: 512, with: {ms: 0}}
                    """)
                let page = cluster.path("big.html")
                let coordinator = try cluster.coordinator(["run", file, "--bucket", bucket.path, "--workers", "2", "--concurrency", "256",
                                                           "--quiet", "--no-journal", "--timeline", page])
                #expect(await coordinator.waitForExit(timeout: 300) == .exit(0), "\(coordinator.stderr.suffix(3000))")
                let html = try String(contentsOfFile: page, encoding: .utf8)
                let data = try PageData.read(html)
                #expect(data.attempts.state.count == count && data.count("succeeded") == count)
                #expect(Set(data.attempts.element) == Set(0..<count), "every element has its bar")
                #expect(data.attempts.log.count { $0 != nil } <= 20_000, "log lines are kept for the first 20,000 attempts only")
                let size = try FileManager.default.attributesOfItem(atPath: page)[.size] as? Int ?? 0
                #expect(size < 12_000_000, "the page is \(size) bytes")

                let dom = try await HeadlessChromium.dumpDOM(of: page)
                #expect(dom.contains(#"data-rendered="true""#), "the page never drew")
                let renderMs = dom.firstMatch(of: /data-render-ms="([0-9.]+)"/).flatMap { Double($0.1) }
                #expect(renderMs != nil, "the page does not say how long it took to draw")
                for name in data.workers { #expect(dom.contains(">\(name)<"), "no lane label for \(name)") }
                let shot = cluster.path("big.png")
                try await HeadlessChromium.screenshot(of: page, to: shot)
                let drawn = try await HeadlessChromium.drawnShare(of: shot)
                #expect(drawn.drawn, "the screenshot is blank: \(drawn.share) of its pixels drawn")
                print("timeline: \(count) attempts, page \(size / 1024) KiB, first draw in headless Chromium \(renderMs ?? -1) ms")
            }
        }
    }
}
