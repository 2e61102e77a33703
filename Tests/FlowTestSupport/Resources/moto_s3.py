#!/usr/bin/env python3
"""A real S3 API on loopback for Flow's tests: moto's server in its signature-checking mode.

  moto_s3.py serve PORT
      Runs moto's server on 127.0.0.1:PORT with INITIAL_NO_AUTH_ACTION_COUNT=4: the four set-up
      requests below go unsigned, every later request must be signed by an IAM user's key.
  moto_s3.py setup ENDPOINT BUCKET
      Creates the IAM user `flow` with an S3 policy and an access key, and BUCKET; prints
      {"accessKeyID": ..., "secretAccessKey": ...}. Exactly four requests.
  moto_s3.py get ENDPOINT BUCKET KEY OUT          (signed with AWS_ACCESS_KEY_ID/SECRET from the environment)
  moto_s3.py list ENDPOINT BUCKET                 keys and sizes, as JSON
  moto_s3.py uploads ENDPOINT BUCKET              multipart uploads in progress, as JSON
  moto_s3.py create-bucket ENDPOINT BUCKET        makes BUCKET
  moto_s3.py delete-bucket ENDPOINT BUCKET        aborts BUCKET's uploads, deletes its objects, then BUCKET
      get, list, uploads, create-bucket and delete-bucket speak plain S3: CephRGWServer uses them on a Ceph gateway.
  moto_s3.py proxy PORT UPSTREAM FAIL_PARTS [FAIL_ABORTS]
      A proxy on 127.0.0.1:PORT in front of UPSTREAM that answers the first try of each part number
      in FAIL_PARTS (comma-separated, e.g. "2,3") with 503 SlowDown, the first FAIL_ABORTS
      multipart aborts (DELETE ?uploadId) with 500 InternalError, and forwards everything else
      as it is (Host included, so signatures stay valid). GET /_proxy_stats gives tries per part
      and, under "aborts", how many aborts it saw.
"""
import json
import os
import sys


def client(service, endpoint, signed=True):
    import boto3
    from botocore.config import Config

    kwargs = dict(endpoint_url=endpoint, region_name="us-east-1", config=Config(retries={"max_attempts": 1}))
    if not signed:
        kwargs.update(aws_access_key_id="setup", aws_secret_access_key="setup")
    return boto3.client(service, **kwargs)


def main():
    command = sys.argv[1]
    if command == "serve":
        os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "4"
        from moto.server import ThreadedMotoServer

        server = ThreadedMotoServer(ip_address="127.0.0.1", port=int(sys.argv[2]), verbose=False)
        server.start()
        print("listening", flush=True)
        sys.stdin.read()  # until the test closes stdin or kills the process
        server.stop()
        return
    if command == "proxy":
        fail_aborts = int(sys.argv[5]) if len(sys.argv) > 5 else 0
        proxy(int(sys.argv[2]), sys.argv[3], {int(n) for n in sys.argv[4].split(",") if n}, fail_aborts)
        return
    endpoint, bucket = sys.argv[2], sys.argv[3]
    if command == "setup":
        iam = client("iam", endpoint, signed=False)
        iam.create_user(UserName="flow")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        iam.put_user_policy(UserName="flow", PolicyName="s3", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="flow")["AccessKey"]
        client("s3", endpoint, signed=False).create_bucket(Bucket=bucket)
        print(json.dumps({"accessKeyID": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}))
        return
    s3 = client("s3", endpoint)
    if command == "get":
        with open(sys.argv[5], "wb") as out:
            out.write(s3.get_object(Bucket=bucket, Key=sys.argv[4])["Body"].read())
    elif command == "list":
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        print(json.dumps({item["Key"]: item["Size"] for page in pages for item in page.get("Contents", [])}))
    elif command == "uploads":
        answer = s3.list_multipart_uploads(Bucket=bucket)
        print(json.dumps([{"key": item["Key"], "uploadId": item["UploadId"]} for item in answer.get("Uploads", [])]))
    elif command == "start-upload":
        upload = s3.create_multipart_upload(Bucket=bucket, Key=sys.argv[4])["UploadId"]
        s3.upload_part(Bucket=bucket, Key=sys.argv[4], UploadId=upload, PartNumber=1, Body=b"x" * (5 << 20))
        print(upload)
    elif command == "create-bucket":
        s3.create_bucket(Bucket=bucket)
    elif command == "delete-bucket":
        for upload in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
            s3.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
        # One by one: DeleteObjects needs a body checksum that not every store takes in boto3's form.
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for item in page.get("Contents", []):
                s3.delete_object(Bucket=bucket, Key=item["Key"])
        s3.delete_bucket(Bucket=bucket)
    else:
        sys.exit("unknown command " + command)


def proxy(port, upstream, fail_parts, fail_aborts=0):
    import http.client
    import threading
    import urllib.parse
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    target = urllib.parse.urlparse(upstream)
    tries = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def fail(self, status, code, message):
            data = ('<?xml version="1.0"?><Error><Code>%s</Code><Message>%s</Message></Error>' % (code, message)).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.path == "/_proxy_stats":
                data = json.dumps({str(k): v for k, v in tries.items()}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
            if self.command == "DELETE" and "uploadId" in query:
                with lock:
                    tries["aborts"] = tries.get("aborts", 0) + 1
                    failing = tries["aborts"] <= fail_aborts
                if failing:
                    self.fail(500, "InternalError", "We encountered an internal error. Please try again.")
                    return
            if self.command == "PUT" and "partNumber" in query:
                number = int(query["partNumber"][0])
                with lock:
                    tries[number] = tries.get(number, 0) + 1
                    first = tries[number] == 1
                if first and number in fail_parts:
                    self.fail(503, "SlowDown", "Please reduce your request rate.")
                    return
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
            headers = {k: v for k, v in self.headers.items()}
            connection.request(self.command, self.path, body=body, headers=headers)
            answer = connection.getresponse()
            data = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                    self.send_header(name, value)
            # A HEAD answer's length is the object's, not that of its (empty) body.
            self.send_header("Content-Length", answer.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            connection.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("listening", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
