import Foundation

/// One FIFO per element, named after it, that the element of an
/// ``PoolTests/echoFlow(_:count:sleep:maxConcurrent:announcingTo:gatedBy:)`` reads a line from before it
/// goes on: the test decides when each running element ends, so what the pool does next can be
/// sampled while nothing moves.
final class ElementGates: Sendable {
    let directory: String
    private let descriptors: [String: Int32]

    init(_ directory: String, names: [String]) throws {
        guard mkdir(directory, 0o700) == 0 else { throw HarnessError("mkdir \(directory): \(String(cString: strerror(errno)))") }
        var descriptors: [String: Int32] = [:]
        for name in names {
            let path = "\(directory)/\(name)"
            guard mkfifo(path, 0o600) == 0 else { throw HarnessError("mkfifo \(path): \(String(cString: strerror(errno)))") }
            // Read and write: an element opening its gate never waits for a writer, and a line
            // written before the element reads it waits in the FIFO.
            let descriptor = open(path, O_RDWR)
            guard descriptor >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
            descriptors[name] = descriptor
        }
        self.directory = directory
        self.descriptors = descriptors
    }

    /// Lets the element `name` go on (now, or when it comes to its gate).
    func release(_ name: String) {
        guard let descriptor = descriptors[name] else { return }
        _ = write(descriptor, "\n", 1)
    }

    /// Lets every element go on, whether it is at its gate yet or not.
    func releaseAll() {
        for name in descriptors.keys { release(name) }
    }

    /// Closes the gates: call it once no element can still come to one (a FIFO with neither
    /// end open forgets what was written to it).
    func close() {
        for descriptor in descriptors.values { Glibc.close(descriptor) }
    }
}
