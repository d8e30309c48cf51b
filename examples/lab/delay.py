#!/usr/bin/env python3
"""A path delay for the lab when the netem qdisc is not available.

delay.py QUEUE_NUM DELAY_US READY_FILE

Binds NFQUEUE number QUEUE_NUM over a raw netfilter netlink socket, holds
every queued packet DELAY_US microseconds and then accepts it, in arrival
order. The middlebox sends forwarded packets to the queue from a
postrouting hook, so the delay adds to the path's round-trip time like a
longer wire would. Only packet metadata is copied to userspace.
"""
import heapq
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
NFQA_CFG_QUEUE_MAXLEN = 3
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NF_ACCEPT = 1
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2


def attr(kind, payload):
    length = 4 + len(payload)
    pad = (4 - length % 4) % 4
    return struct.pack("=HH", length, kind) + payload + b"\0" * pad


def message(msg_type, queue, attrs, flags=NLM_F_REQUEST, seq=0):
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs
    return struct.pack("=IHHII", 16 + len(body), msg_type, flags, seq, 0) + body


def check_ack(sock):
    data = sock.recv(65536)
    length, msg_type = struct.unpack_from("=IH", data, 0)
    if msg_type == NLMSG_ERROR:
        (err,) = struct.unpack_from("=i", data, 16)
        if err != 0:
            raise OSError(-err, os.strerror(-err))


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    queue, delay_s, ready = int(argv[0]), int(argv[1]) / 1e6, argv[2]
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((0, 0))
    cfg = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_CONFIG
    sock.send(message(cfg, queue, attr(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, 0)),
                      NLM_F_REQUEST | NLM_F_ACK, 1))
    check_ack(sock)
    sock.send(message(cfg, queue, attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META)),
                      NLM_F_REQUEST | NLM_F_ACK, 2))
    check_ack(sock)
    sock.send(message(cfg, queue, attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", 8192)),
                      NLM_F_REQUEST | NLM_F_ACK, 3))
    check_ack(sock)
    with open(ready, "w") as f:
        f.write("ready\n")
    verdict_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_VERDICT
    packet_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET
    held = []  # (due, packet id)
    while True:
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, pid = heapq.heappop(held)
            sock.send(message(verdict_type, queue,
                              attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, pid))))
        timeout = max(0.0, held[0][0] - now) if held else 1.0
        readable, _, _ = select.select([sock], [], [], timeout)
        if not readable:
            continue
        data = sock.recv(1 << 20)
        arrived = time.monotonic()
        off = 0
        while off + 16 <= len(data):
            length, msg_type = struct.unpack_from("=IH", data, off)
            if length < 16:
                break
            if msg_type == packet_type:
                a = off + 20
                end = off + length
                while a + 4 <= end:
                    alen, akind = struct.unpack_from("=HH", data, a)
                    if alen < 4:
                        break
                    if (akind & 0x7FFF) == NFQA_PACKET_HDR:
                        (pid,) = struct.unpack_from("!I", data, a + 4)
                        heapq.heappush(held, (arrived + delay_s, pid))
                    a += (alen + 3) & ~3
            off += (length + 3) & ~3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
