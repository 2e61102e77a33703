public import Flow

/// One page of a streamed listing: the objects kept, and the continuation token that fetched it
/// (`nil` for a prefix's first page).
struct S3ListedPage: Sendable {
    var objects: [S3ObjectEntry]
    var token: String?
}

/// Where a streamed listing (``S3Listing/stream(prefix:recursive:concurrency:from:deliver:)``)
/// stood before a page: what `ListObjectsOp` gives with each page it emits, so that a resumed run
/// goes on listing from the page its journal's checkpoint names (issue 49).
enum S3ListingPosition: Hashable, Sendable {
    /// One paginator: the page fetched with this continuation token (`nil`: the first).
    case page(token: String?)
    /// Paginators in parallel: the objects of the top folder levels, from this offset in their
    /// sorted order.
    case top(offset: Int)
    /// Paginators in parallel: this folder's page fetched with `token` (`nil`: its first).
    case folder(String, token: String?)

    /// As a checkpoint keeps it: `{"token": …}`, `{"top": 2000}` or `{"folder": "2026/05/", "token": …}`
    /// (no `token` for a first page).
    var value: FlowValue {
        var fields: [String: FlowValue] = [:]
        switch self {
        case .page(let token):
            fields["token"] = token.map(FlowValue.string) ?? .null
        case .top(let offset):
            fields["top"] = .integer(Int64(offset))
        case .folder(let folder, let token):
            fields["folder"] = .string(folder)
            fields["token"] = token.map(FlowValue.string) ?? .null
        }
        return .map(fields)
    }

    /// The position a checkpoint holds; `nil` for a value that is none.
    init?(_ value: FlowValue) {
        guard case .map(let fields) = value else { return nil }
        let token: String?? = switch fields["token"] {
        case .string(let text)?: .some(text)
        case .null?, nil: .some(nil)
        default: .none
        }
        if case .integer(let offset)? = fields["top"], offset >= 0, fields.count == 1 {
            self = .top(offset: Int(offset))
        } else if case .string(let folder)? = fields["folder"], let token {
            self = .folder(folder, token: token)
        } else if fields["token"] != nil, fields.count == 1, let token {
            self = .page(token: token)
        } else {
            return nil
        }
    }

    /// Whether a listing with `parallel` paginators (or one) made this position.
    func fits(parallel: Bool) -> Bool {
        if case .page = self { return !parallel }
        return parallel
    }
}
