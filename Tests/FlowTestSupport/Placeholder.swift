// Shared test harness: child processes and servers the tests start.
enum FlowTestSupportPlaceholder {}
