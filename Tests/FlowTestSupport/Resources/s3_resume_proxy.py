#!/usr/bin/env python3
"""A counting proxy in front of moto's S3 server, for the tests of resumed multipart uploads.

  s3_resume_proxy.py proxy PORT UPSTREAM
      Forwards every request to UPSTREAM as it is (Host included, so signatures stay valid) and
      counts them by kind. Control requests (never forwarded):
        GET /_proxy_stats           {"parts": {"N": tries}, "partBytes": bytes of part bodies,
                                     "creates", "completes", "aborts", "listUploads", "listParts",
                                     "heads", "listObjects" (ListObjectsV2), "singlePuts" (PUTs not of a part),
                                     "held": part PUTs waiting, "stored": part PUTs the store took,
                                     "requestTimes": arrival times (Unix seconds) of starts and part PUTs}
        GET /_proxy_fail?parts=5,6  the next try of each of these part numbers fails with 503 SlowDown
        GET /_proxy_hold            part PUTs from now on wait until /_proxy_release
        GET /_proxy_hold?after=N    the same, from when the store has taken N part PUTs (at once if it has)
        GET /_proxy_release         lets them (and later ones) through, and answers once every part PUT
                                    that was held has had its answer from the store: a part of a
                                    killed client must not land after the test goes on (it would
                                    race the next try's listing of the parts)
        GET /_proxy_refuse_listing  ListMultipartUploads is answered 403 AccessDenied from now on
        GET /_proxy_refuse_object_listing
                                    ListObjectsV2 is answered 403 AccessDenied from now on (counted still)
        GET /_proxy_gone?uploadId=X requests naming upload X are answered 404 NoSuchUpload, as S3
                                    answers for an aborted upload (moto answers a part PUT or a
                                    completion of one with 500)
  s3_resume_proxy.py parts ENDPOINT BUCKET KEY
      The parts of the unfinished multipart uploads of KEY as JSON {"UPLOAD_ID": [numbers]}
      (ListMultipartUploads and ListParts, signed with AWS_ACCESS_KEY_ID/SECRET from the environment).
  s3_resume_proxy.py abort ENDPOINT BUCKET KEY
      Aborts every unfinished multipart upload of KEY, as a lifecycle rule would; prints their ids.
"""
import json
import sys
import time


def client(endpoint):
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", config=Config(retries={"max_attempts": 1}))


def uploads_of(s3, bucket, key):
    # moto refuses the signature of a prefix with "/" (it checks it decoded): ask for less, keep KEY.
    answer = s3.list_multipart_uploads(Bucket=bucket, Prefix=key.split("/")[0])
    return [item["UploadId"] for item in answer.get("Uploads", []) if item["Key"] == key]


def proxy(port, upstream):
    import http.client
    import threading
    import urllib.parse
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    target = urllib.parse.urlparse(upstream)
    stats = {"parts": {}, "partBytes": 0, "creates": 0, "completes": 0, "aborts": 0, "listUploads": 0, "listParts": 0,
             "heads": 0, "listObjects": 0, "singlePuts": 0, "held": 0, "stored": 0, "requestTimes": []}
    failing = set()
    gone = set()
    lock = threading.Lock()
    released = threading.Event()
    released.set()
    hold_after = [None]
    # Part PUTs that were held and have not had the store's answer yet; notified when one has.
    unanswered_held = [0]
    answered = threading.Condition(lock)
    refuse_listing = threading.Event()
    refuse_object_listing = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, data, content_type="application/json"):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def control(self, path, query):
            if path == "/_proxy_stats":
                with lock:
                    data = json.dumps(stats).encode()
            elif path == "/_proxy_fail":
                with lock:
                    failing.update(int(n) for n in query.get("parts", [""])[0].split(",") if n)
                data = b"{}"
            elif path == "/_proxy_gone":
                with lock:
                    gone.add(query.get("uploadId", [""])[0])
                data = b"{}"
            elif path == "/_proxy_hold":
                after = query.get("after", [""])[0]
                with lock:
                    if after and stats["stored"] < int(after):
                        hold_after[0] = int(after)
                    else:
                        released.clear()
                data = b"{}"
            elif path == "/_proxy_refuse_listing":
                refuse_listing.set()
                data = b"{}"
            elif path == "/_proxy_refuse_object_listing":
                refuse_object_listing.set()
                data = b"{}"
            elif path == "/_proxy_release":
                with lock:
                    hold_after[0] = None
                released.set()
                with lock:
                    answered.wait_for(lambda: unanswered_held[0] == 0, timeout=120)
                data = b"{}"
            else:
                return False
            self.answer(200, data)
            return True

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parsed = urllib.parse.urlparse(self.path)
            query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
            if parsed.path.startswith("/_proxy_") and self.control(parsed.path, query):
                return
            is_part = self.command == "PUT" and "partNumber" in query
            with lock:
                if is_part or (self.command == "POST" and "uploads" in query):
                    stats["requestTimes"].append(time.time())
                if is_part:
                    number = query["partNumber"][0]
                    stats["parts"][number] = stats["parts"].get(number, 0) + 1
                    stats["partBytes"] += len(body)
                elif self.command == "POST" and "uploads" in query:
                    stats["creates"] += 1
                elif self.command == "POST" and "uploadId" in query:
                    stats["completes"] += 1
                elif self.command == "DELETE" and "uploadId" in query:
                    stats["aborts"] += 1
                elif self.command == "GET" and "uploads" in query:
                    stats["listUploads"] += 1
                elif self.command == "GET" and "uploadId" in query:
                    stats["listParts"] += 1
                elif self.command == "GET" and query.get("list-type") == ["2"]:
                    stats["listObjects"] += 1
                elif self.command == "HEAD":
                    stats["heads"] += 1
                elif self.command == "PUT":
                    stats["singlePuts"] += 1
                fail = is_part and int(query["partNumber"][0]) in failing
                if fail:
                    failing.discard(int(query["partNumber"][0]))
            refused = refuse_listing.is_set() and "uploads" in query
            refused = refused or (refuse_object_listing.is_set() and query.get("list-type") == ["2"])
            if self.command == "GET" and refused:
                data = b'<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>'
                self.answer(403, data, "application/xml")
                return
            if fail:
                data = b'<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>'
                self.answer(503, data, "application/xml")
                return
            was_held = is_part and not released.is_set()
            if was_held:
                with lock:
                    stats["held"] += 1
                    unanswered_held[0] += 1
                released.wait()
                with lock:
                    stats["held"] -= 1
            try:
                self.forward(query, body, is_part)
            finally:
                if was_held:
                    with lock:
                        unanswered_held[0] -= 1
                        answered.notify_all()

        def forward(self, query, body, is_part):
            if query.get("uploadId", [""])[0] in gone and self.command != "DELETE":
                data = b'<?xml version="1.0"?><Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>'
                self.answer(404, data, "application/xml")
                return
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=300)
            connection.request(self.command, self.path, body=body, headers={k: v for k, v in self.headers.items()})
            answer = connection.getresponse()
            data = answer.read()
            if is_part and 200 <= answer.status < 300:
                with lock:
                    stats["stored"] += 1
                    if hold_after[0] is not None and stats["stored"] >= hold_after[0]:
                        hold_after[0] = None
                        released.clear()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                    self.send_header(name, value)
            self.send_header("Content-Length", answer.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            connection.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("listening", flush=True)
    sys.stdin.read()  # until the test closes stdin or kills the process
    released.set()
    server.shutdown()


def main():
    command = sys.argv[1]
    if command == "proxy":
        proxy(int(sys.argv[2]), sys.argv[3])
        return
    endpoint, bucket, key = sys.argv[2], sys.argv[3], sys.argv[4]
    s3 = client(endpoint)
    if command == "parts":
        found = {}
        for upload in uploads_of(s3, bucket, key):
            parts = s3.list_parts(Bucket=bucket, Key=key, UploadId=upload).get("Parts", [])
            found[upload] = [part["PartNumber"] for part in parts]
        print(json.dumps(found))
    elif command == "abort":
        ids = uploads_of(s3, bucket, key)
        for upload in ids:
            s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload)
        print(json.dumps(ids))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
