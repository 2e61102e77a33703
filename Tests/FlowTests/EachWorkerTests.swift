import Foundation
import Synchronization
import Testing
@testable import Flow

/// `each: worker` (issue 50 item 3), in the engine: one run per worker the executor names, each
/// placed on that worker by name, their lists joined in worker order with where each element came
/// from. The cluster's own side (which workers, over real sockets) is in `WorkerLabelClusterTests`.
@Suite struct EachWorkerTests {
    /// An executor with two workers, `b1` on host `hb1` and `a2` on `ha2`, that runs each task by
    /// writing `files` as the worker it was placed on would list them.
    final class TwoWorkers: FlowExecutor, Sendable {
        let placements = Mutex<[FlowPlacement?]>([])
        let workers: [FlowWorkerIdentity]?
        let failing: String?

        init(workers: [FlowWorkerIdentity]? = [FlowWorkerIdentity(name: "a2", host: "ha2"), FlowWorkerIdentity(name: "b1", host: "hb1")],
             failing: String? = nil) {
            self.workers = workers
            self.failing = failing
        }

        func workers(for placement: FlowPlacement?) async throws -> [FlowWorkerIdentity]? {
            workers?.filter { placement?.matches(["name": $0.name, "host": $0.host, "role": "recorder"]) ?? true }
        }

        func execute(_ task: FlowTask) async -> FlowTaskResult {
            placements.withLock { $0.append(task.placement) }
            let worker = task.placement?.labels["name"] ?? "local"
            let now = Date()
            if worker == failing {
                return FlowTaskResult(operationName: task.operationName, state: .withError("disk gone on \(worker)"), events: [], bucket: [:],
                                      startedAt: now, finishedAt: now, worker: worker)
            }
            let files: [Any] = ["/data/\(worker)-1", ["path": "/data/\(worker)-2", "size": 2] as [String: Any]]
            return FlowTaskResult(operationName: task.operationName, state: .successfully,
                                  events: [FlowRecordedEvent(time: now, kind: .set(key: "files", value: files)),
                                           FlowRecordedEvent(time: now, kind: .set(key: "count", value: 2))],
                                  bucket: [:], startedAt: now, finishedAt: now, worker: worker)
        }
    }

    static func flow(_ executor: TwoWorkers, placement: FlowPlacement? = nil) -> Flow {
        var listing = FlowOperationStep(op: "ListFilesOp", parameters: ["path": "/data"])
        listing.eachWorker = true
        listing.placement = placement
        return Flow(definition: FlowDefinition(name: "each", bucket: [:], steps: [.operation(listing)])).setExecutor(executor)
    }

    @Test func theStepRunsOnEveryWorkerAndJoinsItsListsInWorkerOrderSayingWhereEachCameFrom() async {
        let executor = TwoWorkers()
        let flow = Self.flow(executor, placement: FlowPlacement(["role": "recorder"]))
        await flow.run()
        #expect(flow.isSuccess, "\(flow.generateSummary())")
        let placed = executor.placements.withLock { $0 }.compactMap { $0?.labels }
        #expect(Set(placed) == [["role": "recorder", "name": "a2"], ["role": "recorder", "name": "b1"]], "each run pinned to its worker")
        let files = flow.dataBucket["files"] as? [[String: Any]] ?? []
        #expect(files.map { $0["path"] as? String } == ["/data/a2-1", "/data/a2-2", "/data/b1-1", "/data/b1-2"])
        #expect(files.map { $0["worker"] as? String } == ["a2", "a2", "b1", "b1"])
        #expect(files.map { $0["host"] as? String } == ["ha2", "ha2", "hb1", "hb1"])
        #expect(files[1]["size"] as? Int == 2, "a map element keeps its fields")
        // A value that is not a list is the last worker's.
        #expect(flow.dataBucket["count"] as? Int == 2)
        let summary = flow.generateSummary()
        #expect(summary.contains("[ListFilesOp @ a2] DidFinish") && summary.contains("[ListFilesOp @ b1] DidFinish"), "\(summary)")
    }

    @Test func oneWorkersFailureFailsTheStepAfterAllEnded() async {
        let executor = TwoWorkers(failing: "b1")
        let flow = Self.flow(executor)
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(executor.placements.withLock { $0.count } == 2)
        #expect(flow.generateSummary().contains("disk gone on b1"))
    }

    @Test func noMatchingWorkerFailsTheStepSayingWhich() async {
        let executor = TwoWorkers()
        let flow = Self.flow(executor, placement: FlowPlacement(["role": "camera"]))
        await flow.run()
        #expect(!flow.isSuccess)
        #expect(flow.generateSummary().contains("each: worker found no worker with the labels role=camera"), "\(flow.generateSummary())")
        #expect(executor.placements.withLock { $0.isEmpty })
    }

    @Test func anExecutorWithoutWorkersRunsTheStepOnce() async {
        let executor = TwoWorkers(workers: nil)
        let flow = Self.flow(executor)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(executor.placements.withLock { $0.count } == 1)
        #expect((flow.dataBucket["files"] as? [Any])?.count == 2)
    }

    @Test func aFlowFileSaysEachWorkerAndNothingElse() throws {
        let definition = try FlowFileLoader().load(text: "flow: e\nsteps:\n  - op: ListFilesOp\n    each: worker\n    with: {path: /d}\n", file: "f.yaml")
        guard case .operation(let step) = definition.steps.first else { Issue.record("not an op step"); return }
        #expect(step.eachWorker)
        #expect(throws: FlowFileError.self) {
            try FlowFileLoader().load(text: "flow: e\nsteps:\n  - op: ListFilesOp\n    each: host\n", file: "f.yaml")
        }
    }
}

/// `affinity:` (issue 50 item 4) in the engine: each element's placement from where it came from.
@Suite struct AffinityTests {
    private func plan(_ affinity: FlowAffinity?, on group: [String: String]? = nil) -> FlowGroupPlan {
        var plan = FlowGroupPlan(source: .named("UploadFileOp", parameters: [:]), inputKey: "files", outputKey: "", maxConcurrent: 4,
                                 allowFailure: false)
        plan.policy.placement = group.flatMap(FlowPlacement.init)
        plan.policy.affinity = affinity
        return plan
    }

    private func task(_ plan: FlowGroupPlan, _ element: Any) -> FlowTask {
        FlowGroupFeed.task(plan, tags: FlowGroupTags(), index: 0, element: element)
    }

    @Test func sourcePlacesEachElementOnItsHostAndItsOwnOnWins() {
        let source = plan(.source, on: ["role": "uploader"])
        let listed: [String: Any] = ["path": "/d/a", "worker": "w1", "host": "b1"]
        #expect(task(source, listed).placement?.labels == ["role": "uploader", "host": "b1"])
        let own: [String: Any] = ["path": "/d/a", "host": "b1", "on": ["host": "b2", "rack": "7"]]
        #expect(task(source, own).placement?.labels == ["role": "uploader", "host": "b2", "rack": "7"])
        // An element that says nowhere runs where the group's on: allows.
        #expect(task(source, "/d/plain").placement?.labels == ["role": "uploader"])
        #expect(task(source, listed).preferredPlacement == nil)
    }

    @Test func affinityTimeoutIsHowLongEachElementMayWaitForItsHost() throws {
        let definition = try FlowFileLoader().load(text: "flow: a\nsteps:\n  - group: {op: U, input: files, affinity: source, affinityTimeout: 2m}\n",
                                                   file: "f.yaml")
        guard case .group(let group) = definition.steps.first else { Issue.record("not a group"); return }
        #expect(group.affinity == .source && group.affinityTimeout == .seconds(120))
        var plan = plan(.source)
        plan.policy.affinityTimeout = group.affinityTimeout
        #expect(task(plan, ["path": "/d/a", "host": "b1"] as [String: Any]).placementWait == .seconds(120))
    }

    /// A journal that says an earlier life let elements start through `startedThrough` and
    /// notes how far this one lets them.
    private final class StartedJournal: FlowJournal, Sendable {
        let earlier: Int?
        let noted = Mutex<[Int]>([])
        init(startedThrough earlier: Int?) { self.earlier = earlier }
        func recordedResults(at step: FlowStepID) -> [FlowJournalRecord] { [] }
        func groupStarted(at step: FlowStepID, total: Int) {}
        func accepted(_ record: FlowJournalRecord, at step: FlowStepID) {}
        func mayStart(at step: FlowStepID, through index: Int) -> Bool {
            noted.withLock { $0.append(index) }
            return true
        }
        func startedThrough(at step: FlowStepID) -> Int? { earlier }
    }

    private static var blocks: [Any] { [
        ["path": "/d/a1", "host": "a"], ["path": "/d/a2", "host": "a"], ["path": "/d/a3", "host": "a"],
        ["path": "/d/b1", "host": "b"], ["path": "/d/b2", "host": "b"], "/d/plain",
    ] as [Any] }

    @Test func hostsTakeTurnsInAnAffinityGroupsOrderFirstSeenFirst() throws {
        let elements = try #require(FlowGroupElements(Self.blocks))
        #expect(FlowGroupSource.hostsInTurn(elements) == [0, 3, 5, 1, 4, 2])
        // Taking turns already, or one host: index order.
        let alternating = try #require(FlowGroupElements([["host": "a"], ["host": "b"], ["host": "a"], ["host": "b"]] as [Any]))
        #expect(FlowGroupSource.hostsInTurn(alternating) == nil)
        #expect(FlowGroupSource.hostsInTurn(try #require(FlowGroupElements(["/x", "/y"]))) == nil)
        let source = FlowGroupSource(array: elements, interleavingHosts: true)
        #expect((0..<6).map(source.index(at:)) == [0, 3, 5, 1, 4, 2])
    }

    /// The feed hands an affinity group's elements out hosts in turn, skips replayed ones, and
    /// reads the journal's bound as positions in that order: an element handed out early may
    /// have run before whatever its index.
    @Test func theFeedHandsOutHostsInTurnAndBoundsWhatMayHaveRunByPosition() throws {
        let elements = try #require(FlowGroupElements(Self.blocks))
        var replayed = FlowIndexBits()
        replayed.insert(5)
        let journal = StartedJournal(startedThrough: 1)
        let feed = FlowGroupFeed(plan: plan(.source), source: FlowGroupSource(array: elements, interleavingHosts: true), tags: FlowGroupTags(),
                                 replayed: replayed, journal: journal, id: FlowStepID(path: "0"))
        var handed: [(index: Int, mayHaveRun: Bool)] = []
        while let task = feed.next() { handed.append((task.groupIndex ?? -1, task.mayHaveRunBefore)) }
        #expect(handed.map(\.index) == [0, 3, 1, 4, 2], "hosts a and b in turn, the plain one (5) replayed")
        // Positions 0 and 1 (indices 0 and 3) were allowed to start in the earlier life.
        #expect(handed.map(\.mayHaveRun) == [true, true, false, false, false])
        #expect(journal.noted.withLock { $0 } == [5], "the bound told is a position: the last of 6")
        // Without affinity: index order.
        let plain = FlowGroupFeed(plan: plan(nil), source: FlowGroupSource(array: elements), tags: FlowGroupTags(), replayed: FlowIndexBits(),
                                  journal: nil, id: FlowStepID(path: "0"))
        var order: [Int] = []
        while let task = plain.next() { order.append(task.groupIndex ?? -1) }
        #expect(order == [0, 1, 2, 3, 4, 5])
    }

    @Test func preferLeavesThePlacementAndPrefersTheHost() {
        let prefer = plan(.prefer)
        let element: [String: Any] = ["path": "/d/a", "host": "b1"]
        #expect(task(prefer, element).placement == nil)
        #expect(task(prefer, element).preferredPlacement?.labels == ["host": "b1"])
        #expect(task(plan(nil), element).placement == nil && task(plan(nil), element).preferredPlacement == nil)
    }
}
