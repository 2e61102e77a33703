import Flow
import Synchronization
import Testing

@Suite struct RetryLoopTests {
    struct Transient: Error {}
    struct Permanent: Error {}

    /// Three tries, no wait between them.
    let policy = FlowRetryPolicy(attempts: 3, delay: .zero, jitter: false)

    @Test func aTransientFailureIsTriedAgainUntilItSucceeds() async throws {
        var told: [Int] = []
        let answer = try await policy.retrying(isTransient: { $0 is Transient }) { attempt in
            if attempt < 3 { throw Transient() }
            return "try \(attempt)"
        } beforeWait: { _, attempt, wait in
            told.append(attempt)
            #expect(wait == .zero)
        }
        #expect(answer == "try 3")
        #expect(told == [1, 2])
    }

    @Test func aPermanentFailureIsThrownAtOnce() async {
        var tries = 0
        await #expect(throws: Permanent.self) {
            try await policy.retrying(isTransient: { $0 is Transient }) { _ in
                tries += 1
                throw Permanent()
            }
        }
        #expect(tries == 1)
    }

    @Test func theLastTrysFailureIsThrownWhenTheTriesAreUsedUp() async {
        var tries = 0
        await #expect(throws: Transient.self) {
            try await policy.retrying(isTransient: { _ in true }) { _ in
                tries += 1
                throw Transient()
            }
        }
        #expect(tries == 3)
    }

    @Test func aLoopStartedLaterCountsFromItsFirstAttempt() async {
        var numbers: [Int] = []
        let ending = await policy.run(from: 2) { number in
            numbers.append(number)
            return .init(value: number, mayRetry: true)
        }
        guard case .finished(let last) = ending else {
            Issue.record("the loop was interrupted")
            return
        }
        #expect(numbers == [2, 3])
        #expect(last == 3)
    }

    @Test func aCancelledWaitEndsTheLoopWithTheFailedTry() async {
        let slow = FlowRetryPolicy(attempts: 3, delay: .seconds(60), jitter: false)
        let task = Task {
            await slow.run { number in .init(value: number, mayRetry: true) }
        }
        try? await Task.sleep(for: .milliseconds(50))
        task.cancel()
        guard case .interrupted(let failed) = await task.value else {
            Issue.record("the loop was not interrupted")
            return
        }
        #expect(failed == 1)
    }
}
