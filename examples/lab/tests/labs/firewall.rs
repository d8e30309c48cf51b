//! The firewall lab, end to end: for each case `lab.sh` builds a client, a
//! middlebox and a server as network namespaces, runs a real Linux TCP
//! transfer through real netfilter rules on the middlebox and captures both
//! sides with tcpdump. Then, for every row:
//!
//! - `firewall-check compare --json` in both orders gives the same findings,
//!   connections and exit status, one connection, schema 2; the findings
//!   (kind, direction) are exactly the row's (capture loss aside, a finding
//!   makes the status 3);
//! - `analyze --json` of each capture, whole and cut after the handshake,
//!   exits 3 exactly when it reports a mismatch, a Linux drop or a
//!   window-limited direction; the shift intervals it infers without the
//!   handshake hold the shift each kernel really used (`TCP_INFO` of both
//!   ends);
//! - the row's own checks: the structured values of each finding, what
//!   each endpoint negotiated, the bytes moved, RTT and ceilings.
//!
//! Shared rows: they check what a rule did, not how fast; `LAB_JOBS` run at
//! once.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lab::prereq::LAB_SH;
use lab::{CaseRun, Ctx, Req, Share};
use serde_json::{json, Value};

use crate::common::{cut_after_handshake, finding, kinds, set, C2S, S2C};

/// Bytes each way in the lab's default transfer (lab.sh --bytes).
const BYTES: u64 = 150_000;

/// One row: a lab.sh case and what the tools must say of it.
pub struct Case {
    /// lab.sh's case.
    case: &'static str,
    /// lab.sh's arguments after the directory.
    args: &'static [&'static str],
    /// compare's findings as (kind, direction), exactly; `None`: the
    /// row's checks decide.
    findings: Option<&'static [(&'static str, &'static str)]>,
    /// More checks of the result.
    checks: &'static [fn(&Run)],
    share: Share,
    needs: &'static [Req],
}

const BASE: Case = Case {
    case: "",
    args: &[],
    findings: Some(&[]),
    checks: &[],
    share: Share::Shared,
    needs: LAB_SH,
};

impl Case {
    /// lab.sh's case.
    pub fn case(&self) -> &'static str {
        self.case
    }
}

lab::rows! {
    lab = crate::LABS;
    run = run_case;
    type = Case;
    /// Routing only: nothing found, both ends negotiate everything.
    clean4 => Case { case: "clean4", checks: &[clean_ipv4, capture_loss], ..BASE },
    clean6 => Case { case: "clean6", checks: &[clean_ipv6], ..BASE },
    wscale_syn4 => Case {
        case: "wscale-syn4",
        findings: Some(&[("wscale_stripped", C2S)]),
        checks: &[wscale_syn],
        ..BASE
    },
    wscale_synack4 => Case {
        case: "wscale-synack4",
        findings: Some(&[("wscale_stripped", S2C)]),
        checks: &[wscale_synack, wscale_synack_values],
        ..BASE
    },
    wscale_synack6 => Case {
        case: "wscale-synack6",
        findings: Some(&[("wscale_stripped", S2C)]),
        checks: &[wscale_synack],
        ..BASE
    },
    /// The campus incident on a path delayed to about 10 ms.
    campus => Case {
        case: "campus",
        args: &["--delay-ms", "9"],
        findings: Some(&[("wscale_stripped", S2C)]),
        checks: &[wscale_synack, campus_at_10ms],
        ..BASE
    },
    /// The campus case seen from the server's side only, with an upload.
    wscale_synack4_server_side_upload => Case {
        case: "wscale-synack4",
        args: &["--up-bytes", "16000", "--bytes", "20000"],
        findings: Some(&[("wscale_stripped", S2C)]),
        checks: &[server_side_upload],
        ..BASE
    },
    sack_ts4 => Case {
        case: "sack-ts4",
        findings: Some(&[("sackperm_stripped", C2S), ("timestamps_stripped", C2S)]),
        checks: &[sack_ts],
        ..BASE
    },
    ts_data4 => Case {
        case: "ts-data4",
        findings: Some(&[("timestamps_stripped", C2S), ("timestamps_stripped", S2C)]),
        checks: &[ts_data],
        ..BASE
    },
    mss4 => Case {
        case: "mss4",
        findings: Some(&[("mss_clamped", C2S), ("mss_clamped", S2C)]),
        checks: &[mss_from_1460],
        ..BASE
    },
    mss6 => Case {
        case: "mss6",
        findings: Some(&[("mss_clamped", C2S), ("mss_clamped", S2C)]),
        checks: &[mss_from_1440],
        ..BASE
    },
    dscp_bleach4 => Case {
        case: "dscp-bleach4",
        findings: Some(&[("dscp_changed", C2S)]),
        checks: &[dscp_bleached_af11],
        ..BASE
    },
    dscp_remark4 => Case {
        case: "dscp-remark4",
        findings: Some(&[("dscp_changed", C2S), ("dscp_changed", S2C)]),
        checks: &[dscp_remarked_cs1],
        ..BASE
    },
    dscp_bleach6 => Case {
        case: "dscp-bleach6",
        findings: Some(&[("dscp_changed", C2S)]),
        checks: &[dscp_bleached_ef],
        ..BASE
    },
    ecn_bleach4 => Case {
        case: "ecn-bleach4",
        findings: Some(&[("ecn_changed", C2S), ("ecn_changed", S2C)]),
        checks: &[ecn_bleached],
        ..BASE
    },
    /// Destination and source NAT with port translation, timestamps stripped.
    nat4 => Case {
        case: "nat4",
        findings: Some(&[("nat", C2S), ("timestamps_stripped", C2S)]),
        checks: &[nat_ipv4],
        ..BASE
    },
    nat6 => Case {
        case: "nat6",
        findings: Some(&[("nat", C2S), ("sackperm_stripped", C2S)]),
        checks: &[nat_ipv6],
        ..BASE
    },
    /// Destination NAT only: one finding on the forward path.
    dnat4 => Case { case: "dnat4", findings: Some(&[("nat", C2S)]), checks: &[dnat_ipv4], ..BASE },
    dnat6 => Case { case: "dnat6", findings: Some(&[("nat", C2S)]), checks: &[dnat_ipv6], ..BASE },
    synproxy4 => Case {
        case: "synproxy4",
        findings: Some(SYNPROXY),
        checks: &[synproxy, synproxy4_values],
        ..BASE
    },
    /// SYNPROXY announces its configured MSS 1460 where the IPv6 server said 1440.
    synproxy6 => Case {
        case: "synproxy6",
        findings: Some(&[
            ("handshake_proxied", S2C),
            ("seq_rewritten", S2C),
            ("ack_rewritten", C2S),
            ("wscale_changed", S2C),
            ("timestamps_changed", S2C),
            ("timestamps_changed", C2S),
            ("mss_changed", S2C),
        ]),
        checks: &[synproxy],
        ..BASE
    },
    /// A middlebox that really drops: packet_dropped, never capture_loss.
    drop4 => Case { case: "drop4", findings: None, checks: &[real_drops], ..BASE },
}

const SYNPROXY: &[(&str, &str)] = &[
    ("handshake_proxied", S2C),
    ("seq_rewritten", S2C),
    ("ack_rewritten", C2S),
    ("wscale_changed", S2C),
    ("timestamps_changed", S2C),
    ("timestamps_changed", C2S),
];

/// What one row produced and what the tools said of it.
pub struct Run {
    pub lab: CaseRun,
    /// compare --json inside outside, and its status.
    pub compare: Value,
    pub code: i32,
    /// analyze --json of each capture.
    pub inside: Value,
    pub outside: Value,
}

impl Run {
    fn findings(&self) -> BTreeSet<(String, String)> {
        kinds(&self.compare)
    }
    fn finding(&self, kind: &str, dir: &str) -> &Value {
        finding(&self.compare, kind, dir)
    }
    /// The one connection `analyze` found on one side.
    fn conn<'a>(&'a self, side: &'a Value) -> &'a Value {
        let conns = side["connections"].as_array().expect("connections");
        assert_eq!(conns.len(), 1, "{side}");
        &conns[0]
    }
    fn analyze(&self, args: &[&str], capture: &Path) -> Value {
        analyze(&self.lab, args, capture)
    }
}

fn run_case(ctx: &Ctx, c: &Case) {
    let lab = ctx.lab_sh(c.case, c.args);
    let (compare, code) = compare_both(&lab, &lab.inside(), &lab.outside());
    let inside = analyze(&lab, &[], &lab.inside());
    let outside = analyze(&lab, &[], &lab.outside());
    // Cut after the handshake, each capture still bounds the shifts right.
    for path in [lab.inside(), lab.outside()] {
        let partial = analyze(&lab, &[], &cut_after_handshake(&path));
        check_inferred(&lab, &partial);
    }
    let run = Run {
        lab,
        compare,
        code,
        inside,
        outside,
    };
    if let Some(want) = c.findings {
        assert_eq!(run.findings(), set(want), "{}", run.compare["findings"]);
    }
    for check in c.checks {
        check(&run);
    }
}

/// `compare --json A B` and `B A`: the same findings, connections and
/// status; one connection; the status 3 exactly when something other than
/// capture loss was found.
fn compare_both(lab: &CaseRun, a: &Path, b: &Path) -> (Value, i32) {
    let (ab, code) = lab.tools().compare(a, b);
    let (ba, code_ba) = lab.tools().compare(b, a);
    let what = &lab.case;
    assert_eq!(ab["schema_version"], 2);
    assert_eq!(ab["findings"], ba["findings"], "order matters in {what}");
    assert_eq!(
        ab["connections"], ba["connections"],
        "order matters in {what}"
    );
    assert_eq!(code, code_ba, "{what}");
    assert_eq!(
        ab["connections"].as_array().map(Vec::len),
        Some(1),
        "{what}: {ab}"
    );
    let found = ab["findings"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f["kind"] != "capture_loss"));
    assert_eq!(
        code,
        if found { 3 } else { 0 },
        "{what}: compare's status and findings disagree: {}",
        ab["findings"]
    );
    (ab, code)
}

/// `analyze --json ARGS CAPTURE`, whose status must be 3 exactly when it
/// reports a high-confidence window-scale mismatch, Linux drop or
/// window-limited direction (a medium one is a hint: status 0).
fn analyze(lab: &CaseRun, args: &[&str], capture: &Path) -> Value {
    let mut a = vec!["analyze", "--json"];
    a.extend_from_slice(args);
    let (v, code) = lab.tools().firewall_check_json(&a, &[capture]);
    let found = v["connections"].as_array().is_some_and(|c| {
        c.iter().any(|c| {
            let n = &c["negotiated"];
            (n["wscale_mismatch"] == true && n["wscale_mismatch_evidence"]["confidence"] == "high")
                || n["linux_drops"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|d| d["confidence"] == "high"))
                || c["directions"][C2S]["window_limited_confidence"] == "high"
                || c["directions"][S2C]["window_limited_confidence"] == "high"
        })
    });
    assert_eq!(
        code,
        if found { 3 } else { 0 },
        "{}: analyze {args:?} {}: exit status and findings disagree",
        lab.case,
        capture.display()
    );
    v
}

/// The shift intervals `analyze` infers without the handshake contain the
/// shift each peer's kernel really read the window fields with
/// (`TCP_INFO`'s `tcpi_snd_wscale`, recorded by xfer.py on both ends; the
/// endpoint's own `tcpi_rcv_wscale` is what it means). Where the two differ
/// (a window-scale option removed on the way, a SYN proxy's own shift)
/// there is no one shift to infer: the flight bounds the shift the peer
/// reads from below, the receiver's edges the one it means from above, its
/// window growth names the one it means; the interval must then hold one
/// of the two (the campus client's [1, 14] holds the 10 the server reads;
/// behind the SYN proxy the server's [10, 10] is the 10 it means while the
/// client reads 7), and the note says which. These transfers (150,000 bytes
/// each way at about 0.1 ms, a handful of round trips in slow start) are
/// not held to one value; the bulk transfers of `transfer` are.
fn check_inferred(lab: &CaseRun, cut: &Value) {
    let case = &lab.case;
    let (client, server) = (lab.tcpinfo("client"), lab.tcpinfo("server"));
    // (whose fields, the shift that end means, the shift its peer reads).
    let truth = [
        ("client", client.rcv_wscale, server.snd_wscale),
        ("server", server.rcv_wscale, client.snd_wscale),
    ];
    for conn in cut["connections"].as_array().into_iter().flatten() {
        let inf = &conn["negotiated"]["wscale_inferred"];
        for (who, meant, read) in truth {
            let (Some(min), Some(max)) = (inf[who]["min"].as_u64(), inf[who]["max"].as_u64())
            else {
                continue;
            };
            if meant != read {
                lab::note!(
                    "{case}: the {who} means shift {meant}, its peer reads {read} (TCP_INFO): the inferred [{min}, {max}] holds {}",
                    match ((min..=max).contains(&read), (min..=max).contains(&meant)) {
                        (true, true) => "both",
                        (true, false) => "the read one",
                        (false, true) => "the meant one",
                        (false, false) => "neither",
                    }
                );
                assert!(
                    (min..=max).contains(&read) || (min..=max).contains(&meant),
                    "{case}: {who}'s shifts {meant} (meant) and {read} (read) both outside the inferred [{min}, {max}]: {}",
                    inf[who]
                );
            } else {
                assert!(
                    (min..=max).contains(&read),
                    "{case}: {who}'s shift {read} outside the inferred [{min}, {max}]: {}",
                    inf[who]
                );
            }
            let b = &inf[who]["bounds"];
            assert!(
                b["min"].as_u64() <= Some(min) && Some(max) <= b["max"].as_u64(),
                "{case}: {who}: {}",
                inf[who]
            );
        }
    }
}

/// Both directions moved the whole transfer.
fn assert_bytes(run: &Run, up: u64, down: u64) {
    for side in [&run.inside, &run.outside] {
        let d = &run.conn(side)["directions"];
        assert!(d[C2S]["bytes"].as_u64().unwrap_or(0) >= up, "{d}");
        assert!(d[S2C]["bytes"].as_u64().unwrap_or(0) >= down, "{d}");
    }
}

fn assert_clean_negotiation(side: &Value) {
    let n = &side["connections"][0]["negotiated"];
    assert!(n["wscale"].is_object(), "{n}");
    assert_eq!(n["sack"], true, "{n}");
    assert_eq!(n["timestamps"], true, "{n}");
}

fn clean_ipv4(run: &Run) {
    assert_eq!(run.compare["notes"].as_array().map(Vec::len), Some(0));
    assert_eq!(run.compare["connections"][0]["sides_by"], "ttl");
    assert_clean_negotiation(&run.inside);
    assert_clean_negotiation(&run.outside);
    assert_bytes(run, BYTES, BYTES);
}

fn clean_ipv6(run: &Run) {
    assert!(run.compare["connections"][0]["client"]
        .as_str()
        .unwrap()
        .starts_with("[2001:db8:1::2]:"));
    assert_clean_negotiation(&run.inside);
    assert_bytes(run, BYTES, BYTES);
}

/// Neither endpoint scales: both agree, both are capped at 65,535 bytes; at
/// 10 ms each direction is capped by its unscaled window (at most 65,535
/// bytes: 52.4 Mbit/s, the campus incident's figure).
fn wscale_syn(run: &Run) {
    let f = run.finding("wscale_stripped", C2S);
    assert_eq!(f["count"], 1);
    assert!(f["after"].is_null(), "{f}");
    for side in [&run.inside, &run.outside] {
        let c = run.conn(side);
        assert!(c["negotiated"]["wscale"].is_null(), "{c}");
        for d in [C2S, S2C] {
            assert!(
                c["directions"][d]["max_window_bytes"].as_u64().unwrap() <= 65_535,
                "{c}"
            );
        }
    }
    assert_bytes(run, BYTES, BYTES);
    let a = run.analyze(&["--rtt", "10ms"], &run.lab.inside());
    for d in [C2S, S2C] {
        let dir = &a["connections"][0]["directions"][d];
        let w = dir["max_window_bytes"].as_u64().unwrap();
        assert!(w <= 65_535, "{dir}");
        assert_eq!(dir["ceiling_bps"].as_u64().unwrap(), w * 8 * 100, "{dir}");
    }
}

/// Window scale stripped from the SYN-ACK: the client does not scale, the
/// server does. Both captures show the broken state, each by its own
/// evidence.
fn wscale_synack(run: &Run) {
    let f = run.finding("wscale_stripped", S2C);
    assert_eq!(f["count"], 1);
    assert!(f["after"].is_null(), "{f}");
    assert!(f["impact"]["summary"]
        .as_str()
        .unwrap()
        .contains("65,535 bytes"));
    let inside = &run.conn(&run.inside)["negotiated"];
    assert!(inside["wscale"].is_null(), "{inside}");
    assert_eq!(inside["wscale_mismatch"], true, "{inside}");
    assert_eq!(
        inside["wscale_mismatch_evidence"]["kind"],
        "server_scales_anyway"
    );
    let outside = &run.conn(&run.outside)["negotiated"];
    assert_eq!(outside["wscale_on"]["server"], true, "{outside}");
    assert_eq!(outside["wscale_on"]["client"], false, "{outside}");
    assert_eq!(outside["wscale_mismatch"], true, "{outside}");
    assert_eq!(
        outside["wscale_mismatch_evidence"]["kind"],
        "client_unscaled"
    );
    assert_bytes(run, 4_000, BYTES);
}

/// The structured values of schema 2: the shift the option held, nothing after.
fn wscale_synack_values(run: &Run) {
    let f = run.finding("wscale_stripped", S2C);
    assert!(
        f["before"]["shift"].as_u64().is_some_and(|s| s <= 14),
        "{f}"
    );
}

/// At about 10 ms: compare's RTT, the finding's ceiling at it, and
/// analyze's verdict at exactly 10 ms: the client never scales, its receive
/// window field tops out at 65,535 bytes, and the verdict names the
/// 52.4 Mbit/s ceiling of the incident (65535 * 8 / 0.010 = 52,428,000 bit/s).
fn campus_at_10ms(run: &Run) {
    let rtt = run.compare["connections"][0]["rtt_s"].as_f64().unwrap();
    assert!((0.009..0.1).contains(&rtt), "measured RTT {rtt}");
    let ceiling = run.finding("wscale_stripped", S2C)["impact"]["ceiling_bps_after"]
        .as_f64()
        .unwrap();
    assert!(
        (ceiling - 65_535.0 * 8.0 / rtt).abs() < 1_000.0,
        "{ceiling} at {rtt}"
    );
    let a = run.analyze(&["--rtt", "10ms"], &run.lab.inside());
    let c = &a["connections"][0];
    assert!(c["negotiated"]["wscale"].is_null(), "{c}");
    assert_eq!(c["directions"][S2C]["max_window_field"], 65_535, "{c}");
    assert_eq!(c["directions"][S2C]["max_window_bytes"], 65_535, "{c}");
    assert_eq!(c["directions"][S2C]["ceiling_bps"], 52_428_000, "{c}");
    let verdict = c["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("65,535 bytes") && verdict.contains("52.4 Mbit/s"),
        "{verdict}"
    );
    // And the RTT analyze measures itself is the lab's ~10 ms.
    let own = run.conn(&run.inside)["rtt_s"].as_f64().unwrap();
    assert!((0.009..0.1).contains(&own), "analyze RTT {own}");
}

/// The server's capture of a stripped SYN-ACK, with an upload: the SYN-ACK
/// it shows carries window scale, yet the client's window fields stay
/// unscaled and, after its first flight (sent under the SYN-ACK's unscaled
/// window), it sends segments no larger than the server's window field read
/// as bytes, one every ~200 ms.
fn server_side_upload(run: &Run) {
    let c = run.conn(&run.outside);
    let n = &c["negotiated"];
    assert!(n["wscale_offered"]["server"].as_u64().is_some(), "{n}");
    assert_eq!(n["wscale_mismatch"], true, "{n}");
    let ev = &n["wscale_mismatch_evidence"];
    assert_eq!(ev["kind"], "client_unscaled", "{ev}");
    assert_eq!(ev["confidence"], "high", "{ev}");
    let detail = ev["detail"].as_str().unwrap();
    assert!(
        detail.contains("data segments were no larger than the server's window field"),
        "{detail}"
    );
    // What the client could use upstream is the server's raw field: a few
    // hundred bytes at most, however large the server's real window.
    let up = &c["directions"][C2S];
    assert!(up["bytes"].as_u64().unwrap() >= 16_000, "{up}");
    assert!(up["max_window_bytes"].as_u64().unwrap() < 2_000, "{up}");
    assert!(c["verdict"].as_str().unwrap().starts_with("BROKEN"), "{c}");
}

fn sack_ts(run: &Run) {
    let n = &run.conn(&run.outside)["negotiated"];
    assert_eq!(n["sack"], false, "{n}");
    assert_eq!(n["timestamps"], false, "{n}");
    assert_bytes(run, BYTES, BYTES);
}

/// Every segment but the SYNs (about 100 full segments each way); the
/// handshake negotiated timestamps on both sides.
fn ts_data(run: &Run) {
    for d in [C2S, S2C] {
        assert!(
            run.finding("timestamps_stripped", d)["count"]
                .as_u64()
                .unwrap()
                > 100
        );
    }
    assert_eq!(run.conn(&run.inside)["negotiated"]["timestamps"], true);
    assert_eq!(run.conn(&run.outside)["negotiated"]["timestamps"], true);
}

/// Each endpoint believes its peer announced 1200.
fn check_mss(run: &Run, original: u64) {
    for d in [C2S, S2C] {
        let f = run.finding("mss_clamped", d);
        assert_eq!(f["before"], json!({ "mss_bytes": original }), "{f}");
        assert_eq!(f["after"], json!({"mss_bytes": 1200}), "{f}");
    }
    assert_eq!(run.conn(&run.inside)["negotiated"]["mss"]["server"], 1200);
    assert_eq!(run.conn(&run.outside)["negotiated"]["mss"]["client"], 1200);
    assert_bytes(run, BYTES, BYTES);
}

fn mss_from_1460(run: &Run) {
    check_mss(run, 1460);
}

fn mss_from_1440(run: &Run) {
    check_mss(run, 1440);
}

fn dscp_bleached_af11(run: &Run) {
    let f = run.finding("dscp_changed", C2S);
    assert_eq!(f["before"], json!({"dscp": 10, "name": "AF11"}), "{f}");
    assert_eq!(f["after"]["dscp"], 0, "{f}");
    assert!(f["count"].as_u64().unwrap() > 100);
}

fn dscp_remarked_cs1(run: &Run) {
    let f = run.finding("dscp_changed", C2S);
    assert_eq!(f["before"], json!({"dscp": 10, "name": "AF11"}), "{f}");
    assert_eq!(f["after"], json!({"dscp": 8, "name": "CS1"}), "{f}");
    assert!(f["impact"]["summary"]
        .as_str()
        .unwrap()
        .contains("scavenger"));
    assert_eq!(run.finding("dscp_changed", S2C)["before"]["dscp"], 0);
}

fn dscp_bleached_ef(run: &Run) {
    let f = run.finding("dscp_changed", C2S);
    assert_eq!(f["before"]["dscp"], 46, "{f}");
    assert_eq!(f["before"]["name"], "EF", "{f}");
}

/// The endpoints negotiated ECN in the handshake, which the rule left alone.
fn ecn_bleached(run: &Run) {
    for d in [C2S, S2C] {
        let f = run.finding("ecn_changed", d);
        assert_eq!(f["before"], json!({"ecn": 2, "name": "ECT(0)"}), "{f}");
        assert_eq!(f["after"], json!({"ecn": 0, "name": "Not-ECT"}), "{f}");
    }
    assert_eq!(run.conn(&run.inside)["negotiated"]["ecn"], "classic");
    assert_eq!(run.conn(&run.outside)["negotiated"]["ecn"], "classic");
}

/// Destination and source NAT on the forward path: one `nat` finding, in
/// the client-to-server direction (the replies are translated back), with
/// the rewritten endpoints.
fn check_nat(run: &Run, public: &str) {
    let c = &run.compare["connections"][0];
    assert_ne!(c["client_side"]["client"], c["server_side"]["client"]);
    assert_ne!(c["client_side"]["server"], c["server_side"]["server"]);
    let f = run.finding("nat", C2S);
    let port = f["after"]["src"]["port"].as_u64().expect("SNAT port");
    assert!((40_000..=40_999).contains(&port), "{f}");
    assert_eq!(f["before"]["dst"]["addr"], public, "{f}");
    assert_eq!(f["before"]["dst"]["port"], 80, "{f}");
    assert_eq!(f["after"]["dst"]["port"], 5201, "{f}");
    assert_bytes(run, BYTES, BYTES);
}

fn nat_ipv4(run: &Run) {
    check_nat(run, "198.19.0.80");
    let f = run.finding("nat", C2S);
    assert_eq!(
        f["before"],
        json!({"src": {"addr": "198.18.1.2", "port": 33000}, "dst": {"addr": "198.19.0.80", "port": 80}})
    );
    assert_eq!(
        f["after"]["dst"],
        json!({"addr": "198.18.2.2", "port": 5201})
    );
    assert_eq!(f["after"]["src"]["addr"], "198.18.2.1");
    let ts = run.finding("timestamps_stripped", C2S);
    assert!(ts["before"]["tsval_ticks"].is_u64(), "{ts}");
    assert!(ts["after"].is_null(), "{ts}");
}

fn nat_ipv6(run: &Run) {
    check_nat(run, "2001:db8:ffff::80");
}

/// Only the client's packets were rewritten on the forward path; the
/// replies are that translation undone, not a second finding.
fn check_dnat(run: &Run, public: Value, real: Value) {
    assert_eq!(run.code, 3);
    let f = run.finding("nat", C2S);
    assert_eq!(f["before"], json!({ "dst": public }), "{f}");
    assert_eq!(f["after"], json!({ "dst": real }), "{f}");
    assert!(f["replies_translated"].as_u64().unwrap() > 50, "{f}");
    assert!(f["count"].as_u64().unwrap() > 50, "{f}");
    let c = &run.compare["connections"][0];
    assert_eq!(
        c["client_side"]["client"], c["server_side"]["client"],
        "{c}"
    );
    assert_ne!(
        c["client_side"]["server"], c["server_side"]["server"],
        "{c}"
    );
    assert_eq!(c["sides_by"], "ttl");
}

fn dnat_ipv4(run: &Run) {
    check_dnat(
        run,
        json!({"addr": "198.19.0.80", "port": 80}),
        json!({"addr": "198.18.2.2", "port": 5201}),
    );
}

fn dnat_ipv6(run: &Run) {
    check_dnat(
        run,
        json!({"addr": "2001:db8:ffff::80", "port": 80}),
        json!({"addr": "2001:db8:2::2", "port": 5201}),
    );
}

fn synproxy(run: &Run) {
    let ws = run.finding("wscale_changed", S2C);
    assert_eq!(
        ws["after"],
        json!({"shift": 7}),
        "SYNPROXY was configured with --wscale 7"
    );
    assert_bytes(run, BYTES, BYTES);
}

fn synproxy4_values(run: &Run) {
    let hp = run.finding("handshake_proxied", S2C);
    assert_eq!(hp["before"]["from"], "server", "{hp}");
    assert_eq!(hp["after"]["from"], "middlebox", "{hp}");
    assert_eq!(hp["after"]["shift"], 7, "{hp}");
    assert_eq!(hp["after"]["mss_bytes"], 1460, "{hp}");
}

/// Every 25th of the roughly 210 data segments dropped: `packet_dropped`
/// findings only, each a data segment that never arrived. One side at a
/// time, analyze sees the holes the drops leave (on the side after the
/// middlebox) filled by the senders' retransmissions before the receiver
/// acknowledges past them: the network's loss, not the capture's.
fn real_drops(run: &Run) {
    assert_eq!(run.code, 3);
    let k = run.findings();
    assert!(
        k.iter().all(|(kind, _)| kind == "packet_dropped"),
        "only drops: {}",
        run.compare["findings"]
    );
    let dropped: u64 = run.compare["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert!(f["before"]["payload_bytes"].as_u64().unwrap() > 0, "{f}");
            assert!(f["after"].is_null(), "{f}");
            f["count"].as_u64().unwrap()
        })
        .sum();
    assert!(
        (5..=12).contains(&dropped),
        "{dropped}: {}",
        run.compare["findings"]
    );
    let mut retransmissions = 0;
    for (side, doc) in [("inside", &run.inside), ("outside", &run.outside)] {
        let dirs = &doc["connections"][0]["directions"];
        for d in [C2S, S2C] {
            assert_eq!(
                dirs[d]["capture_missed_bytes"], 0,
                "{side} {d}: {}",
                dirs[d]
            );
            retransmissions += dirs[d]["retransmissions"].as_u64().unwrap();
        }
    }
    assert!(retransmissions > 0, "the drops were retransmitted");
}

/// The records of a classic pcap file as tcpdump writes them (host byte
/// order, checked by the magic), each with its 16-byte record header.
fn pcap_records(file: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let magic = u32::from_le_bytes(file[..4].try_into().unwrap());
    assert!(
        magic == 0xa1b2_c3d4 || magic == 0xa1b2_3c4d,
        "a little-endian classic pcap: {magic:#x}"
    );
    let mut out = Vec::new();
    let mut off = 24;
    while off + 16 <= file.len() {
        let incl = u32::from_le_bytes(file[off + 8..off + 12].try_into().unwrap()) as usize;
        out.push(file[off..off + 16 + incl].to_vec());
        off += 16 + incl;
    }
    (file[..24].to_vec(), out)
}

/// Source address, TCP payload length and sequence number of an Ethernet +
/// IPv4 record.
fn v4_src_payload_seq(record: &[u8]) -> ([u8; 4], usize, u32) {
    let ip = &record[16 + 14..];
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let doff = usize::from(ip[ihl + 12] >> 4) * 4;
    let seq = u32::from_be_bytes(ip[ihl + 4..ihl + 8].try_into().unwrap());
    (ip[12..16].try_into().unwrap(), total - ihl - doff, seq)
}

const CLIENT: [u8; 4] = [198, 18, 1, 2];
const SERVER: [u8; 4] = [198, 18, 2, 2];

/// Rewrites `src` to `dst` keeping the records `keep` accepts (given their
/// index and record); returns how many were removed.
fn rewrite(src: &Path, dst: &Path, keep: impl Fn(usize, &[u8]) -> bool) -> usize {
    let (header, records) = pcap_records(&std::fs::read(src).unwrap());
    let mut out = header;
    let mut removed = 0;
    for (i, r) in records.iter().enumerate() {
        if keep(i, r) {
            out.extend_from_slice(r);
        } else {
            removed += 1;
        }
    }
    std::fs::write(dst, out).unwrap();
    removed
}

/// Frames deleted from one capture are `capture_loss`, never tampering:
/// every 15th client data segment gone from the server's capture, every
/// 20th server data segment gone from the client's (the receivers' ACKs on
/// those same wires cover the bytes, so the captures missed them); and a
/// server-side capture that started late and stopped early.
fn capture_loss(run: &Run) {
    let (inside, outside) = (run.lab.inside(), run.lab.outside());
    let dir = &run.lab.dir;
    // Sequence numbers of data segments are unique in a clean run: pick
    // every n-th by the segment's sequence number.
    let nth = |every: u32, from: [u8; 4]| {
        move |_: usize, r: &[u8]| {
            let (src, len, seq) = v4_src_payload_seq(r);
            !(src == from && len > 0 && (seq / 1448) % every == 7)
        }
    };
    let lossy_out: PathBuf = dir.join("outside-lossy.pcap");
    let lossy_in: PathBuf = dir.join("inside-lossy.pcap");
    let lost_c2s = rewrite(&outside, &lossy_out, nth(15, CLIENT));
    let lost_s2c = rewrite(&inside, &lossy_in, nth(20, SERVER));
    assert!(lost_c2s >= 3 && lost_s2c >= 3, "{lost_c2s} {lost_s2c}");
    let (doc, code) = compare_both(&run.lab, &lossy_in, &lossy_out);
    assert_eq!(
        kinds(&doc),
        set(&[("capture_loss", C2S), ("capture_loss", S2C)]),
        "{}",
        doc["findings"]
    );
    assert_eq!(code, 0);
    for (d, missing, n) in [
        (C2S, "server_side", lost_c2s),
        (S2C, "client_side", lost_s2c),
    ] {
        let f = finding(&doc, "capture_loss", d);
        assert_eq!(f["missing_from"], missing, "{f}");
        assert_eq!(f["count"].as_u64(), Some(n as u64), "{f}");
        assert_eq!(f["outside_span"], 0, "{f}");
        assert!(f["before"].is_object() != f["after"].is_object(), "{f}");
        assert!(
            f["before"]["payload_bytes"].as_u64().unwrap_or(0) > 0
                || f["after"]["payload_bytes"].as_u64().unwrap_or(0) > 0,
            "{f}"
        );
    }
    let (_, records) = pcap_records(&std::fs::read(&outside).unwrap());
    let n = records.len();
    let short_out = dir.join("outside-short.pcap");
    rewrite(&outside, &short_out, |i, _| i >= 40 && i + 40 < n);
    let (doc, code) = compare_both(&run.lab, &inside, &short_out);
    assert!(
        kinds(&doc).iter().all(|(kind, _)| kind == "capture_loss"),
        "{}",
        doc["findings"]
    );
    assert_eq!(code, 0);
    let spanned: u64 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["missing_from"], "server_side", "{f}");
            f["outside_span"].as_u64().unwrap()
        })
        .sum();
    assert!(spanned >= 40, "{}", doc["findings"]);
}
