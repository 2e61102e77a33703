#!/usr/bin/env python3
"""A real HTTP server on 127.0.0.1 that stores PUT bodies and injects faults, for upload tests.

Usage: faulty_http_server.py ROOT RULES_JSON
Prints "listening on PORT" once it accepts connections. With FAULTY_TLS_CERT and FAULTY_TLS_KEY
(PEM files) in its environment it speaks HTTPS.

RULES_JSON is a list of rules tried in order for each PUT; the first that matches acts:
  {"kind": "503", "every": 10}                      every 10th PUT (1-based counter over all PUTs)
  {"kind": "503", "retryAfter": 1, "first": 1}       the first try of every path
  {"kind": "reset-before", "every": 7}              reset the connection before reading the body
  {"kind": "reset-during", "every": 5}              read half the body, then reset
  {"kind": "stall", "seconds": 30, "first": 1}      hold the request that long before reading its body
                                                    (with "untilReleased": true, or until GET /_release)
  {"kind": "hold", "seconds": 60}                   read the body, then hold the answer that long, or
                                                    until the client closes the connection (its
                                                    thread then ends: no pile-up of held requests)
  {"kind": "403", "names": ["secret.txt"]}          refuse these file names every time
  {"kind": "503", "abovePerSecond": 300}            S3's SlowDown: a PUT when more than 300 arrived
                                                    in the second before it
Selectors: "every": N (global PUT counter), "upTo": N (only the first N PUTs, by that counter),
"first": K (the first K tries of each path),
"names": [...] (file names), "abovePerSecond": N (PUTs in the last second). A rule with several
selectors needs all of them. A 503 answers S3's SlowDown error body.

GET /_stats answers JSON: {"puts": n, "byPath": {path: tries}, "stored": {path: bytes},
"status": {code: count}, "inFlight": n, "maxInFlight": n, "held": n (requests in a stall that
waits for /_release now), "times": [[arrival, status], ...]}.
"""
import json
import os
import select
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
RULES = json.loads(sys.argv[2]) if len(sys.argv) > 2 else []
# Set by GET /_release: ends the stalls of rules with "untilReleased".
RELEASED = threading.Event()
LOCK = threading.Lock()
STATS = {"puts": 0, "byPath": {}, "stored": {}, "status": {}, "inFlight": 0, "maxInFlight": 0, "held": 0, "times": []}
RECENT = []  # arrival times of the PUTs of the last second


def matches(rule, counter, tries, name, recent=0):
    if "abovePerSecond" in rule and recent <= rule["abovePerSecond"]:
        return False
    if "every" in rule and counter % rule["every"] != 0:
        return False
    if "upTo" in rule and counter > rule["upTo"]:
        return False
    if "first" in rule and tries > rule["first"]:
        return False
    if "names" in rule and name not in rule["names"]:
        return False
    return True


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def count(self, status):
        with LOCK:
            STATS["status"][str(status)] = STATS["status"].get(str(status), 0) + 1
            if self.command == "PUT" and isinstance(status, int):
                STATS["times"].append([getattr(self, "arrived", time.time()), status])

    def answer(self, status, body=b"", headers=None):
        self.count(status)
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def reset(self):
        # SO_LINGER 0: close sends RST, as a crashed or overloaded server would.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True
        self.count("reset")

    def do_GET(self):
        if self.path == "/_release":
            RELEASED.set()
            self.answer(200, b"released")
        elif self.path == "/_stats":
            with LOCK:
                body = json.dumps(STATS).encode()
            self.answer(200, body, {"Content-Type": "application/json"})
        else:
            self.answer(404, b"not found")

    def hold(self, seconds):
        """Waits `seconds`; False as soon as the client closes its end (it gave up)."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return False
                except (OSError, ValueError):
                    return False
        return True

    def store(self, body):
        target = os.path.join(ROOT, self.path.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target + ".partial", "wb") as out:
            out.write(body)
        os.replace(target + ".partial", target)
        with LOCK:
            STATS["stored"][self.path] = len(body)
        self.answer(201)

    def do_PUT(self):
        length = int(self.headers.get("Content-Length", "0"))
        name = os.path.basename(self.path)
        self.arrived = time.time()
        with LOCK:
            RECENT.append(self.arrived)
            while RECENT and RECENT[0] < self.arrived - 1:
                RECENT.pop(0)
            recent = len(RECENT) - 1
            STATS["puts"] += 1
            counter = STATS["puts"]
            tries = STATS["byPath"].get(self.path, 0) + 1
            STATS["byPath"][self.path] = tries
            STATS["inFlight"] += 1
            STATS["maxInFlight"] = max(STATS["maxInFlight"], STATS["inFlight"])
        try:
            for rule in RULES:
                if not matches(rule, counter, tries, name, recent):
                    continue
                kind = rule["kind"]
                if kind == "reset-before":
                    return self.reset()
                if kind == "reset-during":
                    self.rfile.read(length // 2)
                    return self.reset()
                if kind == "hold":
                    body = self.rfile.read(length)
                    if not self.hold(rule.get("seconds", 30)):
                        self.close_connection = True
                        return
                    return self.store(body)
                if kind == "stall":
                    deadline = time.time() + rule.get("seconds", 30)
                    waits = bool(rule.get("untilReleased")) and not RELEASED.is_set()
                    if waits:
                        with LOCK:
                            STATS["held"] += 1
                    try:
                        while time.time() < deadline and not (rule.get("untilReleased") and RELEASED.is_set()):
                            time.sleep(0.05)
                    finally:
                        if waits:
                            with LOCK:
                                STATS["held"] -= 1
                    break
                self.rfile.read(length)
                if kind == "503":
                    headers = {"Retry-After": str(rule["retryAfter"])} if "retryAfter" in rule else {}
                    body = b"SlowDown: Please reduce your request rate." if "abovePerSecond" in rule else b"busy, try later"
                    return self.answer(503, body, headers)
                if kind == "403":
                    return self.answer(403, b"forbidden: " + name.encode())
            remaining = length
            target = os.path.join(ROOT, self.path.lstrip("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            partial = target + ".partial"
            with open(partial, "wb") as out:
                while remaining > 0:
                    chunk = self.rfile.read(min(remaining, 1 << 20))
                    if not chunk:
                        return
                    out.write(chunk)
                    remaining -= len(chunk)
            os.replace(partial, target)
            with LOCK:
                STATS["stored"][self.path] = length
            self.answer(201)
        except (ConnectionError, OSError):
            self.close_connection = True
        finally:
            with LOCK:
                STATS["inFlight"] -= 1


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        pass  # a client that gave up (or refused the certificate) is not the server's error


def main():
    server = Server(("127.0.0.1", 0), Handler)
    # HTTPS with FAULTY_TLS_CERT and FAULTY_TLS_KEY (PEM files); the handshake happens in the
    # request's thread, where a client refusing the certificate ends only that connection.
    if os.environ.get("FAULTY_TLS_CERT"):
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.environ["FAULTY_TLS_CERT"], os.environ["FAULTY_TLS_KEY"])
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
