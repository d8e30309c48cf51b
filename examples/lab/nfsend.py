#!/usr/bin/env python3
"""Send random TCP segments from SRC to DST through a raw IPv4 socket, for
the netfilter lab (netfilter-lab.sh): SYNs (with and without an MSS option,
with and without payload), SYN-ACKs, SYN+RST, data segments, random option
blocks (well-formed options at every alignment, malformed records: length 0
or 1, overruns, bytes after EOL, random bytes), a few data offsets past the
packet or below 5 words, checksums correct or random (0xffff included).

usage: nfsend.py SRC DST COUNT SEED
Only the lab's own addresses are given to it; it sends nothing else.
"""
import random
import socket
import struct
import sys
import time


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def option(r):
    """One option record, well-formed or not."""
    k = r.random()
    if k < 0.12:
        return bytes([2, 4]) + struct.pack("!H", r.choice([536, 1200, 1360, 1400, 1460, 8960, 65535, 0, r.randrange(65536)]))
    if k < 0.22:
        return bytes([3, 3, r.randrange(16)])
    if k < 0.30:
        return bytes([4, 2])
    if k < 0.40:
        return bytes([8, 10]) + struct.pack("!II", r.randrange(2**32), r.randrange(2**32))
    if k < 0.46:
        n = r.randrange(1, 4)
        return bytes([5, 2 + 8 * n]) + bytes(r.randrange(256) for _ in range(8 * n))
    if k < 0.50:
        return bytes([19, 18]) + bytes(r.randrange(256) for _ in range(16))
    if k < 0.60:
        return bytes([1] * r.randrange(1, 4))
    if k < 0.64:
        return bytes([0])
    if k < 0.72:  # malformed framing: length 0 or 1
        return bytes([r.choice([2, 3, 4, 8, 30, 99]), r.choice([0, 1])])
    if k < 0.78:  # a known kind with a wrong length
        kind = r.choice([2, 3, 4, 5, 8, 19])
        ln = r.randrange(2, 12)
        return bytes([kind, ln]) + bytes(r.randrange(256) for _ in range(ln - 2))
    if k < 0.84:  # overrun: a length larger than what follows
        return bytes([r.choice([2, 3, 8, 99]), r.randrange(12, 60)])
    if k < 0.92:  # unknown / other kinds
        kind = r.choice([28, 29, 30, 34, 99, 172, 253, 254])
        ln = r.randrange(2, 10)
        return bytes([kind, ln]) + bytes(r.randrange(256) for _ in range(ln - 2))
    return bytes(r.randrange(256) for _ in range(r.randrange(1, 6)))


def options(r):
    if r.random() < 0.1:
        return b""
    block = b""
    for _ in range(r.randrange(1, 7)):
        block += option(r)
    limit = r.choice([40, 40, 40, 36, 20, 8, 4])
    block = block[:limit]
    pad = (-len(block)) % 4
    block += bytes([r.choice([0, 1])] * pad) if r.random() < 0.8 else bytes(r.randrange(256) for _ in range(pad))
    return block


def segment(r, src, dst):
    k = r.random()
    if k < 0.45:
        flags = 0x02
    elif k < 0.55:
        flags = 0x12
    elif k < 0.60:
        flags = 0x06
    elif k < 0.63:
        flags = r.randrange(256)
    else:
        flags = 0x18
    opts = options(r)
    if flags & 0x02 and r.random() < 0.3:
        # No MSS option: TCPMSS inserts one (when there is no payload).
        opts = r.choice([b"", bytes([1, 3, 3, 7]), bytes([4, 2, 1, 1, 8, 10]) + bytes(8) + bytes([1, 1])])
    payload = b""
    if not (flags & 0x02) or r.random() < 0.2:
        payload = bytes(r.randrange(256) for _ in range(r.randrange(0, 60)))
    doff = 5 + len(opts) // 4
    if r.random() < 0.03:
        doff = r.choice([0, 3, 4, 15, doff + 1 + (len(payload) // 4)])
        doff = min(doff, 15)
    hdr = struct.pack(
        "!HHIIBBHHH",
        r.randrange(1024, 65536),
        r.choice([22, 80, 443, 5201, r.randrange(1, 65536)]),
        r.randrange(2**32),
        r.randrange(2**32) if flags & 0x10 else 0,
        doff << 4 | (r.randrange(16) if r.random() < 0.05 else 0),
        flags,
        r.randrange(65536),
        0,
        0,
    )
    tcp = bytearray(hdr + opts + payload)
    if r.random() < 0.85:
        pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
        struct.pack_into("!H", tcp, 16, csum(pseudo + bytes(tcp)))
    else:
        struct.pack_into("!H", tcp, 16, r.choice([0xFFFF, 0, r.randrange(65536)]))
    return bytes(tcp)


def main():
    src_s, dst_s, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for a in (src_s, dst_s):
        o = [int(x) for x in a.split(".")]
        assert o[0] == 198 and o[1] in (18, 19), "lab addresses only (198.18.0.0/15)"
    src, dst = socket.inet_aton(src_s), socket.inet_aton(dst_s)
    r = random.Random(seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    for i in range(count):
        tcp = segment(r, src, dst)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), (i + 1) & 0xFFFF, 0x4000, 64, 6, 0, src, dst)
        s.sendto(ip + tcp, (dst_s, 0))
        if i % 200 == 199:
            time.sleep(0.01)


if __name__ == "__main__":
    main()
