/// A glob matched against a file's path relative to the folder `ListFilesOp` lists
/// (`2026/01/a.jpg`), for its `include` and `exclude` lists.
///
/// - `*` matches any run of characters but `/`; `?` one character but `/`.
/// - `**` matches any run of characters, `/` included; `**/` also matches no folder at all, so
///   `**/*.jpg` matches `a.jpg` and `2026/01/a.jpg`, and `a/**/b` matches `a/b`.
/// - `[abc]`, `[a-z]` match one character of the class, `[!abc]` or `[^abc]` one not in it.
/// - `\` makes the next character literal (`\*`, `\[`).
/// - A pattern without `/` is matched against the file's name at any depth, as rclone and
///   `.gitignore` do (`*.tmp` matches `a.tmp` and `x/y/a.tmp`); a pattern with a `/` against the
///   whole relative path; a leading `/` anchors a pattern to the listed folder (`/*.jpg` matches
///   `a.jpg` but not `x/a.jpg`).
///
/// Matching is by Unicode scalars, so `?` matches one `é` as it does one `e`.
struct PathGlob: Equatable, CustomStringConvertible {
    /// One piece of a compiled pattern.
    enum Token: Equatable {
        /// This scalar.
        case literal(Unicode.Scalar)
        /// `?`: one scalar but `/`.
        case one
        /// `*`: any run of scalars without `/`.
        case star
        /// `**`: any run of scalars.
        case globstar
        /// `**/` at the start of a segment: nothing, or any run of scalars ending in `/`.
        case folders
        /// `[…]`: one scalar (never `/`) in the ranges, or not in them when negated.
        case set([ClosedRange<Unicode.Scalar>], negated: Bool)
    }

    /// The pattern as written.
    let pattern: String
    /// The compiled pattern.
    let tokens: [Token]
    /// Whether the pattern is matched against the file's name only (it has no `/`).
    let matchesName: Bool

    var description: String { pattern }

    /// Compiles `pattern`.
    ///
    /// - Throws: ``PathGlobError`` for an empty pattern or an unclosed `[`.
    init(_ pattern: String) throws {
        self.pattern = pattern
        guard !pattern.isEmpty else { throw PathGlobError(pattern: pattern, reason: "it is empty") }
        var scalars = Array(pattern.unicodeScalars)
        if scalars.first == "/" { scalars.removeFirst() }
        matchesName = !pattern.unicodeScalars.contains("/")
        var tokens: [Token] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\\":
                index += 1
                guard index < scalars.count else { throw PathGlobError(pattern: pattern, reason: "it ends with a lone '\\'") }
                tokens.append(.literal(scalars[index]))
            case "?":
                tokens.append(.one)
            case "*":
                if index + 1 < scalars.count, scalars[index + 1] == "*" {
                    index += 1
                    while index + 1 < scalars.count, scalars[index + 1] == "*" { index += 1 }
                    let atSegmentStart = tokens.isEmpty || tokens.last == .literal("/") || tokens.last == .folders
                    if atSegmentStart, index + 1 < scalars.count, scalars[index + 1] == "/" {
                        index += 1
                        tokens.append(.folders)
                    } else {
                        tokens.append(.globstar)
                    }
                } else {
                    tokens.append(.star)
                }
            case "[":
                let (token, next) = try Self.set(scalars, from: index, pattern: pattern)
                tokens.append(token)
                index = next
                continue
            default:
                tokens.append(.literal(scalar))
            }
            index += 1
        }
        self.tokens = tokens
    }

    /// The class starting at `start` (a `[`) and the index after its `]`.
    private static func set(_ scalars: [Unicode.Scalar], from start: Int, pattern: String) throws -> (Token, Int) {
        var index = start + 1
        var negated = false
        if index < scalars.count, scalars[index] == "!" || scalars[index] == "^" {
            negated = true
            index += 1
        }
        var ranges: [ClosedRange<Unicode.Scalar>] = []
        var first = true
        while index < scalars.count {
            var scalar = scalars[index]
            if scalar == "]" && !first { return (.set(ranges, negated: negated), index + 1) }
            first = false
            if scalar == "\\", index + 1 < scalars.count {
                index += 1
                scalar = scalars[index]
            }
            if index + 2 < scalars.count, scalars[index + 1] == "-", scalars[index + 2] != "]" {
                let upper = scalars[index + 2]
                guard scalar <= upper else {
                    throw PathGlobError(pattern: pattern, reason: "the range '\(scalar)-\(upper)' runs backwards")
                }
                ranges.append(scalar...upper)
                index += 3
            } else {
                ranges.append(scalar...scalar)
                index += 1
            }
        }
        throw PathGlobError(pattern: pattern, reason: "its '[' has no closing ']'")
    }

    /// Whether the pattern matches `path`, a relative path with `/` between its segments.
    func matches(_ path: String) -> Bool {
        let scalars = Array(path.unicodeScalars)
        return matches(scalars, nameStart: (scalars.lastIndex(of: "/") ?? -1) + 1)
    }

    /// Whether the pattern matches a relative path given as its scalars, with `nameStart` the
    /// index where its file name starts (after the last `/`).
    func matches(_ path: [Unicode.Scalar], nameStart: Int) -> Bool {
        matchesName ? Self.matches(tokens, path[nameStart...]) : Self.matches(tokens, path[...])
    }

    /// Whether `tokens` match all of `text`: dynamic programming over (token, scalar) positions,
    /// so no pattern takes more than tokens × scalars steps.
    static func matches(_ tokens: [Token], _ text: ArraySlice<Unicode.Scalar>) -> Bool {
        let text = ContiguousArray(text)
        let count = text.count
        // reachable[j]: the tokens so far can match text[..<j].
        var reachable = ContiguousArray<Bool>(repeating: false, count: count + 1)
        var next = reachable
        reachable[0] = true
        for token in tokens {
            var any = false
            switch token {
            case .star, .globstar:
                var open = false
                for j in 0...count {
                    if reachable[j] { open = true }
                    next[j] = open
                    any = any || open
                    if j < count, token == .star, text[j] == "/" { open = false }
                }
            case .folders:
                var open = false
                for j in 0...count {
                    next[j] = reachable[j] || (open && j > 0 && text[j - 1] == "/")
                    any = any || next[j]
                    if reachable[j] { open = true }
                }
            default:
                next[0] = false
                for j in 0..<count {
                    next[j + 1] = reachable[j] && Self.matchesOne(token, text[j])
                    any = any || next[j + 1]
                }
            }
            if !any { return false }
            swap(&reachable, &next)
        }
        return reachable[count]
    }

    private static func matchesOne(_ token: Token, _ scalar: Unicode.Scalar) -> Bool {
        switch token {
        case .literal(let literal): return literal == scalar
        case .one: return scalar != "/"
        case .set(let ranges, let negated): return scalar != "/" && ranges.contains { $0.contains(scalar) } != negated
        case .star, .globstar, .folders: return false
        }
    }
}

/// A glob that cannot be compiled.
struct PathGlobError: Error, CustomStringConvertible {
    /// The pattern as written.
    let pattern: String
    /// What is wrong with it.
    let reason: String

    var description: String { "the pattern '\(pattern)' cannot be used: \(reason)" }
}
