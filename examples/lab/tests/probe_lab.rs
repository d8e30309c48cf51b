//! `firewall-check probe` against real Linux routers: the probe lab
//! (lab/probe-lab.sh) is a line of five namespaces, client - r1 - r2 - r3 -
//! server, with the middlebox rules of each case on r2 (iptables in mangle
//! PREROUTING, which Linux runs before a router's own TTL check, or in
//! FORWARD, after it). For each case the probe's JSON must name the change
//! in `compare`'s finding kinds, with r2 (TTL 2) between `after_hop` and
//! `hop`; the clean line must give no finding at all.
//!
//! The expectations are tables, one row per case: [`PLAIN`] without the
//! reflector, [`REFLECTED`] with it. A row names every finding the case
//! must give, each way, with the hop it must be located at (and the hop
//! before it: r2 between them), the results and details of the tests that
//! show it, and, where a case needs more (values, maps, the ends of a NAT),
//! a function of its own. Every run also gets the common checks
//! ([`check_run`]): the JSON schema, the path, the RST suppression gone,
//! the TTL decrement, standard error holding the progress lines only.
//!
//! Needs root, network namespaces, iptables (TCPOPTSTRIP, TCPMSS, DSCP,
//! TOS, ECN targets), nftables and python3; without them it skips with a
//! message, unless `TCP_PERF_LAB_REQUIRED=1` (set by `.ci/run`), where a
//! skip is a failure.

use std::process::Command;

use serde_json::Value;

mod lab_support;
mod probe_support;

use probe_support::*;

/// What one case must show (module docs).
struct Row {
    case: &'static str,
    /// The client-to-server findings, each kind with the hop it is located
    /// at (after the hop before it); 0: located otherwise (`more` checks).
    fwd: &'static [(&'static str, u64)],
    /// The server-to-client findings (with the reflector), hops counted
    /// from the server.
    rev: &'static [(&'static str, u64)],
    /// Test results.
    results: &'static [(&'static str, &'static str)],
    /// Parts of test details.
    details: &'static [(&'static str, &'static str)],
    /// What else the case shows.
    more: fn(&CaseRun),
}

const fn row(case: &'static str, fwd: &'static [(&'static str, u64)]) -> Row {
    Row {
        case,
        fwd,
        rev: &[],
        results: &[],
        details: &[],
        more: |_| {},
    }
}

/// The cases over IPv4 (all); IPv6 runs all but [`V4_ONLY`].
const CASES: [&str; 26] = [
    "clean",
    "closed_port",
    "wscale_syn_pre",
    "wscale_syn_fwd",
    "wscale_synack_fwd",
    "wscale_synack_pre",
    "sack_ts_fwd",
    "sack_ts_pre",
    "mss_pre",
    "mss_fwd",
    "dscp_bleach_pre",
    "dscp_remark_fwd",
    "dscp_remark_pre",
    "dscp_map_fwd",
    "exotic_fwd",
    "ecn_bleach_fwd",
    "ecn_bleach_pre",
    "ecn_field_bleach_fwd",
    "ecn_setup_drop_fwd",
    "tfo_drop_fwd",
    "conntrack_strict",
    "campus",
    "synproxy_fwd",
    "window_fwd",
    "window_pre",
    "nat",
];

/// The two ECN bleaches that also clear the TCP flags: ip6tables has no
/// ECN target (the IP ECN field alone is `ecn_field_bleach_fwd`, both
/// families).
const V4_ONLY: [&str; 2] = ["ecn_bleach_fwd", "ecn_bleach_pre"];

/// The cases of a family.
fn cases(v6: bool) -> Vec<&'static str> {
    CASES
        .iter()
        .copied()
        .filter(|c| !(v6 && V4_ONLY.contains(c)))
        .collect()
}

/// The hop a rule of this case shows at, either way: r2's own quote for a
/// rule before its routing (`_pre`: PREROUTING runs before the TTL check),
/// the next router's for one in FORWARD (from the client r3 is hop 3; from
/// the server r1 is).
const PRE: u64 = 2;
const FWD: u64 = 3;

/// The option kinds the `exotic_fwd` case strips.
const EXOTIC_KINDS: [u64; 7] = [30, 34, 99, 172, 174, 253, 254];

/// The tests whose SYNs (and, with the reflector, SYN-ACKs) carry them.
const EXOTIC: [&str; 7] = [
    "exp253",
    "exp254",
    "unassigned",
    "accecn0",
    "accecn1",
    "fastopen",
    "mptcp",
];

/// The reverse tests whose crafted SYN-ACKs carry them.
const EXOTIC_REVERSE: [&str; 8] = [
    "synack_exp253",
    "synack_exp254",
    "synack_unassigned",
    "synack_accecn0",
    "synack_accecn1",
    "synack_fastopen",
    "synack_fastopen_data",
    "synack_mptcp",
];

const SEVEN_STRIPPED: &[(&str, u64)] = &[("option_stripped", FWD); 7];

/// Without the reflector.
const PLAIN: &[Row] = &[
    Row {
        more: plain_clean,
        ..row("clean", &[])
    },
    // Nothing listens on the port: the target answers RST. Said so; the
    // tests that need a connection do not run; nothing is called dropped.
    Row {
        results: &[
            ("fastopen_data", "unknown"),
            ("ect0_data", "unknown"),
            ("ce_data", "unknown"),
            ("out_of_window", "unknown"),
            ("mss", "unchanged"),
        ],
        details: &[
            (
                "ttl",
                "the target answered with RST: nothing listens on the port",
            ),
            ("ect0_data", "the target answered with RST"),
            ("fastopen_data", "the target answered with RST"),
        ],
        more: closed_port,
        ..row("closed_port", &[])
    },
    Row {
        results: &[("wscale", "modified"), ("mss", "unchanged")],
        more: wscale_values,
        ..row("wscale_syn_pre", &[("wscale_stripped", PRE)])
    },
    Row {
        results: &[("wscale", "modified"), ("mss", "unchanged")],
        more: wscale_values,
        ..row("wscale_syn_fwd", &[("wscale_stripped", FWD)])
    },
    // A SYN-ACK without window scale is the server's answer as far as the
    // prober can tell: never a finding.
    Row {
        more: plain_clean,
        ..row("wscale_synack_fwd", &[])
    },
    Row {
        more: plain_clean,
        ..row("wscale_synack_pre", &[])
    },
    Row {
        results: &[("wscale", "unchanged")],
        ..row(
            "sack_ts_fwd",
            &[("sackperm_stripped", FWD), ("timestamps_stripped", FWD)],
        )
    },
    Row {
        results: &[("wscale", "unchanged")],
        ..row(
            "sack_ts_pre",
            &[("sackperm_stripped", PRE), ("timestamps_stripped", PRE)],
        )
    },
    // TCPMSS also inserts an MSS into SYNs without one (min(1200, 536) for
    // IPv4, min(1200, 1220) for IPv6): option_added of kind 2.
    Row {
        more: mss_values,
        ..row("mss_pre", &[("mss_clamped", PRE), ("option_added", PRE)])
    },
    Row {
        more: mss_values,
        ..row("mss_fwd", &[("mss_clamped", FWD), ("option_added", FWD)])
    },
    Row {
        results: &[
            ("dscp_af11", "modified"),
            ("dscp_cs1", "modified"),
            ("dscp_ef", "modified"),
        ],
        more: |r| {
            let f = one(r, "dscp_changed");
            assert_eq!(f["after"]["value"], 0, "{f}");
            assert_ne!(f["before"]["value"], 0, "{f}");
        },
        ..row("dscp_bleach_pre", &[("dscp_changed", PRE)])
    },
    // CS1 stays CS1: unchanged.
    Row {
        results: &[("dscp_cs1", "unchanged"), ("dscp_ef", "modified")],
        more: |r| assert_eq!(one(r, "dscp_changed")["after"]["value"], 8),
        ..row("dscp_remark_fwd", &[("dscp_changed", FWD)])
    },
    Row {
        results: &[("dscp_cs1", "unchanged"), ("dscp_ef", "modified")],
        more: |r| assert_eq!(one(r, "dscp_changed")["after"]["value"], 8),
        ..row("dscp_remark_pre", &[("dscp_changed", PRE)])
    },
    // 46 -> 0, 10 -> 12, 63 -> 8, the other 61 values kept.
    Row {
        results: &[("dscp_all", "modified")],
        more: |r| check_map(r, "dscp_map", map_fwd, FWD),
        ..row("dscp_map_fwd", &[("dscp_changed", FWD)])
    },
    // TCPOPTSTRIP 30,34,99,172,174,253,254: each its own finding. The
    // cookie request is stripped: the server gives no cookie, so the data
    // test cannot run.
    Row {
        results: &[("linux_syn", "unchanged"), ("fastopen_data", "unknown")],
        details: &[("fastopen_data", "no Fast Open cookie")],
        more: |r| {
            exotic_kinds(r, "client_to_server");
            for t in EXOTIC {
                assert_eq!(test_result(r, t), "modified", "{t}");
            }
        },
        ..row("exotic_fwd", SEVEN_STRIPPED)
    },
    Row {
        results: &[("ect0_data", "modified"), ("ce_data", "modified")],
        more: ecn_bleach_values,
        ..row(
            "ecn_bleach_fwd",
            &[("ecn_changed", FWD), ("ecn_changed", FWD)],
        )
    },
    Row {
        results: &[("ect0_data", "modified"), ("ce_data", "modified")],
        more: ecn_bleach_values,
        ..row(
            "ecn_bleach_pre",
            &[("ecn_changed", PRE), ("ecn_changed", PRE)],
        )
    },
    // The IP ECN field cleared in FORWARD, the TCP flags left alone: ECN
    // setup still works.
    Row {
        results: &[
            ("ect0_data", "modified"),
            ("ce_data", "modified"),
            ("ecn_setup", "unchanged"),
            ("accecn_setup", "unchanged"),
        ],
        more: |r| {
            let f = one(r, "ecn_changed");
            assert_eq!(
                (f["before"].as_str(), f["after"].as_str()),
                (Some("ECT(0)"), Some("Not-ECT")),
                "{f}"
            );
        },
        ..row("ecn_field_bleach_fwd", &[("ecn_changed", FWD)])
    },
    // The RFC 3168 and the AccECN setup SYN.
    Row {
        results: &[("ecn_setup", "dropped"), ("ect0", "unchanged")],
        ..row(
            "ecn_setup_drop_fwd",
            &[("ecn_setup_dropped", FWD), ("ecn_setup_dropped", FWD)],
        )
    },
    // DROP of SYNs longer than 100 bytes in r2's FORWARD: SYNs carrying
    // data (Fast Open). The cookie request passes.
    Row {
        results: &[
            ("fastopen_data", "dropped"),
            ("fastopen", "unchanged"),
            ("linux_syn", "unchanged"),
        ],
        details: &[(
            "fastopen_data",
            "a SYN with the server's Fast Open cookie and 64 bytes of data never arrives",
        )],
        ..row("tfo_drop_fwd", &[("probe_dropped", FWD)])
    },
    // Window tracking with an INVALID drop rule alone drops nothing, not
    // even the segment beyond the unscaled window (the scaling is intact).
    Row {
        more: plain_clean,
        ..row("conntrack_strict", &[])
    },
    // Window scale removed from the SYN-ACK before conntrack sees it,
    // conntrack window tracking with an INVALID drop: the byte beyond the
    // unscaled window (plus conntrack's slack) but inside the scaled one
    // never arrives. Without the reflector the server's shift is inferred.
    Row {
        results: &[("out_of_window", "dropped")],
        more: |r| campus_byte(r, one(r, "out_of_window_dropped"), "inferred"),
        ..row("campus", &[("out_of_window_dropped", FWD)])
    },
    // r2 answers the SYN itself: the SYN-ACK's TTL (63) says one router
    // away, the target is further.
    Row {
        more: |r| assert_eq!(one(r, "handshake_proxied")["after"]["synack_ttl"], 63),
        ..row("synproxy_fwd", &[("handshake_proxied", 2)])
    },
    Row {
        more: window_values,
        ..row("window_fwd", &[("window_rewritten", FWD)])
    },
    Row {
        more: window_values,
        ..row("window_pre", &[("window_rewritten", PRE)])
    },
    // DNAT of the virtual address to the server and masquerading on r2:
    // its ICMP errors come from the virtual address, so the translation is
    // placed at hop 2; to what the destination is translated only a
    // reflector shows.
    Row {
        more: |r| {
            let f = one(r, "nat");
            assert_eq!(f["hop"]["ttl"], 2, "{f}");
            assert_eq!(f["hop"]["address"], addr(r, "198.18.45.80"), "{f}");
            assert_eq!(f["after_hop"]["ttl"], 1, "{f}");
            assert_eq!(
                end(&f["before"], "dst"),
                Some((addr(r, "198.18.45.80"), 80)),
                "{f}"
            );
            assert_eq!(end(&f["before"], "src"), None, "{f}");
            assert!(f["after"].is_null(), "{f}");
        },
        ..row("nat", &[("nat", 0)])
    },
];

/// `dscp_map_fwd`'s map: 46 -> 0, 10 -> 12, 63 -> 8.
fn map_fwd(d: u64) -> u64 {
    match d {
        46 => 0,
        10 => 12,
        63 => 8,
        v => v,
    }
}

/// Nothing found, every test unchanged, the out-of-window byte tested and
/// acknowledged, the lab's Fast Open server took the data in the SYN.
fn plain_clean(r: &CaseRun) {
    for t in r.json["tests"].as_array().unwrap() {
        assert_eq!(t["result"], "unchanged", "{}: {t}", r.name);
    }
    detail_has(r, "out_of_window", &["was acknowledged"]);
    detail_has(
        r,
        "fastopen_data",
        &["acknowledged the 64 bytes of data in the SYN"],
    );
}

/// The report says nothing listens on the port, and no test is dropped.
fn closed_port(r: &CaseRun) {
    let notes = r.json["notes"].to_string();
    assert!(
        notes.contains("answers SYNs to port 5202 with RST: nothing listens there"),
        "{notes}"
    );
    for t in r.json["tests"].as_array().unwrap() {
        assert_ne!(t["result"], "dropped", "{t}");
    }
}

fn wscale_values(r: &CaseRun) {
    let f = one(r, "wscale_stripped");
    assert_eq!(
        (f["option_kind"].as_u64(), f["before"].as_u64()),
        (Some(3), Some(7)),
        "{f}"
    );
    assert_eq!(f["after"], "absent", "{f}");
}

fn mss_values(r: &CaseRun) {
    let f = one(r, "mss_clamped");
    assert_eq!(
        (f["before"].as_u64(), f["after"].as_u64()),
        (Some(1460), Some(1200)),
        "{f}"
    );
    let added = one(r, "option_added");
    assert_eq!(added["option_kind"], 2, "{added}");
    assert_eq!(added["after"], if r.v6 { 1200 } else { 536 }, "{added}");
}

fn ecn_bleach_values(r: &CaseRun) {
    let f = findings(r, "ecn_changed");
    assert!(
        f.iter()
            .any(|f| f["before"] == "ECT(0)" && f["after"] == "Not-ECT"),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|f| f["before"] == "CWR+ECE" && f["after"] == "none"),
        "{f:?}"
    );
}

fn window_values(r: &CaseRun) {
    let f = one(r, "window_rewritten");
    assert_eq!(
        (f["before"].as_u64(), f["after"].as_u64()),
        (Some(64240), Some(1000)),
        "{f}"
    );
}

/// The option kinds of the stripped options, each once, `dir`.
fn exotic_kinds(r: &CaseRun, dir: &str) {
    let mut kinds: Vec<u64> = findings_dir(r, "option_stripped", dir)
        .iter()
        .map(|f| {
            assert_eq!(f["after"], "absent", "{f}");
            f["option_kind"].as_u64().unwrap()
        })
        .collect();
    kinds.sort_unstable();
    assert_eq!(kinds, EXOTIC_KINDS, "{}", r.name);
}

/// The campus firewall's drop: the byte beyond the unscaled edge, inside
/// the scaled one, the shift from `from`.
fn campus_byte(r: &CaseRun, f: &Value, from: &str) {
    assert_eq!(f["before"]["shift_from"], from, "{}: {f}", r.name);
    let n = |k: &str| f["before"][k].as_u64().unwrap();
    let (off, scaled, unscaled) = (n("bytes_past_ack"), n("scaled_edge"), n("unscaled_edge"));
    assert!(unscaled < off && off < scaled, "{f}");
}

/// With the reflector: the forward findings as without it, the probe
/// captured at the target, and the server-to-client direction tested with
/// the server's own and crafted SYN-ACKs, located from the routers' quotes
/// the reflector received (from the server r3 is TTL 1, r2 TTL 2, r1 TTL 3).
const REFLECTED: &[Row] = &[
    // Every test ran and saw nothing changed, in both directions: the
    // exotic options' twins included.
    Row {
        more: reflected_clean,
        ..row("clean", &[])
    },
    // No SYN-ACK to copy: every reverse test says why, none is a drop.
    Row {
        details: &[("synack_mss", "nothing listens on the port")],
        more: |r| {
            closed_port(r);
            for t in r.json["tests"].as_array().unwrap() {
                if t["direction"] == "server_to_client" {
                    assert_eq!(t["result"], "unknown", "{t}");
                }
            }
        },
        ..row("closed_port", &[])
    },
    row("wscale_syn_pre", &[("wscale_stripped", PRE)]),
    row("wscale_syn_fwd", &[("wscale_stripped", FWD)]),
    // Now the reflector shows the server sent window scale.
    Row {
        rev: &[("wscale_stripped", FWD)],
        more: |r| {
            assert!(one_reverse(r, "wscale_stripped")["before"]
                .as_u64()
                .is_some())
        },
        ..row("wscale_synack_fwd", &[])
    },
    Row {
        rev: &[("wscale_stripped", PRE)],
        more: |r| {
            assert!(one_reverse(r, "wscale_stripped")["before"]
                .as_u64()
                .is_some())
        },
        ..row("wscale_synack_pre", &[])
    },
    Row {
        rev: &[("sackperm_stripped", FWD), ("timestamps_stripped", FWD)],
        ..row(
            "sack_ts_fwd",
            &[("sackperm_stripped", FWD), ("timestamps_stripped", FWD)],
        )
    },
    Row {
        rev: &[("sackperm_stripped", PRE), ("timestamps_stripped", PRE)],
        ..row(
            "sack_ts_pre",
            &[("sackperm_stripped", PRE), ("timestamps_stripped", PRE)],
        )
    },
    // TCPMSS matches SYN-ACKs too (SYN set, RST clear), and inserts an MSS
    // into the crafted SYN-ACKs without one; the reverse DSCP map's full
    // copies (no option, no TTL-limited copy) show that insertion at the
    // prober only, not located.
    Row {
        rev: &[
            ("mss_clamped", PRE),
            ("option_added", PRE),
            ("option_added", 0),
        ],
        more: reverse_mss,
        ..row("mss_pre", &[("mss_clamped", PRE), ("option_added", PRE)])
    },
    Row {
        rev: &[
            ("mss_clamped", FWD),
            ("option_added", FWD),
            ("option_added", 0),
        ],
        more: reverse_mss,
        ..row("mss_fwd", &[("mss_clamped", FWD), ("option_added", FWD)])
    },
    Row {
        rev: &[("dscp_changed", PRE)],
        more: |r| {
            check_map(r, "reverse_dscp_map", |_| 0, PRE);
            assert_eq!(one_reverse(r, "dscp_changed")["after"]["value"], 0);
        },
        ..row("dscp_bleach_pre", &[("dscp_changed", PRE)])
    },
    Row {
        rev: &[("dscp_changed", FWD)],
        more: |r| {
            check_map(r, "reverse_dscp_map", |d| if d == 0 { 0 } else { 8 }, FWD);
            assert_eq!(one_reverse(r, "dscp_changed")["after"]["value"], 8);
        },
        ..row("dscp_remark_fwd", &[("dscp_changed", FWD)])
    },
    Row {
        rev: &[("dscp_changed", PRE)],
        more: |r| assert_eq!(one_reverse(r, "dscp_changed")["after"]["value"], 8),
        ..row("dscp_remark_pre", &[("dscp_changed", PRE)])
    },
    // The crafted SYN-ACKs' marks are remarked the same way.
    Row {
        rev: &[("dscp_changed", FWD)],
        more: |r| {
            check_map(r, "reverse_dscp_map", map_fwd, FWD);
            assert_eq!(one_reverse(r, "dscp_changed")["after"]["value"], 12);
        },
        ..row("dscp_map_fwd", &[("dscp_changed", FWD)])
    },
    // TCPOPTSTRIP in FORWARD strips the options both ways: the crafted
    // SYN-ACKs carry them too (Fast Open as a cookie, MP_CAPABLE with a
    // key), each its own finding; the SYN-ACK's data still arrives.
    Row {
        rev: SEVEN_STRIPPED,
        results: &[("synack_linux", "unchanged")],
        details: &[(
            "synack_fastopen_data",
            "the 64 bytes of data in the SYN-ACK arrived here",
        )],
        more: |r| {
            exotic_kinds(r, "client_to_server");
            exotic_kinds(r, "server_to_client");
            for t in EXOTIC_REVERSE {
                assert_eq!(test_result(r, t), "modified", "{t}");
            }
            reverse_all_ran(r, &[]);
        },
        ..row("exotic_fwd", SEVEN_STRIPPED)
    },
    // The SYN's CWR and ECE removed on the way: it arrives with AE alone,
    // which an AccECN server takes as AccECN setup (RFC 9768 3.1.3),
    // answering CWR for Not-ECT; the SYN-ACK's CWR is removed too.
    Row {
        rev: &[("ecn_changed", FWD), ("ecn_changed", FWD)],
        results: &[
            ("synack_accecn_setup", "modified"),
            ("ce_data", "modified"),
            ("reverse_ce_data", "modified"),
        ],
        details: &[
            (
                "synack_accecn_setup",
                "arrived at the server with AE and IP-ECN Not-ECT",
            ),
            (
                "synack_accecn_setup",
                "ecn_flags \"CWR\" -> \"none\" at hop 3",
            ),
        ],
        ..row(
            "ecn_bleach_fwd",
            &[("ecn_changed", FWD), ("ecn_changed", FWD)],
        )
    },
    Row {
        rev: &[("ecn_changed", PRE), ("ecn_changed", PRE)],
        results: &[
            ("synack_accecn_setup", "modified"),
            ("ce_data", "modified"),
            ("reverse_ce_data", "modified"),
        ],
        details: &[
            (
                "synack_accecn_setup",
                "arrived at the server with AE and IP-ECN Not-ECT",
            ),
            (
                "synack_accecn_setup",
                "ecn_flags \"CWR\" -> \"none\" at hop 2",
            ),
        ],
        ..row(
            "ecn_bleach_pre",
            &[("ecn_changed", PRE), ("ecn_changed", PRE)],
        )
    },
    // Both directions pass r2's FORWARD: the server's marks are bleached
    // too, its SYN-ACK's ECE kept.
    Row {
        rev: &[("ecn_changed", FWD)],
        results: &[
            ("reverse_ce_data", "modified"),
            ("reverse_ect0_data", "modified"),
        ],
        ..row("ecn_field_bleach_fwd", &[("ecn_changed", FWD)])
    },
    // The AccECN-setup SYN is dropped (it has CWR and ECE): no SYN-ACK to
    // answer, said so. The rule matches SYNs only: SYN-ACKs with ECE pass.
    Row {
        results: &[("synack_accecn_setup", "unknown")],
        details: &[("synack_accecn_setup", "got no SYN-ACK")],
        ..row(
            "ecn_setup_drop_fwd",
            &[("ecn_setup_dropped", FWD), ("ecn_setup_dropped", FWD)],
        )
    },
    // The rule drops SYNs (no ACK) with data: a SYN-ACK with a cookie and
    // data passes.
    Row {
        results: &[("synack_fastopen_data", "unchanged")],
        details: &[(
            "synack_fastopen_data",
            "the 64 bytes of data in the SYN-ACK arrived here",
        )],
        ..row("tfo_drop_fwd", &[("probe_dropped", FWD)])
    },
    // Window tracking alone drops nothing either way.
    Row {
        results: &[("reverse_out_of_window", "unchanged")],
        ..row("conntrack_strict", &[])
    },
    // The raw-priority rule strips the SYN-ACK's window scale before r2's
    // own TTL check: located at r2 from the server. And the tracker drops
    // the server's byte beyond the prober's unscaled window (inside its
    // scaled one) in FORWARD: r2 quoted it last, r1 never.
    Row {
        rev: &[("wscale_stripped", PRE), ("out_of_window_dropped", FWD)],
        results: &[
            ("reverse_out_of_window", "dropped"),
            ("reverse_ce_data", "unchanged"),
        ],
        more: |r| {
            campus_byte(r, one(r, "out_of_window_dropped"), "reflector");
            let o = one_reverse(r, "out_of_window_dropped");
            assert_eq!(o["before"]["shift_from"], "prober", "{o}");
        },
        ..row("campus", &[("out_of_window_dropped", FWD)])
    },
    // r2 answers the SYN itself and, once the prober's ACK completes that
    // handshake, opens its own to the server with the prober's sequence
    // number, then translates the server's sequence numbers (and TSval)
    // and the prober's acknowledgments: true changes. The server's own
    // SYN-ACK goes to the proxy only: that one test cannot run, and says
    // why. (Over IPv6 r2 does not quote most of the reflector's copies:
    // the server's sequence numbers are located after hop 1.)
    Row {
        rev: &[("seq_rewritten", 0), ("timestamps_changed", 0)],
        results: &[("synack", "unknown")],
        details: &[
            ("synack", "a SYN proxy on the path answered"),
            ("reverse_out_of_window", "arrived here"),
        ],
        more: |r| {
            for k in ["seq_rewritten", "timestamps_changed"] {
                assert_eq!(one_reverse(r, k)["hop"]["ttl"], FWD, "{k}");
            }
            reverse_all_ran(r, &["synack"]);
        },
        ..row(
            "synproxy_fwd",
            &[("handshake_proxied", 2), ("ack_rewritten", FWD)],
        )
    },
    // The rule matches SYNs without ACK: the SYN-ACKs pass.
    row("window_fwd", &[("window_rewritten", FWD)]),
    row("window_pre", &[("window_rewritten", PRE)]),
    // The reflector finds the probe by its sequence number: translated
    // source and destination, address and port, one finding. The server
    // answers the translated address and port; the reflector finds its
    // SYN-ACK by the acknowledgment and sends its copies there, and the
    // NAT translates them back: every reverse test runs, none sees a
    // change of its own (the translation back is the forward one, undone).
    Row {
        details: &[("reverse_out_of_window", "arrived here")],
        more: reflected_nat,
        ..row("nat", &[("nat", 0)])
    },
];

fn reverse_mss(r: &CaseRun) {
    assert_eq!(one_reverse(r, "mss_clamped")["after"], 1200);
    let unlocated: Vec<&Value> = findings_dir(r, "option_added", "server_to_client")
        .into_iter()
        .filter(|f| f["after_hop"].is_null())
        .collect();
    assert_eq!(unlocated.len(), 1, "{unlocated:?}");
    assert_eq!(unlocated[0]["test"], "reverse_dscp_all", "{}", unlocated[0]);
}

fn reflected_clean(r: &CaseRun) {
    for t in r.json["tests"].as_array().unwrap() {
        assert_eq!(t["result"], "unchanged", "{t}");
    }
    reverse_all_ran(r, &[]);
    check_map(r, "reverse_dscp_map", |d| d, 0);
    // The AccECN-setup SYN arrived as sent (Not-ECT): an AccECN server
    // answers CWR alone, and it arrives so.
    detail_has(
        r,
        "synack_accecn_setup",
        &[
            "arrived at the server with AE+CWR+ECE and IP-ECN Not-ECT: the SYN-ACK answers CWR (RFC 9768)",
            "received unchanged here",
        ],
    );
    detail_has(
        r,
        "synack_fastopen_data",
        &["the 64 bytes of data in the SYN-ACK arrived here"],
    );
    // The server-side byte past the prober's unscaled window arrives here.
    detail_has(r, "reverse_out_of_window", &["arrived here"]);
}

fn reflected_nat(r: &CaseRun) {
    let f = one(r, "nat");
    let masq = end(&f["after"], "src").unwrap_or_else(|| panic!("source kept: {f}"));
    assert_eq!(masq.0, addr(r, "198.18.43.1"), "{f}");
    assert!((40..50).contains(&(masq.1 / 1000)), "{f}");
    assert_eq!(
        end(&f["after"], "dst"),
        Some((addr(r, "198.18.44.2"), 5201)),
        "{f}"
    );
    assert_eq!(
        end(&f["before"], "dst"),
        Some((addr(r, "198.18.45.80"), 80)),
        "{f}"
    );
    assert_eq!(
        end(&f["before"], "src").map(|e| e.0),
        Some(addr(r, "198.18.41.2")),
        "{f}"
    );
    assert_eq!(
        (f["after_hop"]["ttl"].as_u64(), f["hop"]["ttl"].as_u64()),
        (Some(1), Some(2)),
        "{f}"
    );
    reverse_all_ran(r, &[]);
    for t in r.json["tests"].as_array().unwrap() {
        if t["direction"] == "server_to_client" {
            assert_eq!(t["result"], "unchanged", "{t}");
            assert!(
                t["detail"]
                    .as_str()
                    .unwrap_or("")
                    .contains("translated back by the NAT"),
                "{t}"
            );
        }
    }
}

/// What every run with the reflector shows: the reverse tests ran, and
/// every test seen unchanged says where: captured at the target, or
/// received here (behind the NAT the reflector finds SYNs by their
/// sequence number, not the data segments of the data tests; behind the
/// SYN proxy no SYN reaches the server).
fn check_reflected(r: &CaseRun) {
    let tests = r.json["tests"].as_array().expect("tests");
    let reverse = tests
        .iter()
        .filter(|t| t["direction"] == "server_to_client")
        .count();
    assert!(reverse >= 10, "{}: {reverse} reverse tests", r.name);
    let maps = ["dscp_all", "reverse_dscp_all", "out_of_window"];
    for t in tests {
        let name = t["name"].as_str().unwrap_or("");
        if t["result"] != "unchanged" || maps.contains(&name) {
            continue;
        }
        let d = t["detail"].as_str().unwrap_or("");
        let forward = t["direction"] == "client_to_server";
        let unseen = (r.name == "nat" && forward && name.ends_with("_data"))
            || (r.name.starts_with("synproxy") && forward);
        let ok = if unseen {
            d.contains("the reflector did not capture it at the target")
        } else {
            d.contains("captured unchanged at the target") || d.contains("received unchanged here")
        };
        assert!(ok, "{}: {t}", r.name);
    }
}

/// Checks each run against its row of `table`.
fn check_rows(runs: &[CaseRun], table: &[Row]) {
    for r in runs {
        check_run(r);
        if r.reflect {
            check_reflected(r);
        }
        let row = table
            .iter()
            .find(|x| x.case == r.name)
            .unwrap_or_else(|| panic!("case {} without a row", r.name));
        check_row(r, row);
    }
}

/// The run gives exactly the row's findings each way, each located where
/// the row says, and the row's results and details.
fn check_row(r: &CaseRun, row: &Row) {
    for (dir, want) in [("client_to_server", row.fwd), ("server_to_client", row.rev)] {
        let all: Vec<&Value> = r.json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["direction"] == dir)
            .collect();
        let mut got: Vec<&str> = all.iter().map(|f| f["kind"].as_str().unwrap()).collect();
        let mut kinds: Vec<&str> = want.iter().map(|(k, _)| *k).collect();
        got.sort_unstable();
        kinds.sort_unstable();
        assert_eq!(
            got, kinds,
            "{}: {dir} findings: {}",
            r.name, r.json["findings"]
        );
        for &(kind, hop) in want.iter().filter(|(_, h)| *h != 0) {
            let n = want.iter().filter(|w| **w == (kind, hop)).count();
            let at: Vec<&&Value> = all
                .iter()
                .filter(|f| f["kind"] == kind && f["hop"]["ttl"] == hop)
                .collect();
            assert_eq!(
                at.len(),
                n,
                "{}: {kind} at hop {hop}: {}",
                r.name,
                r.json["findings"]
            );
            for f in at {
                located(r, f, hop);
            }
        }
    }
    for (t, result) in row.results {
        assert_eq!(
            test_result(r, t),
            *result,
            "{}: {t}: {}",
            r.name,
            test_detail(r, t)
        );
    }
    for (t, part) in row.details {
        detail_has(r, t, &[part]);
    }
    (row.more)(r);
}

/// Every case over IPv4 and over IPv6, the two labs at once, with or
/// without the reflector (its control connection over the probes' family:
/// it sends only to the control connection's peer); `text`: the IPv4 cases
/// whose text report is read too. The runs over IPv4 and over IPv6.
fn run_all_cases(
    reflect: bool,
    text: &'static [&'static str],
    [tag4, tag6]: [&str; 2],
) -> (Vec<CaseRun>, Vec<CaseRun>) {
    let v4 = Lab {
        reflect,
        text,
        args: FAST_PACE,
        ..Lab::default()
    };
    let v6 = Lab {
        v6: true,
        reflect,
        args: FAST_PACE,
        ..Lab::default()
    };
    let (c4, c6) = (cases(false), cases(true));
    Lab::run_two((&v4, tag4, &c4), (&v6, tag6, &c6))
}

/// Every case over IPv4 and over IPv6 (ip6tables rules, ICMPv6 quotes,
/// flow labels), without the reflector, the two labs at once; the clean
/// line's text report too.
#[test]
#[ignore = "network lab (root): cargo test -p lab -- --ignored"]
fn probe_lab_cases() {
    if !available() {
        return;
    }
    let (r4, r6) = run_all_cases(false, &["clean"], ["v4", "v6"]);
    assert_eq!((r4.len(), r6.len()), (26, 24));
    check_rows(&r4, PLAIN);
    check_rows(&r6, PLAIN);
}

/// Every case over IPv4 and IPv6 with the reflector, the two labs at once;
/// the campus case's text report too (findings both ways, located, with
/// their costs); then `--max-ttl` and `--tests`.
#[test]
#[ignore = "network lab (root): cargo test -p lab -- --ignored"]
fn probe_lab_with_reflector() {
    if !available() {
        return;
    }
    let (r4, r6) = run_all_cases(true, &["campus"], ["v4r", "v6r"]);
    check_rows(&r4, REFLECTED);
    check_rows(&r6, REFLECTED);
    check_max_ttl_and_tests();
}

/// `--max-ttl 2 --tests wscale,mss` on the case that strips window scale
/// in r2's FORWARD (seen from r3, TTL 3, on): only `ttl` (the path) and the
/// two tests run, with their server-to-client twins; only TTLs 1 and 2 are
/// probed, so the path has r1 and r2 and no target (its distance is not
/// known), and the stripping, seen at the target by the reflector, is
/// reported after r2 with no hop: nothing is claimed of the TTLs not
/// probed. Its text report agrees.
fn check_max_ttl_and_tests() {
    let case = "wscale_syn_fwd";
    let lab = Lab {
        reflect: true,
        text: &[case],
        args: &["--max-ttl", "2", "--tests", "wscale,mss"],
        ..Lab::default()
    };
    let runs = lab.run("maxttl", &[case]);
    let r = &runs[0];
    assert_schema(r);
    assert_progress_only(r);
    let tests: Vec<(&str, &str)> = r.json["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                t["direction"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tests,
        [
            ("ttl", "client_to_server"),
            ("wscale", "client_to_server"),
            ("mss", "client_to_server"),
            ("synack", "server_to_client"),
            ("synack_wscale", "server_to_client"),
            ("synack_mss", "server_to_client"),
        ]
    );
    let path: Vec<(u64, &str)> = r.json["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["ttl"].as_u64().unwrap(), h["address"].as_str().unwrap()))
        .collect();
    assert_eq!(path, [(1, "198.18.41.1"), (2, R2.0)]);
    assert!(
        r.json["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap_or("")
            .contains("more than 2 hops away (--max-ttl 2)")),
        "{}",
        r.json["notes"]
    );
    let f = one(r, "wscale_stripped");
    assert!(f["hop"].is_null(), "a hop past --max-ttl claimed: {f}");
    assert_eq!(f["after_hop"]["ttl"], 2, "{f}");
    assert_eq!(f["after_hop"]["address"], R2.0, "{f}");
    assert_eq!(r.json["findings"].as_array().unwrap().len(), 1);
    assert_eq!(r.status, 3);
    assert_eq!(test_result(r, "wscale"), "modified");
    assert!(
        test_detail(r, "wscale").contains("at the far end, past hop 2"),
        "{}",
        test_detail(r, "wscale")
    );
    for t in ["mss", "synack", "synack_wscale", "synack_mss"] {
        assert_eq!(test_result(r, t), "unchanged", "{t}");
        assert!(
            test_detail(r, t).contains("of 2 hops probed (--max-ttl)"),
            "{t}: {}",
            test_detail(r, t)
        );
    }
    assert_text_agrees(r);
}

/// Without CAP_NET_RAW: a clear message and status 1, nothing sent.
#[test]
#[ignore = "network lab (root): cargo test -p lab -- --ignored"]
fn probe_without_raw_sockets_fails_clearly() {
    if !available() {
        return;
    }
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(env!("CARGO_BIN_EXE_lab-firewall-check"))
        .args(["probe", "198.18.44.2:5201"])
        .output()
        .expect("run setpriv");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CAP_NET_RAW"), "{err}");
}

/// Deletes a network namespace when dropped (also when a test panics).
struct Netns(String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// A namespace of its own (`TAG` and the process id) with a veth pair
/// (the dummy driver may be missing), `d0` holding `addr` (a lab address
/// with its prefix) and nobody behind `d1`.
fn veth_netns(tag: &str, addr: &str) -> Netns {
    let ns = Netns(format!("{tag}{}", std::process::id()));
    let ip = |args: &[&str]| {
        let ok = Command::new("ip")
            .args(args)
            .status()
            .expect("run ip")
            .success();
        assert!(ok, "ip {args:?}");
    };
    ip(&["netns", "add", &ns.0]);
    ip(&["-n", &ns.0, "link", "set", "lo", "up"]);
    ip(&[
        "-n", &ns.0, "link", "add", "d0", "type", "veth", "peer", "name", "d1",
    ]);
    ip(&["-n", &ns.0, "addr", "add", addr, "dev", "d0"]);
    ip(&["-n", &ns.0, "link", "set", "d0", "up"]);
    ip(&["-n", &ns.0, "link", "set", "d1", "up"]);
    ns
}

fn nft_tables(ns: &str) -> String {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "list", "tables"])
        .output()
        .expect("nft list tables");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Ctrl-C in the middle of a run: the RST-suppression table that existed
/// during the run is gone, and the status is 130. Nothing is behind the
/// target's link, so nothing answers and the probe is still waiting.
#[test]
#[ignore = "network lab (root): cargo test -p lab -- --ignored"]
fn ctrl_c_removes_the_rst_suppression() {
    if !available() {
        return;
    }
    // Nobody behind the veth pair's other end.
    let ns = veth_netns("fcpint", "198.18.99.2/24");
    let mut child = Command::new("ip")
        .args(["netns", "exec", &ns.0])
        .arg(env!("CARGO_BIN_EXE_lab-firewall-check"))
        .args(["probe", "198.18.99.1:5201", "--timeout-ms", "5000"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the probe");
    // Wait for the table to appear (the run has started).
    let mut seen = false;
    for _ in 0..50 {
        if nft_tables(&ns.0).contains("firewall_check_probe") {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let pid = child.id().to_string();
    let _ = Command::new("kill").args(["-INT", &pid]).status();
    let status = child.wait().expect("wait for the probe");
    assert!(seen, "the RST-suppression table never appeared");
    assert_eq!(status.code(), Some(130), "exit status after Ctrl-C");
    let tables = nft_tables(&ns.0);
    assert!(
        !tables.contains("firewall_check_probe"),
        "table left after Ctrl-C: {tables}"
    );
}

/// The reflector's control connection is not open to whoever reaches it:
/// without the key, or with a wrong one, the first request is refused and
/// the connection closed; with it, hello and the next requests are
/// answered. And `probe --reflector` without a key says how to give one,
/// before it sends anything (status 2). A namespace of its own, a veth
/// pair with a lab address, the client python3 in the same namespace.
#[test]
#[ignore = "network lab (root): cargo test -p lab -- --ignored"]
fn reflector_refuses_controls_without_the_key() {
    if !available() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_lab-firewall-check");
    let out = Command::new(bin)
        .args([
            "probe",
            "198.18.98.1:5201",
            "--reflector",
            "198.18.98.1:7207",
        ])
        .env_remove("FIREWALL_CHECK_REFLECT_KEY")
        .output()
        .expect("run the probe");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--reflector-key"), "{err}");

    let ns = veth_netns("fcpkey", "198.18.98.1/24");
    let log = std::env::temp_dir().join(format!("reflect-key-{}.log", std::process::id()));
    let mut reflect = Command::new("ip")
        .args(["netns", "exec", &ns.0, bin, "reflect"])
        .args([
            "--listen",
            "198.18.98.1:7207",
            "--key",
            "lab-key-0123456789",
        ])
        .stderr(std::fs::File::create(&log).expect("log file"))
        .spawn()
        .expect("start reflect");
    for _ in 0..50 {
        if std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("listening")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let client = r#"
import json, socket
for key in (None, "wrong-key-0123456789", "lab-key-0123456789"):
    s = socket.create_connection(("198.18.98.1", 7207), 3)
    s.settimeout(3)
    f = s.makefile("rw")
    hello = {"op": "hello", "version": 1}
    if key is not None:
        hello["key"] = key
    f.write(json.dumps(hello) + "\n"); f.flush()
    first = f.readline()
    try:
        f.write(json.dumps({"op": "report", "port": 40000}) + "\n"); f.flush()
        second = f.readline()
    except OSError:
        second = ""
    print(json.dumps({"first": first, "second": second}))
    s.close()
"#;
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.0, "python3", "-c", client])
        .output()
        .expect("run the client");
    let _ = reflect.kill();
    let _ = reflect.wait();
    let reflect_log = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert!(
        out.status.success(),
        "client: {}; reflect: {reflect_log}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("client line"))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let reply = |l: &Value, k: &str| -> Value {
        serde_json::from_str(l[k].as_str().unwrap_or("")).unwrap_or(Value::Null)
    };
    for l in &lines[..2] {
        let first = reply(l, "first");
        assert_eq!(first["ok"], false, "{l}");
        assert!(
            first["error"].as_str().unwrap_or("").contains("refused"),
            "{l}"
        );
        // The connection is closed: no answer to the next request.
        assert_eq!(l["second"], "", "{l}");
    }
    assert_eq!(reply(&lines[2], "first")["ok"], true, "{}", lines[2]);
    assert_eq!(reply(&lines[2], "second")["ok"], true, "{}", lines[2]);
    assert!(
        reflect_log.contains("refused a control connection without the key"),
        "{reflect_log}"
    );
}
