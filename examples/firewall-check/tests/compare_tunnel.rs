//! `compare` across an encapsulation point, on captures built here: the
//! client's side bare (raw IPv4), the server's side in GRE over IPv4 (24
//! bytes of outer headers), the same inner connection in both. Each
//! `tunnel_*` finding and its counter-case:
//!
//! - the MSS lowered across the tunnel is `tunnel_mss_clamped` (with the
//!   overhead it matches), never `mss_clamped`; between two bare captures
//!   it stays `mss_clamped`;
//! - an inner DSCP copied to the outer header is `tunnel_dscp_copied`
//!   (medium with one DSCP, high with two), a fixed outer DSCP
//!   `tunnel_dscp_not_copied`, an inner 0 under an outer 0 nothing;
//! - the outer ECN field per RFC 6040's normal mode is nothing (a CE inside
//!   the tunnel neither), its compatibility mode `tunnel_ecn_not_copied`,
//!   anything else `tunnel_ecn_nonstandard`;
//! - an outer CE carried to the inner header at decapsulation is nothing
//!   (and not `ecn_changed`), one that is not is `tunnel_ce_not_propagated`,
//!   the only kind of these that makes the exit status 3;
//! - the document validates against the schema, and the text says what the
//!   tunnel did.

use std::collections::BTreeSet;
use std::path::PathBuf;

use firewall_check::analysis::compare::{compare_readers, Options, Report};
use firewall_check::finding::{Confidence, FieldValue, Kind, TunnelAction, TunnelPoint};
use firewall_check::output::compare::render_text;
use serde_json::Value;

mod dump_support;
use dump_support::{pcap, Pkt, Seg, ACK, FIN, SYN};

const C2S: &str = "client_to_server";
const S2C: &str = "server_to_client";
const MSS_1460: [u8; 4] = [2, 4, 0x05, 0xb4];
const MSS_1436: [u8; 4] = [2, 4, 0x05, 0x9c];

/// One packet: when, whether the client sent it, the segment as the
/// client's side sees it, as the server's side sees it (inner), and the
/// outer TOS byte on the server's side.
struct P {
    t: u64,
    from_client: bool,
    client_side: Seg,
    server_side: Seg,
    outer_tos: u8,
}

/// The server's data segments of `pkts`.
fn server_data(pkts: &mut [P]) -> impl Iterator<Item = &mut P> {
    pkts.iter_mut()
        .filter(|p| !p.from_client && p.server_side.payload > 0)
}

/// A connection with a handshake (MSS 1460 each way), three data segments
/// each way and the FINs; every segment the same on both sides, outer TOS 0.
fn connection() -> Vec<P> {
    let c = || Seg::new([198, 18, 1, 2], 40000, [198, 18, 2, 2], 80);
    let s = || Seg::new([198, 18, 2, 2], 80, [198, 18, 1, 2], 40000);
    let ms = 1_000_000u64;
    let mut segs = vec![
        (true, c().seq(100).flags(SYN).opts(&MSS_1460)),
        (
            false,
            s().seq(500).ack(101).flags(SYN | ACK).opts(&MSS_1460),
        ),
        (true, c().seq(101).ack(501).flags(ACK)),
    ];
    for i in 0..3u32 {
        segs.push((
            true,
            c().seq(101 + i * 100).ack(501).flags(ACK).payload(100),
        ));
        segs.push((
            false,
            s().seq(501 + i * 100).ack(401).flags(ACK).payload(100),
        ));
    }
    segs.push((true, c().seq(401).ack(801).flags(ACK | FIN)));
    segs.push((false, s().seq(801).ack(402).flags(ACK | FIN)));
    segs.push((true, c().seq(402).ack(802).flags(ACK)));
    segs.into_iter()
        .enumerate()
        .map(|(i, (from_client, seg))| {
            let seg = seg.ident(0x100 + i as u16);
            P {
                t: i as u64 * ms,
                from_client,
                client_side: seg.clone(),
                server_side: seg,
                outer_tos: 0,
            }
        })
        .collect()
}

/// Outer IPv4 (198.18.0.1 <-> 198.18.0.2, TTL 64, checksum valid) and a
/// GRE header (no key) around `inner`: 24 bytes.
fn gre(outer_tos: u8, from_client: bool, inner: &[u8]) -> Vec<u8> {
    let (src, dst) = if from_client {
        ([198, 18, 0, 1], [198, 18, 0, 2])
    } else {
        ([198, 18, 0, 2], [198, 18, 0, 1])
    };
    let len = (20 + 4 + inner.len()) as u16;
    let mut h = vec![0x45, outer_tos];
    h.extend_from_slice(&len.to_be_bytes());
    h.extend_from_slice(&[0, 0, 0x40, 0, 64, 47, 0, 0]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let sum: u32 = h
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    let sum = !(((sum & 0xffff) + (sum >> 16)) as u16);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
    h.extend_from_slice(&[0, 0, 0x08, 0x00]);
    h.extend_from_slice(inner);
    h
}

/// The client side's capture (bare) and the server side's (GRE; bare too
/// when `tunnel` is false); each side sees a packet 10 us after its sender's.
fn captures(pkts: &[P], tunnel: bool) -> (Vec<u8>, Vec<u8>) {
    let t0 = 1_700_000_000_000_000_000u64;
    let transit = 10_000;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for p in pkts {
        let (ta, tb) = if p.from_client {
            (t0 + p.t, t0 + p.t + transit)
        } else {
            (t0 + p.t + transit, t0 + p.t)
        };
        a.push(Pkt::new(ta, p.client_side.ipv4()));
        let inner = p.server_side.ipv4();
        let frame = if tunnel {
            gre(p.outer_tos, p.from_client, &inner)
        } else {
            inner
        };
        b.push(Pkt::new(tb, frame));
    }
    a.sort_by_key(|p| p.ts_ns);
    b.sort_by_key(|p| p.ts_ns);
    (pcap(101, true, &a), pcap(101, true, &b))
}

fn kinds(r: &Report) -> BTreeSet<(String, String)> {
    r.findings
        .iter()
        .map(|f| (f.kind.to_string(), f.direction.as_str().to_string()))
        .collect()
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(k, d)| (k.to_string(), d.to_string()))
        .collect()
}

fn schema() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/json-schema/compare.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("JSON")
}

/// Compares in both orders: the same findings; the document valid.
fn compare(pkts: &[P], tunnel: bool) -> Report {
    let (a, b) = captures(pkts, tunnel);
    let r = compare_readers(&a[..], "bare.pcap", &b[..], "gre.pcap", &Options::default())
        .expect("compare");
    let r2 = compare_readers(&b[..], "gre.pcap", &a[..], "bare.pcap", &Options::default())
        .expect("compare");
    assert_eq!(kinds(&r), kinds(&r2));
    assert_eq!(r.connections.len(), 1, "{}", render_text(&r));
    assert_eq!(
        r.connections[0].matched_packets,
        pkts.len(),
        "{}",
        render_text(&r)
    );
    let doc = serde_json::to_value(&r).expect("JSON");
    let validator = jsonschema::validator_for(&schema()).expect("schema");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    r
}

fn the(r: &Report, kind: Kind) -> &firewall_check::finding::Finding {
    r.findings
        .iter()
        .find(|f| f.kind == kind)
        .unwrap_or_else(|| panic!("no {kind}: {:?}", kinds(r)))
}

/// The tunnel evidence of the finding of `kind`.
fn tunnel_of(r: &Report, kind: Kind) -> TunnelPoint {
    the(r, kind)
        .compared()
        .and_then(|e| e.tunnel.clone())
        .unwrap_or_else(|| panic!("{kind} carries no tunnel"))
}

#[test]
fn a_bare_and_a_tunnelled_capture_of_one_connection_match_with_nothing_to_report() {
    let r = compare(&connection(), true);
    assert!(r.findings.is_empty(), "{:?}", kinds(&r));
    assert!(!r.has_tampering());
    // The tunnel is each capture's view: the server side's, not the client's.
    let c = &r.connections[0];
    assert!(c.client_side.tunnels.is_none() && c.server_side.tunnels.is_some());
}

#[test]
fn the_mss_lowered_across_the_tunnel_is_the_tunnels_clamp() {
    let mut pkts = connection();
    pkts[0].server_side = pkts[0].server_side.clone().opts(&MSS_1436);
    let r = compare(&pkts, true);
    assert_eq!(kinds(&r), set(&[("tunnel_mss_clamped", C2S)]));
    let f = the(&r, Kind::TunnelMssClamped);
    let e = f.compared().unwrap();
    assert_eq!(
        (&e.before, &e.after),
        (&FieldValue::Mss(1460), &FieldValue::Mss(1436))
    );
    let t = e.tunnel.as_ref().expect("the tunnel");
    assert_eq!(t.action, TunnelAction::Encapsulation);
    assert_eq!(t.encapsulation, capture::EncapKind::Gre);
    assert_eq!(t.overhead, 24);
    assert_eq!(t.mss_matches_overhead, Some(true));
    assert_eq!(f.confidence, Confidence::High);
    assert!(
        !r.has_tampering(),
        "standard tunnel behaviour: exit status 0"
    );
    let text = render_text(&r);
    assert!(
        text.contains("tunnel: encapsulation into GRE (24 bytes of outer headers); the MSS fell by exactly that"),
        "{text}"
    );
    // Another amount: said so.
    pkts[0].server_side = pkts[0].server_side.clone().opts(&[2, 4, 0x04, 0xb0]);
    let r = compare(&pkts, true);
    let e = the(&r, Kind::TunnelMssClamped).compared().unwrap().clone();
    assert_eq!(e.tunnel.unwrap().mss_matches_overhead, Some(false));
    // Counter-case: two bare captures, the same change is mss_clamped.
    pkts[0].server_side = pkts[0].server_side.clone().opts(&MSS_1436);
    let r = compare(&pkts, false);
    assert_eq!(kinds(&r), set(&[("mss_clamped", C2S)]));
    assert!(r.has_tampering());
}

#[test]
fn dscp_copied_or_not_copied_to_the_outer_header() {
    // AF41 on every client packet, copied.
    let mut pkts = connection();
    for p in pkts.iter_mut().filter(|p| p.from_client) {
        p.client_side = p.client_side.clone().tos(34 << 2);
        p.server_side = p.server_side.clone().tos(34 << 2);
        p.outer_tos = 34 << 2;
    }
    let r = compare(&pkts, true);
    assert_eq!(kinds(&r), set(&[("tunnel_dscp_copied", C2S)]));
    let f = the(&r, Kind::TunnelDscpCopied);
    // One inner DSCP: a fixed outer AF41 would look the same.
    assert_eq!(f.confidence, Confidence::Medium);
    assert!(!r.has_tampering());
    // Two inner DSCPs, each copied: high.
    for p in pkts.iter_mut().filter(|p| p.from_client).take(2) {
        p.client_side = p.client_side.clone().tos(10 << 2);
        p.server_side = p.server_side.clone().tos(10 << 2);
        p.outer_tos = 10 << 2;
    }
    let r = compare(&pkts, true);
    assert_eq!(the(&r, Kind::TunnelDscpCopied).confidence, Confidence::High);
    assert_eq!(kinds(&r), set(&[("tunnel_dscp_copied", C2S)]));
    // A fixed outer DSCP 0: not copied, medium, exit status 0.
    for p in pkts.iter_mut() {
        p.outer_tos = 0;
    }
    let r = compare(&pkts, true);
    assert_eq!(kinds(&r), set(&[("tunnel_dscp_not_copied", C2S)]));
    let f = the(&r, Kind::TunnelDscpNotCopied);
    assert_eq!(f.confidence, Confidence::Medium);
    let e = f.compared().unwrap();
    assert!(matches!(e.before, FieldValue::Dscp(10 | 34)));
    assert_eq!(e.after, FieldValue::Dscp(0));
    assert!(!r.has_tampering());
    let doc = serde_json::to_value(&r).unwrap();
    assert_eq!(doc["findings"][0]["confidence"], "medium");
    assert_eq!(doc["findings"][0]["tunnel"]["encapsulation"], "gre");
    // The schema holds a tunnel kind to its two fields, and other kinds
    // to neither.
    let validator = jsonschema::validator_for(&schema()).unwrap();
    let mut bad = doc.clone();
    bad["findings"][0]
        .as_object_mut()
        .unwrap()
        .remove("confidence");
    assert!(!validator.is_valid(&bad));
    let mut bad = doc.clone();
    bad["findings"][0]["kind"] = "dscp_changed".into();
    assert!(!validator.is_valid(&bad));
    // Inner 0 under outer 0 shows nothing.
    assert!(compare(&connection(), true).findings.is_empty());
}

/// The connection with every data segment's inner ECN field `inner` and
/// outer `outer` (both directions).
fn ecn(inner: u8, outer: u8) -> Vec<P> {
    let mut pkts = connection();
    for p in pkts.iter_mut().filter(|p| p.client_side.payload > 0) {
        p.client_side = p.client_side.clone().tos(inner);
        p.server_side = p.server_side.clone().tos(inner);
        p.outer_tos = outer;
    }
    pkts
}

#[test]
fn ecn_at_encapsulation_against_rfc_6040() {
    const NOT_ECT: u8 = 0;
    const ECT1: u8 = 1;
    const ECT0: u8 = 2;
    const CE: u8 = 3;
    // Normal mode (and a CE set inside the tunnel): nothing.
    for (inner, outer) in [(ECT0, ECT0), (ECT1, ECT1), (CE, ECT0), (ECT0, CE)] {
        let mut pkts = ecn(inner, outer);
        // Server-to-client packets in the tunnel as normal mode puts them
        // there (CE under ECT(0)): they leave it as they entered.
        for p in pkts.iter_mut().filter(|p| !p.from_client) {
            p.outer_tos = if p.server_side.tos == CE {
                ECT0
            } else {
                p.server_side.tos
            };
        }
        let r = compare(&pkts, true);
        assert!(
            r.findings.is_empty(),
            "inner {inner} outer {outer}: {:?}",
            kinds(&r)
        );
    }
    // Compatibility mode: outer Not-ECT over ECT(0), on the way in.
    let mut pkts = ecn(ECT0, NOT_ECT);
    for p in pkts.iter_mut().filter(|p| !p.from_client) {
        p.outer_tos = p.server_side.tos;
    }
    let r = compare(&pkts, true);
    assert_eq!(kinds(&r), set(&[("tunnel_ecn_not_copied", C2S)]));
    let f = the(&r, Kind::TunnelEcnNotCopied);
    assert_eq!(f.confidence, Confidence::Medium);
    let t = tunnel_of(&r, Kind::TunnelEcnNotCopied);
    assert_eq!((t.outer_ecn, t.rfc6040), (Some(NOT_ECT), Some(Some(ECT0))));
    assert!(!r.has_tampering());
    // An ECN-capable outer header over a Not-ECT inner one: neither mode.
    let mut pkts = ecn(NOT_ECT, ECT0);
    for p in pkts.iter_mut().filter(|p| !p.from_client) {
        p.outer_tos = 0;
    }
    let r = compare(&pkts, true);
    assert_eq!(kinds(&r), set(&[("tunnel_ecn_nonstandard", C2S)]));
    assert_eq!(
        the(&r, Kind::TunnelEcnNonstandard).confidence,
        Confidence::Medium
    );
}

#[test]
fn ce_on_the_outer_header_at_decapsulation() {
    const ECT0: u8 = 2;
    const CE: u8 = 3;
    // Server to client: in the tunnel ECT(0) under an outer CE.
    let marked = || {
        let mut pkts = ecn(ECT0, ECT0);
        for p in server_data(&mut pkts) {
            p.outer_tos = CE;
        }
        pkts
    };
    // Carried to the inner header: nothing, not even ecn_changed.
    let mut pkts = marked();
    for p in server_data(&mut pkts) {
        p.client_side = p.client_side.clone().tos(CE);
    }
    let r = compare(&pkts, true);
    assert!(r.findings.is_empty(), "{:?}", kinds(&r));
    // Not carried: the mark is lost, a fault (exit status 3).
    let r = compare(&marked(), true);
    assert_eq!(kinds(&r), set(&[("tunnel_ce_not_propagated", S2C)]));
    let f = the(&r, Kind::TunnelCeNotPropagated);
    assert_eq!(f.confidence, Confidence::High);
    assert!(r.has_tampering());
    let e = f.compared().unwrap();
    assert_eq!(e.count, 3);
    assert_eq!(
        (&e.before, &e.after),
        (&FieldValue::Ecn(ECT0), &FieldValue::Ecn(ECT0))
    );
    let t = e.tunnel.as_ref().unwrap();
    assert_eq!(t.action, TunnelAction::Decapsulation);
    assert_eq!((t.outer_ecn, t.rfc6040), (Some(CE), Some(Some(CE))));
    let text = render_text(&r);
    assert!(
        text.contains("tunnel: decapsulation out of GRE (24 bytes of outer headers); outer ECN CE; RFC 6040 gives CE"),
        "{text}"
    );
    assert!(text.contains("confidence: high"), "{text}");
}

#[test]
fn other_decapsulations_outside_figure_4() {
    // Outer ECT(1) over inner ECT(0): Figure 4 gives ECT(1); left ECT(0).
    let mut pkts = ecn(2, 2);
    for p in server_data(&mut pkts) {
        p.outer_tos = 1;
    }
    let r = compare(&pkts, true);
    assert_eq!(kinds(&r), set(&[("tunnel_ecn_nonstandard", S2C)]));
    let t = tunnel_of(&r, Kind::TunnelEcnNonstandard);
    assert_eq!(t.action, TunnelAction::Decapsulation);
    assert_eq!((t.outer_ecn, t.rfc6040), (Some(1), Some(Some(1))));
    assert!(!r.has_tampering());
    // Carried in as ECT(1): nothing.
    for p in server_data(&mut pkts) {
        p.client_side = p.client_side.clone().tos(1);
    }
    assert!(compare(&pkts, true).findings.is_empty());
    // Outer CE over inner Not-ECT forwarded: RFC 6040 drops it (null).
    let mut pkts = connection();
    for p in server_data(&mut pkts) {
        p.outer_tos = 3;
    }
    let r = compare(&pkts, true);
    assert_eq!(kinds(&r), set(&[("tunnel_ecn_nonstandard", S2C)]));
    let t = tunnel_of(&r, Kind::TunnelEcnNonstandard);
    assert_eq!(t.rfc6040, Some(None));
    let doc = serde_json::to_value(&r).unwrap();
    assert_eq!(doc["findings"][0]["tunnel"]["rfc6040"], Value::Null);
    let text = render_text(&r)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains("RFC 6040 gives drop"), "{text}");
}

#[test]
fn plain_captures_have_no_tunnel_fields() {
    // The same ECN change between two bare captures is ecn_changed, with
    // neither confidence nor tunnel in the JSON.
    let mut pkts = ecn(2, 0);
    for p in pkts
        .iter_mut()
        .filter(|p| p.from_client && p.client_side.payload > 0)
    {
        p.server_side = p.server_side.clone().tos(0);
    }
    let r = compare(&pkts, false);
    assert_eq!(kinds(&r), set(&[("ecn_changed", C2S)]));
    let doc = serde_json::to_value(&r).unwrap();
    let f = &doc["findings"][0];
    assert!(
        f.get("confidence").is_none() && f.get("tunnel").is_none(),
        "{f}"
    );
    assert!(!render_text(&r).contains("tunnel:"));
}
