import Foundation
import Testing
import Flow

@Suite struct FlowValueTests {
    @Test func plainValuesConvertBothWays() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let bucket: [String: Any] = [
            "s": "text", "i": 3, "d": 1.5, "b": true, "data": Data([1, 2]), "date": date,
            "list": ["a", 1, [true]], "map": ["k": ["v": 2]], "null": NSNull(),
        ]
        let values = try bucket.flowValues().get()
        #expect(values["list"] == .array([.string("a"), .integer(1), .array([.bool(true)])]))
        #expect(values["map"] == .map(["k": .map(["v": .integer(2)])]))
        let back = values.mapValues(\.anyValue)
        #expect(back["i"] as? Int == 3)
        #expect(back["d"] as? Double == 1.5)
        #expect(back["date"] as? Date == date)
        #expect((back["list"] as? [Any])?.count == 3)
        #expect(back["null"] is NSNull)
    }

    @Test func valuesPrintAsTheSeedPrintsThem() {
        let value = FlowValue(any: ["url_of_a", "url_of_b"])
        #expect(value?.description == #"["url_of_a", "url_of_b"]"#)
        #expect(FlowValue.integer(7).description == "7")
        #expect(FlowValue.string("plain").description == "plain")
    }

    @Test func aUserTypeHasNoWireFormAndIsNamed() {
        struct Custom {}
        let result = (["x": Custom()] as [String: Any]).flowValues()
        guard case .failure(let error) = result else {
            Issue.record("a custom type converted")
            return
        }
        #expect(error.key == "x")
        #expect(error.description.contains("Custom"))
    }

    /// The exact-type fast paths of `FlowValue(any:)` give what the casts gave: each common type,
    /// an `Any?` passed as `Any` (a group element) unwrapped or `null`, a nested optional, and a
    /// `FlowValue` kept as it is.
    @Test func optionalsAndTheCommonTypesConvertAsBefore() {
        let element: Any? = "file-1.jpg"
        #expect(FlowValue(any: element as Any) == .string("file-1.jpg"))
        let missing: Any? = nil
        #expect(FlowValue(any: missing as Any) == .null)
        let nested: Any? = Optional<Int>.some(4) as Any
        #expect(FlowValue(any: nested as Any) == .integer(4))
        let nestedNil: Any? = Optional<Int>.none as Any
        #expect(FlowValue(any: nestedNil as Any) == .null)
        let list: Any? = ["a", 2] as [Any]
        #expect(FlowValue(any: list as Any) == .array([.string("a"), .integer(2)]))
        #expect(FlowValue(any: 3) == .integer(3))
        #expect(FlowValue(any: 2.5) == .double(2.5))
        #expect(FlowValue(any: false) == .bool(false))
        #expect(FlowValue(any: FlowValue.map(["k": .null])) == .map(["k": .null]))
        struct Custom {}
        let custom: Any? = Custom()
        #expect(FlowValue(any: custom as Any) == nil)
    }

    /// The exact-type paths for lists and maps (a listing's `[[String: String]]`, `[String]`,
    /// `[Any]`, `[[String: Any]]`) give what the element-by-element casts give, and a value with
    /// no serialisable form inside them still makes the whole `nil`.
    @Test func listsAndMapsOfTheCommonTypesConvertAsTheCastsDo() {
        let files: [[String: String]] = [["path": "a/b.jpg", "name": "b.jpg"], ["path": "c.jpg", "name": "c.jpg"]]
        let expected = FlowValue.array([.map(["path": .string("a/b.jpg"), "name": .string("b.jpg")]),
                                        .map(["path": .string("c.jpg"), "name": .string("c.jpg")])])
        #expect(FlowValue(any: files) == expected)
        #expect(FlowValue(any: files.map { $0 as [String: Any] } as [Any]) == expected, "the same through the casts")
        #expect(FlowValue(any: files.map { $0 as [String: Any] }) == expected)
        #expect(FlowValue(any: ["x", "y"]) == .array([.string("x"), .string("y")]))
        #expect(FlowValue(any: ["k": "v"] as [String: String]) == .map(["k": .string("v")]))
        #expect(FlowValue(any: ["k": 1, "l": [true]] as [String: Any]) == .map(["k": .integer(1), "l": .array([.bool(true)])]))
        #expect(FlowValue(any: [] as [[String: String]]) == .array([]))
        struct Custom {}
        #expect(FlowValue(any: [1, Custom()] as [Any]) == nil)
        #expect(FlowValue(any: [["k": Custom()]] as [[String: Any]]) == nil)
        #expect(FlowValue(any: ["k": Custom()] as [String: Any]) == nil)
    }
}
