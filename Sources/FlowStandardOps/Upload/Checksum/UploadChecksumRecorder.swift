import NIOConcurrencyHelpers
import NIOCore

/// The checksum of a body streamed from disk, fed each chunk as it is read and final after the
/// last one: shared between the body's reads (on NIO's blocking pool) and whoever reads the value.
final class UploadChecksumRecorder: Sendable {
    let algorithm: UploadChecksum
    private let state: NIOLockedValueBox<(hasher: UploadChecksumHasher, value: String?)>

    init(_ algorithm: UploadChecksum) {
        self.algorithm = algorithm
        state = NIOLockedValueBox((UploadChecksumHasher(algorithm), nil))
    }

    /// A value of the right length, for the body's length before the value is known.
    var placeholder: String { UploadChecksumHasher(algorithm).base64 }

    /// The value in base64 once the last chunk was read, else `nil`.
    var value: String? { state.withLockedValue { $0.value } }

    /// Starts again (a body sent again from its start).
    func restart() {
        state.withLockedValue { $0 = (UploadChecksumHasher(algorithm), nil) }
    }

    /// Adds a chunk; `final` when it is the body's last.
    func update(_ chunk: ByteBuffer, final: Bool) {
        state.withLockedValue { state in
            chunk.withUnsafeReadableBytes { state.hasher.update($0) }
            if final { state.value = state.hasher.base64 }
        }
    }
}
