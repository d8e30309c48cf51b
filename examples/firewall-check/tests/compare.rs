//! `firewall-check compare` on the sample captures shipped in `examples/data/`
//! (made by the network lab, see `examples/data/README.md`). These run
//! everywhere, without root.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use firewall_check::analysis::compare::{
    compare_paths, compare_readers, CaptureWarning, MatchedOn, Options, Report, RttSource, SidesBy,
};
use firewall_check::finding::{CaptureSide, Compared, FieldValue, Finding};
use firewall_check::output::compare::render_text;
use firewall_check::output::impact::impact_text;

mod dump_support;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../data")
        .join(name)
}

fn compare(a: &str, b: &str) -> Report {
    compare_paths(&data(a), &data(b), &Options::default()).expect("sample captures compare")
}

fn kinds(r: &Report) -> BTreeSet<(String, String)> {
    r.findings
        .iter()
        .map(|f| (f.kind.to_string(), f.direction.as_str().to_string()))
        .collect()
}

/// A finding's evidence (every `compare` finding has [`Compared`]).
fn ev(f: &Finding) -> &Compared {
    f.compared().expect("compare evidence")
}

/// A finding as the JSON report writes it.
fn json(f: &Finding) -> serde_json::Value {
    serde_json::to_value(f).unwrap()
}

/// A finding's impact in words.
fn summary(f: &Finding) -> String {
    impact_text(&f.impact)
}

/// The first finding of `kind` (in direction `dir`, when given).
fn finding<'a>(r: &'a Report, kind: &str, dir: Option<&str>) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.kind == kind && dir.is_none_or(|d| f.direction.as_str() == d))
        .unwrap()
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(k, d)| (k.to_string(), d.to_string()))
        .collect()
}

const PAIRS: [(&str, &str); 4] = [
    ("campus-inside.pcap", "campus-outside.pcap"),
    ("nat-inside.pcap", "nat-outside.pcap"),
    ("synproxy-inside.pcap", "synproxy-outside.pcap"),
    ("clean6-inside.pcap", "clean6-outside.pcap"),
];

#[test]
fn campus_window_scale_stripped_from_syn_ack() {
    let r = compare("campus-inside.pcap", "campus-outside.pcap");
    assert_eq!(r.connections.len(), 1);
    let c = &r.connections[0];
    assert_eq!(c.client.ip().to_string(), "198.18.1.2", "{}", c.client);
    assert_eq!(c.server.port(), 5201, "{}", c.server);
    assert!(c.client_side.capture.ends_with("campus-inside.pcap"));
    assert_eq!(c.sides_by, SidesBy::Ttl);
    assert_eq!(kinds(&r), set(&[("wscale_stripped", "server_to_client")]));
    let f = &r.findings[0];
    assert_eq!(ev(f).count, 1, "only the SYN-ACK carries the option");
    // Typed values: the shift before, the option absent after.
    assert_eq!(ev(f).before, FieldValue::Shift(10));
    assert_eq!(ev(f).after, FieldValue::Absent);
    // Structured in JSON (schema 2): the shift before, nothing after.
    assert_eq!(json(f)["before"], serde_json::json!({"shift": 10}));
    assert!(json(f)["after"].is_null(), "{}", json(f));
    let text = render_text(&r);
    assert!(text.contains("before: shift 10  after: absent"), "{text}");
    // The lab path was shaped to about 10 ms; the unscaled 65,535-byte
    // window caps server -> client at 65535 * 8 / RTT (52.4 Mbit/s at 10 ms,
    // the campus incident).
    let rtt = c.rtt.expect("handshake RTT measured").value.as_secs_f64();
    assert!((0.008..0.03).contains(&rtt), "rtt {rtt}");
    let ceiling = f.impact.ceiling_bps_after.expect("ceiling computed");
    let expected = 65_535.0 * 8.0 / rtt;
    assert!(
        (ceiling as f64 - expected).abs() / expected < 0.001,
        "{ceiling} vs {expected}"
    );
    assert!(summary(f).contains("65,535 bytes"), "{}", summary(f));
    let cause = &json(f)["cause"];
    assert!(cause.as_str().unwrap().contains("window-scale"), "{cause}");
    assert!(r.notes.is_empty());
}

#[test]
fn campus_at_exactly_10ms_reproduces_52_4_mbit() {
    // The campus incident: a 64 KiB window over 10 ms is 65535*8/0.010 = 52.4 Mbit/s.
    let opts = Options {
        rtt: Some(std::time::Duration::from_millis(10)),
        ..Options::default()
    };
    let r = compare_paths(
        &data("campus-inside.pcap"),
        &data("campus-outside.pcap"),
        &opts,
    )
    .unwrap();
    assert_eq!(r.connections[0].rtt.unwrap().source, RttSource::Given);
    assert_eq!(r.findings[0].impact.ceiling_bps_after, Some(52_428_000));
    assert!(summary(&r.findings[0]).contains("52.4 Mbit/s"));
    assert!(summary(&r.findings[0]).contains("1,250,000 bytes (shift 5)"));
}

#[test]
fn nat_with_port_translation_and_timestamp_strip() {
    let r = compare("nat-inside.pcap", "nat-outside.pcap");
    assert_eq!(r.connections.len(), 1);
    let c = &r.connections[0];
    assert!(
        c.client_side
            .server
            .to_string()
            .starts_with("198.19.0.80:80"),
        "{}",
        c.client_side.server
    );
    assert_eq!(
        c.server_side.client.ip().to_string(),
        "198.18.2.1",
        "{}",
        c.server_side.client
    );
    assert!(!c.matched_by.contains(&MatchedOn::SameAddresses));
    // The middlebox rewrote the client's packets (source and destination);
    // the replies are that translation undone, so they are not a second
    // finding (schema 1 reported the reply's source rewrite as a nat
    // server_to_client finding, which read as if replies were NATed).
    assert_eq!(
        kinds(&r),
        set(&[
            ("nat", "client_to_server"),
            ("timestamps_stripped", "client_to_server"),
        ])
    );
    let nat = finding(&r, "nat", Some("client_to_server"));
    let nat_json = json(nat);
    assert_eq!(
        nat_json["before"],
        serde_json::json!({
            "src": {"addr": "198.18.1.2", "port": 33000},
            "dst": {"addr": "198.19.0.80", "port": 80},
        })
    );
    let after = &nat_json["after"];
    assert_eq!(after["src"]["addr"], "198.18.2.1");
    let port = after["src"]["port"].as_u64().unwrap();
    assert!((40_000..=40_999).contains(&port), "{after}");
    assert_eq!(
        after["dst"],
        serde_json::json!({"addr": "198.18.2.2", "port": 5201})
    );
    assert!(ev(nat).replies_translated.unwrap() > 10, "{nat:?}");
}

#[test]
fn syn_proxy_is_named_and_its_translations_reported() {
    let r = compare("synproxy-inside.pcap", "synproxy-outside.pcap");
    assert_eq!(r.connections.len(), 1);
    let k = kinds(&r);
    for want in [
        ("handshake_proxied", "server_to_client"),
        ("seq_rewritten", "server_to_client"),
        ("ack_rewritten", "client_to_server"),
        ("wscale_changed", "server_to_client"),
        ("timestamps_changed", "server_to_client"),
    ] {
        assert!(
            k.contains(&(want.0.to_string(), want.1.to_string())),
            "missing {want:?} in {k:?}"
        );
    }
    // The client keeps its own ISN through SYNPROXY: no client seq rewrite,
    // and no packet is reported lost or invented.
    for absent in [
        "seq_rewritten",
        "packet_dropped",
        "packet_injected",
        "window_rewritten",
    ] {
        assert!(
            !k.contains(&(absent.to_string(), "client_to_server".to_string())),
            "{absent} c2s in {k:?}"
        );
    }
    assert!(!k
        .iter()
        .any(|(kind, _)| kind == "packet_dropped" || kind == "packet_injected"));
    let ws = finding(&r, "wscale_changed", None);
    assert_eq!(
        (&ev(ws).before, &ev(ws).after),
        (&FieldValue::Shift(10), &FieldValue::Shift(7))
    );
    assert_eq!(json(ws)["before"], serde_json::json!({"shift": 10}));
    assert_eq!(json(ws)["after"], serde_json::json!({"shift": 7}));
    let hp = json(finding(&r, "handshake_proxied", None));
    assert!(hp["cause"].as_str().unwrap().contains("SYN"), "{hp}");
    assert_eq!(hp["before"]["from"], "server", "{hp}");
    assert_eq!(hp["after"]["from"], "middlebox", "{hp}");
    assert_eq!(hp["after"]["shift"], 7, "{hp}");
    assert_ne!(hp["before"]["isn"], hp["after"]["isn"]);
}

#[test]
fn clean_ipv6_path_has_no_findings() {
    let r = compare("clean6-inside.pcap", "clean6-outside.pcap");
    assert_eq!(r.connections.len(), 1);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(
        r.connections[0].sides_by,
        SidesBy::Ttl,
        "hop limit tells the sides"
    );
    assert_eq!(
        r.connections[0].matched_packets,
        r.connections[0].client_side.packets
    );
}

#[test]
fn verdicts_do_not_depend_on_the_order_of_the_files() {
    for (a, b) in PAIRS {
        let ab = serde_json::to_value(compare(a, b)).unwrap();
        let ba = serde_json::to_value(compare(b, a)).unwrap();
        assert_eq!(ab["findings"], ba["findings"], "{a} {b}");
        assert_eq!(ab["connections"], ba["connections"], "{a} {b}");
        assert_eq!(ab["notes"], ba["notes"], "{a} {b}");
    }
}

#[test]
fn a_capture_compared_with_itself_has_no_findings() {
    for (a, _) in PAIRS {
        let r = compare(a, a);
        assert_eq!(r.connections.len(), 1, "{a}");
        assert!(r.findings.is_empty(), "{a}: {:?}", r.findings);
    }
}

#[test]
fn unrelated_captures_match_nothing() {
    let r = compare("campus-inside.pcap", "nat-outside.pcap");
    assert!(r.connections.is_empty());
    assert!(r.findings.is_empty());
    assert_eq!(r.captures[0].unmatched_connections.len(), 1);
    assert_eq!(r.captures[1].unmatched_connections.len(), 1);
}

#[test]
fn truncated_capture_gives_partial_result_with_warning() {
    let full = std::fs::read(data("campus-outside.pcap")).unwrap();
    let inside = std::fs::read(data("campus-inside.pcap")).unwrap();
    let cut = &full[..full.len() / 3 + 7];
    let r = compare_readers(
        &inside[..],
        "inside",
        cut,
        "outside-cut",
        &Options::default(),
    )
    .unwrap();
    assert!(
        r.captures[1].warnings.iter().any(|w| matches!(
            w,
            CaptureWarning::CutShort {
                error: capture::CaptureError::Truncated { .. },
                ..
            }
        ) && w.to_string().contains("truncated")),
        "{:?}",
        r.captures[1].warnings
    );
    // The handshake is early in the file: the finding survives.
    assert!(kinds(&r).contains(&(
        "wscale_stripped".to_string(),
        "server_to_client".to_string()
    )));
    // Packets after the cut are not reported as dropped.
    assert!(
        !r.findings.iter().any(|f| f.kind == "packet_dropped"),
        "{:?}",
        kinds(&r)
    );
}

#[test]
fn not_a_capture_is_a_clear_error() {
    let inside = std::fs::read(data("campus-inside.pcap")).unwrap();
    let err = compare_readers(
        &inside[..],
        "inside",
        &b"GET / HTTP/1.1\r\n"[..],
        "junk.txt",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("junk.txt") && err.contains("not a pcap"),
        "{err}"
    );
    let err = compare_readers(
        &[][..],
        "empty.pcap",
        &inside[..],
        "inside",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("empty.pcap"), "{err}");
}

/// The records of a classic little-endian pcap file (24-byte file header,
/// 16-byte record headers), each with its record header.
fn pcap_records(file: &[u8]) -> Vec<&[u8]> {
    let mut records = Vec::new();
    let mut off = 24;
    while off + 16 <= file.len() {
        let incl = u32::from_le_bytes(file[off + 8..off + 12].try_into().unwrap()) as usize;
        records.push(&file[off..off + 16 + incl]);
        off += 16 + incl;
    }
    records
}

/// Source address and TCP payload length of an Ethernet + IPv4 record.
fn v4_src_and_payload(record: &[u8]) -> ([u8; 4], usize) {
    let ip = &record[16 + 14..];
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let doff = usize::from(ip[ihl + 12] >> 4) * 4;
    (ip[12..16].try_into().unwrap(), total - ihl - doff)
}

/// `file` without the first `n` records from index `from` on that `pick` selects.
fn without(file: &[u8], from: usize, n: usize, pick: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut out = file[..24].to_vec();
    let mut removed = 0;
    for (i, r) in pcap_records(file).into_iter().enumerate() {
        if i >= from && removed < n && pick(r) {
            removed += 1;
            continue;
        }
        out.extend_from_slice(r);
    }
    assert_eq!(removed, n);
    out
}

#[test]
fn dropped_packets_are_found() {
    // Remove three of the client's bare ACKs from the server-side capture:
    // nothing on the server's wire says they ever crossed it, so the
    // middlebox "dropped" them.
    let inside = std::fs::read(data("campus-inside.pcap")).unwrap();
    let outside = std::fs::read(data("campus-outside.pcap")).unwrap();
    let cut = without(&outside, 100, 3, |r| {
        v4_src_and_payload(r) == ([198, 18, 1, 2], 0)
    });
    let r = compare_readers(
        &inside[..],
        "inside",
        &cut[..],
        "outside",
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        kinds(&r),
        set(&[
            ("wscale_stripped", "server_to_client"),
            ("packet_dropped", "client_to_server")
        ])
    );
    let f = finding(&r, "packet_dropped", None);
    assert_eq!(ev(f).count, 3);
    assert_eq!(ev(f).frames.client_side.len(), 3);
    assert!(ev(f).frames.server_side.is_empty());
    assert!(
        matches!(ev(f).before, FieldValue::Segment { payload_len: 0, .. }),
        "{:?}",
        ev(f).before
    );
    assert_eq!(ev(f).after, FieldValue::Missing);
    assert_eq!(json(f)["before"]["payload_bytes"], 0, "{}", json(f));
    assert!(json(f)["after"].is_null());
    assert!(summary(f).contains("Mathis"), "{}", summary(f));
}

#[test]
fn frames_missing_from_a_capture_whose_bytes_were_acknowledged_are_capture_loss() {
    // Remove data segments from one capture: the receiver's ACKs on that
    // same capture cover their bytes, so they crossed that wire and the
    // capture missed them. Both ways round: client data missing from the
    // server-side capture, server data missing from the client-side one.
    let inside = std::fs::read(data("campus-inside.pcap")).unwrap();
    let outside = std::fs::read(data("campus-outside.pcap")).unwrap();
    let client_data = |r: &[u8]| {
        let (src, len) = v4_src_and_payload(r);
        src == [198, 18, 1, 2] && len > 0
    };
    let server_data = |r: &[u8]| {
        let (src, len) = v4_src_and_payload(r);
        src == [198, 18, 2, 2] && len > 0
    };
    let cases = [
        (
            inside.clone(),
            without(&outside, 4, 2, client_data),
            "client_to_server",
            CaptureSide::ServerSide,
        ),
        (
            without(&inside, 100, 5, server_data),
            outside.clone(),
            "server_to_client",
            CaptureSide::ClientSide,
        ),
    ];
    for (a, b, dir, missing) in cases {
        for (x, y) in [(&a, &b), (&b, &a)] {
            let r = compare_readers(&x[..], "x", &y[..], "y", &Options::default()).unwrap();
            assert_eq!(
                kinds(&r),
                set(&[
                    ("wscale_stripped", "server_to_client"),
                    ("capture_loss", dir)
                ]),
                "{dir}"
            );
            let f = finding(&r, "capture_loss", None);
            assert_eq!(ev(f).missing_from, Some(missing));
            assert_eq!(ev(f).count, if dir == "client_to_server" { 2 } else { 5 });
            assert_eq!(ev(f).outside_span, Some(0));
            assert!(!r.has_tampering() || r.findings.len() == 2);
            assert!(summary(f).contains("acknowledged"), "{}", summary(f));
        }
    }
}

#[test]
fn cli_compare_text_and_json() {
    let bin = env!("CARGO_BIN_EXE_firewall-check");
    let out = Command::new(bin)
        .args(["compare"])
        .arg(data("campus-inside.pcap"))
        .arg(data("campus-outside.pcap"))
        .output()
        .unwrap();
    // Exit status 3: done, and the middlebox changed the traffic.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("wscale_stripped"), "{text}");
    assert!(text.contains("65,535 bytes"), "{text}");
    let out = Command::new(bin)
        .args(["compare", "--json"])
        .arg(data("campus-outside.pcap"))
        .arg(data("campus-inside.pcap"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["findings"][0];
    for field in [
        "kind",
        "direction",
        "connection",
        "count",
        "before",
        "after",
        "impact",
    ] {
        assert!(f.get(field).is_some(), "missing {field}: {f}");
    }
    assert_eq!(v["schema_version"], 2);
    assert_eq!(f["kind"], "wscale_stripped");
    assert_eq!(f["before"]["shift"], 10);
    assert!(
        f["after"].is_null(),
        "the option is gone after the middlebox: {f}"
    );
    assert_eq!(f["direction"], "server_to_client");
    // Unrelated captures: the (empty) report, a message and a non-zero exit.
    let out = Command::new(bin)
        .args(["compare"])
        .arg(data("campus-inside.pcap"))
        .arg(data("nat-outside.pcap"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 connections seen on both sides"));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no TCP connection was found in both captures"));
    // A file that is not a capture: a message and a non-zero exit, no panic.
    let out = Command::new(bin)
        .args(["compare"])
        .arg(data("README.md"))
        .arg(data("campus-inside.pcap"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("README.md"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Corrupting bytes anywhere in a capture never panics: the comparison
    /// either refuses the file or reports on what it could read.
    #[test]
    fn corrupted_captures_never_panic(
        edits in proptest::collection::vec((0usize..31_270, proptest::prelude::any::<u8>()), 1..40),
        cut in 0usize..31_270,
    ) {
        let inside = std::fs::read(data("campus-inside.pcap")).unwrap();
        let mut outside = std::fs::read(data("campus-outside.pcap")).unwrap();
        for (at, byte) in edits {
            if let Some(b) = outside.get_mut(at) {
                *b = byte;
            }
        }
        outside.truncate(cut.max(1));
        if let Ok(r) = compare_readers(&inside[..], "inside", &outside[..], "outside", &Options::default()) {
            for f in &r.findings {
                proptest::prop_assert!(ev(f).connection >= 1 && ev(f).connection <= r.connections.len());
            }
            let _ = render_text(&r);
        }
    }
}

/// The two captures of these packets (raw IPv4, linktype 101, nanosecond
/// times), each in time order.
fn in_time_order(
    mut a: Vec<dump_support::Pkt>,
    mut b: Vec<dump_support::Pkt>,
) -> (Vec<u8>, Vec<u8>) {
    a.sort_by_key(|p| p.ts_ns);
    b.sort_by_key(|p| p.ts_ns);
    (
        dump_support::pcap(101, true, &a),
        dump_support::pcap(101, true, &b),
    )
}

/// Two captures built packet by packet (raw IPv4, linktype 101): the
/// client side sees each packet at its time, the server side `transit_ns`
/// later for client packets and earlier for server packets; `late` lists
/// (index, extra delay on the client side).
fn synthetic(pkts: &[(u64, bool, dump_support::Seg)], late: &[(usize, u64)]) -> (Vec<u8>, Vec<u8>) {
    use dump_support::Pkt;
    let t0 = 1_700_000_000_000_000_000u64;
    let transit = 10_000;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for (i, (t, from_client, seg)) in pkts.iter().enumerate() {
        let extra = late.iter().find(|l| l.0 == i).map_or(0, |l| l.1);
        let (ta, tb) = if *from_client {
            (t0 + t, t0 + t + transit)
        } else {
            (t0 + t + transit + extra, t0 + t)
        };
        a.push(Pkt::new(ta, seg.ipv4()));
        b.push(Pkt::new(tb, seg.ipv4()));
    }
    in_time_order(a, b)
}

#[test]
fn a_spurious_retransmission_acknowledged_before_it_arrives_is_not_a_drop() {
    use dump_support::{Seg, ACK, FIN, SYN};
    let c = || Seg::new([198, 18, 1, 2], 40000, [198, 18, 2, 2], 80);
    let s = || Seg::new([198, 18, 2, 2], 80, [198, 18, 1, 2], 40000);
    let ms = 1_000_000u64;
    let pkts = vec![
        (0, true, c().seq(100).flags(SYN)),
        (ms, false, s().seq(500).ack(101).flags(SYN | ACK)),
        (2 * ms, true, c().seq(101).ack(501).flags(ACK)),
        (
            3 * ms,
            false,
            s().seq(501).ack(101).flags(ACK).payload(1000),
        ),
        (
            4 * ms,
            false,
            s().seq(1501).ack(101).flags(ACK).payload(1000),
        ),
        (5 * ms, true, c().seq(101).ack(2501).flags(ACK)),
        (
            5 * ms + 500_000,
            false,
            s().seq(2501).ack(101).flags(ACK).payload(1000),
        ),
        // A spurious retransmission of the first segment, held up on its
        // way to the client: the client's ACK of newer data (covering it)
        // is seen on the client's side before it.
        (
            6 * ms,
            false,
            s().seq(501).ack(101).flags(ACK).payload(1000),
        ),
        (6 * ms + 10_000, true, c().seq(101).ack(3501).flags(ACK)),
        (7 * ms, true, c().seq(101).ack(3501).flags(ACK | FIN)),
        (8 * ms, false, s().seq(3501).ack(102).flags(ACK | FIN)),
        (9 * ms, true, c().seq(102).ack(3502).flags(ACK)),
    ];
    let (a, b) = synthetic(&pkts, &[(7, 200_000)]);
    for (x, y) in [(&a, &b), (&b, &a)] {
        let r = compare_readers(&x[..], "x", &y[..], "y", &Options::default()).unwrap();
        assert_eq!(r.connections.len(), 1);
        assert!(r.findings.is_empty(), "{:?}", kinds(&r));
        assert_eq!(r.connections[0].matched_packets, pkts.len());
    }
    // The same retransmission really dropped after the middlebox (missing
    // from the client's side) is a drop: the client's side saw the bytes
    // carried before, so the ACK does not make it capture loss.
    let mut b_only = pkts.clone();
    b_only.remove(7);
    let (a2, _) = synthetic(&b_only, &[]);
    let r = compare_readers(&a2[..], "x", &b[..], "y", &Options::default()).unwrap();
    assert_eq!(kinds(&r), set(&[("packet_dropped", "server_to_client")]));
}

/// Two captures of `n` short connections one after the other (8 segments
/// each), the server side a little later.
fn many_connections(n: u32) -> (Vec<u8>, Vec<u8>) {
    use dump_support::{Pkt, Seg, ACK, FIN, SYN};
    let t0 = 1_700_000_000_000_000_000u64;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..n {
        let port = 10_000 + (i % 50_000) as u16;
        let host = [198, 18, 1 + (i / 50_000) as u8, 2];
        let c = || Seg::new(host, port, [198, 18, 200, 2], 80);
        let s = || Seg::new([198, 18, 200, 2], 80, host, port);
        let isn = i.wrapping_mul(2_654_435_761);
        let segs = [
            (true, c().seq(isn).flags(SYN)),
            (false, s().seq(7).ack(isn + 1).flags(SYN | ACK)),
            (true, c().seq(isn + 1).ack(8).flags(ACK)),
            (true, c().seq(isn + 1).ack(8).flags(ACK).payload(100)),
            (false, s().seq(8).ack(isn + 101).flags(ACK).payload(300)),
            (true, c().seq(isn + 101).ack(308).flags(ACK | FIN)),
            (false, s().seq(308).ack(isn + 102).flags(ACK | FIN)),
            (true, c().seq(isn + 102).ack(309).flags(ACK)),
        ];
        for (k, (from_client, seg)) in segs.into_iter().enumerate() {
            let t = t0 + u64::from(i) * 1_000_000 + k as u64 * 100_000;
            let (ta, tb) = if from_client {
                (t, t + 20_000)
            } else {
                (t + 20_000, t)
            };
            a.push(Pkt::new(ta, seg.ipv4()));
            b.push(Pkt::new(tb, seg.ipv4()));
        }
    }
    in_time_order(a, b)
}

#[test]
fn memory_follows_the_connections_open_at_once_not_the_capture_size() {
    use firewall_check::analysis::compare::engine::{run, Input};
    let mut peaks = Vec::new();
    for n in [2_000u32, 8_000] {
        let (a, b) = many_connections(n);
        let mut ia = Input::new("a", &a[..], 100_000).unwrap();
        let mut ib = Input::new("b", &b[..], 100_000).unwrap();
        let e = run(&mut ia, &mut ib, None);
        assert_eq!(e.done.len(), n as usize, "every connection paired");
        assert!(e.done.iter().all(|d| d.col.map.is_empty()), "no findings");
        assert_eq!(ia.tcp_packets, u64::from(n) * 8);
        peaks.push((e.peak_connections, e.peak_pairs, e.peak_held_packets));
    }
    // Four times the capture, the same peaks: closed connections linger
    // for flow::LINGER_FRAMES frames (up to twice that when a last ACK
    // restarts the count), then they and their packets go.
    let lingering = 2 * firewall_check::conn::tracker::LINGER_FRAMES as usize / 8 + 16;
    for (conns, pairs, held) in &peaks {
        assert!(*conns <= 2 * lingering, "{peaks:?}");
        assert!(*pairs <= lingering, "{peaks:?}");
        assert!(*held <= 8, "{peaks:?}");
    }
    assert_eq!(peaks[0], peaks[1]);
}

#[test]
fn a_full_connection_table_is_reported_as_evictions() {
    use dump_support::{Seg, ACK, SYN};
    // Two connections open at once, a table of one: the second SYN pushes
    // the first out (it is not closed), in both captures.
    let c = |port| Seg::new([198, 18, 1, 2], port, [198, 18, 2, 2], 80);
    let s = |port| Seg::new([198, 18, 2, 2], 80, [198, 18, 1, 2], port);
    let ms = 1_000_000u64;
    let mut pkts = Vec::new();
    for (k, port) in [40_001u16, 40_002].into_iter().enumerate() {
        let t = k as u64 * 10 * ms;
        pkts.push((t, true, c(port).seq(100).flags(SYN)));
        pkts.push((t + ms, false, s(port).seq(500).ack(101).flags(SYN | ACK)));
        pkts.push((t + 2 * ms, true, c(port).seq(101).ack(501).flags(ACK)));
    }
    pkts.push((
        30 * ms,
        true,
        c(40_001).seq(101).ack(501).flags(ACK).payload(10),
    ));
    let (a, b) = synthetic(&pkts, &[]);
    let opts = Options {
        max_connections: 1,
        ..Options::default()
    };
    let r = compare_readers(&a[..], "a", &b[..], "b", &opts).unwrap();
    assert_eq!(r.captures[0].evicted_connections, 2, "{:?}", r.captures);
    assert_eq!(r.captures[1].evicted_connections, 2);
    assert!(r.connections.len() >= 2);
    assert!(
        !r.findings
            .iter()
            .any(|f| f.kind == "packet_dropped" || f.kind == "packet_injected"),
        "{:?}",
        kinds(&r)
    );
    let text = render_text(&r);
    assert!(
        text.contains("ended early by a full connection table"),
        "{text}"
    );
    // With room for both, nothing is evicted.
    let r = compare_readers(&a[..], "a", &b[..], "b", &Options::default()).unwrap();
    assert_eq!(r.captures[0].evicted_connections, 0);
    assert_eq!(r.connections.len(), 2);
}

#[test]
fn cli_reads_one_capture_from_standard_input() {
    use std::io::Write;
    use std::process::Stdio;
    let bin = env!("CARGO_BIN_EXE_firewall-check");
    for (first, second) in [("-", "campus-outside.pcap"), ("campus-outside.pcap", "-")] {
        let arg = |x: &str| {
            if x == "-" {
                PathBuf::from("-")
            } else {
                data(x)
            }
        };
        let mut child = Command::new(bin)
            .args(["compare", "--json"])
            .arg(arg(first))
            .arg(arg(second))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let inside = std::fs::read(data("campus-inside.pcap")).unwrap();
        child.stdin.take().unwrap().write_all(&inside).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(3));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["findings"][0]["kind"], "wscale_stripped");
        assert_eq!(v["connections"][0]["client_side"]["capture"], "-");
    }
    // Both from standard input: a usage error.
    let out = Command::new(bin)
        .args(["compare", "-", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard input"));
}

#[test]
fn mid_stream_upload_aligns_the_bare_acks_through_the_acknowledgment_numbers() {
    use dump_support::{Seg, ACK};
    // Captures that start mid-stream (no handshake) of an upload: the
    // server sends only bare ACKs, and the middlebox shifts the server's
    // sequence numbers by 1000 (ISN randomization): the server-to-client
    // offset can only come from the client's acknowledgment numbers.
    let ms = 1_000_000u64;
    let t0 = 1_700_000_000_000_000_000u64;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for k in 0..20u32 {
        let t = t0 + u64::from(k) * ms;
        let seq = 5000 + k * 1000;
        // Client data: the client (side A) acknowledges the shifted numbers.
        let data = |ack| {
            Seg::new([198, 18, 1, 2], 40000, [198, 18, 2, 2], 80)
                .seq(seq)
                .ack(ack)
                .flags(ACK)
                .payload(1000)
        };
        // The client's IP IDs count up, as Linux's do per connection.
        let id = 300 + k as u16;
        a.push(dump_support::Pkt::new(t, data(8000).ident(id).ipv4()));
        b.push(dump_support::Pkt::new(
            t + 10_000,
            data(7000).ident(id).ipv4(),
        ));
        let bare = |s| {
            Seg::new([198, 18, 2, 2], 80, [198, 18, 1, 2], 40000)
                .seq(s)
                .ack(seq + 1000)
                .flags(ACK)
        };
        b.push(dump_support::Pkt::new(t + 500_000, bare(7000).ipv4()));
        a.push(dump_support::Pkt::new(t + 510_000, bare(8000).ipv4()));
    }
    let a = dump_support::pcap(101, true, &a);
    let b = dump_support::pcap(101, true, &b);
    for (x, y) in [(&a, &b), (&b, &a)] {
        let r = compare_readers(&x[..], "x", &y[..], "y", &Options::default()).unwrap();
        assert_eq!(r.connections.len(), 1);
        assert_eq!(r.connections[0].matched_packets, 40, "{:?}", kinds(&r));
        assert_eq!(
            kinds(&r),
            set(&[
                ("seq_rewritten", "server_to_client"),
                ("ack_rewritten", "client_to_server")
            ])
        );
        let f = finding(&r, "seq_rewritten", None);
        assert_eq!(ev(f).count, 20);
        assert!(r.notes.is_empty(), "{:?}", r.notes);
    }
}

#[test]
fn a_drop_whose_retransmission_crosses_in_the_same_microsecond_is_the_original() {
    use dump_support::{Pkt, Seg, ACK, SYN};
    // The lab's drop4 case, made exact: the middlebox drops the client's
    // third data segment; the retransmission (same bytes, same TSval-less
    // header, a new IP ID) is stamped with the same time in both captures,
    // as tcpdump's microseconds often give on a fast path. The original is
    // the one missing, whichever capture is read first (both copies of the
    // retransmission tie in the merge, and the waiting original has the
    // same alignment key: only the IP ID, kept on every other packet,
    // tells them apart).
    let t0 = 1_700_000_000_000_000_000u64;
    let us = 1_000u64;
    let c = |seq: u32, ack: u32, flags: u8, n: usize| {
        Seg::new([198, 18, 1, 2], 40000, [198, 18, 2, 2], 80)
            .seq(seq)
            .ack(ack)
            .flags(flags)
            .payload(n)
    };
    let s = |seq: u32, ack: u32, flags: u8| {
        Seg::new([198, 18, 2, 2], 80, [198, 18, 1, 2], 40000)
            .seq(seq)
            .ack(ack)
            .flags(flags)
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    // (time, from client, segment, IP ID, crosses the middlebox, transit)
    let mut pkts = vec![
        (0, true, c(100, 0, SYN, 0), 1, true, 5 * us),
        (100 * us, false, s(500, 101, SYN | ACK), 2, true, 5 * us),
        (200 * us, true, c(101, 501, ACK, 0), 3, true, 5 * us),
    ];
    for k in 0..6u32 {
        pkts.push((
            (300 + u64::from(k)) * us,
            true,
            c(101 + k * 1000, 501, ACK, 1000),
            10 + k as u16,
            k != 2,
            5 * us,
        ));
    }
    // The retransmission of segment 2: the same microsecond on both sides.
    pkts.push((400 * us, true, c(2101, 501, ACK, 1000), 20, true, 0));
    pkts.push((500 * us, false, s(501, 6101, ACK), 21, true, 5 * us));
    for (t, from_client, seg, id, crosses, transit) in &pkts {
        let ip = seg.clone().ident(*id).ipv4();
        let (near, far) = if *from_client {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        near.push(Pkt::new(t0 + t, ip.clone()));
        if *crosses {
            far.push(Pkt::new(t0 + t + transit, ip));
        }
    }
    let (a, b) = in_time_order(a, b);
    for (x, y) in [(&a, &b), (&b, &a)] {
        let r = compare_readers(&x[..], "x", &y[..], "y", &Options::default()).unwrap();
        assert_eq!(kinds(&r), set(&[("packet_dropped", "client_to_server")]));
        let f = &r.findings[0];
        assert_eq!(ev(f).count, 1);
        // Frame 6 of the client's capture: the original (IP ID 12).
        let v = serde_json::to_value(&ev(f).frames).unwrap();
        assert_eq!(v["client_side"], serde_json::json!([6]), "{v}");
        assert_eq!(json(f)["before"]["seq_number"], 2101);
    }
}

/// Issue 30: pure ACKs cut from the client-side capture of a clean transfer
/// are seen after the middlebox only, but the client's IPv4 IDs on the
/// client-side wire leave a hole exactly where each goes (Linux numbers a
/// connection's packets from one counter): the client sent them and the
/// capture missed them, `capture_loss`, never `packet_injected`. The server
/// data cut with them is `capture_loss` as before (the client's ACKs cover
/// it). Both file orders.
#[test]
fn pure_acks_missing_from_the_client_capture_are_capture_loss() {
    let inside = std::fs::read(data("bulk-inside.pcap")).unwrap();
    let outside = std::fs::read(data("bulk-outside.pcap")).unwrap();
    let client_acks = without(&inside, 100, 6, |r| {
        v4_src_and_payload(r) == ([198, 18, 1, 2], 0)
    });
    let cut = without(&client_acks, 300, 5, |r| {
        let (src, len) = v4_src_and_payload(r);
        src == [198, 18, 2, 2] && len > 0
    });
    for (x, y) in [(&cut, &outside), (&outside, &cut)] {
        let r = compare_readers(&x[..], "x", &y[..], "y", &Options::default()).unwrap();
        let k = kinds(&r);
        assert_eq!(
            k,
            set(&[
                ("capture_loss", "client_to_server"),
                ("capture_loss", "server_to_client")
            ]),
            "{k:?}"
        );
        let acks = finding(&r, "capture_loss", Some("client_to_server"));
        assert_eq!(ev(acks).count, 6);
        assert_eq!(ev(acks).missing_from, Some(CaptureSide::ClientSide));
        assert!(!r.has_tampering());
    }
}

/// The counter-case: a pure ACK seen after the middlebox only that carries
/// an IPv4 ID the client used for another frame the client-side capture
/// shows (here a second copy of one of its ACKs): the client's own sequence
/// shows it did not send it, `packet_injected`.
#[test]
fn a_frame_reusing_an_id_the_sender_used_is_injected() {
    let inside = std::fs::read(data("bulk-inside.pcap")).unwrap();
    let outside = std::fs::read(data("bulk-outside.pcap")).unwrap();
    let mut doubled = outside[..24].to_vec();
    let mut done = false;
    for (i, r) in pcap_records(&outside).into_iter().enumerate() {
        doubled.extend_from_slice(r);
        if !done && i >= 100 && v4_src_and_payload(r) == ([198, 18, 1, 2], 0) {
            doubled.extend_from_slice(r);
            done = true;
        }
    }
    assert!(done);
    let r = compare_readers(&inside[..], "in", &doubled[..], "out", &Options::default()).unwrap();
    let k = kinds(&r);
    assert!(
        k.contains(&(
            "packet_injected".to_string(),
            "client_to_server".to_string()
        )),
        "{k:?}"
    );
}

/// Source address and TCP payload length of an Ethernet + IPv6 record
/// without extension headers.
fn v6_src_and_payload(record: &[u8]) -> ([u8; 16], usize) {
    let ip = &record[16 + 14..];
    let payload = usize::from(u16::from_be_bytes([ip[4], ip[5]]));
    let doff = usize::from(ip[40 + 12] >> 4) * 4;
    (ip[8..24].try_into().unwrap(), payload - doff)
}

/// `file` with a second copy of its `nth` record (from 0) that `pick`
/// selects, right after it; `seq_add` is added to the copy's TCP sequence
/// number (Ethernet + IPv6, no extension headers).
fn with_copy(file: &[u8], nth: usize, seq_add: u32, pick: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut out = file[..24].to_vec();
    let mut seen = 0;
    for r in pcap_records(file) {
        out.extend_from_slice(r);
        if pick(r) {
            if seen == nth {
                let mut copy = r.to_vec();
                let at = 16 + 14 + 40 + 4;
                let seq = u32::from_be_bytes(copy[at..at + 4].try_into().unwrap());
                copy[at..at + 4].copy_from_slice(&seq.wrapping_add(seq_add).to_be_bytes());
                out.extend_from_slice(&copy);
            }
            seen += 1;
        }
    }
    assert!(seen > nth, "only {seen} records picked");
    out
}

/// The client's data of the IPv6 upload (2001:db8:1::2, with payload).
fn client6_data(r: &[u8]) -> bool {
    let (src, len) = v6_src_and_payload(r);
    src[..6] == [0x20, 0x01, 0x0d, 0xb8, 0, 1] && len > 0
}

/// Issue 30: a second copy of the client's data segment, seen after the
/// middlebox only, in IPv6 (no identification to tell who sent it): the
/// client's data on its own wire carried those bytes, so this is a
/// retransmission the client-side capture missed, `capture_loss`, not
/// `packet_injected`. Both file orders.
#[test]
fn an_ipv6_copy_of_bytes_the_sender_carried_is_capture_loss() {
    let inside = std::fs::read(data("clean6-inside.pcap")).unwrap();
    let outside = std::fs::read(data("clean6-outside.pcap")).unwrap();
    let doubled = with_copy(&outside, 10, 0, client6_data);
    for (x, y) in [(&inside, &doubled), (&doubled, &inside)] {
        let r = compare_readers(&x[..], "x", &y[..], "y", &Options::default()).unwrap();
        let k = kinds(&r);
        assert_eq!(k, set(&[("capture_loss", "client_to_server")]), "{k:?}");
        assert!(!r.has_tampering());
    }
}

/// The counter-case: the same copy with its sequence number moved past all
/// the data the client sent (its bytes are new): the client's own
/// sequence shows it never sent them, `packet_injected`.
#[test]
fn an_ipv6_segment_with_bytes_the_sender_never_sent_is_injected() {
    let inside = std::fs::read(data("clean6-inside.pcap")).unwrap();
    let outside = std::fs::read(data("clean6-outside.pcap")).unwrap();
    let forged = with_copy(&outside, 10, 50_000_000, client6_data);
    for (x, y) in [(&inside, &forged), (&forged, &inside)] {
        let r = compare_readers(&x[..], "x", &y[..], "y", &Options::default()).unwrap();
        let k = kinds(&r);
        assert!(
            k.contains(&(
                "packet_injected".to_string(),
                "client_to_server".to_string()
            )),
            "{k:?}"
        );
    }
}

/// `compare X X`: no finding, and every paired connection aligned frame
/// for frame (each capture's every segment matched).
fn assert_self_compare_is_clean(file: &[u8], connections: usize) {
    let r = compare_readers(file, "x", file, "x", &Options::default()).unwrap();
    assert!(r.findings.is_empty(), "{:?}", kinds(&r));
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(r.connections.len(), connections);
    for c in &r.connections {
        assert_eq!(c.client_side.packets, c.server_side.packets);
        assert_eq!(c.matched_packets, c.client_side.packets, "{c:?}");
    }
}

#[test]
fn a_connection_paired_late_keeps_the_bare_acks_it_buffered() {
    use dump_support::{pcap, Pkt, Seg, ACK, PSH};
    // nDPI's amqp.pcap, connection 2 frame 8, made exact: a connection
    // caught mid-stream (no handshake) shows too little to be paired until
    // its third segment, 2 s after the first two. Both captures' buffered
    // segments are then replayed; the engine's clocks already stood at 2 s,
    // so the replayed bare ACK of capture 0 was expired (0.5 s past the
    // other capture's clock) before capture 1's copy of it, further down
    // its buffer, was replayed: the one frame was reported dropped on one
    // side and lost from the other capture.
    let t0 = 1_700_000_000_000_000_000u64;
    let server = |seq: u32, ack: u32, id: u16| {
        Seg::new([127, 0, 1, 1], 5672, [127, 0, 0, 1], 44204)
            .seq(seq)
            .ack(ack)
            .flags(ACK | PSH)
            .payload(448)
            .ident(id)
    };
    let client = |seq: u32, ack: u32, id: u16| {
        Seg::new([127, 0, 0, 1], 44204, [127, 0, 1, 1], 5672)
            .seq(seq)
            .ack(ack)
            .flags(ACK)
            .ident(id)
    };
    let mut pkts = Vec::new();
    for k in 0..3u32 {
        let t = t0 + u64::from(k) * 2_000_000_000;
        let seq = 2_660_409_695 + k * 448;
        let id = 0x0104 + k as u16;
        pkts.push(Pkt::new(t, server(seq, 2_691_917_708, id).ipv4()));
        pkts.push(Pkt::new(
            t + 13_000,
            client(2_691_917_708, seq + 448, 0x1cc3 + k as u16).ipv4(),
        ));
    }
    assert_self_compare_is_clean(&pcap(101, true, &pkts), 1);
}

#[test]
fn captures_whose_times_go_backwards_align_frame_for_frame() {
    use dump_support::{pcap, Pkt, Seg, ACK, FIN, SYN};
    // Wireshark's grpc_web.pcapng and tcpdump's kday4.pcap, made exact:
    // a capture joined from pieces, whose times go back by an hour between
    // two connections, and a segment repeated with an earlier time (same
    // bytes, IP ID and numbers). Read with itself, the merge takes the
    // whole earlier-stamped piece of capture 0 before capture 1's, and the
    // other capture's clock, the latest time read from it, stood an hour
    // past bare ACKs whose counterparts were still to be read: they were
    // expired as dropped on one side and injected on the other.
    let t0 = 1_700_000_000_000_000_000u64;
    let ms = 1_000_000u64;
    let conn = |port: u16, isn: u32, t: u64, back: bool| {
        let c = || Seg::new([198, 18, 1, 2], port, [198, 18, 2, 2], 80);
        let s = || Seg::new([198, 18, 2, 2], 80, [198, 18, 1, 2], port);
        let mut v = vec![
            c().seq(isn).flags(SYN).ident(1),
            s().seq(500).ack(isn + 1).flags(SYN | ACK).ident(2),
            c().seq(isn + 1).ack(501).ident(3),
            c().seq(isn + 1).ack(501).payload(300).ident(4),
            s().seq(501).ack(isn + 301).ident(5),
            s().seq(501).ack(isn + 301).payload(200).ident(6),
            c().seq(isn + 301).ack(701).ident(7),
            s().seq(701).ack(isn + 301).payload(200).ident(8),
            c().seq(isn + 301).ack(901).ident(9),
        ];
        if back {
            // The same segment again, stamped earlier than the one before.
            v.push(s().seq(701).ack(isn + 301).payload(200).ident(8));
        }
        v.push(c().seq(isn + 301).ack(901).flags(ACK | FIN).ident(10));
        v.push(s().seq(901).ack(isn + 302).flags(ACK | FIN).ident(11));
        v.push(c().seq(isn + 302).ack(902).ident(12));
        v.into_iter()
            .enumerate()
            .map(|(k, seg)| {
                let at = if back && k == 9 { k - 2 } else { k } as u64;
                Pkt::new(t + at * 100 * ms, seg.ipv4())
            })
            .collect::<Vec<_>>()
    };
    let mut pkts = conn(40000, 1000, t0 + 3_600_000 * ms, false);
    pkts.extend(conn(40001, 9000, t0, true));
    assert_self_compare_is_clean(&pcap(101, true, &pkts), 2);
}

#[test]
fn an_ack_recorded_before_the_segment_it_covers_is_not_a_drop() {
    use dump_support::{pcap, Pkt, Seg, ACK, PSH, SYN};
    // A capture that recorded the client's data segment, which
    // acknowledges the server's one byte, just before that byte (stamped a
    // microsecond later, as multi-queue capture does): both captures'
    // clocks stand at the later stamp, and the merge reads capture 0's
    // byte before capture 1's acknowledgment. The acknowledgment decided
    // capture 0's copy at once (capture_loss), and capture 1's copy, the
    // next record, came too late (packet_dropped).
    let t0 = 1_700_000_000_000_000_000u64;
    let c = || Seg::new([198, 18, 1, 2], 40000, [198, 18, 2, 2], 80);
    let s = || Seg::new([198, 18, 2, 2], 80, [198, 18, 1, 2], 40000);
    let isn = 100_000;
    let pkts = vec![
        Pkt::new(t0, c().seq(isn).flags(SYN).ident(1).ipv4()),
        Pkt::new(
            t0 + 1_000,
            s().seq(500).ack(isn + 1).flags(SYN | ACK).ident(2).ipv4(),
        ),
        Pkt::new(t0 + 2_000, c().seq(isn + 1).ack(501).ident(3).ipv4()),
        Pkt::new(
            t0 + 4_000,
            c().seq(isn + 1)
                .ack(502)
                .flags(ACK | PSH)
                .payload(100)
                .ident(4)
                .ipv4(),
        ),
        Pkt::new(
            t0 + 3_000,
            s().seq(501)
                .ack(isn + 1)
                .flags(ACK | PSH)
                .payload(1)
                .ident(5)
                .ipv4(),
        ),
        Pkt::new(t0 + 5_000, s().seq(502).ack(isn + 101).ident(6).ipv4()),
    ];
    assert_self_compare_is_clean(&pcap(101, true, &pkts), 1);
}

#[test]
fn a_connection_a_capture_ends_on_still_pairs_with_the_other_captures() {
    use dump_support::{pcap, Pkt, Seg, ACK, PSH};
    // Wireshark's retrans-tls.pcap: two data segments of one connection
    // caught mid-stream, and nothing else. Compared with itself, capture 0
    // ran out first, and its end closed the connection before capture 1
    // had shown enough of it to pair: "no TCP connection was found in
    // both captures".
    let t0 = 1_700_000_000_000_000_000u64;
    let c = |seq: u32, n: usize| {
        Seg::new([10, 0, 0, 1], 65432, [10, 0, 0, 2], 443)
            .seq(seq)
            .ack(1)
            .flags(ACK | PSH)
            .payload(n)
    };
    let pkts = vec![
        Pkt::new(t0, c(1, 1).ipv4()),
        Pkt::new(t0 + 403_000, c(1, 21).ipv4()),
    ];
    assert_self_compare_is_clean(&pcap(101, true, &pkts), 1);
}
