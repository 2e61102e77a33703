import Foundation
import Synchronization
import Testing
import ZeroMQ

@Suite("ZMQWakeup and context shutdown across threads")
struct ZMQWakeupTests {
    @Test func aSignalFromAnotherThreadWakesAPollAndDrainEmptiesIt() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let wakeup = try ZMQWakeup()
        defer { wakeup.close() }
        let poller = ZMQPoller()
        let index = poller.register(wakeup)
        #expect(try poller.poll(timeout: 0) == 0)

        let bothSent = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            // The behaviour under test is a signal waking a poll that already blocks: this thread
            // lets that time pass (on a thread of its own). A signal that came first would pass too.
            Thread.sleep(forTimeInterval: 0.05)
            wakeup.signal()
            wakeup.signal()
            bothSent.signal()
        }
        let start = ContinuousClock.now
        #expect(try poller.poll(timeout: 5_000) == 1)
        #expect(milliseconds(since: start) < 4_000)
        #expect(poller.events(at: index).contains(.readable))

        #expect(bothSent.wait(timeout: .now() + 5) == .success)
        #expect(try wakeup.drain() == 2)
        #expect(try poller.poll(timeout: 0) == 0)
    }

    @Test func signalAfterCloseIsANoOp() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let wakeup = try ZMQWakeup()
        #expect(wakeup.signal())
        wakeup.close()
        wakeup.close()
        #expect(!wakeup.signal())
    }

    @Test func contextShutdownMakesABlockedReceiveOnAnotherThreadThrowTerminated() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let context = zmq.context
        let started = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let finished = runWithTimeout(seconds: 5) {
            Thread.detachNewThread {
                _ = started.wait(timeout: .now() + 5)
                // Under test: a shutdown reaching a receive that already blocks; the receive has
                // no event to say so, so this thread lets the time pass.
                Thread.sleep(forTimeInterval: 0.1)
                context.shutdown()
            }
            do {
                let pull = try context.socket(.pull)
                defer { pull.close() }
                try pull.set(.receiveTimeout(milliseconds: 4_000))
                try pull.bind("inproc://blocked")
                started.signal()
                _ = try pull.receiveMultipart()
                outcome.set("returned without an error")
            } catch let error as ZMQError {
                outcome.set(error.isTerminated ? "terminated" : error.description)
            } catch {
                outcome.set("\(error)")
            }
        }
        #expect(finished)
        #expect(outcome.value == "terminated")
    }
}

/// What a background thread saw, read by the test after the thread ends.
private final class Outcome: Sendable {
    private let storage = Mutex<String?>(nil)
    func set(_ text: String) { storage.withLock { $0 = text } }
    var value: String? { storage.withLock { $0 } }
}
