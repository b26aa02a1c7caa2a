#!/usr/bin/env python3
"""`adb forward tcp:0 localabstract:NAME` for tests/fake-adb: listen on
127.0.0.1 on a port the system picks, print that port as adb does, and
bridge each connection to the abstract Unix socket NAME of this host.  As
adb, a connection whose other end cannot be reached is closed at once,
without a byte.  Runs until killed (`adb forward --remove tcp:PORT`).

  adbforward.py NAME
"""
import signal
import socket
import sys
import threading


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def bridge(client, name):
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        peer.connect("\0" + name)
    except OSError:
        client.close()
        peer.close()
        return
    t = threading.Thread(target=pump, args=(peer, client), daemon=True)
    t.start()
    pump(client, peer)
    t.join()
    client.close()
    peer.close()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: adbforward.py NAME")
    name = sys.argv[1]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    print(srv.getsockname()[1], flush=True)
    while True:
        client, _ = srv.accept()
        threading.Thread(target=bridge, args=(client, name), daemon=True).start()


if __name__ == "__main__":
    main()
