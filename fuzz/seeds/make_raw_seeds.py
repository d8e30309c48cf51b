#!/usr/bin/env python3
"""Raw (unminimized) seed inputs for the fuzz targets, from files in the repository.

Usage: fuzz/seeds/make_raw_seeds.py OUTDIR [EXTRA_CAPTURE_DIR ...]

Writes OUTDIR/<target>/<name> for the targets whose input has a natural
source; `fuzz/seeds/update` then runs each target on them and keeps the
`cargo fuzz cmin` minimum under fuzz/seeds/<target>/.

- capture_read: every pcap/pcapng shipped (examples/data, examples/tests/data)
  and in the extra directories (e.g. ../shared/corpus/tcpdump).
- compare_pair: the shipped inside/outside pairs, as the target reads them
  (two bytes giving the split, then the two files).
- tcp_options_parse: the TCP option blocks and the TCP headers seen in those
  captures (Ethernet, Linux SLL, raw IP, BSD loopback; IPv4 and IPv6).
- qbss_scenario: the shipped scenario files.
- bdp_parse, dscp_parse: the values the tools' documentation shows.
"""
import hashlib
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def put(outdir, target, data, name=None):
    d = outdir / target
    d.mkdir(parents=True, exist_ok=True)
    name = name or hashlib.sha1(data).hexdigest()[:16]
    (d / name).write_bytes(data)


def records(data):
    """(linktype, packet bytes) of a pcap or pcapng file; stops at the first problem."""
    if len(data) < 24:
        return
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = "<" if magic[0] in (0xD4, 0x4D) else ">"
        linktype = struct.unpack(e + "I", data[20:24])[0] & 0xFFFF
        pos = 24
        while pos + 16 <= len(data):
            caplen = struct.unpack(e + "I", data[pos + 8 : pos + 12])[0]
            yield linktype, data[pos + 16 : pos + 16 + caplen]
            pos += 16 + caplen
    elif magic == b"\x0a\x0d\x0d\x0a":
        pos, e, links = 0, "<", []
        while pos + 12 <= len(data):
            if data[pos : pos + 4] == magic:
                e = "<" if data[pos + 8 : pos + 12] == b"\x4d\x3c\x2b\x1a" else ">"
                links = []
            btype, blen = struct.unpack(e + "II", data[pos : pos + 8])
            if blen < 12:
                return
            if btype == 1:
                links.append(struct.unpack(e + "H", data[pos + 8 : pos + 10])[0])
            elif btype == 6 and blen >= 32:
                iface, caplen = struct.unpack(e + "I", data[pos + 8 : pos + 12])[0], struct.unpack(e + "I", data[pos + 20 : pos + 24])[0]
                if iface < len(links):
                    yield links[iface], data[pos + 28 : pos + 28 + caplen]
            pos += blen


def pcap_head(data, budget):
    """A little-endian pcap file cut after its last whole record within `budget` bytes."""
    pos = 24
    while pos + 16 <= len(data):
        end = pos + 16 + struct.unpack("<I", data[pos + 8 : pos + 12])[0]
        if end > budget:
            break
        pos = end
    return data[:pos]


def ip_of(linktype, pkt):
    if linktype == 1:  # Ethernet, VLAN tags skipped
        off, et = 12, None
        while off + 2 <= len(pkt):
            et = struct.unpack(">H", pkt[off : off + 2])[0]
            if et in (0x8100, 0x88A8):
                off += 4
                continue
            return pkt[off + 2 :] if et in (0x0800, 0x86DD) else None
        return None
    if linktype in (101, 228, 229, 12, 14):
        return pkt
    if linktype == 113:
        return pkt[16:]
    if linktype == 276:
        return pkt[20:]
    if linktype in (0, 108):
        return pkt[4:]
    return None


def tcp_of(ip):
    if not ip:
        return None
    v = ip[0] >> 4
    if v == 4 and len(ip) >= 20 and ip[9] == 6:
        return ip[(ip[0] & 15) * 4 :]
    if v == 6 and len(ip) >= 40 and ip[6] == 6:
        return ip[40:]
    return None


def main():
    outdir = Path(sys.argv[1])
    dirs = [ROOT / "examples/data", ROOT / "examples/tests/data"] + [Path(p) for p in sys.argv[2:]]
    seen_caps = set()
    option_blocks, headers = set(), set()
    for d in dirs:
        for path in sorted(d.rglob("*")):
            if path.suffix not in (".pcap", ".pcapng") or not path.is_file():
                continue
            data = path.read_bytes()
            digest = hashlib.sha1(data).hexdigest()
            if digest in seen_caps:
                continue
            seen_caps.add(digest)
            put(outdir, "capture_read", data)
            for linktype, pkt in records(data):
                tcp = tcp_of(ip_of(linktype, pkt))
                if tcp is None or len(tcp) < 20:
                    continue
                doff = (tcp[12] >> 4) * 4
                if doff > 20:
                    option_blocks.add(bytes(tcp[20:doff]))
                    headers.add(bytes(tcp[:doff]))
    for b in option_blocks | headers:
        put(outdir, "tcp_options_parse", b)
    pairs = [("campus-inside", "campus-outside"), ("clean6-inside", "clean6-outside"),
             ("nat-inside", "nat-outside"), ("synproxy-inside", "synproxy-outside")]
    # The target's inputs are kept under 4 KiB (fuzz/seeds/update): each side
    # is the capture's first records, cut at a record boundary.
    for a, b in pairs:
        da = (ROOT / "examples/data" / (a + ".pcap")).read_bytes()
        db = (ROOT / "examples/data" / (b + ".pcap")).read_bytes()
        for budget in (600, 1000, 2000):
            ca, cb = pcap_head(da, budget), pcap_head(db, budget)
            put(outdir, "compare_pair", struct.pack("<H", len(ca)) + ca + cb, f"{a}-{budget}")
    for path in sorted((ROOT / "examples/scenarios").glob("*.toml")):
        put(outdir, "qbss_scenario", path.read_bytes(), path.stem)
    for v in ["1Gbps", "155.52Mbit/s", "1.544Mbps", "10G", "10ms", "0.55s", "25us", "1min",
              "65535", "64KiB", "1MiB", "1.25MB", "4KB", "51.84Mbps", "100 Gbit/s", "0.5 ns"]:
        put(outdir, "bdp_parse", v.encode())
    for v in ["cs1", "AF41", "ef", "le", "be", "df", "default", "voice-admit", "46", "0x2e",
              "101110", "CS7", "af11", "nqb"]:
        put(outdir, "dscp_parse", v.encode())


if __name__ == "__main__":
    main()
