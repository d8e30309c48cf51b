//! `firewall-check analyze` on generated captures: the campus incident of
//! DESIGN.md ("The problem we solve", incident 1), a healthy scaled
//! connection, the broken state where the endpoints disagree, a capture that
//! starts mid-stream, retransmissions, the connection cap, a truncated file.

mod dump_support;

use std::time::Duration;

use dump_support::*;
use firewall_check::analysis::analyze::{analyze, AnalyzeFormat, Settings};
use serde_json::Value;

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 19, 0, 1];
const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000 * 1_000_000_000;

/// A client-side capture of a bulk server-to-client transfer: handshake
/// (`syn_ws` / `synack_ws` offered), then `rounds` round trips of `rtt_ms`
/// each carrying `per_round` segments of 1448 bytes, acknowledged by the
/// client every two segments with window field `client_win`. The server's
/// window field after the handshake is `server_win`.
struct Transfer {
    syn_ws: Option<u8>,
    synack_ws: Option<u8>,
    rounds: u32,
    per_round: u32,
    rtt_ms: u64,
    client_win: u16,
    server_win: u16,
}

fn transfer(t: &Transfer) -> Vec<Pkt> {
    let mut syn_opts = vec![2, 4, 0x05, 0xb4, 4, 2];
    if let Some(s) = t.syn_ws {
        syn_opts.extend_from_slice(&[1, 3, 3, s]);
    }
    let mut synack_opts = vec![2, 4, 0x05, 0xb4, 4, 2];
    if let Some(s) = t.synack_ws {
        synack_opts.extend_from_slice(&[1, 3, 3, s]);
    }
    let (cisn, sisn) = (1_000u32, 5_000_000u32);
    let c =
        |seq: u32, ack: u32, flags: u8| Seg::new(C, 40000, S, 5001).seq(seq).ack(ack).flags(flags);
    let s =
        |seq: u32, ack: u32, flags: u8| Seg::new(S, 5001, C, 40000).seq(seq).ack(ack).flags(flags);
    let rtt = t.rtt_ms * MS;
    let mut pkts = vec![
        Pkt::new(T0, c(cisn, 0, SYN).win(64240).opts(&syn_opts).ipv4()),
        Pkt::new(
            T0 + rtt,
            s(sisn, cisn + 1, SYN | ACK)
                .win(65160)
                .opts(&synack_opts)
                .ipv4(),
        ),
        Pkt::new(
            T0 + rtt,
            c(cisn + 1, sisn + 1, ACK).win(t.client_win).ipv4(),
        ),
    ];
    let mut next = sisn + 1;
    let mut now = T0 + rtt + MS / 10;
    for _ in 0..t.rounds {
        let start = now;
        for i in 0..t.per_round {
            pkts.push(Pkt::new(
                start + u64::from(i) * 10_000,
                s(next, cisn + 1, ACK)
                    .win(t.server_win)
                    .payload(1448)
                    .ipv4(),
            ));
            next = next.wrapping_add(1448);
            if i % 2 == 1 || i + 1 == t.per_round {
                pkts.push(Pkt::new(
                    start + u64::from(i) * 10_000 + 1_000,
                    c(cisn + 1, next, ACK).win(t.client_win).ipv4(),
                ));
            }
        }
        now = start + rtt;
    }
    pkts
}

fn run(pkts: &[Pkt], settings: &Settings) -> Value {
    let file = pcap(101, true, pkts);
    let mut out = Vec::new();
    analyze(&file[..], &mut out, AnalyzeFormat::Json, settings).expect("analyze");
    serde_json::from_slice(&out).expect("analyze --json is one JSON document")
}

fn campus() -> Transfer {
    Transfer {
        syn_ws: Some(7),
        synack_ws: None,
        rounds: 20,
        per_round: 45,
        rtt_ms: 10,
        client_win: 65535,
        server_win: 65535,
    }
}

/// DESIGN.md incident 1 (the campus firewall): the SYN offers window
/// scaling, the SYN-ACK does not answer; at 10 ms a 65,535-byte window caps
/// throughput at 65535*8/0.010 = 52,428,000 bit/s (52.4 Mbit/s), and
/// 1 Gbit/s at 10 ms needs 1,250,000 bytes (shift 5).
#[test]
fn campus_incident_ceiling_and_verdict() {
    let v = run(&transfer(&campus()), &Settings::default());
    let conns = v["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1);
    let c = &conns[0];
    assert_eq!(c["client"], "198.18.0.1:40000");
    assert_eq!(c["server"], "198.19.0.1:5001");
    assert_eq!(c["handshake_seen"], true);
    assert_eq!(c["rtt_source"], "handshake");
    assert!((c["rtt_s"].as_f64().unwrap() - 0.010).abs() < 1e-12);
    let n = &c["negotiated"];
    assert!(n["wscale"].is_null());
    assert_eq!(n["wscale_offered"]["client"], 7);
    assert!(n["wscale_offered"]["server"].is_null());
    assert_eq!(n["wscale_on"]["client"], false);
    assert_eq!(n["wscale_mismatch"], false);
    assert_eq!(n["mss"]["client"], 1460);
    assert_eq!(n["sack"], true);
    assert_eq!(n["timestamps"], false);
    let s2c = &c["directions"]["server_to_client"];
    assert_eq!(s2c["max_window_bytes"], 65535);
    assert_eq!(s2c["ceiling_bps"], 52_428_000u64);
    assert_eq!(s2c["bytes"], 20 * 45 * 1448);
    assert_eq!(s2c["retransmissions"], 0);
    assert_eq!(s2c["window_limited"], true);
    let achieved = s2c["throughput_bps"].as_u64().unwrap();
    assert!(
        achieved > 45_000_000 && achieved <= 52_428_000,
        "{achieved}"
    );
    let c2s = &c["directions"]["client_to_server"];
    assert_eq!(c2s["max_window_bytes"], 65535);
    assert_eq!(c2s["window_limited"], false, "the client sends no data");
    let verdict = c["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("window scaling was offered by the client but not answered: the client's receive window is capped at 65,535 bytes; at 10 ms that caps server-to-client throughput at 52.4 Mbit/s; 1 Gbit/s would need 1,250,000 bytes (shift 5)"),
        "{verdict}"
    );
}

#[test]
fn campus_incident_from_the_command_line_with_given_rtt() {
    let mut t = campus();
    t.rtt_ms = 3; // the measured RTT is overridden by --rtt
    let path = temp_file(
        "campus.pcap",
        &pcap(
            1,
            false,
            &transfer(&t)
                .into_iter()
                .map(|p| Pkt::new(p.ts_ns, ethernet(0x0800, &p.data)))
                .collect::<Vec<_>>(),
        ),
    );
    let (code, out, err) = run_cli(&["analyze", path.to_str().unwrap(), "--rtt", "10ms"]);
    assert_eq!(code, 0, "{err}");
    // The capture's own round trips are 3 ms, so it moved more than the
    // 10 ms ceiling allows: the verdict says so instead of claiming the cap.
    assert!(
        out.contains(
            "at 10 ms would cap server-to-client throughput at 52.4 Mbit/s, yet the capture shows"
        ),
        "{out}"
    );
    assert!(!out.contains("that caps server-to-client"), "{out}");
    let (code, out, _) = run_cli(&[
        "analyze",
        "--json",
        path.to_str().unwrap(),
        "--rtt",
        "10ms",
        "--target-rate",
        "10Gbps",
    ]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = &v["connections"][0];
    assert_eq!(c["rtt_source"], "given");
    assert_eq!(
        c["directions"]["server_to_client"]["ceiling_bps"],
        52_428_000u64
    );
    // 10 Gbit/s at 10 ms: 12,500,000 bytes, shift 8 (65535 << 8 = 16,776,960).
    assert!(c["verdict"]
        .as_str()
        .unwrap()
        .contains("10 Gbit/s would need 12,500,000 bytes (shift 8)"));
}

#[test]
fn healthy_scaled_connection() {
    let t = Transfer {
        syn_ws: Some(7),
        synack_ws: Some(9),
        rounds: 5,
        per_round: 20,
        rtt_ms: 20,
        client_win: 20_000,
        server_win: 500,
    };
    let v = run(&transfer(&t), &Settings::default());
    let c = &v["connections"][0];
    let n = &c["negotiated"];
    assert_eq!(n["wscale"], serde_json::json!({"client": 7, "server": 9}));
    assert_eq!(n["wscale_mismatch"], false);
    // The server reads the client's fields with the client's shift 7, and the other way round.
    assert_eq!(
        c["directions"]["server_to_client"]["max_window_bytes"],
        20_000u64 << 7
    );
    assert_eq!(
        c["directions"]["client_to_server"]["max_window_bytes"],
        500u64 << 9
    );
    // 2,560,000 bytes at 20 ms: 1,024,000,000 bit/s.
    assert_eq!(
        c["directions"]["server_to_client"]["ceiling_bps"],
        1_024_000_000u64
    );
    assert_eq!(c["directions"]["server_to_client"]["window_limited"], false);
    let verdict = c["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with("window scaling on (client shift 7, server shift 9)"),
        "{verdict}"
    );
    assert!(!verdict.contains("window-limited"), "{verdict}");
}

#[test]
fn endpoints_disagreeing_about_scaling_is_flagged() {
    // The SYN-ACK seen here has no window scale, yet the server's windows
    // after the handshake are tiny: it scales them (a box between it and
    // this capture point stripped its option).
    let mut t = campus();
    t.server_win = 502;
    t.rounds = 2;
    let v = run(&transfer(&t), &Settings::default());
    let c = &v["connections"][0];
    assert_eq!(c["negotiated"]["wscale_mismatch"], true);
    assert_eq!(c["negotiated"]["wscale_on"]["server"], true);
    assert_eq!(c["negotiated"]["wscale_on"]["client"], false);
    // 502 is 1/130 of the SYN-ACK window: scaled, most likely, but a
    // server whose buffer is nearly full advertises as little (medium,
    // below 1/256 it is high): a hint, worded as one, not a finding.
    assert_eq!(
        c["negotiated"]["wscale_mismatch_evidence"]["confidence"],
        "medium"
    );
    let verdict = c["verdict"].as_str().unwrap();
    assert!(
        verdict.contains(
            "HINT (medium confidence, not a finding): the endpoints may disagree about window scaling"
        ),
        "{verdict}"
    );
    assert!(!verdict.contains("BROKEN"), "{verdict}");
    // The client reads the server's 502 unscaled.
    assert_eq!(c["directions"]["client_to_server"]["max_window_bytes"], 502);
    // The server reads the client's 65535 with the client's shift 7, but the
    // client does not scale: it accepts no more than 65,535 bytes, and that
    // is the window (and the 52.4 Mbit/s ceiling at 10 ms) the flow can use.
    assert_eq!(
        c["directions"]["server_to_client"]["max_window_bytes"],
        65535u64
    );
    assert!(
        verdict.contains("shift 7 (up to 8,388,480 bytes, more than the client offers)"),
        "{verdict}"
    );
}

/// A window read through a mismatch the capture only suggests limits no
/// surer than that reading. The campus handshake (SYN shift 7, SYN-ACK
/// without), then the client uploads into the server's window fields,
/// which it reads unscaled: a segment of 500 bytes a round trip into a
/// field of 502, acknowledged a round trip later (the next full segment
/// never fits: a receive-window limit the advertised fields show, high on
/// its own). That reading rests on the mismatch: fields of 502 are 1/130
/// of the server's SYN-ACK window, so it scales behind a stripped option
/// (medium: a server with a nearly full buffer advertises as little), and
/// the limit is medium too; with fields of 40 (below 1/256: high) it stays
/// high. nDPI's ssh.pcap had a high window limit on a medium mismatch, and
/// exit status 3 from it.
#[test]
fn a_limit_is_no_surer_than_the_mismatch_its_window_is_read_through() {
    for (server_win, seg, mismatch, limit) in
        [(502u16, 500u64, "medium", "medium"), (40, 40, "high", "high")]
    {
        let t = Transfer {
            rounds: 0,
            server_win,
            ..campus()
        };
        let mut pkts = transfer(&t);
        let (mut next, sisn) = (1_001u32, 5_000_001u32);
        let mut now = T0 + 10 * MS + MS / 10;
        for _ in 0..30 {
            pkts.push(Pkt::new(
                now,
                Seg::new(C, 40000, S, 5001)
                    .seq(next)
                    .ack(sisn)
                    .flags(ACK | PSH)
                    .win(65535)
                    .payload(seg as usize)
                    .ipv4(),
            ));
            next = next.wrapping_add(seg as u32);
            now += 10 * MS;
            pkts.push(Pkt::new(
                now - 10_000,
                Seg::new(S, 5001, C, 40000)
                    .seq(sisn)
                    .ack(next)
                    .flags(ACK)
                    .win(server_win)
                    .ipv4(),
            ));
        }
        let v = run(&pkts, &Settings::default());
        let c = &v["connections"][0];
        let n = &c["negotiated"];
        assert_eq!(n["wscale_mismatch_evidence"]["confidence"], mismatch, "{n}");
        let c2s = &c["directions"]["client_to_server"];
        assert_eq!(c2s["window_limited"], true, "{c2s}");
        assert_eq!(c2s["limit"]["kind"], "receive_window", "{c2s}");
        assert_eq!(c2s["limit"]["confidence"], "high", "{c2s}");
        assert_eq!(c2s["window_limited_confidence"], limit, "{server_win}: {c2s}");
    }
}

/// A reset's window field advertises nothing. nDPI's reddit.pcap: the
/// client resets TLS connections (RST, window 0) while the server's last
/// flight is on its way; read as a window, the data after it filled a zero
/// window, and four segments of a 3.6 kB response were called
/// window-limited against a 64 kB window.
#[test]
fn a_reset_is_no_window_advertisement() {
    let t = Transfer {
        syn_ws: Some(7),
        synack_ws: Some(3),
        rounds: 0,
        client_win: 507,
        ..campus()
    };
    let mut pkts = transfer(&t);
    let (cisn, sisn) = (1_001u32, 5_000_001u32);
    let at = T0 + 12 * MS;
    let data = |i: u32| {
        Seg::new(S, 5001, C, 40000)
            .seq(sisn + i * 1048)
            .ack(cisn)
            .flags(ACK | PSH)
            .win(2864)
            .payload(1048)
            .ipv4()
    };
    pkts.push(Pkt::new(at, data(0)));
    pkts.push(Pkt::new(at + 10_000, data(1)));
    let rst = Seg::new(C, 40000, S, 5001).seq(cisn).flags(RST).win(0).ipv4();
    pkts.push(Pkt::new(at + 20_000, rst));
    pkts.push(Pkt::new(at + 30_000, data(2)));
    pkts.push(Pkt::new(at + 40_000, data(3)));
    let v = run(&pkts, &Settings::default());
    let s2c = &v["connections"][0]["directions"]["server_to_client"];
    assert_eq!(s2c["window_limited"], false, "{s2c}");
    assert_eq!(s2c["max_window_field"], 507, "{s2c}");
}

/// Mid-stream: no handshake; timestamps give the RTT.
fn mid_stream() -> Vec<Pkt> {
    let c = |seq: u32, ack: u32| Seg::new(C, 40000, S, 443).seq(seq).ack(ack).flags(ACK);
    let s = |seq: u32, ack: u32| Seg::new(S, 443, C, 40000).seq(seq).ack(ack).flags(ACK);
    let mut pkts = Vec::new();
    let mut t = T0;
    for i in 0..10u32 {
        // Client data with TSval i; the server echoes it 4 ms later and the
        // client echoes the server's TSval 6 ms after that: RTT 10 ms.
        pkts.push(Pkt::new(
            t,
            c(100 + i * 1000, 7000)
                .win(300)
                .payload(1000)
                .opts(&ts_options(i, 1000 + i))
                .ipv4(),
        ));
        pkts.push(Pkt::new(
            t + 4 * MS,
            s(7000, 100 + (i + 1) * 1000)
                .win(4000)
                .opts(&ts_options(2000 + i, i))
                .ipv4(),
        ));
        pkts.push(Pkt::new(
            t + 10 * MS,
            c(100 + (i + 1) * 1000, 7000)
                .win(300)
                .opts(&ts_options(i + 100, 2000 + i))
                .ipv4(),
        ));
        t += 20 * MS;
    }
    pkts
}

#[test]
fn mid_stream_scale_unknown_unless_assumed() {
    let v = run(&mid_stream(), &Settings::default());
    let c = &v["connections"][0];
    assert_eq!(c["handshake_seen"], false);
    assert_eq!(
        c["client"], "198.18.0.1:40000",
        "the higher port is taken as the client"
    );
    assert!(c["directions"]["client_to_server"]["max_window_bytes"].is_null());
    assert!(c["directions"]["client_to_server"]["window_limited"].is_null());
    assert_eq!(c["rtt_source"], "timestamps");
    assert!(
        (c["rtt_s"].as_f64().unwrap() - 0.010).abs() < 1e-9,
        "{}",
        c["rtt_s"]
    );
    assert!(c["verdict"]
        .as_str()
        .unwrap()
        .contains("window scaling is unknown"));
    let settings = Settings {
        assume_wscale: Some(7),
        ..Settings::default()
    };
    let v = run(&mid_stream(), &settings);
    let c = &v["connections"][0];
    assert_eq!(c["assumed_wscale"], 7);
    assert_eq!(
        c["directions"]["client_to_server"]["max_window_bytes"],
        4000u64 << 7
    );
    assert_eq!(
        c["directions"]["server_to_client"]["max_window_bytes"],
        300u64 << 7
    );
    assert_eq!(c["directions"]["client_to_server"]["bytes"], 10_000);
}

#[test]
fn retransmissions_are_counted() {
    let mut pkts = transfer(&Transfer {
        syn_ws: Some(7),
        synack_ws: Some(7),
        rounds: 1,
        per_round: 4,
        rtt_ms: 10,
        client_win: 1000,
        server_win: 1000,
    });
    // Resend the second data segment (frame 5) later.
    let again = Pkt::new(pkts.last().unwrap().ts_ns + MS, pkts[4].data.clone());
    pkts.push(again);
    let v = run(&pkts, &Settings::default());
    let s2c = &v["connections"][0]["directions"]["server_to_client"];
    assert_eq!(s2c["retransmissions"], 1);
    assert_eq!(s2c["retransmitted_bytes"], 1448);
    assert_eq!(s2c["bytes"], 5 * 1448);
}

#[test]
fn connection_cap_evicts_and_reports_everything() {
    // Eight connections on different client ports, all left open.
    let mut pkts = Vec::new();
    for i in 0..8u16 {
        let syn = Seg::new(C, 41000 + i, S, 80)
            .seq(1)
            .flags(SYN)
            .opts(&[2, 4, 5, 0xb4]);
        pkts.push(Pkt::new(T0 + u64::from(i) * MS, syn.ipv4()));
    }
    let settings = Settings {
        capacity: 3,
        ..Settings::default()
    };
    let v = run(&pkts, &settings);
    let conns = v["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 8, "every connection is reported once");
    let mut ports: Vec<String> = conns
        .iter()
        .map(|c| c["client"].as_str().unwrap().to_string())
        .collect();
    ports.sort();
    ports.dedup();
    assert_eq!(ports.len(), 8);
    assert!(conns
        .iter()
        .all(|c| c["verdict"].as_str().unwrap().contains("SYN-ACK not seen")));
}

/// A connection pushed out of a full table and then active again is
/// reported as evicted, and its rest as its continuation, never as a capture
/// that starts mid-connection.
#[test]
fn an_evicted_connection_is_continued_not_mid_stream() {
    let settings = Settings {
        capacity: 1,
        ..Settings::default()
    };
    let a = |flags, seq, ack| Seg::new(C, 41000, S, 80).seq(seq).ack(ack).flags(flags);
    let a_back = |flags, seq, ack| Seg::new(S, 80, C, 41000).seq(seq).ack(ack).flags(flags);
    let b = Seg::new(C, 42000, S, 80).seq(7).flags(SYN);
    let pkts = vec![
        Pkt::new(T0, a(SYN, 1, 0).opts(&[2, 4, 5, 0xb4]).ipv4()),
        Pkt::new(
            T0 + MS,
            a_back(SYN | ACK, 100, 2).opts(&[2, 4, 5, 0xb4]).ipv4(),
        ),
        // Connection B fills the one-slot table: A is evicted.
        Pkt::new(T0 + 2 * MS, b.ipv4()),
        // A goes on.
        Pkt::new(T0 + 3 * MS, a(ACK, 2, 101).payload(100).ipv4()),
        Pkt::new(T0 + 4 * MS, a_back(ACK, 101, 102).ipv4()),
    ];
    let v = run(&pkts, &settings);
    let conns = v["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 3, "{v}");
    let first = &conns[0];
    assert_eq!(first["id"], 1);
    assert_eq!(first["evicted"], true);
    assert!(first["verdict"].as_str().unwrap().contains("evicted"));
    let rest = conns
        .iter()
        .find(|c| c["continues"] == 1)
        .expect("continuation");
    assert_eq!(
        rest["client"], "198.18.0.1:41000",
        "the evicted one's client, not a guess"
    );
    assert_eq!(rest["client_known"], true);
    let verdict = rest["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("continues connection 1"), "{verdict}");
    assert!(!verdict.contains("mid-connection"), "{verdict}");
}

#[test]
fn truncated_capture_reports_what_was_seen_and_fails() {
    let mut file = pcap(101, false, &transfer(&campus())[..20]);
    file.truncate(file.len() - 7);
    let mut out = Vec::new();
    let err = analyze(
        &file[..],
        &mut out,
        AnalyzeFormat::Json,
        &Settings::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    let v: Value = serde_json::from_slice(&out).expect("the JSON document is still complete");
    assert_eq!(v["connections"].as_array().unwrap().len(), 1);
    let path = temp_file("analyze-trunc.pcap", &file);
    let (code, out, err) = run_cli(&["analyze", path.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(out.contains("verdict:"), "{out}");
    assert!(err.contains("truncated"), "{err}");
    let _ = Duration::ZERO;
}

#[test]
fn every_tcpdump_corpus_capture_analyzes_cleanly() {
    let dir = std::env::var_os("TCP_PERF_TCPDUMP_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/tcpdump")
        });
    let Ok(entries) = std::fs::read_dir(&dir) else {
        assert!(!required(), "tcpdump corpus missing at {}", dir.display());
        eprintln!("skipping: tcpdump corpus not found at {}", dir.display());
        return;
    };
    let mut connections = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        if !matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("pcap" | "pcapng")
        ) {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        for format in [AnalyzeFormat::Json, AnalyzeFormat::Text] {
            let mut out = Vec::new();
            let n = analyze(&bytes[..], &mut out, format, &Settings::default())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .connections;
            if format == AnalyzeFormat::Json {
                let v: Value = serde_json::from_slice(&out).unwrap();
                assert_eq!(v["connections"].as_array().unwrap().len(), n);
                connections += n;
            }
        }
    }
    assert!(
        connections >= 20,
        "only {connections} connections in the corpus"
    );
}

/// The lab's campus sample (examples/data/README.md): the middlebox strips
/// window scale from the SYN-ACK. Seen from the client's side the endpoints
/// disagree because the server's windows are scaled behind a SYN-ACK without
/// the option; seen from the server's side, because the client's windows stay
/// unscaled (64240, 65535) behind a SYN-ACK that carried it.
#[test]
fn shipped_campus_sample_shows_the_broken_state_from_either_side() {
    let data = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data");
    let read = |name: &str| std::fs::read(data.join(name)).expect("shipped sample capture");
    let settings = Settings {
        rtt: Some(Duration::from_millis(10)),
        ..Settings::default()
    };
    let report = |bytes: Vec<u8>| -> Value {
        let mut out = Vec::new();
        analyze(&bytes[..], &mut out, AnalyzeFormat::Json, &settings).expect("analyze");
        serde_json::from_slice(&out).unwrap()
    };
    let inside = report(read("campus-inside.pcap"));
    let c = &inside["connections"][0];
    assert_eq!(c["negotiated"]["wscale_mismatch"], true);
    assert!(c["negotiated"]["wscale_offered"]["server"].is_null());
    assert_eq!(
        c["directions"]["server_to_client"]["ceiling_bps"]
            .as_u64()
            .map(|_| ()),
        Some(())
    );
    let verdict = c["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("window scaling was offered by the client but not answered: the client's receive window is capped at 65,535 bytes; at 10 ms that caps server-to-client throughput at 52.4 Mbit/s; 1 Gbit/s would need 1,250,000 bytes (shift 5)"), "{verdict}");
    assert!(verdict.contains("BROKEN"), "{verdict}");
    assert_eq!(
        c["negotiated"]["wscale_mismatch_evidence"]["kind"],
        "server_scales_anyway"
    );
    let outside = report(read("campus-outside.pcap"));
    let c = &outside["connections"][0];
    let n = &c["negotiated"];
    assert_eq!(n["wscale_mismatch"], true, "{n}");
    assert_eq!(n["wscale_offered"]["server"], 10);
    assert_eq!(n["wscale_on"]["client"], false);
    assert_eq!(n["wscale_on"]["server"], true);
    assert!(
        n["wscale"].is_null(),
        "no agreed shifts in the broken state"
    );
    let ev = &n["wscale_mismatch_evidence"];
    assert_eq!(ev["kind"], "client_unscaled");
    // Shift 10: the two readings of the client's fields are 1024x apart.
    assert_eq!(ev["confidence"], "high");
    assert!(
        ev["detail"].as_str().unwrap().contains("first 64240"),
        "{ev}"
    );
    // The client reads the server's fields unscaled: the largest is a few dozen bytes.
    let c2s = &c["directions"]["client_to_server"];
    assert!(c2s["max_window_bytes"].as_u64().unwrap() < 1000, "{c2s}");
    let verdict = c["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with(
            "BROKEN: the endpoints disagree about window scaling: the SYN-ACK seen here answers"
        ),
        "{verdict}"
    );
}

/// A capture that starts mid-transfer, next to the server, of a bulk
/// download: the client, a Linux-like receiver, opens its window by 2 bytes
/// per byte received (`tcp_grow_window`) from `start` up to `cap` bytes and
/// sends its field rounded up to shift `meant` (`__tcp_select_window`), one
/// ACK per segment; the server reads the fields with shift `read` and sends
/// 1448-byte segments while its congestion window (`cwnd` segments, growing
/// by one per ACK up to `cwnd_max`) and the window as it reads it allow.
struct Download {
    meant: u8,
    read: u8,
    start: u64,
    cap: u64,
    cwnd: u64,
    cwnd_max: u64,
    acks: u32,
}

/// A window-limited sender (its congestion window never binds) and a
/// receiver at shift 7 whose window grows to 4 MiB: the sender keeps
/// stopping at the edge it reads.
const GROWING_WINDOW_LIMITED: Download = Download {
    meant: 7,
    read: 7,
    start: 20 * 1448,
    cap: 4 << 20,
    cwnd: 1000,
    cwnd_max: 1000,
    acks: 400,
};

/// The server reads a larger shift (7) than the client means (3).
const READS_A_LARGER_SHIFT: Download = Download {
    meant: 3,
    read: 7,
    start: 10 * 1448,
    cap: 200_000,
    cwnd: 40,
    cwnd_max: 40,
    acks: 600,
};

fn mid_stream_download(d: &Download) -> Vec<Pkt> {
    let Download {
        meant,
        read,
        start,
        cap,
        cwnd_max,
        acks,
        ..
    } = *d;
    let c = |seq: u32, ack: u32| Seg::new(C, 40000, S, 443).seq(seq).ack(ack).flags(ACK);
    let s = |seq: u32, ack: u32| Seg::new(S, 443, C, 40000).seq(seq).ack(ack).flags(ACK);
    let (mut una, mut next) = (1_000_000u32, 1_000_000u32);
    let mut window: u64 = start.min(cap);
    let field = |w: u64| w.div_ceil(1 << meant).min(65_535) as u16;
    let mut cwnd: u64 = d.cwnd;
    let mut t = T0;
    let mut pkts = vec![Pkt::new(t, c(500, una).win(field(window)).ipv4())];
    for _ in 0..acks {
        let edge = u64::from(una) + (u64::from(field(window)) << read);
        while u64::from(next - una) + 1448 <= cwnd * 1448 && u64::from(next) + 1448 <= edge {
            t += 10_000;
            pkts.push(Pkt::new(t, s(next, 500).win(1000).payload(1448).ipv4()));
            next += 1448;
        }
        if una == next {
            break;
        }
        una += 1448;
        window = (window + 2 * 1448).min(cap);
        cwnd = (cwnd + 1).min(cwnd_max);
        t += 10_000;
        pkts.push(Pkt::new(t, c(500, una).win(field(window)).ipv4()));
    }
    pkts
}

fn inferred_client(pkts: &[Pkt]) -> (Value, Value) {
    let v = run(pkts, &Settings::default());
    let c = &v["connections"][0];
    assert_eq!(c["handshake_seen"], false, "{c}");
    (
        c["negotiated"]["wscale_inferred"]["client"].clone(),
        c["negotiated"].clone(),
    )
}

/// A sender held by its congestion window never shows the window's size:
/// the bounds stay wide, and the receiver's Linux growth names the shift,
/// on the stated assumption that the ends agree.
#[test]
fn mid_stream_growth_names_the_shift_a_cwnd_limited_sender_never_shows() {
    let pkts = mid_stream_download(&Download {
        meant: 7,
        read: 7,
        start: 60 * 1448,
        cap: 4 << 20,
        cwnd: 10,
        cwnd_max: 30,
        acks: 600,
    });
    let (inf, n) = inferred_client(&pkts);
    assert_eq!(inf["linux_growth_shift"], 7, "{inf}");
    assert!(inf["sender_edge_shift"].is_null(), "{inf}");
    let (lo, hi) = (
        inf["bounds"]["min"].as_u64().unwrap(),
        inf["bounds"]["max"].as_u64().unwrap(),
    );
    assert!(lo < 7 && 7 <= hi, "the flight alone does not pin it: {inf}");
    assert_eq!(
        (inf["min"].as_u64(), inf["max"].as_u64()),
        (Some(7), Some(7)),
        "{inf}"
    );
    assert_eq!(inf["basis"], "linux_growth", "{inf}");
    assert_eq!(inf["confidence"], "medium", "{inf}");
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    // The text says the shift and what it rests on; --assume-wscale still
    // decides how the windows are read.
    let file = pcap(101, true, &pkts);
    for assume in [None, Some(5u8)] {
        let settings = Settings {
            assume_wscale: assume,
            ..Settings::default()
        };
        let mut out = Vec::new();
        analyze(&file[..], &mut out, AnalyzeFormat::Text, &settings).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(
                "the client's shift is 7 (its window grows as a Linux receiver's at shift 7"
            ) && text.contains("assuming both ends agree about scaling: medium confidence"),
            "{text}"
        );
        assert_eq!(
            text.contains("windows read with the assumed shift 5 (--assume-wscale)"),
            assume.is_some(),
            "{text}"
        );
        let v = run(&pkts, &settings);
        let s2c = &v["connections"][0]["directions"]["server_to_client"];
        let field = s2c["max_window_field"].as_u64().unwrap();
        assert_eq!(
            s2c["max_window_bytes"].as_u64(),
            assume.map(|a| field << a),
            "{s2c}"
        );
    }
}

/// A sender held by the window sends up to the edge it reads: the edge
/// names the shift it reads, whatever the receiver's growth (here none: a
/// fixed window of 20 segments).
#[test]
fn mid_stream_window_limited_sender_stops_at_the_edge_it_reads() {
    let (inf, n) = inferred_client(&mid_stream_download(&Download {
        meant: 7,
        read: 7,
        start: 20 * 1448,
        cap: 20 * 1448,
        cwnd: 10,
        cwnd_max: 1000,
        acks: 400,
    }));
    assert!(inf["linux_growth_shift"].is_null(), "{inf}");
    assert_eq!(inf["sender_edge_shift"], 7, "{inf}");
    assert_eq!(inf["bounds"]["min"], 7, "{inf}");
    assert_eq!(
        (inf["min"].as_u64(), inf["max"].as_u64()),
        (Some(7), Some(7)),
        "{inf}"
    );
    assert_eq!(inf["basis"], "sender_edge", "{inf}");
    // The edge never changed size: a sender holding its flight at that
    // size for another reason would look the same.
    assert_eq!(inf["confidence"], "medium", "{inf}");
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    // A window that grows while the sender keeps stopping at its edge: the
    // stops follow the window.
    let (inf, n) = inferred_client(&mid_stream_download(&GROWING_WINDOW_LIMITED));
    assert_eq!(inf["sender_edge_shift"], 7, "{inf}");
    assert_eq!(inf["linux_growth_shift"], 7, "{inf}");
    assert_eq!(
        (inf["min"].as_u64(), inf["max"].as_u64()),
        (Some(7), Some(7)),
        "{inf}"
    );
    assert_eq!(inf["basis"], "sender_edge", "{inf}");
    assert_eq!(inf["confidence"], "high", "{inf}");
    assert_eq!(n["wscale_mismatch"], false, "{n}");
}

/// The ends disagree (a SYN proxy told the server another shift than the
/// client offered): the server stops at the edge of the shift it reads (3),
/// the client grows at the one it means (7). The interval is the reading,
/// and the disagreement is reported.
#[test]
fn mid_stream_edge_and_growth_disagreeing_is_a_mismatch() {
    let (inf, n) = inferred_client(&mid_stream_download(&Download {
        meant: 7,
        read: 3,
        start: 60 * 1448,
        cap: 4 << 20,
        cwnd: 10,
        cwnd_max: 1000,
        acks: 1500,
    }));
    assert_eq!(inf["linux_growth_shift"], 7, "{inf}");
    assert_eq!(inf["sender_edge_shift"], 3, "{inf}");
    assert_eq!(inf["confidence"], "high", "{inf}");
    assert_eq!(
        (inf["min"].as_u64(), inf["max"].as_u64()),
        (Some(3), Some(3)),
        "{inf}"
    );
    assert_eq!(n["wscale_mismatch"], true, "{n}");
    assert_eq!(
        n["wscale_mismatch_evidence"]["kind"], "sender_edge_differs",
        "{n}"
    );
}

/// The server reads a larger shift (7) than the client means (3): its data
/// goes past every edge the growth shift gives. No interval is pinned, and
/// the disagreement is reported.
#[test]
fn mid_stream_flight_beyond_the_growth_shift_is_a_mismatch() {
    let (inf, n) = inferred_client(&mid_stream_download(&READS_A_LARGER_SHIFT));
    assert_eq!(inf["linux_growth_shift"], 3, "{inf}");
    assert!(inf["bounds"]["min"].as_u64().unwrap() > 3, "{inf}");
    assert_eq!(inf["basis"], "bounds", "{inf}");
    assert_eq!(n["wscale_mismatch"], true, "{n}");
    assert_eq!(
        n["wscale_mismatch_evidence"]["kind"], "flight_beyond_growth",
        "{n}"
    );
}

/// The capture without `range` of its records, as a capture tool that
/// drops a burst of them (tcpdump's "packets dropped by kernel") leaves
/// it: data and ACKs missing alike.
fn with_capture_drop(pkts: &[Pkt], range: std::ops::Range<usize>) -> Vec<Pkt> {
    pkts.iter()
        .enumerate()
        .filter(|(i, _)| !range.contains(i))
        .map(|(_, p)| Pkt::new(p.ts_ns, p.data.clone()))
        .collect()
}

/// A capture that dropped a burst of records lost the receiver's ACKs with
/// the data: the sender's next data runs past the edges of the ACKs it
/// shows, here past shift 8's for a receiver at shift 7 (seen in the lab,
/// `lab_linux_receiver_at_the_top_of_its_shift_stays_below_65535`, when
/// tcpdump dropped records). The hole in the sender's data that the
/// receiver acknowledges without a retransmission shows the capture
/// missed it: no bound from it, no mismatch.
#[test]
fn mid_stream_capture_drop_is_not_a_mismatch() {
    let whole = mid_stream_download(&GROWING_WINDOW_LIMITED);
    let (inf, n) = inferred_client(&whole);
    assert_eq!(
        (inf["min"].as_u64(), inf["max"].as_u64()),
        (Some(7), Some(7)),
        "{inf}"
    );
    assert_eq!(n["wscale_mismatch"], false, "{n}");
    for range in [400..1000, 200..900, 1000..1600] {
        let cut = with_capture_drop(&whole, range.clone());
        let (inf, n) = inferred_client(&cut);
        assert_eq!(n["wscale_mismatch"], false, "{range:?}: {n}");
        assert!(n["wscale_mismatch_evidence"].is_null(), "{range:?}: {n}");
        assert_eq!(
            (inf["min"].as_u64(), inf["max"].as_u64()),
            (Some(7), Some(7)),
            "{range:?}: {inf}"
        );
    }
}

/// Holes do not hide a real mismatch, the server reading a larger shift
/// than the client means. A capture that dropped a burst early on: once
/// the client's ACK passes the hole, the data after it is checked again
/// (were the hole never closed, nothing after it would rule a shift out).
/// A hole the network made, filled by a retransmission before the client
/// acknowledges past it: the mismatch is still found (the bound held
/// while it was open, and confirmed by the retransmission, is
/// `edge_tests::a_hole_the_network_filled_confirms_the_held_bound`; here
/// later data shows the mismatch too).
#[test]
fn mid_stream_network_loss_and_an_early_capture_drop_still_show_the_mismatch() {
    let whole = mid_stream_download(&READS_A_LARGER_SHIFT);
    let retransmitted = with_network_loss(&whole);
    let early_drop = with_capture_drop(&whole, 100..300);
    for (name, pkts) in [
        ("network loss", &retransmitted),
        ("early capture drop", &early_drop),
    ] {
        let (inf, n) = inferred_client(pkts);
        assert_eq!(n["wscale_mismatch"], true, "{name}: {n}");
        assert_eq!(
            n["wscale_mismatch_evidence"]["kind"], "flight_beyond_growth",
            "{name}: {n}"
        );
        assert!(inf["bounds"]["min"].as_u64().unwrap() > 3, "{name}: {inf}");
    }
}

/// What the capture missed is counted: of a burst of records dropped from
/// the middle of the download (data and ACKs), the data bytes below the
/// highest ACK the capture keeps (the receiver had them). They count in
/// the achieved throughput, not in `bytes`. A hole the network made,
/// filled by the retransmission before the client's ACK passes it, is no
/// capture loss, and neither is anything in the whole capture.
#[test]
fn capture_missed_bytes_are_the_dropped_data_the_receiver_acknowledged() {
    let whole = mid_stream_download(&GROWING_WINDOW_LIMITED);
    let s2c = |pkts: &[Pkt]| {
        run(pkts, &Settings::default())["connections"][0]["directions"]["server_to_client"].clone()
    };
    let full = s2c(&whole);
    assert_eq!(full["capture_missed_bytes"], 0, "{full}");
    // Raw IPv4 without options: 40 bytes of headers, the sequence number
    // at 24, the ACK at 28; the server's data are the long records.
    let word = |p: &Pkt, at: usize| u32::from_be_bytes(p.data[at..at + 4].try_into().unwrap());
    let is_data = |p: &Pkt| p.data.len() > 1000;
    let mut counted = 0;
    for range in [400..1000, 200..900, 1000..1600] {
        let kept = with_capture_drop(&whole, range.clone());
        let top_ack = kept
            .iter()
            .filter(|p| !is_data(p))
            .map(|p| word(p, 28))
            .max()
            .unwrap();
        let expected: u64 = whole[range.clone()]
            .iter()
            .filter(|p| is_data(p))
            .map(|p| {
                let (seq, len) = (word(p, 24), (p.data.len() - 40) as u32);
                u64::from(top_ack.clamp(seq, seq + len) - seq)
            })
            .sum();
        counted += u64::from(expected > 0);
        let cut = s2c(&kept);
        assert_eq!(cut["capture_missed_bytes"], expected, "{range:?}: {cut}");
        let mut text = Vec::new();
        let file = pcap(101, true, &kept);
        analyze(
            &file[..],
            &mut text,
            AnalyzeFormat::Text,
            &Settings::default(),
        )
        .unwrap();
        let text = String::from_utf8(text).unwrap();
        let line = format!(
            "the capture missed at least {} bytes the receiver acknowledged",
            firewall_check::output::format::Thousands(expected)
        );
        assert_eq!(text.contains(&line), expected > 0, "{range:?}: {text}");
        // The throughput counts them (the first and last data are kept:
        // the same span).
        let new =
            |d: &Value| d["bytes"].as_u64().unwrap() - d["retransmitted_bytes"].as_u64().unwrap();
        let (a, b) = (
            full["throughput_bps"].as_u64().unwrap() as f64,
            cut["throughput_bps"].as_u64().unwrap() as f64,
        );
        let want = a * (new(&cut) + expected) as f64 / new(&full) as f64;
        assert!((b - want).abs() <= want * 1e-3, "{range:?}: {b} vs {want}");
    }
    assert!(counted >= 2, "the drops lie below the last ACK");
    // The network's loss: filled before the client acknowledges past it.
    let net = s2c(&with_network_loss(&whole));
    assert_eq!(net["capture_missed_bytes"], 0, "{net}");
    assert_eq!(net["retransmissions"], 1, "{net}");
}

/// A download whose 61st data segment (past the handshake's window: 45
/// fill 65,535 bytes) the network lost before the capture point: it is
/// retransmitted after the next data segment, before the client
/// acknowledges past the hole.
fn with_network_loss(whole: &[Pkt]) -> Vec<Pkt> {
    let is_data = |p: &Pkt| p.data.len() > 1000;
    let lost = (0..whole.len())
        .filter(|i| is_data(&whole[*i]))
        .nth(60)
        .unwrap();
    let next = (lost + 1..whole.len())
        .find(|i| is_data(&whole[*i]))
        .unwrap();
    // Raw IPv4 (linktype 101): the TCP sequence and ACK numbers.
    let word = |p: &Pkt, at: usize| u32::from_be_bytes(p.data[at..at + 4].try_into().unwrap());
    let resume = word(&whole[next], 24);
    assert!(
        whole[lost + 1..next].iter().all(|p| word(p, 28) < resume),
        "the client does not acknowledge past the hole before it is filled"
    );
    let mut out: Vec<Pkt> = Vec::new();
    for (i, p) in whole.iter().enumerate() {
        if i != lost {
            out.push(Pkt::new(p.ts_ns, p.data.clone()));
        }
        if i == next {
            out.push(Pkt::new(p.ts_ns + 1_000, whole[lost].data.clone()));
        }
    }
    out
}

/// The shipped captures cut after their handshake (the first three
/// records: SYN, SYN-ACK, ACK). The shift each side's peer really reads is
/// the client's offer in the full capture's SYN for the client's fields
/// (10 in every sample) and, for the server's, the SYN-ACK's offer the
/// client saw (10; 7 behind the SYN proxy, `--wscale 7` in data/README.md).
/// Every inferred interval contains it. The 600,000-byte download at 10 ms
/// (`bulk-*`, about 10 round trips of busy time) pins the client's shift to
/// one value from either side; the 40,000-byte samples at 0.1 ms (three
/// round trips, fewer than 16 ACKs of window growth) keep the bounds.
#[test]
fn shipped_samples_cut_after_the_handshake_contain_the_shift() {
    let data = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data");
    let report = |bytes: &[u8]| -> Value {
        let mut out = Vec::new();
        analyze(bytes, &mut out, AnalyzeFormat::Json, &Settings::default()).expect("analyze");
        serde_json::from_slice(&out).unwrap()
    };
    for (name, client, server, bulk) in [
        ("bulk-inside.pcap", 10, 10, true),
        ("bulk-outside.pcap", 10, 10, true),
        ("clean6-inside.pcap", 10, 10, false),
        ("clean6-outside.pcap", 10, 10, false),
        ("nat-inside.pcap", 10, 10, false),
        ("nat-outside.pcap", 10, 10, false),
        ("synproxy-inside.pcap", 10, 7, false),
        ("synproxy-outside.pcap", 10, 7, false),
    ] {
        let full = std::fs::read(data.join(name)).expect("shipped sample capture");
        let n = &report(&full)["connections"][0]["negotiated"];
        assert_eq!(n["wscale_offered"]["client"], client, "{name}: {n}");
        let cut = report(&drop_first_records(&full, 3));
        let c = &cut["connections"][0];
        assert_eq!(c["handshake_seen"], false, "{name}");
        let inf = &c["negotiated"]["wscale_inferred"];
        for (who, truth) in [("client", client), ("server", server)] {
            let i = &inf[who];
            if i.is_null() {
                // No evidence (the server's fields when the client sent
                // only 2,000 bytes): claims nothing.
                continue;
            }
            let (min, max) = (i["min"].as_u64().unwrap(), i["max"].as_u64().unwrap());
            let (bmin, bmax) = (
                i["bounds"]["min"].as_u64().unwrap(),
                i["bounds"]["max"].as_u64().unwrap(),
            );
            assert!((min..=max).contains(&truth), "{name} {who}: {i}");
            assert!((bmin..=bmax).contains(&truth), "{name} {who}: {i}");
            assert!(bmin <= min && max <= bmax, "{name} {who}: {i}");
        }
        let ci = &inf["client"];
        if bulk {
            assert_eq!(
                (ci["min"].as_u64(), ci["max"].as_u64()),
                (Some(10), Some(10)),
                "{name}: {ci}"
            );
            assert_eq!(ci["linux_growth_shift"], 10, "{name}: {ci}");
            assert_eq!(c["negotiated"]["wscale_mismatch"], false, "{name}");
        } else {
            assert_eq!(ci["basis"], "bounds", "{name}: {ci}");
        }
    }
}

/// The campus samples cut after their handshake: window scaling was
/// removed from the SYN-ACK, so the client means its fields unscaled (0)
/// while the server reads them with the client's offer (10), and the
/// client reads the server's fields unscaled. From either side the client's
/// 92 ACKs all advertise 65,535 while the server's data goes past ACK +
/// 65,535: the mismatch (`unscaled_cap`), with each interval holding the
/// shift its reader really uses. The full captures' handshakes say the same
/// (`shipped_campus_sample_shows_the_broken_state_from_either_side`).
#[test]
fn shipped_campus_cut_after_the_handshake_shows_the_mismatch() {
    let data = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data");
    for name in ["campus-inside.pcap", "campus-outside.pcap"] {
        let full = std::fs::read(data.join(name)).expect("shipped sample capture");
        let mut out = Vec::new();
        analyze(
            &drop_first_records(&full, 3)[..],
            &mut out,
            AnalyzeFormat::Json,
            &Settings::default(),
        )
        .expect("analyze");
        let v: Value = serde_json::from_slice(&out).unwrap();
        let n = &v["connections"][0]["negotiated"];
        assert_eq!(n["wscale_mismatch"], true, "{name}: {n}");
        let ev = &n["wscale_mismatch_evidence"];
        assert_eq!(ev["kind"], "unscaled_cap", "{name}: {ev}");
        assert!(
            ev["detail"]
                .as_str()
                .unwrap()
                .contains("92 of the client's 92 ACKs"),
            "{name}: {ev}"
        );
        let holds = |i: &Value, shift: u64| {
            (i["min"].as_u64().unwrap()..=i["max"].as_u64().unwrap()).contains(&shift)
        };
        let inf = &n["wscale_inferred"];
        assert!(holds(&inf["client"], 10), "{name}: {inf}");
        assert_eq!(inf["client"]["basis"], "bounds", "{name}: {inf}");
        assert!(
            inf["server"].is_null() || holds(&inf["server"], 0),
            "{name}: {inf}"
        );
    }
}

/// Cut after its handshake, the bulk sample's 600,000-byte download at 10 ms:
/// without a window scale seen or assumed, a limit is computed only with the
/// shift the capture pins (the client's window growth names 10: the
/// download's tracker input is logged and replayed with it, and with the
/// RTT given or, without one, the timestamps'), and it agrees with the full
/// capture's: the network, never the receive window (read unscaled, the
/// client's fields of ~1,000 units would make it 100% of the busy time while
/// the capture shows 44 Mbit/s). The upload's receiver (the server) shows no
/// one shift: no limit, and the reason says what the capture does show.
#[test]
fn mid_stream_limit_reads_windows_only_with_a_pinned_shift() {
    let data = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data");
    let full = std::fs::read(data.join("bulk-inside.pcap")).expect("shipped sample capture");
    let cut = drop_first_records(&full, 3);
    let report = |bytes: &[u8], rtt: Option<u64>, assume_wscale: Option<u8>| -> Value {
        let settings = Settings {
            rtt: rtt.map(std::time::Duration::from_micros),
            assume_wscale,
            ..Settings::default()
        };
        let mut out = Vec::new();
        analyze(bytes, &mut out, AnalyzeFormat::Json, &settings).expect("analyze");
        serde_json::from_slice(&out).unwrap()
    };
    let whole = &report(&full, None, None)["connections"][0]["directions"]["server_to_client"]
        ["limit"]
        .clone();
    assert_eq!(whole["kind"], "network", "{whole}");
    for rtt in [Some(10_700), None] {
        let v = report(&cut, rtt, None);
        let c = &v["connections"][0];
        assert_eq!(c["handshake_seen"], false);
        let down = &c["directions"]["server_to_client"]["limit"];
        assert_eq!(down["kind"], "network", "{rtt:?}: {down}");
        assert_eq!(down["inferred_shift"], 10, "{rtt:?}: {down}");
        let rw = down["receive_window_fraction"].as_f64().unwrap();
        assert!(rw < 0.05, "{rtt:?}: {down}");
        let up = &c["directions"]["client_to_server"]["limit"];
        assert_eq!(up["kind"], "none", "{rtt:?}: {up}");
        assert!(up["receive_window_fraction"].is_null(), "{rtt:?}: {up}");
        assert!(up["inferred_shift"].is_null(), "{rtt:?}: {up}");
        assert!(
            up["reason"].as_str().unwrap().contains("--assume-wscale"),
            "{rtt:?}: {up}"
        );
    }
    // Without --rtt the RTT is the capture's own, from its timestamp echoes.
    assert_eq!(
        report(&cut, None, None)["connections"][0]["rtt_source"],
        "timestamps"
    );
    // Assumed, the shift is the user's, not inferred.
    let assumed = report(&cut, Some(10_700), Some(10));
    let l = &assumed["connections"][0]["directions"]["server_to_client"]["limit"];
    assert_ne!(l["kind"], "none", "{l}");
    assert_ne!(l["kind"], "receive_window", "{l}");
    assert!(l["inferred_shift"].is_null(), "{l}");
    // A capture that does not pin the shift (40,000 bytes at 0.1 ms: the
    // bounds only) gets no limit, and the reason names the interval.
    let small = std::fs::read(data.join("clean6-inside.pcap")).expect("shipped sample capture");
    let v = report(&drop_first_records(&small, 3), None, None);
    let down = &v["connections"][0]["directions"]["server_to_client"]["limit"];
    assert_eq!(down["kind"], "none", "{down}");
    let reason = down["reason"].as_str().unwrap();
    assert!(reason.contains("with a shift from"), "{reason}");
}

/// The text report says what the JSON document says about each direction's
/// limit, on every capture shipped in `examples/data/` (taken in the lab):
/// the `limit K` word of the direction's line, the shares in the verdict
/// (whole percents), and the bytes sent beyond the advertised window with
/// whether the receiver took them.
#[test]
fn text_limits_agree_with_the_json_on_the_shipped_captures() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data");
    let mut captures: Vec<_> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    captures.sort();
    assert!(captures.len() >= 10);
    let mut beyond_seen = 0;
    for cap in &captures {
        let path = cap.to_str().unwrap();
        let (_, text, err) = run_cli(&["analyze", path]);
        let (_, json, _) = run_cli(&["analyze", "--json", path]);
        let doc: Value =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{path}: {e} {err}"));
        let conns = doc["connections"].as_array().unwrap();
        assert_eq!(conns.len(), 1, "{path}");
        let c = &conns[0];
        for (dir, arrow, name) in [
            ("client_to_server", "client->server:", "client-to-server"),
            ("server_to_client", "server->client:", "server-to-client"),
        ] {
            let d = &c["directions"][dir];
            let l = &d["limit"];
            let kind = l["kind"].as_str().unwrap();
            let line = text
                .lines()
                .find(|x| x.trim_start().starts_with(arrow))
                .unwrap_or_else(|| panic!("{path}: no {arrow} line in {text}"));
            assert!(
                line.contains(&format!("limit {kind}")),
                "{path} {dir}: {kind} not in {line}"
            );
            if kind != "none" {
                let pct = |k: &str| (l[k].as_f64().unwrap() * 100.0).round() as u64;
                // A medium-confidence limit is worded as a hint.
                let shares = if l["confidence"] == "high" {
                    format!("{name} was limited by")
                } else {
                    format!("{name} was most likely limited by")
                };
                assert!(text.contains(&shares), "{path} {dir}: {text}");
                let figures = format!(
                    "receive window {}%, sender {}%, network {}% of the sender's busy time",
                    pct("receive_window_fraction"),
                    pct("sender_fraction"),
                    pct("network_fraction")
                );
                assert!(
                    text.contains(&figures),
                    "{path} {dir}: {figures} not in {text}"
                );
            }
            if let Some(b) = d["beyond_window_bytes"].as_u64().filter(|b| *b > 0) {
                beyond_seen += 1;
                let said = format!(
                    "{name}: {} bytes were sent beyond the window",
                    firewall_check::output::format::Thousands(b)
                );
                assert!(text.contains(&said), "{path} {dir}: {said} not in {text}");
                if d["beyond_window_accepted"] == true {
                    assert!(
                        text.contains("the receiver acknowledged them"),
                        "{path}: {text}"
                    );
                }
            }
        }
    }
    // The campus captures show it (server side: 17,482 bytes, accepted).
    assert!(beyond_seen >= 1);
}

/// The tracker input kept for connections without a handshake
/// (`limit_log`) is bounded: one connection past `LOG_EVENTS` segments,
/// and connections whose logs together pass `LOG_BUDGET`, get no limit,
/// with the bound named in the reason, instead of memory without bound.
#[test]
fn mid_stream_limit_logs_are_bounded() {
    use firewall_check::analysis::limit_log::{LOG_BUDGET, LOG_EVENTS};
    // Data segments of one byte from the server, each acknowledging the
    // client's (never moving) sequence number: no handshake.
    let segments = |conns: usize, each: usize| -> Vec<Pkt> {
        let mut pkts = Vec::with_capacity(conns * each);
        for i in 0..each {
            for c in 0..conns {
                let port = 40000 + c as u16;
                let seq = 5_000_000u32.wrapping_add(i as u32);
                let t = T0 + (i * conns + c) as u64 * 1_000;
                let seg = Seg::new(S, 5001, C, port).seq(seq).ack(1_000).flags(ACK);
                pkts.push(Pkt::new(t, seg.win(1000).payload(1).ipv4()));
            }
        }
        pkts
    };
    let reasons = |v: &Value| -> Vec<String> {
        v["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                c["directions"]["server_to_client"]["limit"]["reason"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    };
    let one = run(&segments(1, LOG_EVENTS + 10), &Settings::default());
    let r = reasons(&one);
    assert_eq!(r.len(), 1);
    assert!(
        r[0].contains(&format!("more than the {LOG_EVENTS} segments")),
        "{}",
        r[0]
    );
    // Five connections at once, each below the bound, together above the
    // budget: the one that passes it gives its log up, the rest keep theirs.
    let each = LOG_BUDGET / 5 + 1_000;
    assert!(each < LOG_EVENTS);
    let many = run(&segments(5, each), &Settings::default());
    let r = reasons(&many);
    assert_eq!(r.len(), 5);
    let over = r.iter().filter(|x| x.contains("open at once")).count();
    assert!((1..5).contains(&over), "{r:?}");
}
