import Testing
@testable import FlowCluster

/// Waiting for workers is woken by the status the I/O thread publishes, by cancellation and by
/// the mailbox closing: no polling.
@Suite struct CoordinatorMailboxTests {
    private func status(workers: Int) -> FlowCoordinator.Status {
        FlowCoordinator.Status(workers: workers, slots: workers * 4, running: 0, queued: 0)
    }

    @Test func aWaiterWakesWhenThePublishedStatusReachesItsCount() async {
        let mailbox = CoordinatorMailbox()
        let waiting = Task { await mailbox.workers(atLeast: 2) }
        while mailbox.waitingForWorkers == 0 { await Task.yield() }
        mailbox.status = status(workers: 1)
        #expect(mailbox.waitingForWorkers == 1, "one worker is not two")
        mailbox.status = status(workers: 2)
        #expect(await waiting.value == true)
        #expect(await mailbox.workers(atLeast: 1) == true, "already there: at once")
    }

    @Test func cancellingOrClosingEndsTheWaitWithFalse() async {
        let mailbox = CoordinatorMailbox()
        let cancelled = Task { await mailbox.workers(atLeast: 1) }
        cancelled.cancel()
        #expect(await cancelled.value == false)
        let closed = Task { await mailbox.workers(atLeast: 1) }
        while mailbox.waitingForWorkers == 0 { await Task.yield() }
        _ = mailbox.close()
        #expect(await closed.value == false)
        #expect(await mailbox.workers(atLeast: 1) == false, "a closed mailbox waits for nothing")
    }
}
