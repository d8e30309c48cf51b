#!/usr/bin/env python3
"""Many-connections capture for the performance harness (stdlib only).

The shape a port scan or a busy server's SYN flood gives: about one
connection per two segments. Each connection is one of

- refused: SYN, then RST-ACK from the server (a closed port; 2 segments);
- half-open: SYN, SYN-ACK, then RST from the client (an open port, as a SYN
  scanner leaves it; 3 segments);
- unanswered: a lone SYN (a filtered port; 1 segment);

in the proportions 2:1:1, so 200,000 segments hold about 100,000
connections. Connections interleave (up to `--open` in flight at once),
addresses and ports differ per connection, IPv4 and IPv6 over Ethernet, SYNs
carry options in Linux's or Windows' layout (bench/gen_capture.py's packet
builder, valid checksums). Deterministic for a given seed.

Writes <out>/<name>.pcap (or .pcapng) and a JSON sidecar with the counts.

Usage: gen_many_conns.py [--segments N] [--format pcap|pcapng|both]
                         [--snaplen S] [--out DIR] [--name STEM] [--seed S] [--open K]
"""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_capture import ACK, RST, SYN, Conn, Writer, build_frame, syn_options  # noqa: E402


def script(c, rng):
    """The segments of one connection: (from_client, flags, seq, ack, window, options)."""
    r = rng.random()
    tsval = c.tsc
    syn = (True, SYN, c.cseq, 0, c.cwin, syn_options(c, tsval, 0))
    if r < 0.5:
        return [syn, (False, RST | ACK, 0, c.cseq + 1, 0, b"")]
    if r < 0.75:
        return [syn,
                (False, SYN | ACK, c.sseq, c.cseq + 1, c.swin, syn_options(c, c.tss, tsval)),
                (True, RST, c.cseq + 1, 0, 0, b"")]
    return [syn]


def generate(args):
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    formats = ["pcap", "pcapng"] if args.format == "both" else [args.format]
    paths = [os.path.join(args.out, f"{args.name}.{fmt}") for fmt in formats]
    writers = [Writer(p + ".tmp", fmt, args.snaplen) for p, fmt in zip(paths, formats)]

    def new_conn(idx):
        c = Conn(rng, idx)
        # A scan touches many ports: the server port is any of 1..65535.
        c.sport = 1 + rng.randrange(65535)
        return [c, script(c, rng), False]

    next_idx = 0
    slots = []
    for _ in range(args.open):
        slots.append(new_conn(next_idx))
        next_idx += 1
    segments = v4 = v6 = started = 0
    t_us = 1_700_000_000 * 1_000_000
    while segments < args.segments:
        i = rng.randrange(len(slots))
        c, todo, started_yet = slots[i]
        if not started_yet:
            slots[i][2] = True
            started += 1
        from_client, flags, seq, ack, win, opts = todo.pop(0)
        frame = build_frame(c, from_client, flags, seq, ack, win, opts, 0)
        t_us += rng.randrange(1, 10)
        for w in writers:
            w.write(t_us, frame)
        segments += 1
        if c.v6:
            v6 += 1
        else:
            v4 += 1
        if not todo:
            slots[i] = new_conn(next_idx)
            next_idx += 1
    for w in writers:
        w.close()
    # started: connections with at least one segment in the capture.
    info = {
        "shape": "many connections (SYN scan: refused, half-open, unanswered 2:1:1)",
        "segments": segments,
        "ipv4_segments": v4,
        "ipv6_segments": v6,
        "connections": started,
        "max_open_connections": args.open,
        "seed": args.seed,
    }
    for w, path in zip(writers, paths):
        os.replace(path + ".tmp", path)
        meta = dict(info, format=w.fmt, bytes=w.bytes, file=path)
        with open(path + ".json", "w") as f:
            json.dump(meta, f, indent=1)
        print(f"{path}: {segments} segments, {started} connections, {w.bytes} bytes",
              file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--segments", type=int, default=200_000)
    ap.add_argument("--format", choices=("pcap", "pcapng", "both"), default="pcap")
    ap.add_argument("--snaplen", type=int, default=128)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    ap.add_argument("--name", default=None, help="file stem (default many-<N>)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--open", type=int, default=1024,
                    help="connections in flight at the same time (default 1024)")
    args = ap.parse_args()
    if args.segments <= 0 or args.open <= 0:
        ap.error("--segments and --open must be positive")
    if args.name is None:
        args.name = f"many-{args.segments}"
    generate(args)


if __name__ == "__main__":
    main()
