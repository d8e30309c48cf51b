#!/usr/bin/env python3
"""Lab traffic: one real Linux TCP transfer in each direction.

server PORT FAMILY READY_FILE SEND_BYTES [SOCKET OPTIONS]
    Listen on PORT (FAMILY 4 or 6), write READY_FILE once listening, accept
    one connection, read until the client half-closes, then send SEND_BYTES
    and close.
client ADDR PORT FAMILY SEND_BYTES [--tos N] [--bind-port P] [SOCKET OPTIONS]
    Connect, send SEND_BYTES, half-close, read the reply until EOF.
    --tos sets the IPv4 TOS byte / IPv6 traffic class of the client's packets.

Socket options, either side:
    --rcvbuf N / --sndbuf N   SO_RCVBUF / SO_SNDBUF before connecting (the
                              kernel doubles the value and stops autotuning)
    --write-delay-ms D        sleep D ms between 16 KB writes (a slow application)
    --chunk-min N, --chunk-max N
                              with --write-delay-ms: each write a chunk of N
                              bytes drawn between the two (uniformly, seed 30:
                              every run writes the same chunks), a writer
                              pausing between chunks of varying size
    --cc NAME                 congestion control (TCP_CONGESTION: cubic, reno, bbr)
    --info FILE               once everything this side sent is acknowledged,
                              write its TCP_INFO chrono counters as JSON: the
                              kernel's own account of what limited the sender

Both sides print the byte counts they moved; a short read is an error.
Only used inside the lab's network namespaces.
"""
import json
import random
import socket
import struct
import sys
import time

CHUNK = 16384
TIMEOUT_S = 20


def family_of(arg):
    return socket.AF_INET6 if arg == "6" else socket.AF_INET


def send_all(sock, count, delay_ms=0, chunks=None):
    size = max(CHUNK, chunks[1] if chunks else 0)
    block = bytes((i * 7 + 3) & 0xFF for i in range(size))
    rng = random.Random(30)
    sent = 0
    while sent < count:
        n = rng.randint(chunks[0], chunks[1]) if chunks else CHUNK
        n = min(n, count - sent)
        sock.sendall(block[:n])
        sent += n
        if delay_ms and sent < count:
            time.sleep(delay_ms / 1000.0)
    return sent


# struct tcp_info (include/uapi/linux/tcp.h), the fields used here:
# byte offset, struct format.
TCPI_FIELDS = {
    "unacked": (24, "I"),
    "snd_mss": (16, "I"),
    "rtt_us": (68, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "bytes_acked": (120, "Q"),
    "notsent_bytes": (144, "I"),
    "min_rtt_us": (148, "I"),
    "busy_us": (168, "Q"),
    "rwnd_limited_us": (176, "Q"),
    "sndbuf_limited_us": (184, "Q"),
}
TCPI_LEN = 192


def tcp_info(sock):
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    if len(raw) < TCPI_LEN:
        raise RuntimeError(f"TCP_INFO too short ({len(raw)} bytes) for the chrono counters")
    info = {k: struct.unpack_from("=" + f, raw, off)[0] for k, (off, f) in TCPI_FIELDS.items()}
    info["snd_wscale"] = raw[6] & 0x0F
    info["rcv_wscale"] = raw[6] >> 4
    return info


def write_info(sock, path):
    """Waits (up to 5 s) until all sent data is acknowledged, then writes TCP_INFO."""
    if not path:
        return
    deadline = time.time() + 5
    info = tcp_info(sock)
    while (info["unacked"] or info["notsent_bytes"]) and time.time() < deadline:
        time.sleep(0.01)
        info = tcp_info(sock)
    with open(path, "w") as f:
        json.dump(info, f)
        f.write("\n")


def apply_buffers(sock, opts):
    if opts.get("cc"):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, opts["cc"].encode())
    if opts.get("rcvbuf"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, opts["rcvbuf"])
    if opts.get("sndbuf"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, opts["sndbuf"])


def chunks_of(opts):
    """(least, most) bytes per write, or None for 16 KB writes."""
    if "chunk_min" not in opts and "chunk_max" not in opts:
        return None
    lo = opts.get("chunk_min", CHUNK)
    hi = opts.get("chunk_max", lo)
    if not 0 < lo <= hi:
        raise ValueError(f"chunk sizes {lo}..{hi}")
    return (lo, hi)


def recv_all(sock):
    total = 0
    while True:
        data = sock.recv(65536)
        if not data:
            return total
        total += len(data)


def server(port, fam, ready_file, send_bytes, opts):
    family = family_of(fam)
    lsock = socket.socket(family, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit the listener's buffer settings.
    apply_buffers(lsock, opts)
    lsock.settimeout(TIMEOUT_S)
    lsock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    lsock.listen(4)
    with open(ready_file, "w") as f:
        f.write("ready\n")
    conn, peer = lsock.accept()
    conn.settimeout(TIMEOUT_S)
    got = recv_all(conn)
    sent = send_all(conn, send_bytes, opts.get("delay_ms", 0), chunks_of(opts))
    conn.shutdown(socket.SHUT_WR)
    write_info(conn, opts.get("info"))
    recv_all(conn)
    conn.close()
    print(f"server: peer {peer[0]} port {peer[1]} received {got} sent {sent}")


def client(addr, port, fam, send_bytes, tos, bind_port, opts):
    family = family_of(fam)
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(TIMEOUT_S)
    apply_buffers(sock, opts)
    if tos is not None:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
        else:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    if bind_port is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", bind_port))
    sock.connect((addr, port))
    sent = send_all(sock, send_bytes, opts.get("delay_ms", 0), chunks_of(opts))
    sock.shutdown(socket.SHUT_WR)
    write_info(sock, opts.get("info"))
    got = recv_all(sock)
    sock.close()
    print(f"client: sent {sent} received {got}")
    return got


def parse_opts(rest, client_side):
    opts = {"tos": None, "bind_port": None}
    while rest:
        if len(rest) < 2:
            raise ValueError(f"argument {rest[0]} needs a value")
        key, val = rest[0], rest[1]
        if key == "--tos" and client_side:
            opts["tos"] = int(val, 0)
        elif key == "--bind-port" and client_side:
            opts["bind_port"] = int(val)
        elif key == "--rcvbuf":
            opts["rcvbuf"] = int(val)
        elif key == "--sndbuf":
            opts["sndbuf"] = int(val)
        elif key == "--write-delay-ms":
            opts["delay_ms"] = int(val)
        elif key == "--chunk-min":
            opts["chunk_min"] = int(val)
        elif key == "--chunk-max":
            opts["chunk_max"] = int(val)
        elif key == "--cc":
            opts["cc"] = val
        elif key == "--info":
            opts["info"] = val
        else:
            raise ValueError(f"unknown argument {key}")
        rest = rest[2:]
    return opts


def main(argv):
    try:
        if len(argv) >= 5 and argv[0] == "server":
            opts = parse_opts(argv[5:], False)
            server(int(argv[1]), argv[2], argv[3], int(argv[4]), opts)
            return 0
        if len(argv) >= 5 and argv[0] == "client":
            opts = parse_opts(argv[5:], True)
            client(argv[1], int(argv[2]), argv[3], int(argv[4]), opts["tos"], opts["bind_port"], opts)
            return 0
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
