//! Verdicts that must hold on real traffic (issue 30): handshakes that are
//! not one clean SYN and one SYN-ACK, and window fields of stacks other than
//! Linux. Each test is a capture whose old verdict was wrong.

mod dump_support;

use dump_support::*;
use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use serde_json::Value;

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 19, 0, 1];
const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000 * 1_000_000_000;
const CISN: u32 = 1_000;
const SISN: u32 = 5_000_000;

fn c(seq: u32, ack: u32, flags: u8) -> Seg {
    Seg::new(C, 40000, S, 5001).seq(seq).ack(ack).flags(flags)
}

fn s(seq: u32, ack: u32, flags: u8) -> Seg {
    Seg::new(S, 5001, C, 40000).seq(seq).ack(ack).flags(flags)
}

/// MSS 1460, SACK-Permitted, and optionally Timestamps and Window Scale.
fn opts(ts: Option<(u32, u32)>, ws: Option<u8>) -> Vec<u8> {
    let mut o = vec![2, 4, 0x05, 0xb4, 4, 2];
    if let Some((v, e)) = ts {
        o.extend_from_slice(&[8, 10]);
        o.extend_from_slice(&v.to_be_bytes());
        o.extend_from_slice(&e.to_be_bytes());
    }
    if let Some(w) = ws {
        o.extend_from_slice(&[1, 3, 3, w]);
    }
    o
}

/// A connection at 10 ms: the client's `syns` (one per 1 s), the server's
/// `synack` (window 65160), the client's ACK with window field `client_win`,
/// then `rounds` rounds of 10 server segments of 1448 bytes with window
/// field `server_win`, each pair acknowledged with `client_win`.
fn connection(
    syns: &[(u16, Vec<u8>)],
    synack: &[u8],
    client_win: u16,
    server_win: u16,
    rounds: u32,
) -> Vec<Pkt> {
    let mut pkts = Vec::new();
    let mut t = T0;
    for (win, o) in syns {
        pkts.push(Pkt::new(t, c(CISN, 0, SYN).win(*win).opts(o).ipv4()));
        t += 1_000 * MS;
    }
    t -= 1_000 * MS;
    t += 10 * MS;
    pkts.push(Pkt::new(
        t,
        s(SISN, CISN + 1, SYN | ACK).win(65160).opts(synack).ipv4(),
    ));
    pkts.push(Pkt::new(
        t,
        c(CISN + 1, SISN + 1, ACK).win(client_win).ipv4(),
    ));
    let mut next = SISN + 1;
    for _ in 0..rounds {
        t += 10 * MS;
        for i in 0..10u64 {
            pkts.push(Pkt::new(
                t + i * 10_000,
                s(next, CISN + 1, ACK).win(server_win).payload(1448).ipv4(),
            ));
            next = next.wrapping_add(1448);
            if i % 2 == 1 {
                pkts.push(Pkt::new(
                    t + i * 10_000 + 1_000,
                    c(CISN + 1, next, ACK).win(client_win).ipv4(),
                ));
            }
        }
    }
    pkts
}

fn run(pkts: &[Pkt]) -> Value {
    let file = pcap(101, true, pkts);
    let mut out = Vec::new();
    analyze(
        &file[..],
        &mut out,
        AnalyzeFormat::Json,
        &Settings::default(),
    )
    .expect("analyze");
    serde_json::from_slice(&out).expect("one JSON document")
}

/// The exit status and text of `analyze` on `pkts`.
fn cli(name: &str, pkts: &[Pkt]) -> (i32, String) {
    let path = temp_file(name, &pcap(101, true, pkts));
    let (code, out, err) = run_cli(&["analyze", path.to_str().unwrap()]);
    assert!(code == 0 || code == 3, "{code}: {err}");
    (code, out)
}

/// A segment with every flag set, in the middle of a scaled connection,
/// sent from the server's address: not a SYN-ACK the client's kernel
/// negotiates from (it carries RST and comes after the handshake), so the
/// negotiation stays the real SYN-ACK's.
#[test]
fn an_all_flags_segment_does_not_replace_the_synack() {
    let mut pkts = connection(
        &[(64240, opts(None, Some(7)))],
        &opts(None, Some(7)),
        502,
        509,
        4,
    );
    let at = pkts.len() / 2;
    let ts = pkts[at].ts_ns;
    pkts.insert(
        at,
        Pkt::new(
            ts,
            s(SISN + 99, 12345, 0xff)
                .win(512)
                .opts(&[2, 4, 0x02, 0x18])
                .ipv4(),
        ),
    );
    let v = run(&pkts);
    let conns = v["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1, "{v}");
    let n = &conns[0]["negotiated"];
    assert_eq!(n["wscale_offered"]["server"], 7, "{n}");
    assert_eq!(n["wscale"]["server"], 7, "{n}");
    assert_eq!(n["mss"]["server"], 1460, "{n}");
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    let (code, out) = cli("allflags.pcap", &pkts);
    assert_eq!(code, 0, "{out}");
}

/// The client retransmits its SYN with fewer options (as Windows and macOS
/// do after timeouts); the SYN-ACK echoes the first SYN's TSval (RFC 7323
/// section 3.2: TSecr is the TSval of the segment it answers) and carries
/// window scale. The negotiation follows the first SYN: scaling on for
/// both, no "answered without an offer".
#[test]
fn the_synack_answers_the_syn_whose_tsval_it_echoes() {
    let pkts = connection(
        &[
            (64240, opts(Some((1_000, 0)), Some(7))),
            (64240, opts(None, None)),
        ],
        &opts(Some((777, 1_000)), Some(7)),
        502,
        509,
        4,
    );
    let v = run(&pkts);
    let c0 = &v["connections"][0];
    let n = &c0["negotiated"];
    assert_eq!(n["wscale_offered"]["client"], 7, "{n}");
    assert_eq!(n["wscale_on"]["client"], true, "{n}");
    assert_eq!(n["wscale_on"]["server"], true, "{n}");
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    assert_eq!(n["timestamps"], true, "{n}");
    assert_eq!(n["syn_answered"]["basis"], "timestamp_echo", "{n}");
    assert_eq!(n["syn_answered"]["frame"], 1, "{n}");
    assert_eq!(n["syn_answered"]["syns"], 2, "{n}");
    let verdict = c0["verdict"].as_str().unwrap();
    assert!(!verdict.contains("did not offer"), "{verdict}");
}

/// Two SYNs with different options, a SYN-ACK without timestamps that
/// both could have drawn: which one it answers is unknown, and so is
/// window scaling; no mismatch is claimed and the exit status is 0.
#[test]
fn a_synack_that_could_answer_either_syn_leaves_scaling_unknown() {
    let pkts = connection(
        &[
            (64240, opts(Some((1_000, 0)), Some(7))),
            (64240, opts(None, Some(2))),
        ],
        &opts(None, Some(7)),
        502,
        509,
        4,
    );
    let v = run(&pkts);
    let c0 = &v["connections"][0];
    let n = &c0["negotiated"];
    assert_eq!(n["syn_answered"]["basis"], "unknown", "{n}");
    assert!(n["syn_answered"]["frame"].is_null(), "{n}");
    assert!(n["wscale_on"]["client"].is_null(), "{n}");
    assert!(n["wscale_on"]["server"].is_null(), "{n}");
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    let verdict = c0["verdict"].as_str().unwrap();
    assert!(verdict.contains("window scaling is unknown"), "{verdict}");
    assert_eq!(cli("twosyns.pcap", &pkts).0, 0);
}

/// Only one SYN offered what the SYN-ACK answers (window scale): that one.
#[test]
fn the_synack_answers_the_only_syn_that_offered_its_options() {
    let pkts = connection(
        &[(64240, opts(None, Some(7))), (64240, opts(None, None))],
        &opts(None, Some(7)),
        502,
        509,
        4,
    );
    let n = &run(&pkts)["connections"][0]["negotiated"];
    assert_eq!(n["syn_answered"]["basis"], "options_answered", "{n}");
    assert_eq!(n["syn_answered"]["frame"], 1, "{n}");
    assert_eq!(n["wscale_on"]["server"], true, "{n}");
    assert_eq!(n["wscale_mismatch"], false, "{n}");
}

/// RFC 7323 section 2.2: both SYNs must carry Window Scale for scaling in
/// either direction. A SYN without it and a SYN-ACK with it: the text says
/// scaling is off, and so do the JSON and the exit status (no mismatch).
#[test]
fn window_scale_answered_without_offer_agrees_in_json_text_and_status() {
    let pkts = connection(
        &[(64240, opts(None, None))],
        &opts(None, Some(7)),
        64240,
        65160,
        4,
    );
    let v = run(&pkts);
    let c0 = &v["connections"][0];
    let n = &c0["negotiated"];
    assert_eq!(n["wscale_on"]["client"], false, "{n}");
    assert_eq!(n["wscale_on"]["server"], false, "{n}");
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    assert!(n["wscale_mismatch_evidence"].is_null(), "{n}");
    assert!(c0["verdict"].as_str().unwrap().contains("scaling is off"));
    let (code, out) = cli("unoffered.pcap", &pkts);
    assert!(!out.contains("MISMATCH"), "{out}");
    assert!(out.contains("scaling is off"), "{out}");
    assert_eq!(code, 0, "{out}");
}
