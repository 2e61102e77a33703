import Foundation

/// A tiny HTTP server (python3) that stores the `file` field of `multipart/form-data` POSTs, since
/// nginx cannot store multipart bodies. ``NginxServer`` proxies `/form/` to it.
///
/// A POST to `/a/b.txt` whose body has a part named `file` stores that part's bytes at
/// `directory/a/b.txt` and answers 201; a body without such a part gets 400.
public final class FormUploadReceiver: @unchecked Sendable {
    /// Where received files are stored, by request path.
    public let directory: URL
    /// The port it listens on (127.0.0.1), once started.
    public private(set) var port = 0
    private var process: Process?
    /// How long python3 may take to print its port.
    static let startTimeout: Duration = .seconds(30)

    /// Prepares a receiver storing under `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    deinit {
        stop()
    }

    /// Starts python3 and waits until it listens.
    ///
    /// - Throws: ``TestSupportError`` when python3 is missing or does not start.
    public func start() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, directory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try ProcessLaunch.run(process)
        } catch {
            throw TestSupportError("cannot start python3 for the form receiver: \(error)")
        }
        self.process = process
        // The script prints its port once it listens; the pipe's end means it died.
        let reader = PipeReader(output)
        guard let line = reader.waitBlocking(forFirstLineWithin: Self.startTimeout) else {
            let problem = "the python3 form receiver printed no port line within \(Self.startTimeout) "
                + "(\(reader.ended ? "it exited" : "still running"); is python3 installed?): '\(reader.text)'"
            stop()
            throw TestSupportError(problem)
        }
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            stop()
            throw TestSupportError("the python3 form receiver's first line is no port: '\(line)'")
        }
        self.port = port
    }

    /// Stops the server and reaps it.
    public func stop() {
        guard let process else { return }
        self.process = nil
        NginxServer.terminate(process)
    }

    private static let script = #"""
import http.server, os, re, sys, urllib.parse
root = sys.argv[1]

class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, text):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        match = re.search(r'boundary="?([^";]+)"?', self.headers.get("Content-Type", ""))
        if not match:
            return self.answer(400, "not multipart/form-data")
        delimiter = b"--" + match.group(1).encode()
        for part in body.split(delimiter)[1:]:
            if part.startswith(b"--"):
                break
            head, _, data = part[2:].partition(b"\r\n\r\n")
            if data.endswith(b"\r\n"):
                data = data[:-2]
            if re.search(rb'(^|;)\s*name="file"', head, re.I | re.M):
                path = os.path.join(root, urllib.parse.unquote(self.path.split("?")[0]).lstrip("/"))
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as stored:
                    stored.write(data)
                return self.answer(201, "stored")
        self.answer(400, "no form field named file")

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""#
}
