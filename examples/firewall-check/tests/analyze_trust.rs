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
    shaped(syns, synack, client_win, server_win, rounds, 10, 2)
}

/// [`connection`] with `per_round` segments a round, acknowledged every
/// `ack_every` segments.
fn shaped(
    syns: &[(u16, Vec<u8>)],
    synack: &[u8],
    client_win: u16,
    server_win: u16,
    rounds: u32,
    per_round: u64,
    ack_every: u64,
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
        for i in 0..per_round {
            pkts.push(Pkt::new(
                t + i * 10_000,
                s(next, CISN + 1, ACK).win(server_win).payload(1448).ipv4(),
            ));
            next = next.wrapping_add(1448);
            if (i + 1) % ack_every == 0 || i + 1 == per_round {
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
    // The RTT runs from the latest SYN (10 ms), not the answered one (1 s
    // earlier: the client's retransmission timeout).
    let rtt = c0["rtt_s"].as_f64().unwrap();
    assert!((rtt - 0.010).abs() < 1e-6, "{rtt}");
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

/// Windows (Vista and later) sends SYN window 8192 with window scale 2 or
/// 8 and sizes its receive window in whole segments (Microsoft's
/// `TcpWindowSize` documentation: the stack rounds the window to a multiple
/// of the MSS; "Windows Vista and Windows 7 use a scale factor of 8", up to
/// 16 MB with auto-tuning). A first window field of 16,425 with shift 2 is
/// 65,700 bytes = 45 x 1,460 (as in issue 30's captures): scaled. Under the
/// old rule (first field at least half the SYN window) this was "the client
/// does not scale" and exit 3.
#[test]
fn windows_shift_2_first_field_is_a_scaled_whole_number_of_segments() {
    let pkts = connection(
        &[(8192, opts(None, Some(2)))],
        &opts(None, Some(7)),
        16425,
        509,
        4,
    );
    let v = run(&pkts);
    let c0 = &v["connections"][0];
    let n = &c0["negotiated"];
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    assert_eq!(n["wscale_on"]["client"], true, "{n}");
    assert_eq!(n["wscale"]["client"], 2, "{n}");
    assert_eq!(
        n["wscale_unscaled_ruled_out"]["kind"], "mss_multiple",
        "{n}"
    );
    let verdict = c0["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("65,700 bytes, exactly 45 segments"),
        "{verdict}"
    );
    assert_eq!(cli("win2.pcap", &pkts).0, 0);
}

/// Windows with shift 8 (the auto-tuning default, source above): a first
/// field of 4,745 is 1,214,720 bytes = 832 x 1,460 read scaled.
#[test]
fn windows_shift_8_first_field_is_a_scaled_whole_number_of_segments() {
    let pkts = connection(
        &[(8192, opts(None, Some(8)))],
        &opts(None, Some(7)),
        4745,
        509,
        4,
    );
    let n = &run(&pkts)["connections"][0]["negotiated"];
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    assert_eq!(
        n["wscale_unscaled_ruled_out"]["kind"], "mss_multiple",
        "{n}"
    );
    assert_eq!(cli("win8.pcap", &pkts).0, 0);
}

/// Acknowledging data past the unscaled window does not show that a
/// client scales: a Linux receiver queues an in-sequence segment whatever
/// its end, as long as its receive window is not zero (`tcp_data_queue`
/// drops only on a zero window; `tcp_sequence` checks the segment's
/// start), so a client that does not scale, read with a shift by its peer,
/// acknowledges far past its unscaled edges. The lab's `wscale_synack4`
/// (the SYN-ACK's window scale removed on the way; the client does not
/// scale, its kernel says) acknowledged 166,145 bytes past them in the
/// server-side capture. Issue 30 took such ACKs (5,520 bytes past, in one
/// corpus connection) as proof of scaling; a rule built on that called the
/// lab's broken connection healthy, so there is none.
#[test]
fn acknowledging_past_the_unscaled_window_rules_nothing_out() {
    let pkts = shaped(
        &[(64240, opts(None, Some(7)))],
        &opts(None, Some(7)),
        64240,
        509,
        4,
        60,
        60,
    );
    let v = run(&pkts);
    let n = &v["connections"][0]["negotiated"];
    assert_eq!(
        n["wscale_unscaled_ruled_out"],
        serde_json::Value::Null,
        "{n}"
    );
    assert_eq!(n["wscale_on"]["client"], false, "{n}");
    assert_eq!(n["wscale_mismatch"], true, "{n}");
}

/// The counter-case the rule is for (DESIGN.md incident 1 seen from the
/// server's side): a Linux client whose window scale was removed on the
/// way, shift 10, fields at 64,240 (unscaled: 64,240 << 10 would be 65.8
/// MB, beyond any stack's autotuning), acknowledging two segments at a
/// time within its unscaled window: still a high-confidence mismatch.
#[test]
fn an_unscaled_linux_client_is_still_found() {
    let pkts = connection(
        &[(64240, opts(None, Some(10)))],
        &opts(None, Some(10)),
        64240,
        509,
        4,
    );
    let v = run(&pkts);
    let n = &v["connections"][0]["negotiated"];
    assert_eq!(n["wscale_mismatch"], true, "{n}");
    assert_eq!(
        n["wscale_mismatch_evidence"]["kind"], "client_unscaled",
        "{n}"
    );
    assert_eq!(n["wscale_mismatch_evidence"]["confidence"], "high", "{n}");
    assert!(n["wscale_unscaled_ruled_out"].is_null(), "{n}");
    assert_eq!(cli("unscaled.pcap", &pkts).0, 3);
}

/// macOS / iOS and FreeBSD offer shift 6 with SYN window 65,535 (FreeBSD
/// `tcp_usr_connect`: the smallest shift with 65,535 << shift at least
/// `kern.ipc.maxsockbuf`, 2 MiB by default: 6; XNU derives from the same
/// code; RFC 7323 section 2.3 lets each side choose its shift). Their first
/// field after the handshake is their window over 64 (here 2,058 =
/// 131,712 / 64), far below half the SYN window: no inference fires.
#[test]
fn bsd_and_macos_shift_6_clients_scale() {
    let pkts = connection(
        &[(65535, opts(Some((1, 0)), Some(6)))],
        &opts(Some((9, 1)), Some(7)),
        2058,
        509,
        4,
    );
    let n = &run(&pkts)["connections"][0]["negotiated"];
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    assert_eq!(n["wscale"]["client"], 6, "{n}");
    assert!(n["wscale_unscaled_ruled_out"].is_null(), "{n}");
    assert_eq!(cli("bsd6.pcap", &pkts).0, 0);
}

/// A medium-confidence mismatch (the server's window field after the
/// handshake is 1/130 of its SYN-ACK window: a server that scales, or one
/// whose buffer is nearly full) is a hint: worded as one, exit status 0.
#[test]
fn a_medium_mismatch_is_a_hint_and_not_exit_3() {
    let pkts = connection(
        &[(64240, opts(None, Some(7)))],
        &opts(None, None),
        65535,
        502,
        4,
    );
    let v = run(&pkts);
    let c0 = &v["connections"][0];
    let e = &c0["negotiated"]["wscale_mismatch_evidence"];
    assert_eq!(e["confidence"], "medium", "{e}");
    let (code, out) = cli("medium.pcap", &pkts);
    assert!(
        out.contains("HINT (medium confidence, not a finding)"),
        "{out}"
    );
    assert!(!out.contains("BROKEN"), "{out}");
    assert_eq!(code, 0, "{out}");
}

/// Fools the flight-plateau reading of the receive window
/// (`WindowEvidence::FlightPlateau`): a writer that pauses between 16 KB
/// chunks at 10 ms stops at the same flight every round although the
/// client advertises megabytes (issue 30: called `receive_window` with "a
/// window field rewritten on the way"). Never a finding: no middlebox is
/// accused without a hint's wording, and the exit status is 0.
#[test]
fn a_pausing_writer_is_never_a_rewritten_window() {
    let pkts = shaped(
        &[(64240, opts(None, Some(7)))],
        &opts(None, Some(7)),
        20_000,
        509,
        30,
        11,
        2,
    );
    let v = run(&pkts);
    let d = &v["connections"][0]["directions"]["server_to_client"];
    let l = &d["limit"];
    if l["kind"] == "receive_window" {
        assert_ne!(l["confidence"], "high", "{l}");
    }
    assert_ne!(d["window_limited_confidence"], "high", "{d}");
    let (code, out) = cli("pausing.pcap", &pkts);
    if out.contains("rewritten on the way") {
        assert!(out.contains("HINT (not a finding"), "{out}");
    }
    assert_eq!(code, 0, "{out}");
}

/// Fools "the server scales anyway" (the SYN-ACK has no window scale, yet
/// the server's later fields are tiny): a server that advertises a zero
/// window after the handshake for the whole capture. Zero is zero at any
/// shift: no mismatch, exit 0.
#[test]
fn a_server_with_a_zero_window_is_no_evidence_of_scaling() {
    let pkts = connection(
        &[(64240, opts(None, Some(7)))],
        &opts(None, None),
        65535,
        0,
        2,
    );
    let n = &run(&pkts)["connections"][0]["negotiated"];
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    assert_eq!(cli("zerowin.pcap", &pkts).0, 0);
}

/// The synthetic handshakes of other stacks that the golden cases analyze
/// (`examples/golden/stacks/`, sources in its README.md and in
/// `examples/golden/cases.txt`): (file, SYN window, SYN options, the
/// client's window field after the handshake).
fn stack_captures() -> Vec<(&'static str, Vec<Pkt>)> {
    let linux_synack = opts(Some((9, 1)), Some(7));
    vec![
        // Windows Vista and later: SYN window 8192, shift 2 (Microsoft,
        // "TCP Receive Window Auto-Tuning", restricted level) and 8 (the
        // normal level: "Windows Vista and Windows 7 use a scale factor of
        // 8"); the window a whole number of segments (Microsoft's
        // TcpWindowSize documentation: rounded to a multiple of the MSS).
        (
            "windows-shift2.pcap",
            connection(
                &[(8192, opts(None, Some(2)))],
                &opts(None, Some(7)),
                16425,
                509,
                4,
            ),
        ),
        (
            "windows-shift8.pcap",
            connection(
                &[(8192, opts(None, Some(8)))],
                &opts(None, Some(7)),
                4745,
                509,
                4,
            ),
        ),
        // macOS / iOS (XNU) and FreeBSD: SYN window 65,535, shift 6
        // (FreeBSD tcp_usr_connect: the smallest shift with 65,535 << shift
        // at least kern.ipc.maxsockbuf, 2 MiB by default; RFC 7323 section
        // 2.3 lets each side choose), timestamps on; first field its window
        // over 64.
        (
            "macos-shift6.pcap",
            connection(
                &[(65535, opts(Some((1, 0)), Some(6)))],
                &linux_synack,
                2058,
                509,
                4,
            ),
        ),
        (
            "freebsd-shift6.pcap",
            connection(
                &[(65535, opts(Some((1, 0)), Some(6)))],
                &linux_synack,
                1027,
                509,
                4,
            ),
        ),
    ]
}

/// `examples/golden/stacks/*.pcap` are what the builders above write
/// (`STACKS_UPDATE=1` writes them anew).
#[test]
fn stack_captures_are_what_the_builders_write() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../golden/stacks");
    for (name, pkts) in stack_captures() {
        let bytes = pcap(101, true, &pkts);
        let path = dir.join(name);
        if std::env::var("STACKS_UPDATE").is_ok_and(|v| v == "1") {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        assert_eq!(
            std::fs::read(&path).expect("run with STACKS_UPDATE=1"),
            bytes,
            "{name}"
        );
        // None of them is a mismatch, and none exits 3.
        let v = run(&pkts);
        assert_eq!(
            v["connections"][0]["negotiated"]["wscale_mismatch"], false,
            "{name}"
        );
    }
}

/// Fools the window-limited reading without the time split (too few
/// segments: a window's worth in flight after most of them): a sender whose
/// congestion window or application happens to send exactly the receive
/// window's worth. `window_limited` is true, but `medium`: a hint, exit 0.
#[test]
fn window_limited_without_the_time_split_is_a_hint() {
    let pkts = shaped(
        &[(64240, opts(None, None))],
        &opts(None, None),
        2896,
        65535,
        5,
        2,
        2,
    );
    let v = run(&pkts);
    let d = &v["connections"][0]["directions"]["server_to_client"];
    assert_eq!(d["limit"]["kind"], "none", "{d}");
    assert_eq!(d["window_limited"], true, "{d}");
    assert_eq!(d["window_limited_confidence"], "medium", "{d}");
    let (code, out) = cli("fewsegs.pcap", &pkts);
    assert!(
        out.contains(
            "HINT (medium confidence, not a finding): server-to-client was window-limited"
        ),
        "{out}"
    );
    assert_eq!(code, 0, "{out}");
}

/// The counter-case of the reading above, as Wireshark's
/// `grpc_stream_reassembly_sample.pcapng` shows it (a gRPC call over
/// loopback, frames 140-173): the client writes 32 KB at a time, and after
/// its first 32 KB the server's window is 48,768 bytes, so the next segment
/// "fills" it; the call takes 10 ms at 160 Mbit/s against a ceiling of
/// 181 Gbit/s. A flight at the window's edge now and then is no window
/// limit: `window_limited` false (it was a medium hint).
#[test]
fn a_segment_that_fills_a_loopback_window_once_is_no_window_limit() {
    let us = 1_000;
    let ws7 = opts(None, Some(7));
    let mut pkts = vec![
        Pkt::new(T0, c(CISN, 0, SYN).win(65495).opts(&ws7).ipv4()),
        Pkt::new(
            T0 + 13 * us,
            s(SISN, CISN + 1, SYN | ACK).win(65483).opts(&ws7).ipv4(),
        ),
        Pkt::new(T0 + 26 * us, c(CISN + 1, SISN + 1, ACK).win(512).ipv4()),
    ];
    // (time in us, from the client, payload, window field): the client's
    // data and the server's ACKs of it, as in the sample (shift 7).
    let steps: [(u64, bool, usize, u16); 12] = [
        (6_800, true, 32_768, 512),
        (6_850, false, 0, 381),
        (6_870, true, 32_768, 512),
        (6_880, true, 190, 512),
        (6_920, false, 0, 507),
        (7_900, true, 32_768, 512),
        (7_950, true, 18, 512),
        (8_600, false, 0, 512),
        (8_750, true, 32_768, 512),
        (8_760, true, 17, 512),
        (8_780, false, 0, 1535),
        (9_800, true, 3_413, 512),
    ];
    let (mut cseq, mut t) = (CISN + 1, T0);
    for (at, client, len, win) in steps {
        t = T0 + at * us;
        pkts.push(Pkt::new(
            t,
            if client {
                c(cseq, SISN + 1, ACK).win(win).payload(len).ipv4()
            } else {
                s(SISN + 1, cseq, ACK).win(win).ipv4()
            },
        ));
        cseq = cseq.wrapping_add(len as u32);
    }
    pkts.push(Pkt::new(
        t + 100 * us,
        s(SISN + 1, cseq, ACK).win(4605).ipv4(),
    ));
    let v = run(&pkts);
    let d = &v["connections"][0]["directions"]["client_to_server"];
    assert_eq!(d["limit"]["kind"], "none", "{d}");
    assert_eq!(d["window_limited"], false, "{d}");
    assert!(d["window_limited_confidence"].is_null(), "{d}");
    let (code, out) = cli("loopback-fill.pcap", &pkts);
    assert!(!out.contains("window-limited: achieved"), "{out}");
    assert_eq!(code, 0, "{out}");
}

/// Linux retransmits its SYN with the same options and a new TSval; a
/// server without timestamps answers with no echo. That is one offer, not
/// an ambiguity: scaling on, no `syn_answered`.
#[test]
fn syns_that_differ_only_in_their_tsval_are_one_offer() {
    let pkts = connection(
        &[
            (64240, opts(Some((1_000, 0)), Some(7))),
            (64240, opts(Some((2_000, 0)), Some(7))),
        ],
        &opts(None, Some(7)),
        502,
        509,
        4,
    );
    let n = &run(&pkts)["connections"][0]["negotiated"];
    assert!(n["syn_answered"].is_null(), "{n}");
    assert_eq!(n["wscale_on"]["client"], true, "{n}");
    assert_eq!(n["wscale_on"]["server"], true, "{n}");
}
