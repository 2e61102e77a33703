import FlowTestSupport
import Foundation
import Testing

/// One scrape of a `/metrics` endpoint, read as Prometheus reads it: samples by name and labels.
struct MetricsScrape {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// The text as served.
    let text: String
    let samples: [Sample]

    /// Fetches `http://ADDRESS/metrics` with curl, waited for off the cooperative pool
    /// (``TestCommand/run(_:timeout:)``).
    ///
    /// - Returns: `nil` when nothing answered (the program has exited).
    static func fetch(_ address: String) async throws -> MetricsScrape? {
        let result = try await TestCommand.run(["curl", "-sf", "--max-time", "5", "http://\(address)/metrics"])
        guard result.status == 0 else { return nil }
        return MetricsScrape(text: result.output)
    }

    init(text: String) {
        self.text = text
        samples = text.split(separator: "\n").compactMap { line -> Sample? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                return nil
            }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else { return Sample(name: String(series), labels: [:], value: value) }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: brace)..<series.index(before: series.endIndex)].split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return Sample(name: String(series[..<brace]), labels: labels, value: value)
        }
    }

    /// The sum of the samples named `name` whose labels include `labels`; 0 when there are none.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
            .reduce(0) { $0 + $1.value }
    }

    /// Whether a sample named `name` is there at all.
    func has(_ name: String) -> Bool {
        samples.contains { $0.name == name }
    }

    /// What `promtool check metrics` says of the text: `nil` when it accepts it (promtool waited
    /// for off the cooperative pool).
    func promtoolProblems() async throws -> String? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scrape-\(UUID().uuidString).txt")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await TestCommand.run(["sh", "-c", "promtool check metrics < '\(file.path)' 2>&1"])
        return result.status == 0 ? nil : "promtool exit \(result.status): \(result.output)"
    }
}

extension ChildProcess {
    /// The `HOST:PORT` of a program's `--metrics` server, from its `… metrics on http://HOST:PORT/metrics` line.
    func metricsAddress(timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        guard await waitForStderr(containing: "/metrics", timeout: timeout, sourceLocation: sourceLocation) else {
            throw HarnessError("\(label) never said where it serves metrics")
        }
        let line = stderr.split(separator: "\n").first { $0.contains("metrics on http://") } ?? ""
        guard let start = line.range(of: "http://")?.upperBound, let end = line.range(of: "/metrics", range: start..<line.endIndex)?.lowerBound else {
            throw HarnessError("cannot parse the metrics address from '\(line)'")
        }
        return String(line[start..<end])
    }
}
