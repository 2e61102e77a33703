// swift-tools-version:6.0
import PackageDescription

/// Settings every Swift target shares (one place, as swift-log does).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // SE-0444: members of extensions are visible only where their module is imported (swift-log, swift-nio).
    .enableUpcomingFeature("MemberImportVisibility"),
    // SE-0470: a conformance of an isolated type is inferred isolated where it must be.
    .enableUpcomingFeature("InferIsolatedConformances"),
    // SE-0409: an import is internal unless it says `public` or `package` (swift-log).
    .enableUpcomingFeature("InternalImportsByDefault"),
    // SE-0461: a nonisolated async function runs on its caller's executor unless marked
    // `@concurrent`. It holds everywhere here: Sources declare no actor, so every caller is
    // nonisolated and nothing moves; a client compiled without it (the examples, the seed's
    // Swift 5 tests) calls and overrides the same API through the compiler's thunks.
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

let package = Package(
    name: "Flow",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Flow", targets: ["Flow"]),
        .library(name: "FlowStandardOps", targets: ["FlowStandardOps"]),
        .library(name: "FlowCluster", targets: ["FlowCluster"]),
        .library(name: "FlowJournal", targets: ["FlowJournal"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "FlowCommandLine", targets: ["FlowCommandLine"]),
        .executable(name: "flow-coordinator", targets: ["flow-coordinator"]),
        .executable(name: "flow-worker", targets: ["flow-worker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.100.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // Transport: libzmq and a thin Swift layer over it. Knows nothing of flows.
        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"], swiftSettings: strictSettings),

        // Flow core: the seed API, the flow tree, the engine, flow files. Knows nothing of sockets.
        .target(
            name: "Flow",
            dependencies: ["CZlib", .product(name: "Yams", package: "Yams")],
            swiftSettings: strictSettings
        ),
        // zlib, for group input files that are gzipped (an S3 Inventory's .csv.gz).
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // CRC-32C and CRC-64/NVME with the CPU's instructions where it has them (FlowStandardOps' upload checksums).
        .target(name: "CFlowChecksum"),
        // The stock operations every worker offers (the seed's demo ops, later real ones).
        .target(
            name: "FlowStandardOps",
            dependencies: [
                "Flow", "CFlowChecksum",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),

        // Wire protocol: messages and their binary codec (docs/PROTOCOL.md).
        .target(name: "FlowWire", dependencies: ["Flow"], swiftSettings: strictSettings),

        // Run journals: every accepted result in SQLite, for resume and `runs`.
        .target(
            name: "FlowJournal",
            dependencies: ["Flow", "FlowWire", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "GRDBSQLite", package: "GRDB.swift")],
            swiftSettings: strictSettings
        ),

        // Cluster: coordinator and worker, protocol state machines with a thin ZeroMQ shell.
        .target(
            name: "FlowCluster",
            dependencies: [
                "Flow", "FlowWire", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),

        // The programs' commands, as a library so users build their own worker with their own ops.
        .target(
            name: "FlowCommandLine",
            dependencies: [
                "FlowCluster", "Flow", "FlowStandardOps", "FlowJournal", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.embedInCode("Timeline/timeline.html")],
            swiftSettings: strictSettings
        ),
        // Executables: a main.swift each, nothing more.
        .executableTarget(name: "flow-coordinator", dependencies: ["FlowCommandLine"], swiftSettings: strictSettings),
        .executableTarget(name: "flow-worker", dependencies: ["FlowCommandLine"], swiftSettings: strictSettings),

        // Examples: your own worker, and a Swift blueprint on a local cluster.
        .executableTarget(name: "custom-worker-example", dependencies: ["FlowCommandLine", "Flow", "FlowStandardOps"],
                          path: "examples/custom-worker", exclude: ["reverse.yaml"]),
        .executableTarget(name: "blueprint-on-cluster-example",
                          dependencies: ["FlowCluster", "Flow", "FlowStandardOps", .product(name: "Logging", package: "swift-log")],
                          path: "examples/blueprint-on-cluster"),

        // Benchmarks: run through scripts/bench, release builds only.
        .executableTarget(name: "flow-bench", dependencies: ["Flow", "ZeroMQ", "FlowStandardOps", "FlowWire"], path: "Benchmarks/flow-bench"),

        // Fuzz targets: built with libFuzzer by scripts/fuzz (-sanitize=fuzzer,address -DFUZZING);
        // built plainly, they replay inputs (scripts/test replays the committed corpus).
        .target(name: "FlowFuzzSupport", path: "Fuzz/FlowFuzzSupport"),
        .executableTarget(name: "flow-fuzz-wire", dependencies: ["FlowWire", "Flow", "FlowFuzzSupport"], path: "Fuzz/flow-fuzz-wire"),
        .executableTarget(name: "flow-fuzz-flowfile", dependencies: ["Flow", "FlowFuzzSupport"], path: "Fuzz/flow-fuzz-flowfile"),

        // Harness shared by the test targets: child processes and real servers (nginx) they start.
        .target(name: "FlowTestSupport", path: "Tests/FlowTestSupport", exclude: ["Resources"]),

        .testTarget(name: "FlowTests", dependencies: ["Flow", "FlowStandardOps"]),
        // Inputs of a million elements and more (not in the ThreadSanitizer pass: too slow there).
        .testTarget(name: "FlowScaleTests", dependencies: ["Flow"]),
        .testTarget(name: "FlowStandardOpsTests", dependencies: [
            "FlowStandardOps", "Flow", "FlowTestSupport",
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
        ]),
        // The seed README's code, compiled in Swift 5 language mode (FlowTests compiles it in 6).
        .testTarget(
            name: "SeedCompatSwift5Tests",
            dependencies: ["Flow"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(name: "SeedCompatSwift6Tests", dependencies: ["Flow"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "FlowWireTests", dependencies: ["FlowWire", "Flow"]),
        // The cluster's protocol state machines, driven without sockets or sleeps.
        .testTarget(name: "FlowClusterStateTests", dependencies: ["FlowCluster", "FlowWire", "Flow",
                                                                  .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "FlowClusterTests",
            dependencies: [
                "FlowCluster", "Flow", "FlowWire", "ZeroMQ", "FlowStandardOps", "FlowTestSupport", "FlowJournal",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                "flow-coordinator", "flow-worker", "custom-worker-example", "blueprint-on-cluster-example",
            ]
        ),
    ]
)
