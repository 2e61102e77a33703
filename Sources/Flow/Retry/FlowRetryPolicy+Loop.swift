/// The one "try, wait, try again" loop: the engine's retry of a whole op goes through it, and so
/// can an op that retries parts of its work alone (a multipart upload's parts).
///
/// ```swift
/// let answer = try await policy.retrying(isTransient: { !isPermanent($0) }) { attempt in
///     try await send(part)
/// } beforeWait: { error, attempt, wait in
///     log("try \(attempt) failed: \(error); retrying in \(wait.shortText)")
/// }
/// ```
extension FlowRetryPolicy {
    /// One try as the loop sees it: what it gave, and whether another try could do better.
    public struct Try<Value> {
        /// What the try gave: a success or a failure.
        public var value: Value
        /// Whether trying again may help: `false` for a success and for a failure that would
        /// only repeat.
        public var mayRetry: Bool
        /// How long the failure asked to wait before the next try (HTTP `Retry-After`), if it did.
        public var retryAfter: Duration?

        /// Creates a try's outcome.
        public init(value: Value, mayRetry: Bool, retryAfter: Duration? = nil) {
            self.value = value
            self.mayRetry = mayRetry
            self.retryAfter = retryAfter
        }
    }

    /// How the loop ended.
    public enum Ending<Value> {
        /// The last try's value: a success, a failure not worth another try, or the last failure.
        case finished(Value)
        /// The wait before another try ended early (the task was cancelled): the failed try's value.
        case interrupted(Value)
    }

    /// Tries `attempt` until a try may not be retried, the policy's tries are used up or the
    /// calling task is cancelled, waiting ``wait(after:retryAfter:using:)`` between tries.
    ///
    /// - Parameters:
    ///   - firstAttempt: the number of the first try (a try counted elsewhere before it: more than 1).
    ///   - clock: the clock the waits are slept on (a test's manual clock).
    ///   - attempt: makes try `number`.
    ///   - beforeWait: told of each failed try that will be tried again, with its number and the
    ///     wait ahead (to log it, to record the try).
    /// - Returns: how the loop ended, with the value of its last try.
    public func run<Value>(
        from firstAttempt: Int = 1,
        clock: any Clock<Duration> = ContinuousClock(),
        _ attempt: (_ number: Int) async -> Try<Value>,
        beforeWait: (_ failed: Value, _ number: Int, _ wait: Duration) -> Void = { _, _, _ in }
    ) async -> Ending<Value> {
        var random = SystemRandomNumberGenerator()
        var number = firstAttempt
        while true {
            let outcome = await attempt(number)
            guard outcome.mayRetry, number < attempts, !Task.isCancelled else { return .finished(outcome.value) }
            let wait = wait(after: number, retryAfter: outcome.retryAfter, using: &random)
            beforeWait(outcome.value, number, wait)
            do {
                try await clock.sleep(for: wait)
            } catch {
                return .interrupted(outcome.value)
            }
            number += 1
        }
    }

    /// Runs a throwing `body` under the policy: an error `isTransient` calls transient is tried
    /// again after the policy's wait; any other error, or the last try's, is thrown.
    ///
    /// - Parameters:
    ///   - clock: the clock the waits are slept on.
    ///   - isTransient: whether another try could help after this error.
    ///   - retryAfter: how long the error asked to wait; by default what a ``FlowRetryAdvice`` says.
    ///   - body: makes try `number`, from 1.
    ///   - beforeWait: told of each failed try that will be tried again, with its number and the
    ///     wait ahead.
    /// - Returns: what the first successful try returned.
    /// - Throws: the error of the last try, or `CancellationError` when a wait was cancelled.
    public func retrying<Output>(
        clock: any Clock<Duration> = ContinuousClock(),
        isTransient: (any Error) -> Bool,
        retryAfter: (any Error) -> Duration? = { ($0 as? any FlowRetryAdvice)?.retryAfter },
        _ body: (_ number: Int) async throws -> Output,
        beforeWait: (_ error: any Error, _ number: Int, _ wait: Duration) -> Void = { _, _, _ in }
    ) async throws -> Output {
        let ending: Ending<Result<Output, any Error>> = await run(clock: clock) { number in
            do {
                return Try(value: .success(try await body(number)), mayRetry: false)
            } catch {
                return Try(value: .failure(error), mayRetry: isTransient(error), retryAfter: retryAfter(error))
            }
        } beforeWait: { failed, number, wait in
            if case .failure(let error) = failed { beforeWait(error, number, wait) }
        }
        switch ending {
        case .finished(let result): return try result.get()
        case .interrupted: throw CancellationError()
        }
    }
}

extension FlowRetryPolicy.Try: Sendable where Value: Sendable {}
extension FlowRetryPolicy.Ending: Sendable where Value: Sendable {}
