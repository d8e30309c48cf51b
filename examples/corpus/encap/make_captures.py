#!/usr/bin/env python3
"""Builds the encapsulation test captures of this directory (issue 29).

One small classic pcap per encapsulation: each holds short TCP exchanges
(handshake with options, data, acknowledgments) carried in that
encapsulation, with IPv4 and IPv6 inside where the format allows both, and
nested cases (VXLAN in GRE, MPLS in GRE, a pseudowire with its control word,
PPPoE under two VLAN tags, ...). `skips.pcap` and the `unsupported-*` files
hold frames the decoder must count as not opened.

Packets are built with scapy (pip install scapy; 2.5 or later) where it has
the layer, and byte by byte where it does not (ERSPAN II/III headers, the
802.1ah I-TAG, FDDI, NFLOG, L2TP, FabricPath, IPoIB, VN-Tag, E-Tag); the pcap files are written here, with fixed
timestamps, so the output is the same on every run:

    python3 examples/corpus/encap/make_captures.py [OUTDIR [NAME ...]]

(with NAMEs, only those captures: `fabricpath`, ...).

Addresses come from 198.18.0.0/15 and 2001:db8::/32 only.
"""

import os
import struct
import sys
import zlib

from scapy.all import (
    GRE, GRE_PPTP, IP, IPv6, LLC, PPP, PPPoE, SNAP, TCP, UDP, VXLAN,
    Dot1AD, Dot1Q, Dot3, Ether, HDLC, Raw, conf,
)
from scapy.contrib.geneve import GENEVE
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.contrib.mpls import MPLS

conf.verb = 0

# Link types (tcpdump.org/linktypes.html).
LT_ETHERNET = 1
LT_PPP = 9
LT_FDDI = 10
LT_PPP_HDLC = 50
LT_C_HDLC = 104
LT_NFLOG = 239
LT_IPOIB = 242
LT_USER0 = 147

BASE_TIME = 1_700_000_000

MAC_A = "02:00:00:00:00:0a"
MAC_B = "02:00:00:00:00:0b"
MAC_C = "02:00:00:00:00:0c"
MAC_D = "02:00:00:00:00:0d"


def write_pcap(path, linktype, frames, snaplen=262144):
    """A microsecond pcap, little-endian; frames are (bytes, origlen or None)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype))
        for i, (data, origlen) in enumerate(frames):
            usec = i * 1000
            cap = data[:snaplen]
            f.write(struct.pack("<IIII", BASE_TIME + usec // 1_000_000,
                                usec % 1_000_000, len(cap),
                                origlen if origlen is not None else len(data)))
            f.write(cap)


def exchange(v6, a, b, sport, dport, seq_a=1000, seq_b=5000):
    """A TCP exchange between a and b as (direction, IP packet): handshake
    with options, 100 bytes of data, its ACK and a FIN."""
    ip = (lambda s, d: IPv6(src=s, dst=d, hlim=64)) if v6 else \
        (lambda s, d: IP(src=s, dst=d, ttl=64, id=1, flags="DF"))
    syn_opts = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (111, 0)),
                ("NOP", None), ("WScale", 7)]
    ack_opts = [("NOP", None), ("NOP", None), ("Timestamp", (112, 222))]
    return [
        (0, ip(a, b) / TCP(sport=sport, dport=dport, flags="S", seq=seq_a,
                            window=64240, options=syn_opts)),
        (1, ip(b, a) / TCP(sport=dport, dport=sport, flags="SA", seq=seq_b,
                            ack=seq_a + 1, window=65160, options=syn_opts)),
        (0, ip(a, b) / TCP(sport=sport, dport=dport, flags="A", seq=seq_a + 1,
                            ack=seq_b + 1, window=502, options=ack_opts)),
        (0, ip(a, b) / TCP(sport=sport, dport=dport, flags="PA", seq=seq_a + 1,
                            ack=seq_b + 1, window=502, options=ack_opts)
         / Raw(b"x" * 100)),
        (1, ip(b, a) / TCP(sport=dport, dport=sport, flags="A", seq=seq_b + 1,
                            ack=seq_a + 101, window=509, options=ack_opts)),
        (0, ip(a, b) / TCP(sport=sport, dport=dport, flags="FA", seq=seq_a + 101,
                            ack=seq_b + 1, window=502, options=ack_opts)),
    ]


V4 = ("198.19.1.1", "198.19.1.2")
V6 = ("2001:db8:1::1", "2001:db8:1::2")


def both_inner(sport=40000, dport=80):
    """An IPv4 and an IPv6 inner exchange."""
    return exchange(False, *V4, sport, dport) + \
        exchange(True, *V6, sport + 1, dport, seq_a=2000, seq_b=7000)


def eth(src, dst, payload_type=None):
    e = Ether(src=src, dst=dst)
    if payload_type is not None:
        e.type = payload_type
    return e


def outer4(d, a="198.18.0.1", b="198.18.0.2"):
    """The outer IPv4 header for direction d (0: a to b)."""
    s, t = (a, b) if d == 0 else (b, a)
    return IP(src=s, dst=t, ttl=63, id=7)


def outer6(d, a="2001:db8::a", b="2001:db8::b"):
    s, t = (a, b) if d == 0 else (b, a)
    return IPv6(src=s, dst=t, hlim=63)


def inner_eth(d, pkt):
    s, t = (MAC_C, MAC_D) if d == 0 else (MAC_D, MAC_C)
    return Ether(src=s, dst=t) / pkt


def link(d):
    s, t = (MAC_A, MAC_B) if d == 0 else (MAC_B, MAC_A)
    return Ether(src=s, dst=t)


def frames(pkts):
    return [(bytes(p), None) for p in pkts]


def gre():
    out = []
    for i, (d, p) in enumerate(both_inner()):
        out.append(link(d) / outer4(d) / GRE(key_present=1, key=0x100,
                                             seqnum_present=1, sequence_number=i) / p)
    # GRE with a checksum, no key; and GRE over IPv6 with a key only.
    for d, p in exchange(False, *V4, 41000, 443):
        out.append(link(d) / outer4(d) / GRE(chksum_present=1) / p)
    for d, p in exchange(True, *V6, 41001, 443):
        out.append(link(d) / outer6(d) / GRE(key_present=1, key=7) / p)
    # Two inner connections that differ only by their GRE key.
    for key in (1, 2):
        for d, p in exchange(False, *V4, 42000, 22):
            out.append(link(d) / outer4(d) / GRE(key_present=1, key=key) / p)
    return LT_ETHERNET, frames(out)


def pptp():
    out = []
    for i, (d, p) in enumerate(exchange(False, *V4, 40000, 80)):
        g = GRE_PPTP(seqnum_present=1, sequence_number=i, acknum_present=1,
                     ack_number=i, call_id=0x1234 if d == 0 else 0x4321)
        ppp = HDLC(address=0xFF, control=0x03) / PPP(proto=0x0021)
        raw = bytes(p)
        g.payload_len = len(bytes(ppp)) + len(raw)
        out.append(link(d) / outer4(d) / g / ppp / raw)
    return LT_ETHERNET, frames(out)


def nvgre():
    out = []
    for d, p in both_inner():
        key = (0x123456 << 8) | 0x2A
        out.append(link(d) / outer4(d) / GRE(key_present=1, key=key, proto=0x6558)
                   / inner_eth(d, p))
    return LT_ETHERNET, frames(out)


def erspan():
    out = []
    flows = both_inner()
    # Type I: GRE 0x88be without a sequence number, no ERSPAN header.
    for d, p in flows[:6]:
        out.append(link(d) / outer4(d) / GRE(proto=0x88BE) / inner_eth(d, p))
    # Type II: sequence number, 8-byte header (version 1, VLAN 100, session 5, index 3).
    for i, (d, p) in enumerate(flows[6:]):
        hdr = struct.pack(">HHI", (1 << 12) | 100, 5, 3)
        out.append(link(d) / outer4(d) / GRE(seqnum_present=1, sequence_number=i,
                                             proto=0x88BE) / Raw(hdr) / inner_eth(d, p))
    # Type III: 12-byte header (version 2, VLAN 200, session 9), frame type 0,
    # then the same with the O bit and an 8-byte platform subheader.
    for i, (d, p) in enumerate(exchange(False, *V4, 43000, 443)):
        o = i % 2
        hdr = struct.pack(">HHIHH", (2 << 12) | 200, 9, 1000 + i, 0, o)
        if o:
            hdr += struct.pack(">II", 0x0B000000, 0)
        out.append(link(d) / outer4(d) / GRE(seqnum_present=1, sequence_number=i,
                                             proto=0x22EB) / Raw(hdr) / inner_eth(d, p))
    return LT_ETHERNET, frames(out)


def vxlan():
    out = []
    for d, p in both_inner():
        out.append(link(d) / outer4(d) / UDP(sport=50000 + d, dport=4789)
                   / VXLAN(vni=4242, flags=0x08) / inner_eth(d, p))
    for d, p in exchange(False, *V4, 44000, 80):
        out.append(link(d) / outer6(d) / UDP(sport=50002, dport=4789)
                   / VXLAN(vni=17, flags=0x08) / inner_eth(d, p))
    # The same inner connection in another VNI.
    for d, p in exchange(False, *V4, 44000, 80):
        out.append(link(d) / outer6(d) / UDP(sport=50002, dport=4789)
                   / VXLAN(vni=18, flags=0x08) / inner_eth(d, p))
    return LT_ETHERNET, frames(out)


def geneve():
    out = []
    opt = bytes([0x01, 0x02, 0x03, 0x01, 0xAA, 0xBB, 0xCC, 0xDD])  # class 0x0102, type 3, 4 bytes
    for d, p in both_inner():
        out.append(link(d) / outer4(d) / UDP(sport=51000, dport=6081)
                   / GENEVE(vni=0xABCDE, proto=0x6558, optionlen=2, options=opt)
                   / inner_eth(d, p))
    for d, p in exchange(False, *V4, 45000, 80):
        out.append(link(d) / outer4(d) / UDP(sport=51001, dport=6081)
                   / GENEVE(vni=77, proto=0x0800) / p)
    return LT_ETHERNET, frames(out)


def gtpu():
    out = []
    for d, p in both_inner():
        teid = 0x11111111 if d == 0 else 0x22222222
        out.append(link(d) / outer4(d) / UDP(sport=2152, dport=2152)
                   / GTP_U_Header(teid=teid, gtp_type=255) / p)
    # With a sequence number and a PDU session container extension header.
    for i, (d, p) in enumerate(exchange(False, *V4, 46000, 443)):
        out.append(link(d) / outer6(d) / UDP(sport=2152, dport=2152)
                   / GTP_U_Header(teid=0x33, gtp_type=255, E=1, S=1, seq=i, next_ex=0x85)
                   / GTPPDUSessionContainer(type=0, QFI=9, NextExtHdr=0) / p)
    return LT_ETHERNET, frames(out)


def l2tp_message(d, payload, length=False, seq=None, pad=None, hdlc=True):
    """An L2TPv2 data message (RFC 2661 section 3.1) carrying the IP packet
    payload in PPP: the Length field when length, Ns and Nr when seq is
    (ns, nr), an Offset Size and that many padding bytes when pad is set;
    HDLC-like address and control unless hdlc is false. The Tunnel and
    Session IDs are the recipient's: each direction has its own."""
    tunnel, session = (5, 7) if d == 0 else (0x1111, 0x2222)
    raw = bytes(payload)
    proto = 0x0057 if (raw[0] >> 4) == 6 else 0x0021
    ppp = (b"\xff\x03" if hdlc else b"") + struct.pack(">H", proto) + raw
    flags = 0x0002
    rest = struct.pack(">HH", tunnel, session)
    if seq is not None:
        flags |= 0x0800
        rest += struct.pack(">HH", *seq)
    if pad is not None:
        flags |= 0x0200
        rest += struct.pack(">H", pad) + b"\0" * pad
    if length:
        flags |= 0x4000
        total = 2 + 2 + len(rest) + len(ppp)
        return struct.pack(">HH", flags, total) + rest + ppp
    return struct.pack(">H", flags) + rest + ppp


def l2tp():
    """L2TPv2 over UDP: data messages with and without the Length field,
    Ns/Nr and an offset pad, with and without HDLC address and control;
    the first exchange on port 1701 both ways, the second from a LAC's
    port 50000 to the LNS's 1701 (RFC 2661 section 8.1)."""
    out = []
    for i, (d, p) in enumerate(both_inner()):
        variant = i % 6
        msg = l2tp_message(
            d, p,
            length=variant in (1, 2, 5),
            seq=(i, i // 2) if variant in (2, 4) else None,
            pad=(0 if variant == 4 else 4) if variant in (3, 4) else None,
            hdlc=variant != 5,
        )
        if i < 6:
            sport, dport = 1701, 1701
        else:
            sport, dport = (50000, 1701) if d == 0 else (1701, 50000)
        out.append(link(d) / outer4(d) / UDP(sport=sport, dport=dport) / Raw(msg))
    return LT_ETHERNET, frames(out)


def ipip():
    out = []
    for d, p in exchange(False, *V4, 47000, 80):  # 4in4
        out.append(link(d) / outer4(d) / p)
    for d, p in exchange(True, *V6, 47001, 80):   # 6in4
        out.append(link(d) / outer4(d) / p)
    for d, p in exchange(False, *V4, 47002, 80):  # 4in6
        out.append(link(d) / outer6(d) / p)
    for d, p in exchange(True, *V6, 47003, 80):   # 6in6
        out.append(link(d) / outer6(d) / p)
    return LT_ETHERNET, frames(out)


def mpls():
    out = []
    flows = both_inner()
    for d, p in flows:  # two labels, then IP
        out.append(link(d) / MPLS(label=100 + d, s=0, ttl=64) / MPLS(label=2000, s=1, ttl=64) / p)
    # An Ethernet pseudowire with the control word (RFC 4385 / 4448).
    for i, (d, p) in enumerate(exchange(False, *V4, 48000, 443)):
        out.append(link(d) / MPLS(label=300, s=0, ttl=64) / MPLS(label=16, s=1, ttl=64)
                   / Raw(struct.pack(">I", i)) / inner_eth(d, p))
    return LT_ETHERNET, frames(out)


def pppoe():
    out = []
    for d, p in both_inner():
        proto = 0x0057 if p.haslayer(IPv6) else 0x0021
        out.append(link(d) / Dot1AD(vlan=10) / Dot1Q(vlan=20) / PPPoE(sessionid=0x2B)
                   / PPP(proto=proto) / p)
    return LT_ETHERNET, frames(out)


def ppp():
    out = []
    for d, p in both_inner():
        proto = 0x0057 if p.haslayer(IPv6) else 0x0021
        out.append(HDLC(address=0xFF, control=0x03) / PPP(proto=proto) / p)
    return LT_PPP, frames(out)


def chdlc():
    out = []
    for d, p in both_inner():
        t = 0x86DD if p.haslayer(IPv6) else 0x0800
        out.append(Raw(struct.pack(">BBH", 0x0F, 0x00, t)) / p)
    return LT_C_HDLC, frames(out)


def chdlc_on_ppp():
    """C-HDLC frames under the PPP link type, as Cisco serial links are
    captured (nDPI's BGP_Cisco_hdlc_slarp.pcap): unicast and broadcast
    addresses."""
    out = []
    for i, (d, p) in enumerate(both_inner()):
        t = 0x86DD if p.haslayer(IPv6) else 0x0800
        address = 0x8F if i % 3 == 2 else 0x0F
        out.append(Raw(struct.pack(">BBH", address, 0x00, t)) / p)
    return LT_PPP, frames(out)


def pbb():
    out = []
    for d, p in both_inner():
        itag = struct.pack(">I", (3 << 29) | 0x00ABCD)
        out.append(link(d) / Dot1AD(vlan=30, type=0x88E7) / Raw(itag) / inner_eth(d, p))
    return LT_ETHERNET, frames(out)


def llc_snap():
    out = []
    for d, p in both_inner():
        t = 0x86DD if p.haslayer(IPv6) else 0x0800
        s, dst = (MAC_A, MAC_B) if d == 0 else (MAC_B, MAC_A)
        out.append(Dot3(src=s, dst=dst) / LLC(dsap=0xAA, ssap=0xAA, ctrl=3)
                   / SNAP(OUI=0, code=t) / p)
    return LT_ETHERNET, frames(out)


def fddi():
    out = []
    for d, p in both_inner():
        t = 0x86DD if p.haslayer(IPv6) else 0x0800
        s, dst = (b"\x02\0\0\0\0\x0a", b"\x02\0\0\0\0\x0b")
        if d:
            s, dst = dst, s
        hdr = bytes([0x50]) + dst + s
        out.append(Raw(hdr) / LLC(dsap=0xAA, ssap=0xAA, ctrl=3) / SNAP(OUI=0, code=t) / p)
    return LT_FDDI, frames(out)


def nflog_record(family, group, packet):
    """An NFLOG record: header, a prefix TLV, the payload TLV (little-endian TLVs)."""
    def tlv(kind, value):
        body = struct.pack("<HH", 4 + len(value), kind) + value
        return body + b"\0" * (-len(body) % 4)
    return struct.pack(">BBH", family, 0, group) + tlv(10, b"fw-log\0") \
        + tlv(1, struct.pack(">HBB", 0x0800, 3, 0)) + tlv(9, packet)


def nflog():
    out = []
    for d, p in both_inner():
        fam = 10 if p.haslayer(IPv6) else 2
        out.append((nflog_record(fam, 5, bytes(p)), None))
    return LT_NFLOG, out


def fabricpath_address(switch_id, lid):
    """A FabricPath outer address: U/L set, the 12-bit switch id, sub-switch id 0, the local id."""
    return struct.pack(">BHBH", 0x02, switch_id & 0x0FFF, 0, lid)


def fabricpath():
    """Cisco FabricPath (as in nDPI's ajp.pcap): outer header with switch
    ids 0xa1 and 0xb2, EtherType 0x8903, FTag 1 and TTL 32, the inner
    Ethernet frame (the IPv4 exchange under a VLAN tag) and a 4-byte FCS."""
    out = []
    for d, p in both_inner():
        sw = (0x0A1, 0x0B2) if d == 0 else (0x0B2, 0x0A1)
        hdr = fabricpath_address(sw[1], 7) + fabricpath_address(sw[0], 3) \
            + struct.pack(">HH", 0x8903, (1 << 6) | 32)
        s, t = (MAC_C, MAC_D) if d == 0 else (MAC_D, MAC_C)
        inner = Ether(src=s, dst=t) / (p if p.haslayer(IPv6) else Dot1Q(vlan=7) / p)
        frame = hdr + bytes(inner)
        out.append((frame + struct.pack("<I", zlib.crc32(frame)), None))
    return LT_ETHERNET, out


def ipoib():
    """IP over InfiniBand (LINKTYPE_IPOIB, as tcpdump's ipoib.pcap): 20
    zero bytes (the kept part of the global route header), the destination
    hardware address (flags and QPN, then a GID), the protocol type and 2
    reserved bytes."""
    out = []
    for d, p in both_inner():
        qpn = 0x000550 if d == 0 else 0x000551
        gid = bytes.fromhex("20010db8000000000002c9030000000%d" % (1 - d))
        t = 0x86DD if p.haslayer(IPv6) else 0x0800
        hdr = b"\0" * 20 + struct.pack(">I", 0x80000000 | qpn) + gid + struct.pack(">HH", t, 0)
        out.append((hdr + bytes(p), None))
    return LT_IPOIB, out


def tagged_link(d, ethertype):
    """The link's Ethernet header with this EtherType (a tag written by hand follows)."""
    s, t = (MAC_A, MAC_B) if d == 0 else (MAC_B, MAC_A)
    return eth(s, t, ethertype)


def vntag():
    """VN-Tag (EtherType 0x8926) before the EtherType: towards the bridge
    (direction 0, source VIF 0x15), from it (direction 1, destination VIF
    0x15, source VIF 0x2a)."""
    out = []
    for d, p in both_inner():
        t = 0x86DD if p.haslayer(IPv6) else 0x0800
        word = (0x15 << 16) | 0x2A | (1 << 31) if d else 0x15
        out.append(tagged_link(d, 0x8926) / Raw(struct.pack(">IH", word, t)) / p)
    return LT_ETHERNET, frames(out)


def etag():
    """802.1BR E-Tag (EtherType 0x893F): E-CID 0x123 extension 1 (GRP 0),
    ingress E-CID 0x045; the IPv4 exchange with a customer VLAN tag after
    the E-Tag, the IPv6 one without."""
    out = []
    for d, p in both_inner():
        tag = struct.pack(">HHBB", (3 << 13) | 0x045, 0x123, 2, 1)
        if p.haslayer(IPv6):
            out.append(tagged_link(d, 0x893F) / Raw(tag + struct.pack(">H", 0x86DD)) / p)
        else:
            out.append(tagged_link(d, 0x893F) / Raw(tag + struct.pack(">H", 0x8100))
                       / Dot1Q(vlan=30) / p)
    return LT_ETHERNET, frames(out)


def vxlan_in_gre():
    out = []
    for d, p in both_inner():
        out.append(link(d) / outer4(d, "198.18.9.1", "198.18.9.2") / GRE(key_present=1, key=99)
                   / outer4(d) / UDP(sport=52000, dport=4789) / VXLAN(vni=5000, flags=0x08)
                   / inner_eth(d, p))
    return LT_ETHERNET, frames(out)


def mpls_in_gre():
    out = []
    for d, p in both_inner():
        out.append(link(d) / outer6(d) / GRE(proto=0x8847) / MPLS(label=777, s=1, ttl=64) / p)
    return LT_ETHERNET, frames(out)


def gtp_in_vxlan_qinq():
    """GTP-U in VXLAN under QinQ: three layers."""
    out = []
    for d, p in exchange(False, *V4, 49000, 80):
        gtp = outer4(d, "198.18.5.1", "198.18.5.2") / UDP(sport=2152, dport=2152) \
            / GTP_U_Header(teid=0x55 + d, gtp_type=255) / p
        out.append(link(d) / Dot1AD(vlan=100) / Dot1Q(vlan=200) / outer4(d)
                   / UDP(sport=53000, dport=4789) / VXLAN(vni=9, flags=0x08) / inner_eth(d, gtp))
    return LT_ETHERNET, frames(out)


def skips():
    """Frames the decoder cannot open, each with a TCP segment inside, and
    one plain segment so the file is not empty of TCP."""
    out = []
    plain = exchange(False, *V4, 40000, 80)
    seg = plain[0][1]
    out.append(link(0) / seg)                                             # decoded
    out.append(link(0) / outer4(0) / UDP(sport=3544, dport=3544) / Raw(b"\x00\x02" * 4) / seg)  # Teredo
    out.append(link(0) / outer4(0) / IP(proto=50) / Raw(b"\0" * 40))     # ESP (outer IP, proto 50)
    out.append(eth(MAC_A, MAC_B, 0x88B5) / Raw(bytes(seg)))               # local experimental EtherType
    out.append(link(0) / outer4(0) / GRE(proto=0x1234) / seg)             # unknown GRE protocol
    out.append(eth(MAC_A, MAC_B, 0x0806) / Raw(b"\0" * 28))               # ARP: not IP
    out.append(link(0) / outer4(0) / UDP(sport=53, dport=53) / Raw(b"\0" * 12))  # UDP: not TCP
    f = [(bytes(p), None) for p in out]
    # A VXLAN frame cut by the snap length inside the inner Ethernet header.
    v = bytes(link(0) / outer4(0) / UDP(sport=50000, dport=4789) / VXLAN(vni=1, flags=0x08)
              / inner_eth(0, seg))
    f.append((v[:14 + 20 + 8 + 8 + 6], len(v)))
    # An L2TP control message (T, L and S set; a ZLB acknowledgment): not IP.
    zlb = struct.pack(">HHHHHH", 0xC802, 12, 5, 0, 1, 1)
    f.append((bytes(link(0) / outer4(0) / UDP(sport=1701, dport=1701) / Raw(zlb)), None))
    return LT_ETHERNET, f


def unsupported_linktype():
    return LT_USER0, [(bytes(p), None) for _, p in exchange(False, *V4, 40000, 80)]


CAPTURES = {
    "gre": gre,
    "pptp": pptp,
    "nvgre": nvgre,
    "erspan": erspan,
    "vxlan": vxlan,
    "geneve": geneve,
    "gtpu": gtpu,
    "l2tp": l2tp,
    "ipip": ipip,
    "mpls": mpls,
    "pppoe-qinq": pppoe,
    "ppp": ppp,
    "chdlc": chdlc,
    "chdlc-on-ppp": chdlc_on_ppp,
    "pbb": pbb,
    "llc-snap": llc_snap,
    "fddi": fddi,
    "nflog": nflog,
    "fabricpath": fabricpath,
    "ipoib": ipoib,
    "vntag": vntag,
    "etag": etag,
    "vxlan-in-gre": vxlan_in_gre,
    "mpls-in-gre6": mpls_in_gre,
    "gtp-in-vxlan-qinq": gtp_in_vxlan_qinq,
    "skips": skips,
    "unsupported-linktype": unsupported_linktype,
}


def main():
    """Writes every capture, or only those named after OUTDIR."""
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    only = set(sys.argv[2:])
    for name, build in CAPTURES.items():
        if only and name not in only:
            continue
        lt, fr = build()
        write_pcap(os.path.join(outdir, name + ".pcap"), lt, fr)
        print(f"{name}.pcap: {len(fr)} frames, link type {lt}")


if __name__ == "__main__":
    main()
