"""A proxy in front of an S3 server (moto) that checks upload checksums as S3 does, and flips one
byte of the first try of every object PUT and part PUT on the way.

  s3_checksum_proxy.py PORT UPSTREAM [pacific|b2]

moto keeps the checksum it is sent without recomputing it; this proxy recomputes it over the body
as it arrives (aws-chunked with a trailer, or plain with x-amz-checksum-* or Content-MD5) and
answers 400 BadDigest when it does not match, as S3 does. The first try of each PUT (by path and
query) has one byte flipped first, so it is refused; later tries go to UPSTREAM unchanged.
GET /_proxy_stats gives {"puts", "corrupted", "refused", "forwarded", "trailers_refused", "flow_agents",
"other_agents"}: the last two count requests whose User-Agent is flow/… and the rest. Stops when
stdin closes.

With `pacific`, it is a store that does not know trailing checksums, as Ceph RGW 16 ("Pacific")
answers them: no byte is flipped, and a PUT whose x-amz-content-sha256 is
STREAMING-UNSIGNED-PAYLOAD-TRAILER gets 400 XAmzContentSHA256Mismatch (the gateway takes the words
for the payload's hash); every other request goes on as it is.

With `b2`, it is a store that takes no checksum headers at all, as Backblaze B2 answers them: a
request naming one (x-amz-sdk-checksum-algorithm, x-amz-checksum-algorithm, x-amz-checksum-*,
x-amz-trailer) gets 400 InvalidArgument "Unsupported header 'NAME' received for this API call."
(counted in "headers_refused").
"""
import base64
import hashlib
import http.client
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def table(poly, width):
    entries = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        entries.append(crc)
    return entries


CRC32C = table(0x82F63B78, 32)
CRC64 = table(0x9A6C9329AC4BC9B5, 64)


def crc(data, entries, mask, length):
    value = mask
    for byte in data:
        value = entries[(value ^ byte) & 0xFF] ^ (value >> 8)
    return (value ^ mask).to_bytes(length, "big")


def digest(algorithm, data):
    if algorithm == "crc32c":
        raw = crc(data, CRC32C, 0xFFFFFFFF, 4)
    elif algorithm == "crc64nvme":
        raw = crc(data, CRC64, 0xFFFFFFFFFFFFFFFF, 8)
    elif algorithm == "sha256":
        raw = hashlib.sha256(data).digest()
    elif algorithm == "md5":
        raw = hashlib.md5(data).digest()
    else:
        return None
    return base64.b64encode(raw).decode()


def decode_chunked(body):
    """The data and the trailers of an aws-chunked body."""
    data, trailers, rest = b"", {}, body
    while True:
        line, rest = rest.split(b"\r\n", 1)
        size = int(line.split(b";")[0], 16)
        if size == 0:
            break
        data, rest = data + rest[:size], rest[size + 2:]
    for line in rest.split(b"\r\n"):
        if b":" in line:
            name, value = line.split(b":", 1)
            trailers[name.decode().lower()] = value.decode().strip()
    return data, trailers


def main():
    port, upstream = int(sys.argv[1]), urllib.parse.urlparse(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else ""
    pacific, b2 = mode == "pacific", mode == "b2"
    seen, lock = set(), threading.Lock()
    stats = {"puts": 0, "corrupted": 0, "refused": 0, "forwarded": 0, "trailers_refused": 0, "headers_refused": 0,
             "flow_agents": 0, "other_agents": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, data, headers=()):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.path == "/_proxy_stats":
                return self.answer(200, json.dumps(stats).encode())
            with lock:
                stats["flow_agents" if (self.headers.get("User-Agent") or "").startswith("flow/") else "other_agents"] += 1
            if pacific and self.command == "PUT" and self.headers.get("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER":
                with lock:
                    stats["trailers_refused"] += 1
                return self.answer(400, b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>XAmzContentSHA256Mismatch</Code>'
                                        b'<BucketName>photos</BucketName><RequestId>tx0</RequestId><HostId>h</HostId></Error>')
            unsupported = [name for name in self.headers.keys()
                           if name.lower().startswith("x-amz-checksum") or name.lower() in ("x-amz-sdk-checksum-algorithm", "x-amz-trailer")]
            if b2 and unsupported:
                with lock:
                    stats["headers_refused"] += 1
                message = "Unsupported header '%s' received for this API call." % unsupported[0].lower()
                return self.answer(400, ('<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidArgument</Code>'
                                         '<Message>%s</Message></Error>' % message).encode())
            if self.command == "PUT" and not (pacific or b2):
                chunked = self.headers.get("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
                data, trailers = decode_chunked(body) if chunked else (body, {})
                with lock:
                    stats["puts"] += 1
                    first = self.path not in seen
                    seen.add(self.path)
                if first and data:
                    data = bytes([data[0] ^ 0x01]) + data[1:]
                    with lock:
                        stats["corrupted"] += 1
                sent = {k.lower(): v for k, v in self.headers.items()}
                sent.update(trailers)
                for algorithm in ("crc32c", "crc64nvme", "sha256"):
                    expected = sent.get("x-amz-checksum-" + algorithm)
                    if expected is None and algorithm == "md5":
                        continue
                    if expected is not None and digest(algorithm, data) != expected:
                        with lock:
                            stats["refused"] += 1
                        message = "The %s you specified did not match the calculated checksum." % algorithm.upper()
                        return self.answer(400, ('<?xml version="1.0"?><Error><Code>BadDigest</Code><Message>%s</Message></Error>'
                                                 % message).encode())
                if "content-md5" in sent and digest("md5", data) != sent["content-md5"]:
                    with lock:
                        stats["refused"] += 1
                    return self.answer(400, b'<?xml version="1.0"?><Error><Code>BadDigest</Code>'
                                            b'<Message>The Content-MD5 you specified did not match what we received.</Message></Error>')
            connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
            connection.request(self.command, self.path, body=body, headers={k: v for k, v in self.headers.items()})
            reply = connection.getresponse()
            data = reply.read()
            with lock:
                stats["forwarded"] += 1
            headers = [(n, v) for n, v in reply.getheaders()
                       if n.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server")]
            if self.command == "HEAD":
                self.send_response(reply.status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", reply.getheader("Content-Length", "0"))
                self.end_headers()
            else:
                self.answer(reply.status, data, headers)
            connection.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("listening", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
