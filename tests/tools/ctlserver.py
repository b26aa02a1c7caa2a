#!/usr/bin/env python3
"""A STAND-IN for the hook's control socket (docs/control.md), for what a
real hooked process never sends: the host side's tests (t-ctl.sh,
t-watch.sh, t-adb.sh) run every normal case against the real hook, and this
only for answers cut short, malformed or garbage, an error text with
control bytes, a dump error on demand and a dump streamed slowly.  It
listens where the hook would (the abstract name leaksnap.<its own pid>, or
--path) and answers the protocol's commands, serving real dump files as the
bodies of `dump`.  Every test that uses it says so in its comment.

  ctlserver.py [--path SOCKET] [--dump FILE]... [--mode MODE]
               [--ready FILE] [--log FILE] [--slow SEC]

--dump FILE     the body of the n-th dump asked for is the n-th FILE (the
                last one again after that)
--ready FILE    write our pid to FILE once listening
--log FILE      append every command line received
--slow SEC      send each dump's body over SEC seconds, touching
                READY.inflight when the body starts
MODE: normal, closeline (half an answer
line, then close), closebody (half a dump's body, then close), badlength
("dump 12x"), hugelength (2^40 + 1), nonewline (5000 bytes, no newline),
errordump ("error dump: ..."), garbage (a body that is not a dump),
badstats (a stats object without its fields), badversion, escape (an
error answer with terminal control bytes).
"""
import os
import signal
import socket
import sys
import threading
import time


def main():
    args = sys.argv[1:]
    path = None
    dumps = []
    mode = "normal"
    ready = None
    log = None
    slow = 0.0
    while args:
        a = args.pop(0)
        if a == "--path":
            path = args.pop(0)
        elif a == "--dump":
            dumps.append(args.pop(0))
        elif a == "--mode":
            mode = args.pop(0)
        elif a == "--ready":
            ready = args.pop(0)
        elif a == "--log":
            log = args.pop(0)
        elif a == "--slow":
            slow = float(args.pop(0))
        else:
            sys.exit("ctlserver: unknown argument " + a)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    pid = os.getpid()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if path:
        srv.bind(path)
    else:
        srv.bind("\0leaksnap.%d" % pid)
    srv.listen(16)
    if ready:
        with open(ready + ".tmp", "w") as f:
            f.write("%d\n" % pid)
        os.rename(ready + ".tmp", ready)
    state = {"dumps": 0, "lock": threading.Lock(), "capture": True}

    def say(conn, text):
        conn.sendall(text.encode() + b"\n")

    def body_of(n):
        with open(dumps[min(n, len(dumps) - 1)], "rb") as f:
            return f.read()

    def dump(conn):
        with state["lock"]:
            n = state["dumps"]
            state["dumps"] += 1
        if mode == "errordump":
            say(conn, "error dump: cannot read /proc/self/maps")
            return
        if mode == "badlength":
            say(conn, "dump 12x")
            return
        if mode == "hugelength":
            say(conn, "dump %d" % ((1 << 40) + 1))
            return
        body = b"this is not a dump, only some bytes" if mode == "garbage" else body_of(n)
        say(conn, "dump %d" % len(body))
        if mode == "closebody":
            conn.sendall(body[: len(body) // 2])
            raise ConnectionError
        if slow > 0:
            if ready:
                open(ready + ".inflight", "w").close()
            parts = 10
            step = (len(body) + parts - 1) // parts
            for i in range(0, len(body), step):
                conn.sendall(body[i : i + step])
                time.sleep(slow / parts)
        else:
            conn.sendall(body)

    def answer(conn, line):
        if log:
            with open(log, "a") as f:
                f.write(line + "\n")
        if line == "":
            return True
        if len(line) > 255:
            say(conn, "error line too long")
        elif line == "version":
            if mode == "badversion":
                say(conn, "leaksnap-control 2 9.9.9 %d" % pid)
            elif mode == "closeline":
                conn.sendall(b"leaksnap-con")
                return False
            else:
                say(conn, "leaksnap-control 1 0.1.0 %d" % pid)
        elif line == "stats":
            if mode == "badstats":
                say(conn, '{"pid":%d,"live_bytes":"many"}' % pid)
            elif mode == "nonewline":
                conn.sendall(b"x" * 5000)
            else:
                say(conn, '{"pid":%d,"live_bytes":%d,"live_blocks":%d,"records":%d,'
                    '"capture":%s,"dumps_written":%d,"invalid_frees":0}'
                    % (pid, 4096 + 1000 * state["dumps"], 7 + state["dumps"], 3,
                       "true" if state["capture"] else "false", state["dumps"]))
        elif line in ("dump", "dump reachability"):
            dump(conn)
        elif line in ("capture on", "capture off"):
            if mode == "escape":
                say(conn, "error \x1b[31mred\x07 text")
            else:
                state["capture"] = line == "capture on"
                say(conn, "ok " + line)
        elif line == "quit":
            say(conn, "ok quit")
            return False
        else:
            say(conn, "error unknown command")
        return True

    def serve(conn):
        try:
            buf = b""
            while True:
                data = conn.recv(4096)
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    raw, buf = buf.split(b"\n", 1)
                    line = raw.decode("latin-1").rstrip("\r")
                    if not answer(conn, line):
                        return
        except (ConnectionError, BrokenPipeError):
            pass
        finally:
            conn.close()

    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
