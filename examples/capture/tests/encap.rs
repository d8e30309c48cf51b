//! The decoder through tunnels (`decode_segment`) on the encapsulation
//! captures (`examples/corpus/encap/`, built by its `make_captures.py`), the
//! tcpdump corpus and the pcapng conformance suite:
//!
//! - every frame of a tunnel capture gives a segment, carried in the layers
//!   the file is named after (also read back from an owned copy of the
//!   frame's headers, `to_owned_prefix`); the two directions of one inner connection
//!   have one [`TunnelKey`], and two inner connections that differ only by
//!   their tunnel (GRE key 1 and 2, VNI 17 and 18) have two;
//! - the frames of `skips.pcap` are skipped for the reasons they were built
//!   with;
//! - on plain links `decode_segment` and `decode_tcp` give the same segment,
//!   and `decode_tcp` enters no tunnel;
//! - every prefix of every frame of all these files decodes without a panic,
//!   its TCP bytes within the frame;
//! - IP over InfiniBand is a plain link; FabricPath is read only right
//!   after the MAC addresses, and cut FabricPath, VN-Tag and E-Tag headers
//!   (and the VLAN tag after an E-Tag) are truncations;
//! - nesting stops at `MAX_LAYERS`.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use capture::encap::{EncapKind, NotIp, Skip, TunnelKey, Unsupported, MAX_LAYERS};
use capture::link::LINKTYPE_RAW;
use capture::{decode_segment, decode_tcp, CaptureReader};

fn corpus(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(sub)
}

/// Every record of a capture: (link type, bytes, original length).
fn records(path: &Path) -> Vec<(u32, Vec<u8>, u32)> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = CaptureReader::new(file).expect("a capture");
    let mut out = Vec::new();
    while let Ok(Some(r)) = reader.next_record() {
        out.push((r.linktype, r.data.to_vec(), r.origlen));
    }
    out
}

/// Files with `ext` under `dir`, recursively, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("corpus directory") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The layers each tunnel capture's segments are carried in, outermost first.
const TUNNEL_CAPTURES: [(&str, &[EncapKind]); 24] = [
    ("gre", &[EncapKind::Gre]),
    ("pptp", &[EncapKind::Pptp]),
    ("nvgre", &[EncapKind::Nvgre]),
    ("erspan", &[EncapKind::Gre, EncapKind::Erspan]),
    ("vxlan", &[EncapKind::Vxlan]),
    ("geneve", &[EncapKind::Geneve]),
    ("gtpu", &[EncapKind::GtpU]),
    ("l2tp", &[EncapKind::L2tp]),
    ("ipip", &[EncapKind::IpInIp]),
    ("mpls", &[EncapKind::Mpls]),
    ("pppoe-qinq", &[EncapKind::Pppoe]),
    ("ppp", &[EncapKind::Ppp]),
    ("chdlc", &[EncapKind::CiscoHdlc]),
    ("chdlc-on-ppp", &[EncapKind::CiscoHdlc]),
    ("pbb", &[EncapKind::Pbb]),
    ("llc-snap", &[EncapKind::LlcSnap]),
    ("fddi", &[EncapKind::Fddi]),
    ("nflog", &[EncapKind::Nflog]),
    ("vxlan-in-gre", &[EncapKind::Gre, EncapKind::Vxlan]),
    ("mpls-in-gre6", &[EncapKind::Gre, EncapKind::Mpls]),
    ("gtp-in-vxlan-qinq", &[EncapKind::Vxlan, EncapKind::GtpU]),
    ("fabricpath", &[EncapKind::FabricPath]),
    ("vntag", &[EncapKind::VnTag]),
    ("etag", &[EncapKind::ETag]),
];

/// An inner connection, the same for both directions.
type Conn = (IpAddr, u16, IpAddr, u16);

fn conn(src: IpAddr, sport: u16, dst: IpAddr, dport: u16) -> Conn {
    if (src, sport) <= (dst, dport) {
        (src, sport, dst, dport)
    } else {
        (dst, dport, src, sport)
    }
}

#[test]
fn every_tunnel_capture_decodes_frame_by_frame_with_its_layers() {
    for (name, kinds) in TUNNEL_CAPTURES {
        let recs = records(&corpus("encap").join(format!("{name}.pcap")));
        assert!(!recs.is_empty(), "{name}");
        let mut keys: BTreeMap<Conn, Vec<TunnelKey>> = BTreeMap::new();
        for (i, (lt, data, orig)) in recs.iter().enumerate() {
            let seg = decode_segment(*lt, data, *orig)
                .unwrap_or_else(|e| panic!("{name} frame {}: {e}", i + 1));
            let got: Vec<EncapKind> = seg.tunnels.kinds().collect();
            assert_eq!(got, kinds, "{name} frame {}", i + 1);
            assert!(!seg.is_truncated(), "{name} frame {}", i + 1);
            assert!(seg.tcp.len() >= 20);
            let sport = u16::from_be_bytes([seg.tcp[0], seg.tcp[1]]);
            let dport = u16::from_be_bytes([seg.tcp[2], seg.tcp[3]]);
            let key = seg.tunnels.key();
            // An owned copy up to the inner TCP header holds the same layers.
            let owned = seg.tunnels.to_owned_prefix(seg.tcp_offset + 20);
            assert_eq!(owned.tunnels(), seg.tunnels, "{name} frame {}", i + 1);
            assert_eq!(owned.tunnels().key(), key, "{name} frame {}", i + 1);
            assert_eq!(owned.tunnels().len(), kinds.len(), "{name} frame {}", i + 1);
            let entry = keys
                .entry(conn(seg.ip.src, sport, seg.ip.dst, dport))
                .or_default();
            if !entry.contains(&key) {
                entry.push(key);
            }
            // decode_tcp stays on plain links.
            assert!(matches!(decode_tcp(*lt, data, *orig), Ok(None)), "{name}");
        }
        for (c, k) in &keys {
            // One key per connection (both directions), except where the
            // capture holds the same inner connection in two tunnels.
            let two = (name == "gre" && c.3 == 22) || (name == "vxlan" && c.1 == 44000);
            assert_eq!(k.len(), if two { 2 } else { 1 }, "{name} {c:?}: {k:?}");
        }
    }
}

/// IP over InfiniBand is a plain link: every frame of `ipoib.pcap` gives a
/// segment in no layer, the same from `decode_tcp`.
#[test]
fn ipoib_is_a_plain_link() {
    let recs = records(&corpus("encap").join("ipoib.pcap"));
    assert_eq!(recs.len(), 12);
    for (i, (lt, data, orig)) in recs.iter().enumerate() {
        assert_eq!(*lt, capture::link::LINKTYPE_IPOIB);
        let seg = decode_segment(*lt, data, *orig)
            .unwrap_or_else(|e| panic!("ipoib frame {}: {e}", i + 1));
        assert!(seg.tunnels.is_empty(), "ipoib frame {}", i + 1);
        assert_eq!(seg.tcp_offset, 44 + seg.ip.header_len);
        let plain = decode_tcp(*lt, data, *orig).unwrap().expect("a segment");
        assert_eq!((plain.tcp, plain.ip), (seg.tcp, seg.ip));
    }
}

/// FabricPath is read only where 0x8903 follows the MAC addresses (its
/// header reuses them); the tags' headers and the VLAN tag after an E-Tag
/// are checked before they are read.
#[test]
fn fabricpath_and_tags_at_their_edges() {
    use capture::error::DecodeError;
    let fp = records(&corpus("encap").join("fabricpath.pcap"));
    let (lt, data, _) = &fp[0];
    let mut tagged = data[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged.extend_from_slice(&data[12..]);
    assert_eq!(
        decode_segment(*lt, &tagged, tagged.len() as u32).err(),
        Some(Skip::Unsupported(Unsupported::EtherType(0x8903)))
    );
    for (cut, layer) in [(15, "FabricPath"), (20, "Ethernet"), (32, "VLAN")] {
        let got = decode_segment(*lt, &data[..cut], data.len() as u32).err();
        assert!(
            matches!(got, Some(Skip::Decode(DecodeError::Truncated { layer: l, .. })) if l == layer),
            "fabricpath cut at {cut}: {got:?}"
        );
    }
    let et = records(&corpus("encap").join("etag.pcap"));
    let (lt, data, _) = &et[0];
    for (cut, layer) in [(17, "E-Tag"), (24, "VLAN")] {
        let got = decode_segment(*lt, &data[..cut], data.len() as u32).err();
        assert!(
            matches!(got, Some(Skip::Decode(DecodeError::Truncated { layer: l, .. })) if l == layer),
            "etag cut at {cut}: {got:?}"
        );
    }
    let vn = records(&corpus("encap").join("vntag.pcap"));
    let (lt, data, _) = &vn[0];
    let got = decode_segment(*lt, &data[..18], data.len() as u32).err();
    assert!(
        matches!(
            got,
            Some(Skip::Decode(DecodeError::Truncated {
                layer: "VN-Tag",
                ..
            }))
        ),
        "{got:?}"
    );
}

#[test]
fn skipped_frames_say_why() {
    let recs = records(&corpus("encap").join("skips.pcap"));
    let got: Vec<Result<usize, Skip>> = recs
        .iter()
        .map(|(lt, d, o)| decode_segment(*lt, d, *o).map(|s| s.tunnels.len()))
        .collect();
    assert_eq!(got[0], Ok(0));
    assert_eq!(got[1], Err(Skip::Unsupported(Unsupported::UdpPort(3544))));
    assert_eq!(got[2], Err(Skip::Unsupported(Unsupported::IpProtocol(50))));
    assert_eq!(
        got[3],
        Err(Skip::Unsupported(Unsupported::EtherType(0x88b5)))
    );
    assert_eq!(
        got[4],
        Err(Skip::Unsupported(Unsupported::GreProtocol(0x1234)))
    );
    assert_eq!(got[5], Err(Skip::NotIp(NotIp::EtherType(0x0806))));
    assert_eq!(got[6], Err(Skip::NotTcp(17)));
    assert!(matches!(got[7], Err(Skip::Decode(_))), "{:?}", got[7]);
    assert!(got[7].unwrap_err().is_unopened());
    assert_eq!(got[8], Err(Skip::NotIp(NotIp::L2tpControl)));
    assert_eq!(got.len(), 9);
    let recs = records(&corpus("encap").join("unsupported-linktype.pcap"));
    for (lt, d, o) in recs {
        assert_eq!(decode_segment(lt, &d, o).err(), Some(Skip::LinkType(147)));
    }
}

/// All capture files the tests know.
fn all_captures() -> Vec<PathBuf> {
    let mut v = files(&corpus("encap"), "pcap");
    v.extend(files(&corpus("tcpdump"), "pcap"));
    v.extend(files(&corpus("tcpdump"), "pcapng"));
    v.extend(files(&corpus("pcapng-conformance"), "pcapng"));
    v
}

#[test]
fn plain_links_decode_as_before_and_no_prefix_panics() {
    let mut frames = 0;
    let mut plain = 0;
    for path in all_captures() {
        for (lt, data, orig) in records(&path) {
            frames += 1;
            let new = decode_segment(lt, &data, orig);
            let old = decode_tcp(lt, &data, orig);
            if let Ok(s) = &new {
                if s.tunnels.is_empty() {
                    plain += 1;
                    let o = old.expect("plain").expect("a segment");
                    assert_eq!(
                        (o.tcp, o.wire_len, o.ip, o.tcp_offset),
                        (s.tcp, s.wire_len, s.ip, s.tcp_offset),
                        "{}",
                        path.display()
                    );
                }
            }
            // A link or IP header decode_tcp refuses, decode_segment refuses
            // the same way (it also refuses cut tunnel headers, which
            // decode_tcp never reads).
            if let Err(e) = old {
                assert_eq!(new.err(), Some(Skip::Decode(e)), "{}", path.display());
            }
            for cut in 0..data.len() {
                let part = &data[..cut];
                if let Ok(s) = decode_segment(lt, part, orig) {
                    assert!(s.tcp_offset + s.tcp.len() <= cut);
                    assert!(s.tunnels.len() <= MAX_LAYERS);
                    let _ = s.tunnels.iter().count();
                    let _ = s.tunnels.key();
                }
            }
        }
    }
    assert!(
        frames > 400 && plain > 150,
        "{frames} frames, {plain} plain"
    );
}

/// `depth` IPv4-in-IPv4 headers around an IPv4 TCP header.
fn nested_ipip(depth: usize) -> Vec<u8> {
    let inner_len = 40;
    let mut pkt = Vec::new();
    for i in 0..=depth {
        let total = (inner_len + 20 * (depth - i)) as u16;
        let proto = if i == depth { 6 } else { 4 };
        pkt.extend_from_slice(&[0x45, 0]);
        pkt.extend_from_slice(&total.to_be_bytes());
        pkt.extend_from_slice(&[0, 1, 0, 0, 64, proto, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2]);
    }
    pkt.extend_from_slice(&[0; 20]);
    pkt
}

#[test]
fn nesting_is_bounded() {
    let ok = nested_ipip(MAX_LAYERS);
    let seg = decode_segment(LINKTYPE_RAW, &ok, ok.len() as u32).unwrap();
    assert_eq!(seg.tunnels.len(), MAX_LAYERS);
    assert!(seg.tunnels.kinds().all(|k| k == EncapKind::IpInIp));
    let deep = nested_ipip(MAX_LAYERS + 1);
    assert_eq!(
        decode_segment(LINKTYPE_RAW, &deep, deep.len() as u32).err(),
        Some(Skip::TooDeep)
    );
}

#[test]
fn the_outer_ip_header_is_the_innermost_layer_carried_in_ip() {
    // GRE: the outer IPv4 (20) or IPv6 (40) header and GRE's 4 bytes, 4
    // more each for a checksum, a key, a sequence number (gre.pcap has
    // each). VXLAN over IPv4: IPv4 (20) + UDP (8) + VXLAN (8) + Ethernet (14).
    for (file, kind) in [
        ("gre.pcap", EncapKind::Gre),
        ("vxlan.pcap", EncapKind::Vxlan),
    ] {
        let mut seen = std::collections::BTreeSet::new();
        for (lt, frame, orig) in records(&corpus("encap").join(file)) {
            let seg = decode_segment(lt, &frame, orig).expect("a segment");
            let inner_at = seg.tcp_offset - seg.ip.header_len;
            let o = seg.tunnels.outer_ip(inner_at).expect("an outer IP header");
            assert_eq!(o.kind, kind, "{file}");
            let ip = if o.v6 { 40 } else { 20 };
            let allowed: &[usize] = if kind == EncapKind::Vxlan {
                &[30]
            } else {
                &[4, 8, 12]
            };
            assert!(allowed.contains(&(o.overhead - ip)), "{file}: {o:?}");
            seen.insert(o.overhead);
            // The TOS byte and TTL are those of the outer header.
            let at = inner_at - o.overhead;
            assert_eq!(frame[at] >> 4, if o.v6 { 6 } else { 4 });
            if !o.v6 {
                assert_eq!((o.tos, o.ttl), (frame[at + 1], frame[at + 8]), "{file}");
            }
        }
        assert!(!seen.is_empty());
    }
    // Nested IP in IP: the innermost outer header, 20 bytes before the inner.
    let mut pkt = nested_ipip(2);
    pkt[20 + 1] = 0x8a; // the second header's TOS: AF41, ECT(0)
    let seg = decode_segment(LINKTYPE_RAW, &pkt, pkt.len() as u32).unwrap();
    let o = seg.tunnels.outer_ip(40).expect("outer");
    assert_eq!((o.kind, o.tos, o.overhead), (EncapKind::IpInIp, 0x8a, 20));
    // A plain segment has none.
    let plain = nested_ipip(0);
    let seg = decode_segment(LINKTYPE_RAW, &plain, plain.len() as u32).unwrap();
    assert_eq!(seg.tunnels.outer_ip(0), None);
}
