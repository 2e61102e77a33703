import Flow

/// Resolves `ShellOp`'s parameters so that bucket values stay data inside a `shell: true` command.
///
/// Pasted into the script, a value is code: `command: "echo hello ${name}"` with
/// `--set 'name=$(touch x)'` ran `touch`. Instead each `${key}` in the command becomes a quoted
/// reference to an environment variable (`"${FLOW_VAR_name}"`) that the op sets to the value, so
/// the shell expands it as one word of text and never parses it. The reference is quoted for where
/// it stands: `"${V}"` outside quotes, `${V}` inside double quotes, `'"${V}"'` inside single
/// quotes. Even where the quoting is misread (a here-document, nested backquotes), the shell only
/// expands a variable there, which never runs its value. `$${` still writes a literal `${` for the
/// shell's own variables. Other parameters (`env:`, `workingDirectory:`, a `command` list run
/// without a shell) take values as ``FlowParameterTemplate`` does: none of them is parsed as code.
enum ShellCommandTemplate {
    /// The prefix of the environment variables that carry referenced values.
    static let variablePrefix = "FLOW_VAR_"

    /// ``FlowOperationRegistry/ParameterResolver`` for `ShellOp`.
    @Sendable static func resolve(_ parameters: [String: FlowValue], bucket: [String: Any]) throws -> [String: FlowValue] {
        guard let command = parameters["command"] else { return try FlowParameterTemplate.resolve(parameters, bucket: bucket) }
        var others = parameters
        others["command"] = nil
        var resolved = try FlowParameterTemplate.resolve(others, bucket: bucket)
        guard resolved["shell"] == .bool(true) else { return try FlowParameterTemplate.resolve(parameters, bucket: bucket) }
        var script = Script(bucket: bucket)
        switch command {
        case .string(let text):
            resolved["command"] = .string(try script.rewrite(text))
        case .array(let items):
            resolved["command"] = .array(try items.map { item in
                guard case .string(let text) = item else { return item }
                return .string(try script.rewrite(text))
            })
        default:
            resolved["command"] = command
        }
        guard !script.variables.isEmpty else { return resolved }
        // A non-map `env:` is left for ShellOp's own check, which names it.
        if resolved["env"] == nil { resolved["env"] = .map([:]) }
        if case .map(var environment) = resolved["env"] {
            for (name, value) in script.variables { environment[name] = .string(value) }
            resolved["env"] = .map(environment)
        }
        return resolved
    }

    /// One command's rewriting: the variables it needs, by name.
    struct Script {
        let bucket: [String: Any]
        /// Variable name → value text.
        private(set) var variables: [String: String] = [:]
        /// Bucket key → variable name.
        private var names: [String: String] = [:]

        init(bucket: [String: Any]) {
            self.bucket = bucket
        }

        private enum Quoting { case none, single, double }

        /// `text` with each `${key}` replaced by a quoted variable reference.
        mutating func rewrite(_ text: String) throws -> String {
            let characters = Array(text)
            var output = ""
            var quoting = Quoting.none
            var index = 0
            while index < characters.count {
                let character = characters[index]
                if character == "$", index + 1 < characters.count {
                    if characters[index + 1] == "$", index + 2 < characters.count, characters[index + 2] == "{" {
                        output += "${"
                        index += 3
                        continue
                    }
                    if characters[index + 1] == "{", let end = characters[(index + 2)...].firstIndex(of: "}") {
                        let key = String(characters[(index + 2)..<end])
                        let name = try variable(for: key)
                        switch quoting {
                        case .none: output += "\"${\(name)}\""
                        case .double: output += "${\(name)}"
                        case .single: output += "'\"${\(name)}\"'"
                        }
                        index = end + 1
                        continue
                    }
                }
                output.append(character)
                switch (quoting, character) {
                case (.none, "\\"), (.double, "\\"):
                    if index + 1 < characters.count { output.append(characters[index + 1]) }
                    index += 1
                case (.none, "'"): quoting = .single
                case (.none, "\""): quoting = .double
                case (.single, "'"), (.double, "\""): quoting = .none
                default: break
                }
                index += 1
            }
            return output
        }

        /// The variable carrying `key`'s value: `FLOW_VAR_` and the key with every character
        /// other than a letter, digit or `_` as `_`, numbered when two keys come out the same.
        private mutating func variable(for key: String) throws -> String {
            if let name = names[key] { return name }
            guard let value = bucket[key] else { throw FlowParameterTemplate.MissingKey(key: key, parameter: "command") }
            let safe = String(key.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_") ? Character(scalar) : "_"
            })
            var name = ShellCommandTemplate.variablePrefix + safe
            var number = 2
            while variables[name] != nil {
                name = ShellCommandTemplate.variablePrefix + safe + "_\(number)"
                number += 1
            }
            names[key] = name
            variables[name] = FlowParameterTemplate.printedForm(of: value)
            return name
        }
    }
}
