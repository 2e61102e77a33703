#if canImport(Glibc)
import Glibc
#endif

/// Malloc settings for the coordinator and the worker.
enum MemoryTuning {
    /// Makes buffers over `threshold` bytes come from their own mappings and go back to the system
    /// when freed. glibc otherwise raises that threshold after the first big free, up to 32 MiB,
    /// and keeps what was freed below it as unused heap pages for the rest of the process.
    ///
    /// - The coordinator uses 256 KiB: the buffers a million-value bucket file is read through
    ///   stayed in its heap otherwise, about 50 MB of its peak in a million-element run, measured.
    /// - A worker uses ``workerThreshold``: above the 1 MiB chunks uploads are read through, which
    ///   are then reused from the heap. At 256 KiB every chunk was a new mapping, faulted in and
    ///   zeroed page by page: 8 × 64 MiB uploads cost 10-25% more CPU than curl's and ran at
    ///   0.76-0.87× its speed with nginx on the other core. S3 parts (5 MiB and up) still go back
    ///   to the system once sent.
    static func returnBigBuffersToTheSystem(above threshold: Int32 = 256 << 10) {
        #if canImport(Glibc)
        // `mallopt` is in <malloc.h>, which the Glibc module leaves out; glibc exports it.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let mMmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        let mTrimThreshold: Int32 = -1  // M_TRIM_THRESHOLD
        _ = mallopt(mMmapThreshold, threshold)
        if threshold > 256 << 10 {
            // Free memory at the top of a heap is given back past this much (128 KiB by
            // default): twice the biggest buffer that stays in the heap, so a freed chunk is not
            // given back only to be faulted in again for the next one.
            _ = mallopt(mTrimThreshold, threshold * 2)
        }
        #endif
    }

    /// A worker's threshold: above an upload chunk (1 MiB), below an S3 part (5 MiB).
    static let workerThreshold: Int32 = 4 << 20
}
