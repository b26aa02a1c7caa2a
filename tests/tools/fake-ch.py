#!/usr/bin/env python3
"""A fake ClickHouse HTTP server that misbehaves, for tests/t-store-ch-net.sh.
Usage: fake-ch.py MODE PORTFILE [UPSTREAM].  Listens on 127.0.0.1 (a free port, written
to PORTFILE) and answers every request as MODE says:
  endless  HTTP 200, a body that never ends
  stall    accepts, reads the request, never answers
  drip     HTTP 200 headers, then one byte each half second
  binary   HTTP 200, bytes that are not TabSeparated text
  columns  HTTP 200, rows of the wrong number of columns
  marker   forwards each request to the server at UPSTREAM (HOST:PORT),
           except the one after each INSERT INTO ingests (a write's
           completion marker): that one fails (HTTP 500, a server's error)
The user and password of each request's basic authentication (decoded)
are appended to PORTFILE.auth, a line each."""
import base64
import urllib.parse
import os
import socket
import sys
import threading
import time

mode, portfile = sys.argv[1], sys.argv[2]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(8)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.getsockname()[1])
os.rename(portfile + ".tmp", portfile)


def read_request(c):
    data = b""
    while b"\r\n\r\n" not in data:
        got = c.recv(65536)
        if not got:
            return None
        data += got
    head, _, body = data.partition(b"\r\n\r\n")
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
        if line.lower().startswith(b"authorization: basic "):
            with open(portfile + ".auth", "ab") as f:
                f.write(base64.b64decode(line[21:].strip()) + b"\n")
    while len(body) < n:
        got = c.recv(65536)
        if not got:
            return None
        body += got
    return head, body


after_marker = [False]
lock = threading.Lock()


def forward(c, head, body):
    lines = head.split(b"\r\n")
    query = urllib.parse.unquote_to_bytes(lines[0].split(b" ")[1])
    with lock:
        fail = after_marker[0]
        after_marker[0] = b"query=INSERT INTO ingests" in query
    if fail:
        text = b"Code: 999. DB::Exception: injected after the marker. (INJECTED)\n"
        c.sendall(b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(text) + text)
        return
    lines = [l for l in lines if not l.lower().startswith(b"connection:")]
    host, port = sys.argv[3].rsplit(":", 1)
    up = socket.create_connection((host, int(port)))
    up.sendall(b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n" + body)
    answer = b""
    while True:
        got = up.recv(1 << 20)
        if not got:
            break
        answer += got
    up.close()
    h, _, rest = answer.partition(b"\r\n\r\n")
    h = b"\r\n".join(l for l in h.split(b"\r\n")
                      if not l.lower().startswith(b"connection:") and
                      not l.lower().startswith(b"keep-alive:"))
    c.sendall(h + b"\r\nConnection: close\r\n\r\n" + rest)


def serve(c):
    try:
        req = read_request(c)
        if mode == "marker":
            if req:
                forward(c, *req)
            c.close()
            return
        if mode == "stall":
            time.sleep(3600)
            return
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/tab-separated-values\r\n"
                  b"Connection: close\r\n\r\n")
        if mode == "endless":
            chunk = b"x" * (1 << 20)
            while True:
                c.sendall(chunk)
        elif mode == "drip":
            while True:
                c.sendall(b"x")
                time.sleep(0.5)
        elif mode == "binary":
            c.sendall(bytes(range(256)) * 4)
        elif mode == "columns":
            c.sendall(b"runs\tstore_info\textra\nsnapshots\tx\n")
        c.close()
    except OSError:
        pass


while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
