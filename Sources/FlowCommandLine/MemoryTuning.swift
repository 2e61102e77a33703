#if canImport(Glibc)
import Glibc
#endif

/// Malloc settings for the coordinator and the worker.
enum MemoryTuning {
    /// Makes big buffers (over 256 KiB) come from their own mappings and go back to the system
    /// when freed. glibc otherwise raises that threshold after the first big free, up to 32 MiB,
    /// and the buffers a million-value bucket file is read through stay in the heap as unused
    /// pages for the rest of the run: about 50 MB of the coordinator's peak memory in a
    /// million-element run, measured.
    static func returnBigBuffersToTheSystem() {
        #if canImport(Glibc)
        // `mallopt` is in <malloc.h>, which the Glibc module leaves out; glibc exports it.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mMmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mMmapThreshold, 256 << 10)
        #endif
    }
}
