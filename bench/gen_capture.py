#!/usr/bin/env python3
"""Synthetic TCP capture generator for the performance harness (stdlib only).

Writes a large, deterministic capture of many interleaved TCP connections,
IPv4 and IPv6 over Ethernet, as classic pcap and/or pcapng, plus a small JSON
sidecar (`<file>.json`) with the counts the harness needs (segments,
connections, largest number of connections open at once).

Each connection has a full life: a three-way handshake whose SYN and SYN-ACK
carry options (MSS, SACK-permitted, timestamps, window scale, in Linux's or in
Windows' layout, and some without window scale), then data segments from the
client and acknowledgments from the server (timestamps on every segment when
negotiated; SACK blocks, one to three, after simulated losses, followed by the
retransmission), then FIN / FIN-ACK / ACK. Only a bounded number of
connections is open at once (`--open`), so a capture ten times larger holds ten
times more connections but never more open at the same time: the property an
analyser's memory should follow.

IP and TCP checksums are valid. Payload bytes are stored in full (snap length
65535) unless `--snaplen` cuts them.

Usage:
  gen_capture.py [--segments N | --size 1G] [--format pcap|pcapng|both]
                 [--out DIR] [--name STEM] [--seed S] [--open K]
"""

import argparse
import json
import os
import random
import struct
import sys

ETH_IPV4 = 0x0800
ETH_IPV6 = 0x86DD
LINKTYPE_ETHERNET = 1

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

PAYLOAD = bytes((i * 131 + 7) & 0xFF for i in range(65536))


def ones_sum(data):
    """Ones'-complement sum of 16-bit big-endian words, as an int in 0..0xffff.

    Works because 2**16 == 1 (mod 0xffff): the big-endian integer of the
    buffer is congruent to the sum of its 16-bit words.
    """
    if len(data) & 1:
        data = data + b"\0"
    return int.from_bytes(data, "big") % 0xFFFF


def csum(*parts):
    s = 0
    for p in parts:
        s += ones_sum(p)
    s %= 0xFFFF
    return (~s) & 0xFFFF


def parse_size(text):
    text = text.strip().upper()
    mult = 1
    for suffix, m in (("GIB", 1 << 30), ("MIB", 1 << 20), ("KIB", 1 << 10),
                      ("G", 10**9), ("M", 10**6), ("K", 10**3)):
        if text.endswith(suffix):
            mult = m
            text = text[: -len(suffix)]
            break
    return int(float(text) * mult)


class Writer:
    """Writes records to pcap or pcapng, counting bytes."""

    def __init__(self, path, fmt, snaplen):
        self.f = open(path, "wb", buffering=1 << 20)
        self.fmt = fmt
        self.snaplen = snaplen
        self.bytes = 0
        if fmt == "pcap":
            hdr = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen,
                              LINKTYPE_ETHERNET)
        else:
            shb_body = struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)
            shb = struct.pack("<II", 0x0A0D0D0A, 12 + len(shb_body)) + shb_body
            shb += struct.pack("<I", 12 + len(shb_body))
            # if_tsresol (9) = 6: microseconds; opt_endofopt.
            opts = struct.pack("<HHB3x", 9, 1, 6) + struct.pack("<HH", 0, 0)
            idb_body = struct.pack("<HHI", LINKTYPE_ETHERNET, 0, snaplen) + opts
            idb = struct.pack("<II", 1, 12 + len(idb_body)) + idb_body
            idb += struct.pack("<I", 12 + len(idb_body))
            hdr = shb + idb
        self.f.write(hdr)
        self.bytes += len(hdr)

    def write(self, t_us, frame):
        orig = len(frame)
        if orig > self.snaplen:
            frame = frame[: self.snaplen]
        cap = len(frame)
        if self.fmt == "pcap":
            rec = struct.pack("<IIII", t_us // 1000000, t_us % 1000000, cap, orig)
            self.f.write(rec)
            self.f.write(frame)
            self.bytes += 16 + cap
        else:
            pad = (-cap) & 3
            total = 32 + cap + pad
            rec = struct.pack("<IIIIIII", 6, total, 0, t_us >> 32,
                              t_us & 0xFFFFFFFF, cap, orig)
            self.f.write(rec)
            self.f.write(frame)
            self.f.write(b"\0" * pad + struct.pack("<I", total))
            self.bytes += total

    def close(self):
        self.f.close()


class Conn:
    """One TCP connection's state machine, yielding its segments in order."""

    __slots__ = ("v6", "caddr", "saddr", "cport", "sport", "cmac", "smac", "tos",
                 "cseq", "sseq", "ts", "sack", "wscale", "layout", "mss",
                 "phase", "left", "lost", "ipid", "cwin", "swin", "tsc", "tss",
                 "rtt_us")

    def __init__(self, rng, idx):
        self.v6 = rng.random() < 0.4
        if self.v6:
            self.caddr = bytes.fromhex("20010db8000100000000000000000000")
            self.caddr = self.caddr[:12] + struct.pack(">I", idx + 1)
            self.saddr = bytes.fromhex("20010db8000200000000000000000000")
            self.saddr = self.saddr[:14] + struct.pack(">H", (idx % 50) + 1)
        else:
            self.caddr = bytes((198, 18, (idx >> 8) & 0xFF, idx & 0xFF))
            self.saddr = bytes((198, 19, 0, (idx % 50) + 1))
        self.cport = 1024 + rng.randrange(60000)
        self.sport = 5001 + rng.randrange(10)
        self.cmac = b"\x02\x00\x00\x00" + struct.pack(">H", idx & 0xFFFF)
        self.smac = b"\x02\x00\x00\x01\x00\x01"
        r = rng.random()
        # DS field: mostly best effort, some CS1 (QBSS/LE-like), some ECT(0), AF41.
        self.tos = 0x00 if r < 0.6 else 0x20 if r < 0.75 else 0x02 if r < 0.9 else 0x88
        self.cseq = rng.getrandbits(32)
        self.sseq = rng.getrandbits(32)
        r = rng.random()
        # layout: linux (MSS SACKP TS NOP WS), windows (MSS NOP WS NOP NOP SACKP),
        # linux without window scale (as if stripped by a middlebox).
        self.layout = "linux" if r < 0.7 else "windows" if r < 0.9 else "nows"
        self.ts = self.layout != "windows"
        self.sack = True
        self.wscale = 0 if self.layout == "nows" else 7
        self.mss = 1460 if not self.v6 else 1440
        self.phase = 0
        self.left = rng.randrange(5, 200)  # data/ack exchanges before closing
        self.lost = []
        self.ipid = rng.getrandbits(16)
        self.cwin = 64240 if self.layout == "windows" else 64800
        self.swin = 65160
        self.tsc = rng.getrandbits(31)
        self.tss = rng.getrandbits(31)
        self.rtt_us = rng.choice((500, 2000, 10000, 40000, 150000))


def syn_options(c, tsval, tsecr):
    if c.layout == "linux":
        return (struct.pack(">BBH", 2, 4, c.mss) + b"\x04\x02"
                + struct.pack(">BBII", 8, 10, tsval, tsecr) + b"\x01\x03\x03"
                + bytes((c.wscale,)))
    if c.layout == "windows":
        return (struct.pack(">BBH", 2, 4, c.mss) + b"\x01\x03\x03"
                + bytes((c.wscale,)) + b"\x01\x01\x04\x02")
    # nows: MSS, SACK-permitted, timestamps, then NOP padding where WS was
    return (struct.pack(">BBH", 2, 4, c.mss) + b"\x04\x02"
            + struct.pack(">BBII", 8, 10, tsval, tsecr) + b"\x01\x01\x01\x01")


def data_options(c, tsval, tsecr, sack_blocks=()):
    out = b""
    if c.ts:
        out = b"\x01\x01" + struct.pack(">BBII", 8, 10, tsval, tsecr)
    if sack_blocks:
        out += b"\x01\x01" + bytes((5, 2 + 8 * len(sack_blocks)))
        for left, right in sack_blocks:
            out += struct.pack(">II", left & 0xFFFFFFFF, right & 0xFFFFFFFF)
    return out


def build_frame(c, from_client, flags, seq, ack, win, opts, plen):
    if from_client:
        src, dst, sport, dport, smac, dmac = c.caddr, c.saddr, c.cport, c.sport, c.cmac, c.smac
    else:
        src, dst, sport, dport, smac, dmac = c.saddr, c.caddr, c.sport, c.cport, c.smac, c.cmac
    off = (20 + len(opts)) // 4
    payload = PAYLOAD[seq & 0x3FFF: (seq & 0x3FFF) + plen]
    tcp_len = 20 + len(opts) + plen
    tcp_nock = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF,
                           ack & 0xFFFFFFFF, off << 4, flags, win, 0, 0) + opts
    if c.v6:
        pseudo = src + dst + struct.pack(">IxxxB", tcp_len, 6)
        ck = csum(pseudo, tcp_nock, payload)
        tcp = tcp_nock[:16] + struct.pack(">H", ck) + tcp_nock[18:]
        vtf = (6 << 28) | (c.tos << 20)
        ip = struct.pack(">IHBB", vtf, tcp_len, 6, 64) + src + dst
        eth = dmac + smac + b"\x86\xdd"
    else:
        pseudo = src + dst + struct.pack(">xBH", 6, tcp_len)
        ck = csum(pseudo, tcp_nock, payload)
        tcp = tcp_nock[:16] + struct.pack(">H", ck) + tcp_nock[18:]
        c.ipid = (c.ipid + 1) & 0xFFFF
        iph = struct.pack(">BBHHHBBH", 0x45, c.tos, 20 + tcp_len, c.ipid, 0x4000,
                          64, 6, 0) + src + dst
        ip = iph[:10] + struct.pack(">H", csum(iph)) + iph[12:]
        eth = dmac + smac + b"\x08\x00"
    return eth + ip + tcp + payload


def step(c, rng, t_us):
    """Return the next frame of connection c, or None when it has closed."""
    tsv_c = (c.tsc + t_us // 1000) & 0xFFFFFFFF
    tsv_s = (c.tss + t_us // 1000) & 0xFFFFFFFF
    p = c.phase
    if p == 0:  # SYN
        c.phase = 1
        return build_frame(c, True, SYN, c.cseq, 0, c.cwin,
                           syn_options(c, tsv_c, 0), 0)
    if p == 1:  # SYN-ACK
        c.phase = 2
        return build_frame(c, False, SYN | ACK, c.sseq, c.cseq + 1, c.swin,
                           syn_options(c, tsv_s, tsv_c), 0)
    if p == 2:  # ACK
        c.phase = 3
        c.cseq += 1
        c.sseq += 1
        win = c.cwin >> c.wscale if c.wscale else c.cwin
        return build_frame(c, True, ACK, c.cseq, c.sseq, max(win, 1),
                           data_options(c, tsv_c, tsv_s), 0)
    if p == 3:  # data from the client
        if c.left <= 0:
            c.phase = 5
            return step(c, rng, t_us)
        c.left -= 1
        plen = c.mss - (12 if c.ts else 0) if rng.random() < 0.7 else rng.randrange(1, 1400)
        seq = c.cseq
        if c.lost and rng.random() < 0.3:
            # retransmit the oldest hole
            lseq, llen = c.lost.pop(0)
            frame = build_frame(c, True, ACK | PSH, lseq, c.sseq, 502,
                                data_options(c, tsv_c, tsv_s), llen)
            return frame
        c.cseq += plen
        if rng.random() < 0.01 and len(c.lost) < 3:
            # this segment is "lost" after the capture point: the server will SACK
            c.lost.append((seq, plen))
        c.phase = 4
        return build_frame(c, True, ACK | PSH, seq, c.sseq, 502,
                           data_options(c, tsv_c, tsv_s), plen)
    if p == 4:  # ACK from the server, with SACK blocks above holes
        c.phase = 3
        if c.lost and c.sack:
            ackno = c.lost[0][0]
            blocks = []
            for i, (lseq, llen) in enumerate(c.lost[:3]):
                nxt = c.lost[i + 1][0] if i + 1 < len(c.lost) else c.cseq
                if nxt != lseq + llen:
                    blocks.append((lseq + llen, nxt))
            blocks = blocks[:3]
            opts = data_options(c, tsv_s, tsv_c, blocks)
        else:
            ackno = c.cseq
            opts = data_options(c, tsv_s, tsv_c)
        win = (c.swin * 48) >> c.wscale if c.wscale else c.swin
        return build_frame(c, False, ACK, c.sseq, ackno, min(win, 0xFFFF), opts, 0)
    if p == 5:  # FIN from the client (holes repaired first)
        if c.lost:
            lseq, llen = c.lost.pop(0)
            return build_frame(c, True, ACK, lseq, c.sseq, 502,
                               data_options(c, tsv_c, tsv_s), llen)
        c.phase = 6
        frame = build_frame(c, True, FIN | ACK, c.cseq, c.sseq, 502,
                            data_options(c, tsv_c, tsv_s), 0)
        c.cseq += 1
        return frame
    if p == 6:  # FIN-ACK from the server
        c.phase = 7
        frame = build_frame(c, False, FIN | ACK, c.sseq, c.cseq, 509,
                            data_options(c, tsv_s, tsv_c), 0)
        c.sseq += 1
        return frame
    if p == 7:  # last ACK
        c.phase = 8
        return build_frame(c, True, ACK, c.cseq, c.sseq, 502,
                           data_options(c, tsv_c, tsv_s), 0)
    return None


def generate(args):
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    formats = ["pcap", "pcapng"] if args.format == "both" else [args.format]
    writers = []
    paths = []
    for fmt in formats:
        path = os.path.join(args.out, f"{args.name}.{fmt}")
        paths.append(path)
        writers.append(Writer(path + ".tmp", fmt, args.snaplen))

    max_segments = args.segments if args.size is None else None
    max_bytes = args.size
    slots = []
    next_idx = 0
    for _ in range(args.open):
        slots.append(Conn(rng, next_idx))
        next_idx += 1
    segments = 0
    v4 = v6 = 0
    t_us = 1_700_000_000 * 1_000_000
    primary = writers[0]
    while True:
        if max_segments is not None and segments >= max_segments:
            break
        if max_bytes is not None and primary.bytes >= max_bytes:
            break
        i = rng.randrange(len(slots))
        c = slots[i]
        frame = step(c, rng, t_us)
        if frame is None:
            slots[i] = Conn(rng, next_idx)
            next_idx += 1
            continue
        t_us += rng.randrange(1, 20)
        for w in writers:
            w.write(t_us, frame)
        segments += 1
        if c.v6:
            v6 += 1
        else:
            v4 += 1
    for w in writers:
        w.close()
    info = {
        "segments": segments,
        "ipv4_segments": v4,
        "ipv6_segments": v6,
        "connections": next_idx,
        "max_open_connections": args.open,
        "seed": args.seed,
    }
    for w, path in zip(writers, paths):
        os.replace(path + ".tmp", path)
        meta = dict(info, format=w.fmt, bytes=w.bytes, file=path)
        with open(path + ".json", "w") as f:
            json.dump(meta, f, indent=1)
        print(f"{path}: {segments} segments, {next_idx} connections, "
              f"{w.bytes} bytes", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--segments", type=int, default=200_000,
                    help="number of TCP segments (default 200000)")
    ap.add_argument("--size", type=parse_size, default=None,
                    help="stop at this file size instead (e.g. 1G, 500M)")
    ap.add_argument("--format", choices=("pcap", "pcapng", "both"), default="both")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    ap.add_argument("--name", default=None, help="file stem (default capture-<N>)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--open", type=int, default=256,
                    help="connections open at the same time (default 256)")
    ap.add_argument("--snaplen", type=int, default=65535)
    args = ap.parse_args()
    if args.segments <= 0 or args.open <= 0:
        ap.error("--segments and --open must be positive")
    if args.name is None:
        args.name = (f"capture-{args.segments}" if args.size is None
                     else f"capture-{args.size}B")
    generate(args)


if __name__ == "__main__":
    main()
