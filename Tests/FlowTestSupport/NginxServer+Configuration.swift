import Foundation

extension NginxServer {
    var configurationFile: URL { directory.file("nginx.conf") }
    var errorLogFile: URL { directory.file("error.log") }
    var accessLogFile: URL { directory.file("access.log") }

    /// Writes `nginx.conf` for `port`: every path nginx would otherwise take from its build
    /// (pid, logs, temporary folders) points into the temporary folder.
    func writeConfiguration(port: Int) throws {
        let root = directory.path
        for folder in ["client-body", "proxy", "fastcgi", "uwsgi", "scgi"] { try directory.folder("temp/" + folder) }
        let headerFields = loggedHeaders.map { "\\t$http_" + $0.lowercased().replacingOccurrences(of: "-", with: "_") }.joined()
        let formLocation = formReceiverPort.map { "proxy_pass http://127.0.0.1:\($0);" } ?? "return 501 \"no form receiver\";"
        let text = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(root)/nginx.pid;
            error_log \(errorLogFile.path) warn;
            events { worker_connections 1024; }
            http {
                log_format flow escape=json '$request_method\\t$request_uri\\t$status\\t$msec\(headerFields)';
                access_log \(accessLogFile.path) flow;
                client_body_temp_path \(root)/temp/client-body;
                proxy_temp_path \(root)/temp/proxy;
                fastcgi_temp_path \(root)/temp/fastcgi;
                uwsgi_temp_path \(root)/temp/uwsgi;
                scgi_temp_path \(root)/temp/scgi;
                server {
                    listen 127.0.0.1:\(port);
                    root \(documentRoot.path);
                    client_max_body_size 0;
                    location / {
                        dav_methods PUT;
                        create_full_put_path on;
                        dav_access user:rw group:r all:r;
                    }
                    location ~ "/fail" {
                        return 500 "boom";
                    }
                    location /form/ {
                        \(formLocation)
                    }
                }
            }

            """
        try text.write(to: configurationFile, atomically: true, encoding: .utf8)
    }
}
