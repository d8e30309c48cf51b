#!/usr/bin/env python3
"""Lab traffic: one real Linux TCP transfer in each direction.

server PORT FAMILY READY_FILE SEND_BYTES
    Listen on PORT (FAMILY 4 or 6), write READY_FILE once listening, accept
    one connection, read until the client half-closes, then send SEND_BYTES
    and close.
client ADDR PORT FAMILY SEND_BYTES [--tos N] [--bind-port P]
    Connect, send SEND_BYTES, half-close, read the reply until EOF.
    --tos sets the IPv4 TOS byte / IPv6 traffic class of the client's packets.

Both sides print the byte counts they moved; a short read is an error.
Only used inside the lab's network namespaces.
"""
import socket
import sys

CHUNK = 16384
TIMEOUT_S = 20


def family_of(arg):
    return socket.AF_INET6 if arg == "6" else socket.AF_INET


def send_all(sock, count):
    block = bytes((i * 7 + 3) & 0xFF for i in range(CHUNK))
    sent = 0
    while sent < count:
        n = min(CHUNK, count - sent)
        sock.sendall(block[:n])
        sent += n
    return sent


def recv_all(sock):
    total = 0
    while True:
        data = sock.recv(65536)
        if not data:
            return total
        total += len(data)


def server(port, fam, ready_file, send_bytes):
    family = family_of(fam)
    lsock = socket.socket(family, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.settimeout(TIMEOUT_S)
    lsock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    lsock.listen(4)
    with open(ready_file, "w") as f:
        f.write("ready\n")
    conn, peer = lsock.accept()
    conn.settimeout(TIMEOUT_S)
    got = recv_all(conn)
    sent = send_all(conn, send_bytes)
    conn.shutdown(socket.SHUT_WR)
    recv_all(conn)
    conn.close()
    print(f"server: peer {peer[0]} port {peer[1]} received {got} sent {sent}")


def client(addr, port, fam, send_bytes, tos, bind_port):
    family = family_of(fam)
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(TIMEOUT_S)
    if tos is not None:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
        else:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    if bind_port is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", bind_port))
    sock.connect((addr, port))
    sent = send_all(sock, send_bytes)
    sock.shutdown(socket.SHUT_WR)
    got = recv_all(sock)
    sock.close()
    print(f"client: sent {sent} received {got}")
    return got


def main(argv):
    if len(argv) >= 5 and argv[0] == "server":
        server(int(argv[1]), argv[2], argv[3], int(argv[4]))
        return 0
    if len(argv) >= 5 and argv[0] == "client":
        tos = None
        bind_port = None
        rest = argv[5:]
        while rest:
            if rest[0] == "--tos" and len(rest) > 1:
                tos = int(rest[1], 0)
            elif rest[0] == "--bind-port" and len(rest) > 1:
                bind_port = int(rest[1])
            else:
                print(f"unknown argument {rest[0]}", file=sys.stderr)
                return 2
            rest = rest[2:]
        client(argv[1], int(argv[2]), argv[3], int(argv[4]), tos, bind_port)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
