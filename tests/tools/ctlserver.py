#!/usr/bin/env python3
"""A STAND-IN for the hook's control socket (docs/control.md), for the host
side's tests until they run against a real hooked process: it listens where
the hook would (the abstract name leaksnap.<its own pid>, or --path) and
answers the protocol's commands, serving real dump files as the bodies of
`dump`.  Every test that uses it says so in its name or comment.

  ctlserver.py [--path SOCKET] [--dump FILE]... [--mode MODE] [--exit-after N]
               [--ready FILE] [--log FILE] [--require-env] [--slow SEC]
               [--name-pid PID] [--busy N]

--dump FILE     the body of the n-th dump asked for is the n-th FILE (the
                last one again after that)
--exit-after N  exit once N dumps were sent (as a process that ends)
--ready FILE    write our pid to FILE once listening
--log FILE      append every command line received
--require-env   refuse to start (exit 3) unless LEAKSNAP_CONTROL=1, as the
                hook opens the socket only then
--slow SEC      send each dump's body over SEC seconds, touching
                READY.inflight when the body starts
--name-pid PID  listen on leaksnap.PID, a name of another process's (a
                squatter)
--busy N        the first N connections get "error busy" and are closed
                (a process serving as many clients as it takes)
MODE: normal, refuse (close without a byte, as a process of another user:
the stand-in makes /proc/ITS-PID belong to another user -- root: its euid
becomes 65534; anyone else: it is made not dumpable, which gives /proc/PID
to root), drop (close without a byte, the same user: a hook that stops or a
process that exits), exiting (after --exit-after N dumps, every dump
answered "error dump: the process is exiting", as while the hook writes
its exit dump), escversion (a version word with terminal control bytes),
unicodestats (a stats object with a non-ASCII string), closeline (half an answer
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


def other_owner():
    """/proc/OUR-PID owned by another user than the client's (see refuse)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_DUMPABLE = 4
    if os.geteuid() == 0:
        os.seteuid(65534)
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    else:
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def main():
    args = sys.argv[1:]
    path = None
    dumps = []
    mode = "normal"
    exit_after = 0
    ready = None
    log = None
    require_env = False
    slow = 0.0
    name_pid = None
    busy = 0
    while args:
        a = args.pop(0)
        if a == "--path":
            path = args.pop(0)
        elif a == "--dump":
            dumps.append(args.pop(0))
        elif a == "--mode":
            mode = args.pop(0)
        elif a == "--exit-after":
            exit_after = int(args.pop(0))
        elif a == "--ready":
            ready = args.pop(0)
        elif a == "--log":
            log = args.pop(0)
        elif a == "--require-env":
            require_env = True
        elif a == "--slow":
            slow = float(args.pop(0))
        elif a == "--name-pid":
            name_pid = int(args.pop(0))
        elif a == "--busy":
            busy = int(args.pop(0))
        else:
            sys.exit("ctlserver: unknown argument " + a)
    if require_env and os.environ.get("LEAKSNAP_CONTROL") != "1":
        sys.exit(3)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    pid = os.getpid()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if path:
        srv.bind(path)
    else:
        srv.bind("\0leaksnap.%d" % (name_pid or pid))
    srv.listen(16)
    if ready:
        with open(ready + ".tmp", "w") as f:
            f.write("%d\n" % pid)
        os.rename(ready + ".tmp", ready)
    if mode == "refuse":
        other_owner()
    state = {"dumps": 0, "lock": threading.Lock(), "capture": True, "conns": 0}

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
        if mode == "exiting" and n >= exit_after:
            say(conn, "error dump: the process is exiting")
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
        if exit_after and state["dumps"] >= exit_after and mode != "exiting":
            conn.close()
            if path:
                os.unlink(path)
            os._exit(0)

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
            elif mode == "escversion":
                say(conn, "leaksnap-control 1 0.1\x1b]0;owned\x07 %d" % pid)
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
            elif mode == "unicodestats":
                conn.sendall(('{"pid":%d,"live_bytes":1,"live_blocks":1,"records":1,'
                              '"capture":true,"dumps_written":0,"invalid_frees":0,'
                              '"note":"caf\u00e9 \u202e"}\n' % pid).encode("utf-8"))
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
            if mode in ("refuse", "drop"):
                return
            with state["lock"]:
                state["conns"] += 1
                if state["conns"] <= busy:
                    say(conn, "error busy")
                    return
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
