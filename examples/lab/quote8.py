#!/usr/bin/env python3
"""Make a Linux router quote like an RFC 792 one: 8 bytes past the IP header.

Linux routers quote as much of the expired datagram as fits (RFC 1812;
ICMPv6 up to 1280 bytes, RFC 4443), so `firewall-check probe`'s handling of
minimal quotes cannot be seen on a line of Linux routers without help. This
program is that help, for the probe lab: run in a router's namespace, it
takes the router's own ICMP and ICMPv6 time-exceeded messages from an
NFQUEUE queue (the OUTPUT rules probe-lab.sh adds send them there), cuts
the quoted datagram to its IP header and the first 8 bytes of its payload
(for TCP: ports and sequence number), fixes the outer length and the
checksums, and hands the message back to the kernel (NF_ACCEPT with the new
payload). Every other packet is accepted unchanged.

It speaks nfnetlink_queue over a plain AF_NETLINK socket (Linux
include/uapi/linux/netfilter/nfnetlink_queue.h): bind the queue, ask for
whole packets, read NFQNL_MSG_PACKET messages, answer each with an
NFQNL_MSG_VERDICT. No library is needed.

usage: quote8.py QUEUE_NUM READY_FILE [delay=MS]
It writes READY_FILE once the queue is bound, then runs until killed; the
number of messages it cut goes to stderr at each one.

With delay=MS it cuts nothing: it holds each message MS milliseconds, then
accepts it unchanged (its log counts them: "quote8: delayed N"). A router
whose ICMP errors come late, as a real router's slow path can make them
come, for the probe lab's test that the path walk does not depend on when
the routers' quotes arrive.
"""

import os
import select
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET = 0
NFQNL_MSG_VERDICT = 1
NFQNL_MSG_CONFIG = 2
NFQA_CFG_CMD = 1
NFQA_CFG_PARAMS = 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_PACKET = 2
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NFQA_PAYLOAD = 10
NF_ACCEPT = 1
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2
NLMSG_DONE = 3


def attr(kind, data):
    """One netlink attribute, padded to 4 bytes."""
    n = 4 + len(data)
    return struct.pack("=HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)


def message(msg, queue, attrs, seq, flags=NLM_F_REQUEST):
    """An nfnetlink message of the queue subsystem (AF_UNSPEC, version 0)."""
    body = struct.pack("!BBH", socket.AF_UNSPEC, 0, queue) + b"".join(attrs)
    kind = (NFNL_SUBSYS_QUEUE << 8) | msg
    return struct.pack("=IHHII", 16 + len(body), kind, flags, seq, 0) + body


def attrs_of(data):
    """The attributes of a message body (after nfgenmsg), by type."""
    out = {}
    off = 0
    while off + 4 <= len(data):
        n, kind = struct.unpack_from("=HH", data, off)
        if n < 4 or off + n > len(data):
            break
        out[kind & 0x3FFF] = data[off + 4 : off + n]
        off += (n + 3) & ~3
    return out


def checksum(data):
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def cut_v4(p):
    """An ICMP time-exceeded in IPv4 `p`, its quote cut to header + 8."""
    if len(p) < 20 or p[0] >> 4 != 4 or p[9] != 1:
        return None
    ihl = (p[0] & 15) * 4
    icmp = p[ihl:]
    if len(icmp) < 8 + 20 or icmp[0] != 11:
        return None
    inner = icmp[8:]
    inner_ihl = (inner[0] & 15) * 4
    keep = inner_ihl + 8
    if len(inner) <= keep:
        return None
    # No RFC 4884 length: the quote is all that follows.
    icmp = bytearray(icmp[:5] + b"\0" + icmp[6:8] + inner[:keep])
    icmp[2:4] = b"\0\0"
    icmp[2:4] = struct.pack("!H", checksum(bytes(icmp)))
    ip = bytearray(p[:ihl])
    ip[2:4] = struct.pack("!H", ihl + len(icmp))
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", checksum(bytes(ip)))
    return bytes(ip + icmp)


def cut_v6(p):
    """An ICMPv6 time-exceeded in IPv6 `p` (no extension headers), its
    quote cut to the quoted IPv6 header + 8."""
    if len(p) < 40 or p[0] >> 4 != 6 or p[6] != 58:
        return None
    icmp = p[40:]
    if len(icmp) < 8 + 40 or icmp[0] != 3:
        return None
    keep = 40 + 8
    inner = icmp[8:]
    if len(inner) <= keep:
        return None
    icmp = bytearray(icmp[:4] + b"\0" + icmp[5:8] + inner[:keep])
    icmp[2:4] = b"\0\0"
    pseudo = p[8:40] + struct.pack("!I3xB", len(icmp), 58)
    icmp[2:4] = struct.pack("!H", checksum(pseudo + bytes(icmp)))
    ip = bytearray(p[:40])
    ip[4:6] = struct.pack("!H", len(icmp))
    return bytes(ip + icmp)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: quote8.py QUEUE_NUM READY_FILE [delay=MS]")
    delay = None
    if len(sys.argv) == 4:
        if not sys.argv[3].startswith("delay="):
            sys.exit("quote8: unknown mode %r (delay=MS)" % sys.argv[3])
        delay = int(sys.argv[3][len("delay="):]) / 1000.0
    queue = int(sys.argv[1])
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind((0, 0))
    seq = 1
    cfg = [
        (NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, 0)),
        (NFQA_CFG_PARAMS, struct.pack("!IB", 0xFFFF, NFQNL_COPY_PACKET)),
    ]
    for kind, data in cfg:
        s.send(message(NFQNL_MSG_CONFIG, queue, [attr(kind, data)], seq, NLM_F_REQUEST | NLM_F_ACK))
        reply = s.recv(65536)
        n, kind_, _, _, _ = struct.unpack_from("=IHHII", reply)
        if kind_ == NLMSG_ERROR:
            (err,) = struct.unpack_from("=i", reply, 16)
            if err != 0:
                sys.exit("quote8: binding queue %d: %s" % (queue, os.strerror(-err)))
        seq += 1
    with open(sys.argv[2], "w") as f:
        f.write("ready\n")
    cut = 0
    # Messages held (delay mode): (when to accept, packet id), in order.
    held = []
    while True:
        timeout = None
        if held:
            timeout = max(0.0, held[0][0] - time.monotonic())
        readable, _, _ = select.select([s], [], [], timeout)
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, pid = held.pop(0)
            verdict = [attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, pid))]
            s.send(message(NFQNL_MSG_VERDICT, queue, verdict, seq))
            seq += 1
        if not readable:
            continue
        data = s.recv(1 << 17)
        off = 0
        while off + 16 <= len(data):
            n, kind, _, _, _ = struct.unpack_from("=IHHII", data, off)
            if n < 16 or off + n > len(data):
                break
            if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                a = attrs_of(data[off + 20 : off + n])
                hdr = a.get(NFQA_PACKET_HDR)
                if hdr is not None and len(hdr) >= 4:
                    (pid,) = struct.unpack_from("!I", hdr)
                    if delay is not None:
                        held.append((time.monotonic() + delay, pid))
                        cut += 1
                        print("quote8: delayed %d" % cut, file=sys.stderr, flush=True)
                        off += (n + 3) & ~3
                        continue
                    payload = a.get(NFQA_PAYLOAD, b"")
                    new = cut_v4(payload) or cut_v6(payload)
                    attrs = [attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, pid))]
                    if new is not None:
                        attrs.append(attr(NFQA_PAYLOAD, new))
                        cut += 1
                        print("quote8: cut %d" % cut, file=sys.stderr, flush=True)
                    s.send(message(NFQNL_MSG_VERDICT, queue, attrs, seq))
                    seq += 1
            off += (n + 3) & ~3

if __name__ == "__main__":
    main()
