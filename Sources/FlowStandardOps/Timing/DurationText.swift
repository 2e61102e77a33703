import Flow

/// How the stock ops print durations in their log lines and errors: the project's one formatter
/// (`FlowDurationText.limit(_:)`, `FlowDurationText.elapsed(since:)`).
typealias DurationText = FlowDurationText
