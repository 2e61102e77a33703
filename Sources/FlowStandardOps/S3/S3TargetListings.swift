import Foundation
import Synchronization

/// The listings of S3 target folders that `skipExisting` reads instead of a `HEAD` per file
/// (`UploadFileOp`'s `listing`), one per group and folder in this process: the first task of a
/// group to need a folder's listing lists it, and every other task of the group on this worker
/// with a file in that folder awaits the same listing.
///
/// It keeps the folders used last, at most ``kept`` of them and ``heldObjects`` listed objects
/// together (a tree's files come folder by folder, many small folders at once; a worker of a
/// standing pool serves many runs); a listing that failed is forgotten, so that a task tried again
/// lists again. A group whose listing the store refused lists no other folder.
enum S3TargetListings {
    /// The objects of a listing by key.
    typealias Objects = [String: S3ObjectEntry]

    /// A folder's listing: its objects (`nil` when the store refused it or the folder is too large
    /// to keep, and each file is asked with a `HEAD` instead), the line that says what it took or
    /// why there is none, and whether the store refused it (then the group lists no more).
    typealias Listing = (objects: Objects?, line: String, refused: Bool)

    private struct Kept {
        var listing: Task<Listing, any Error>
        var used: ContinuousClock.Instant
        var told: Bool
        /// How many objects it holds, once listed.
        var objects = 0
    }

    /// How many folders' listings are kept at most.
    static let kept = 64

    /// How many listed objects the kept listings hold together at most (about 80 MB); the
    /// listings used longest ago go first.
    static let heldObjects = 400_000

    private static let listings = Mutex<[String: Kept]>([:])

    /// The groups whose listing the store refused, the last 64.
    private static let refused = Mutex<[String]>([])

    /// The listing of `folder` for the group's listing `group`, made by `list` if no task of this
    /// process has made it.
    ///
    /// - Returns: the objects (`nil` for a refused or too large folder, and for every folder of a
    ///   group refused before), and the line describing the listing for the first caller only.
    /// - Throws: what `list` threw; cancellation.
    static func objects(named group: String, folder: String, list: @escaping @Sendable () async throws -> Listing) async throws
        -> (objects: Objects?, line: String?) {
        if refused.withLock({ $0.contains(group) }) { return (nil, nil) }
        let name = group + "\u{0}" + folder
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
            let (objects, line, wasRefused) = try await listing.value
            if wasRefused {
                refused.withLock { groups in
                    if !groups.contains(group) { groups.append(group) }
                    if groups.count > 64 { groups.removeFirst() }
                }
            }
            let first = listings.withLock { table -> Bool in
                guard table[name]?.listing == listing else { return false }
                table[name]!.objects = objects?.count ?? 0
                Self.forgetOldest(in: &table, keeping: name)
                guard table[name]?.told == false else { return false }
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

    /// Forgets the listings used longest ago, not `name`'s, while they hold more than
    /// ``heldObjects`` objects together.
    private static func forgetOldest(in table: inout [String: Kept], keeping name: String) {
        var total = table.values.reduce(0) { $0 + $1.objects }
        while total > heldObjects,
              let oldest = table.filter({ $0.key != name && $0.value.objects > 0 }).min(by: { $0.value.used < $1.value.used }) {
            total -= oldest.value.objects
            table[oldest.key] = nil
        }
    }
}
