#!/usr/bin/env python3
"""Raw (unminimized) seed inputs for the fuzz targets, from files in the repository.

Usage: fuzz/seeds/make_raw_seeds.py OUTDIR [EXTRA_CAPTURE_DIR ...]

Writes OUTDIR/<target>/<name> for the targets whose input has a natural
source; `fuzz/seeds/update` then runs each target on them and keeps the
`cargo fuzz cmin` minimum under fuzz/seeds/<target>/.

- capture_read: every pcap/pcapng shipped (examples/data, examples/corpus)
  and in the extra directories (e.g. ../shared/corpus/tcpdump).
- compare_pair: the shipped inside/outside pairs, as the target reads them
  (two bytes giving the split, then the two files).
- tcp_options_parse: the TCP option blocks and the TCP headers seen in those
  captures (Ethernet, Linux SLL, raw IP, BSD loopback; IPv4 and IPv6).
- qbss_scenario: the shipped scenario files.
- bdp_parse, dscp_parse: the values the tools' documentation shows.
- analyze_settings: the shipped captures (examples/data) behind settings
  bytes: defaults, an assumed shift with an RTT, a one-connection table.
- probe_answer: a probe (IPv4 and IPv6 SYNs with every standard option)
  and what comes back: the SYN-ACK, an RST, time-exceeded messages quoting
  it in full, in 8 bytes, changed (window scale stripped, MSS clamped,
  DSCP remarked) and with an RFC 4884 extension.
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
    dirs = [ROOT / "examples/data", ROOT / "examples/corpus"] + [Path(p) for p in sys.argv[2:]]
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

    for path in sorted((ROOT / "examples/data").glob("*.pcap")):
        data = path.read_bytes()
        for prefix in (b"\x1e\x00\x00", b"\x15\x0a\x07", b"\x01\x00\x00"):
            put(outdir, "analyze_settings", prefix + data, f"{path.stem}-{prefix.hex()}")
    for name, data in probe_seeds():
        put(outdir, "probe_answer", data, name)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, proto, payload, tos=0, ttl=64):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), 0x1234, 0x4000, ttl, proto, 0,
                    bytes(src), bytes(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def ipv6(src, dst, proto, payload, tc=0, hlim=64):
    first = (6 << 28) | (tc << 20)
    return struct.pack("!IHBB", first, len(payload), proto, hlim) + bytes(src) + bytes(dst) + payload


def tcp(sport, dport, seq, ack, flags, window, options=b""):
    options += b"\0" * (-len(options) % 4)
    off = (20 + len(options)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, window, 0, 0) + options


def probe_seeds():
    """(name, input) pairs in the probe_answer target's framing."""
    syn_opts = (b"\x02\x04\x05\xb4" b"\x04\x02" b"\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x00"
                b"\x01\x03\x03\x0a")
    stripped = b"\x02\x04\x05\xb4" b"\x04\x02" b"\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x00"
    clamped = b"\x02\x04\x04\xb0" + syn_opts[4:]
    frame = lambda p: struct.pack("!H", len(p)) + p
    rec = lambda ttl, p: bytes([ttl]) + frame(p)
    out = []
    for fam in (4, 6):
        if fam == 4:
            c, s, r = [198, 18, 41, 2], [198, 18, 44, 2], [[198, 18, 41, 1], [198, 18, 42, 2], [198, 18, 43, 2]]
            ip = lambda a, b, seg, tos=0x28, ttl=64, proto=6: ipv4(a, b, proto, seg, tos, ttl)
            icmp = lambda ttl_router, quote, ext=b"": ip(
                ttl_router, c, b"\x0b\x00\x00\x00\x00" + bytes([len(quote) // 4 if ext else 0]) + b"\x00\x00"
                + quote + ext, 0xC0, 64, 1)
        else:
            c = [0x20, 0x01, 0x0d, 0xb8, 0, 0x41] + [0] * 9 + [2]
            s = [0x20, 0x01, 0x0d, 0xb8, 0, 0x44] + [0] * 9 + [2]
            r = [[0x20, 0x01, 0x0d, 0xb8, 0, 0x41 + i] + [0] * 9 + [1] for i in range(3)]
            ip = lambda a, b, seg, tos=0x28, ttl=64, proto=6: ipv6(a, b, proto, seg, tos, ttl)
            icmp = lambda ttl_router, quote, ext=b"": ip(
                ttl_router, c, b"\x03\x00\x00\x00" + bytes([len(quote) // 8 if ext else 0]) + b"\x00\x00\x00"
                + quote + ext, 0, 64, 58)
        sent = ip(c, s, tcp(40000, 5201, 1000, 0, 0x02, 65535, syn_opts))
        synack = ip(s, c, tcp(5201, 40000, 7000, 1001, 0x12, 65160, syn_opts))
        rst = ip(s, c, tcp(5201, 40000, 0, 1001, 0x14, 0))
        q = lambda ttl, opts=syn_opts, tos=0x28: ip(c, s, tcp(40000, 5201, 1000, 0, 0x02, 65535, opts), tos, ttl)
        ext = b"\x20\x00\x00\x00" + b"\x00\x08\x01\x01" + b"\x00\x00\x00\x01"
        hdr = 20 if fam == 4 else 40
        cases = {
            "clean": [rec(1, icmp(r[0], q(1))), rec(2, icmp(r[1], q(1))), rec(3, icmp(r[2], q(1))),
                      rec(4, synack)],
            "wscale-stripped": [rec(1, icmp(r[0], q(1))), rec(2, icmp(r[1], q(1, stripped))),
                                rec(3, icmp(r[2], q(1, stripped)))],
            "mss-dscp": [rec(1, icmp(r[0], q(1))), rec(2, icmp(r[1], q(1, clamped, 0x20))), rec(4, rst)],
            "partial": [rec(1, icmp(r[0], q(1)[: hdr + 8])), rec(2, icmp(r[1], q(1, stripped)[: hdr + 8])),
                        rec(3, icmp(r[2], q(1, stripped)))],
            "rfc4884": [rec(1, icmp(r[0], q(1) + b"\0" * (-len(q(1)) % 8), ext)),
                        rec(2, icmp(r[1], q(1, stripped) + b"\0" * (-len(q(1, stripped)) % 8), ext))],
        }
        for name, recs in cases.items():
            out.append((f"ipv{fam}-{name}", frame(sent) + b"".join(recs)))
    return out


if __name__ == "__main__":
    main()
