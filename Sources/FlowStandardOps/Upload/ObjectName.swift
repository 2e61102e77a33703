import Foundation

/// The name a file takes below an upload's base URL or key prefix, checked so that it stays below
/// it.
///
/// `/` inside a name separates folders (`2026/01/a.jpg`) and is sent as `/`. A name that could
/// climb out of the prefix, or that stores and servers treat differently, is refused: an empty
/// name, a leading `/`, an empty segment (`a//b`, a trailing `/`) and a `.` or `..` segment. Sent
/// percent-encoded (`..%2F..%2Fx`) such a name was decoded again by nginx and many proxies, so
/// `../../x` below `http://host/up/sub` was stored at the server's root.
struct ObjectName: Equatable {
    /// The name's folder segments and file name, each non-empty and neither `.` nor `..`.
    let segments: [Substring]

    /// Checks `name`.
    ///
    /// - Throws: ``FlowStandardOpError`` with code ``FlowStandardOpError/Code/invalidName``
    ///   (permanent), naming the name and what is wrong with it.
    init(_ name: String) throws {
        func refuse(_ why: String) -> FlowStandardOpError {
            FlowStandardOpError(.invalidName, "refused the upload name '\(name)': \(why); names are paths below the target "
                                + "(a/b/c.jpg), with no empty, '.' or '..' segment")
        }
        guard !name.isEmpty else { throw refuse("it is empty") }
        guard !name.hasPrefix("/") else { throw refuse("it starts with '/'") }
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        for segment in segments {
            if segment.isEmpty { throw refuse("it has an empty segment ('//' or a trailing '/')") }
            if segment == "." || segment == ".." { throw refuse("it has a '\(segment)' segment, which would leave the target's prefix") }
        }
        self.segments = segments
    }

    /// The name as written, segments joined by `/`.
    var text: String { segments.joined(separator: "/") }

    /// The name for a URL path: each segment percent-encoded (a `/`, `?`, `#` or `%` inside one
    /// never reaches the server as anything but data; a `+` is sent as `%2B`, since some servers
    /// and gateways read a `+` in a path as a space), joined by `/`. Letters outside ASCII go as
    /// their UTF-8 bytes, percent-encoded (`é` is `%C3%A9`).
    var urlPath: String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#%+")
        return segments.map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? String($0) }.joined(separator: "/")
    }
}
