import Flow
import FlowTestSupport
import Foundation
import Testing
@testable import FlowStandardOps

/// `ListObjectsOp` against a real S3 API (moto, checking every signature): the same objects from
/// one paginator and from the parallel walk of the folders, across pages, with the filters, one
/// folder only, and a bucket that is not there.
@Suite struct S3ListObjectsTests {
    /// 2 keys at the top, 3 folders of 9 keys with a subfolder of 4 each, and a folder of
    /// logs: 46 objects of distinct sizes, keys with spaces and `&`.
    static let keys: [String] = {
        var keys = ["top a.txt", "top & b.jpg"]
        for year in ["2024", "2025", "2026"] {
            keys += (0..<9).map { "\(year)/photo \($0).jpg" }
            keys += (0..<4).map { "\(year)/raw/shot \($0).cr2" }
        }
        keys += (0..<5).map { "logs/day \($0).log" }
        return keys
    }()

    /// A store holding ``keys`` under `prefix`, each of `100 + 7 × its index` bytes.
    static func store(prefix: String = "") async throws -> any S3TestStore {
        let s3 = try await MotoS3Server.start()
        let sizes = keys.enumerated().map { "(\"\(prefix)\($0.element)\", \(100 + 7 * $0.offset))" }.joined(separator: ", ")
        try await S3TestStoreKind.boto3(s3, """
            for key, size in [\(sizes)]:
                s3.put_object(Bucket=bucket, Key=key, Body=b"x" * size)
            """)
        return s3
    }

    static func op(_ s3: any S3TestStore, url: String, _ extra: [String: FlowValue] = [:]) throws -> ListObjectsOp {
        var given: [String: FlowValue] = ["url": .string(url), "endpoint": .string(s3.endpoint)]
        given.merge(extra) { _, new in new }
        return try ListObjectsOp(parameters: FlowParameters(given, operation: "ListObjectsOp"))
    }

    static func credentials(_ s3: any S3TestStore) -> S3Credentials {
        S3Credentials(accessKeyID: s3.accessKeyID, secretAccessKey: s3.secretAccessKey)
    }

    /// Pages of 5 keys: the paginator asks 10 times for 46 keys; the parallel listing splits the
    /// top (2 keys and 4 folders: 2 pages) into its 4 folders, as many as its concurrency, and
    /// pages through each (3, 3, 3 and 1 or 2 pages). Both give every key once, sorted, with its
    /// size, ETag and time.
    @Test func onePaginatorAndTheParallelWalkListTheSameObjects() async throws {
        let s3 = try await Self.store(prefix: "archive/")
        defer { s3.stop() }
        let stored = try await s3.objects()
        let serial = try await Self.op(s3, url: "s3://\(s3.bucket)/archive/", ["concurrency": 1])
            .list(credentials: Self.credentials(s3), pageSize: 5)
        let parallel = try await Self.op(s3, url: "s3://\(s3.bucket)/archive/", ["concurrency": 4])
            .list(credentials: Self.credentials(s3), pageSize: 5)

        #expect(serial.objects.map(\.key) == Self.keys.map { "archive/" + $0 }.sorted())
        #expect(parallel.objects == serial.objects)
        #expect(serial.objects.allSatisfy { stored[$0.key] == Int($0.size) })
        #expect(serial.requests == 10 && serial.prefixes == 1, "\(serial.requests) requests")
        #expect(parallel.prefixes == 5, "\(parallel.prefixes) prefixes")
        #expect((11...12).contains(parallel.requests), "\(parallel.requests) requests")
        // put_object of b"x" * 100: the ETag is the body's MD5, without quotes.
        let first = try #require(serial.objects.first { $0.key == "archive/top a.txt" })
        #expect(first.etag == Insecure_md5Hex(Data(repeating: UInt8(ascii: "x"), count: 100)))
        #expect(S3Upload.date(first.lastModified).map { abs($0.timeIntervalSinceNow) < 600 } == true, "\(first.lastModified)")
    }

    /// `recursive: false` keeps one folder's keys; `exclude: 2025/**` does not list that folder at
    /// all; `include`, `minSize` and `maxSize` keep what they say.
    @Test func oneFolderAndTheFiltersKeepWhatTheySay() async throws {
        let s3 = try await Self.store()
        defer { s3.stop() }
        let url = "s3://\(s3.bucket)"
        let top = try await Self.op(s3, url: url, ["recursive": false]).list(credentials: Self.credentials(s3))
        #expect(top.objects.map(\.key) == ["top & b.jpg", "top a.txt"])

        let excluded = try await Self.op(s3, url: url, ["exclude": "2025/**"]).list(credentials: Self.credentials(s3))
        #expect(excluded.objects.count == Self.keys.count - 13)
        #expect(!excluded.objects.contains { $0.key.hasPrefix("2025/") })
        // Split level by level (3 folders, then 2 raw ones, fewer than 16): 2025/ is never listed.
        #expect(excluded.prefixes == 6, "2025/ or 2025/raw/ was listed: \(excluded.prefixes) prefixes")

        let jpegs = try await Self.op(s3, url: url + "/2026/", ["include": "*.jpg"]).list(credentials: Self.credentials(s3))
        #expect(jpegs.objects.map(\.key) == (0..<9).map { "2026/photo \($0).jpg" })
        #expect(jpegs.filteredOut == 4)

        let sized = try await Self.op(s3, url: url, ["minSize": 300, "maxSize": 320]).list(credentials: Self.credentials(s3))
        let expected = Self.keys.enumerated().filter { (300...320).contains(100 + 7 * $0.offset) }.map(\.element).sorted()
        #expect(sized.objects.map(\.key) == expected)
    }

    /// A prefix with nothing under it is an empty list; a bucket that is not there fails naming
    /// it and the store's code.
    @Test func anEmptyPrefixIsEmptyAndAMissingBucketFailsNamingIt() async throws {
        let s3 = try await MotoS3Server.start()
        defer { s3.stop() }
        let empty = try await Self.op(s3, url: "s3://\(s3.bucket)/nothing/").list(credentials: Self.credentials(s3))
        #expect(empty.objects.isEmpty && empty.requests == 1)

        do {
            _ = try await Self.op(s3, url: "s3://no-such-bucket/x/").list(credentials: Self.credentials(s3))
            Issue.record("listing a missing bucket succeeded")
        } catch let error as FlowStandardOpError {
            #expect(error.message.hasPrefix("listing s3://no-such-bucket/x/ failed: HTTP 404 NoSuchBucket"), "\(error.message)")
        }
    }

    @Test func wrongParametersAreRefusedNamingThem() {
        #expect(throws: FlowParameterError.self) { try ListObjectsOp(parameters: FlowParameters(["url": "https://example.com/x"], operation: "ListObjectsOp")) }
        #expect(throws: FlowParameterError.self) {
            try ListObjectsOp(parameters: FlowParameters(["url": "s3://b/", "concurrency": 0], operation: "ListObjectsOp"))
        }
        #expect(throws: FlowParameterError.self) {
            try ListObjectsOp(parameters: FlowParameters(["url": "s3://b/", "secretAccessKey": "x"], operation: "ListObjectsOp"))
        }
        #expect(throws: FlowParameterError.self) {
            try ListObjectsOp(parameters: FlowParameters(["url": "s3://b/", "minSize": "lots"], operation: "ListObjectsOp"))
        }
    }
}

/// Reading `ListObjectsV2` answers, without a store.
struct S3ListPageTests {
    @Test func urlEncodedKeysAndPrefixesAreDecodedAndEntitiesUnescaped() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult><Name>b</Name><Prefix>p%2F</Prefix><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>\
            <Contents><Key>p/a+b%2Bc%26d%C3%A9.txt</Key><LastModified>2026-11-29T09:30:00.000Z</LastModified>\
            <ETag>&quot;abc&quot;</ETag><Size>12</Size></Contents>\
            <CommonPrefixes><Prefix>p/sub+folder/</Prefix></CommonPrefixes>\
            <NextContinuationToken>tok/en=</NextContinuationToken></ListBucketResult>
            """
        let page = try S3ListPage(xml: Data(xml.utf8), action: "listing")
        #expect(page.objects == [S3ObjectEntry(key: "p/a b+c&dé.txt", size: 12, etag: "abc", lastModified: "2026-11-29T09:30:00.000Z")])
        #expect(page.commonPrefixes == ["p/sub folder/"])
        #expect(page.nextContinuationToken == "tok/en=")
    }

    @Test func keysAreKeptAsTheyCameWhenTheStoreDidNotEncodeThem() throws {
        let xml = "<ListBucketResult><Contents><Key>a+b%41 &amp; c</Key><Size>1</Size></Contents><IsTruncated>false</IsTruncated></ListBucketResult>"
        let page = try S3ListPage(xml: Data(xml.utf8), action: "listing")
        #expect(page.objects.map(\.key) == ["a+b%41 & c"])
        #expect(page.nextContinuationToken == nil)
    }

    @Test func anAnswerThatIsNoListingOrGoesOnWithoutATokenIsRefused() {
        #expect(throws: FlowStandardOpError.self) { try S3ListPage(xml: Data("<html>proxy error</html>".utf8), action: "listing") }
        #expect(throws: FlowStandardOpError.self) {
            try S3ListPage(xml: Data("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>".utf8), action: "listing")
        }
    }

    @Test func aKeysPathBelowThePrefixDropsThePrefixAndOneSlash() {
        #expect(S3Listing.relative("photos/2026/a.jpg", to: "photos/") == "2026/a.jpg")
        #expect(S3Listing.relative("photos/2026/a.jpg", to: "photos") == "2026/a.jpg")
        #expect(S3Listing.relative("a.jpg", to: "") == "a.jpg")
    }
}

extension S3ListObjectsTests {
    /// Keys in the byte order a store lists them in.
    static func storeOrder(_ keys: [String]) -> [String] {
        keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// Streamed (issue 49), a page at a time: every key once, in the same order each time (the
    /// top level's keys sorted, then each folder's in the order of its name), from one paginator
    /// and from four at once; with pages of one key each folder has more pages than a queue holds
    /// (``S3PageQueue/capacity``), so the order must hold however far the next folders listed ahead.
    @Test func aStreamedListingGivesEveryKeyOnceInAFixedOrder() async throws {
        let s3 = try await Self.store(prefix: "archive/")
        defer { s3.stop() }
        var expected: [String] = Self.storeOrder(["archive/top & b.jpg", "archive/top a.txt"])
        for folder in ["2024/", "2025/", "2026/", "logs/"] {
            let inFolder: [String] = Self.keys.filter { $0.hasPrefix(folder) }.map { "archive/" + $0 }
            expected += Self.storeOrder(inFolder)
        }
        let whole: [String] = Self.storeOrder(Self.keys.map { "archive/" + $0 })
        for (concurrency, pageSize) in [(4, 1), (4, 5), (1, 5)] {
            var pages: [[String]] = []
            let parameters: [String: FlowValue] = ["concurrency": .integer(Int64(concurrency))]
            let op = try Self.op(s3, url: "s3://\(s3.bucket)/archive/", parameters)
            let result = try await op.stream(credentials: Self.credentials(s3), pageSize: pageSize) { page, _ in
                pages.append(page.map { $0.key })
            }
            let keys: [String] = pages.flatMap { $0 }
            #expect(pages.allSatisfy { !$0.isEmpty && $0.count <= pageSize })
            #expect(Set(keys).count == Self.keys.count && keys.count == Self.keys.count)
            #expect(result.objects.isEmpty)
            if concurrency > 1 {
                #expect(keys == expected, "concurrency \(concurrency), pages of \(pageSize)")
                #expect(result.prefixes == 5, "the top, then its four folders: \(result.prefixes)")
            } else {
                #expect(keys == whole)
            }
        }
    }

    /// A resumed run goes on listing from a page's position (issue 49): from any page, with one
    /// paginator or several, the listing gives exactly the keys the whole listing gave from that
    /// page on, in the same order, and each page again with the position it had.
    @Test func aStreamedListingGoesOnFromAnyPagesPosition() async throws {
        let s3 = try await Self.store(prefix: "archive/")
        defer { s3.stop() }
        for (concurrency, pageSize) in [(4, 2), (1, 3)] {
            let op = try Self.op(s3, url: "s3://\(s3.bucket)/archive/", ["concurrency": .integer(Int64(concurrency))])
            var whole: [(keys: [String], position: S3ListingPosition)] = []
            _ = try await op.stream(credentials: Self.credentials(s3), pageSize: pageSize) { page, position in
                whole.append((page.map(\.key), position))
            }
            #expect(whole.count > 4)
            // Each kind of position: the first page, the top folders' pages, each folder's first
            // and later pages, the last.
            for start in whole.indices {
                let position = whole[start].position
                #expect(S3ListingPosition(position.value) == position, "\(position) survives its checkpoint")
                var rest: [(keys: [String], position: S3ListingPosition)] = []
                _ = try await op.stream(credentials: Self.credentials(s3), pageSize: pageSize, from: position) { page, position in
                    rest.append((page.map(\.key), position))
                }
                #expect(rest.map(\.keys) == whole[start...].map(\.keys), "concurrency \(concurrency), from page \(start): \(position)")
                #expect(rest.map(\.position) == whole[start...].map(\.position))
            }
        }
    }

    /// A group that stops taking pages stops the listing: every paginator ends, none is left
    /// waiting, and the error reaches the op.
    @Test func aStreamedListingStopsWhenItsReaderDoes() async throws {
        let s3 = try await Self.store()
        defer { s3.stop() }
        struct Enough: Error {}
        var taken = 0
        let op = try Self.op(s3, url: "s3://\(s3.bucket)", ["concurrency": 4])
        await #expect(throws: Enough.self) {
            _ = try await op.stream(credentials: Self.credentials(s3), pageSize: 1) { _, _ in
                taken += 1
                if taken == 12 { throw Enough() }
            }
        }
        #expect(taken == 12)
    }

    /// `skipExisting`'s listing of one folder of the target (`UploadFileOp.listing(of:folder:…)`):
    /// the objects directly in it, not its subfolders'; and none, with a line saying so, for a
    /// folder of more objects than the limit.
    @Test func skipExistingListsOneFolderAndKeepsNoneLargerThanItsLimit() async throws {
        let s3 = try await Self.store(prefix: "archive/")
        defer { s3.stop() }
        let target = try S3Target(parameters: FlowParameters(["url": .string("s3://\(s3.bucket)/archive/"), "endpoint": .string(s3.endpoint)],
                                                             operation: "UploadFileOp"), environment: [:])
        let client = S3Client(target: target, signer: SigV4Signer(credentials: Self.credentials(s3), region: target.region), objectHeaders: [],
                              timeout: 60)
        let year = try await UploadFileOp.listing(of: target, folder: "archive/2025/", client: client, timeout: .seconds(60))
        #expect(year.objects.map { Set($0.keys) } == Set((0..<9).map { "archive/2025/photo \($0).jpg" }), "not raw/'s")
        #expect(year.objects?["archive/2025/photo 3.jpg"]?.size == Int64(100 + 7 * Self.keys.firstIndex(of: "2025/photo 3.jpg")!))
        #expect(year.line.hasPrefix("skipExisting: listed 9 objects under s3://\(s3.bucket)/archive/2025/ in 1 request,"), "\(year.line)")
        #expect(!year.refused)
        let top = try await UploadFileOp.listing(of: target, folder: "archive/", client: client, timeout: .seconds(60))
        #expect(top.objects.map { Set($0.keys) } == ["archive/top a.txt", "archive/top & b.jpg"])

        let tooMany = try await UploadFileOp.listing(of: target, folder: "archive/2025/", client: client, timeout: .seconds(60), limit: 8)
        #expect(tooMany.objects == nil && !tooMany.refused)
        #expect(tooMany.line.hasPrefix("skipExisting: s3://\(s3.bucket)/archive/2025/ holds more than 8 objects; asking with a HEAD per file in it"),
                "\(tooMany.line)")
    }
}
