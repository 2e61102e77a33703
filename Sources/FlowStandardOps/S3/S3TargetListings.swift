import Foundation
import Synchronization

/// The listings of S3 targets that `skipExisting` reads instead of a `HEAD` per file
/// (`UploadFileOp`'s `listing`), one per name in this process: the first task of a group to need
/// its listing lists the target, and every other task of the group on this worker awaits the same
/// listing.
///
/// It keeps the last 4 names used (a worker of a standing pool serves many runs); a listing that
/// failed is forgotten, so that a task tried again lists again.
enum S3TargetListings {
    /// The objects of a listing by key.
    typealias Objects = [String: S3ObjectEntry]

    /// A listing: its objects (`nil` when the store refused it, and each file is asked with a
    /// `HEAD` instead), and the line that says what it took or why it was refused.
    typealias Listing = (objects: Objects?, line: String)

    private struct Kept {
        var listing: Task<Listing, any Error>
        var used: ContinuousClock.Instant
        var told: Bool
    }

    /// How many listings are kept.
    static let kept = 4

    private static let listings = Mutex<[String: Kept]>([:])

    /// The listing named `name`, made by `list` if no task of this process has made it.
    ///
    /// - Returns: the objects (`nil` for a refused listing), and the line describing the listing
    ///   for the first caller only.
    /// - Throws: what `list` threw; cancellation.
    static func objects(named name: String, list: @escaping @Sendable () async throws -> Listing) async throws
        -> (objects: Objects?, line: String?) {
        let listing = listings.withLock { table in
            if table[name] != nil {
                table[name]!.used = .now
                return table[name]!.listing
            }
            if table.count >= kept, let oldest = table.min(by: { $0.value.used < $1.value.used })?.key { table[oldest] = nil }
            let listing = Task { try await list() }
            table[name] = Kept(listing: listing, used: .now, told: false)
            return listing
        }
        do {
            let (objects, line) = try await listing.value
            let first = listings.withLock { table -> Bool in
                guard table[name]?.listing == listing, table[name]?.told == false else { return false }
                table[name]!.told = true
                return true
            }
            return (objects, first ? line : nil)
        } catch {
            listings.withLock { table in
                if table[name]?.listing == listing { table[name] = nil }
            }
            throw error
        }
    }
}
