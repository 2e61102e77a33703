import Foundation

/// The timeline page: `timeline.html` (built into the program) with the run's data in its
/// `flow-timeline-data` script element.
enum TimelinePage {
    /// The text in the template that the data replaces.
    static let placeholder = #"{"__FLOW_TIMELINE_DATA__":true}"#

    /// The template as built into the program.
    static var template: String { String(decoding: PackageResources.timeline_html, as: UTF8.self) }

    /// The page for `data`.
    ///
    /// - Throws: when the data cannot be encoded (a time that is not a number).
    static func render(_ data: TimelineData) throws -> String {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        let json = String(decoding: try encoder.encode(data), as: UTF8.self)
        // `<` only stands inside JSON strings, where \u003c means the same: no `</script>` can end
        // the element early, whatever an op logged.
        let safe = json.replacingOccurrences(of: "<", with: "\\u003c")
        let template = Self.template
        guard let range = template.range(of: placeholder) else { return template }
        return template.replacingCharacters(in: range, with: safe)
    }
}
