//! `compare` across an encapsulation point, against the real kernel: for
//! each case `encap-lab.sh` builds a client, two routers joined by a Linux
//! VXLAN tunnel (VNI 42 over IPv4, MTU 1450, TCPMSS --clamp-mss-to-pmtu on
//! SYNs into the tunnel) and a server, runs a real TCP transfer with ECN
//! (both ends net.ipv4.tcp_ecn=1) and the client's packets marked AF41,
//! and captures it bare on the client's link (`inside.pcap`) and
//! encapsulated on the first router's underlay link (`underlay.pcap`).
//! For every row:
//!
//! - `firewall-check compare --json` in both orders gives the same
//!   findings, connection and status: one connection, matched across the
//!   encapsulation point; the findings (kind, direction) are exactly the
//!   row's; the status is 3 exactly when a sure fault was found
//!   (`tunnel_ce_not_propagated`), 0 for what a tunnel does by standard or
//!   configuration;
//! - what the kernel did, read from the captures with the capture crate,
//!   is what the findings say (the row's checks).
//!
//! What Linux (6.x, drivers/net/vxlan) was seen to do here, and the rows
//! assert: the SYN's MSS 1460 clamped to 1410 (the tunnel's MTU 1450 less
//! 40: 50 bytes of outer IPv4, UDP, VXLAN and Ethernet headers); with `tos
//! inherit` the outer DSCP copied from the inner one, with the default
//! (`tos 0`) outer DSCP 0; the outer ECN field copied from the inner one
//! (ECT(0)) either way, RFC 6040's normal mode (`ip_tunnel_ecn_encap`); at
//! decapsulation a CE (and an ECT(1)) on the outer header carried to an
//! ECT(0) inner header, as RFC 6040 Figure 4 gives (`IP_ECN_decapsulate`).
//!
//! The same for an IPv6 transfer in the IPv4 tunnel (the traffic class
//! copied with `tos inherit`, the MSS 1440 clamped to 1390).
//!
//! Shared rows: they check what the boxes did, not how fast.

use std::collections::BTreeMap;
use std::path::Path;

use capture::{decode_segment, CaptureReader};
use lab::prereq::ENCAP_LAB;
use lab::{CaseRun, Ctx, Req, Share};
use serde_json::Value;

use crate::common::{finding, kinds, set, C2S, S2C};

/// One row: an encap-lab.sh case and what compare must say of it.
pub struct Case {
    /// encap-lab.sh's case.
    case: &'static str,
    /// compare's findings as (kind, direction), exactly.
    findings: &'static [(&'static str, &'static str)],
    /// compare's exit status.
    status: i32,
    /// More checks of the result.
    checks: &'static [fn(&Run)],
    share: Share,
    needs: &'static [Req],
}

const BASE: Case = Case {
    case: "",
    findings: &[],
    status: 0,
    checks: &[mss_clamped_by_the_overhead, outer_ecn_copied],
    share: Share::Shared,
    needs: ENCAP_LAB,
};

/// The findings every row with `tos inherit` has.
const INHERIT: &[(&str, &str)] = &[("tunnel_mss_clamped", C2S), ("tunnel_dscp_copied", C2S)];

lab::rows! {
    lab = crate::LABS;
    run = run_case;
    type = Case;
    /// `tos inherit`: DSCP copied, ECN per RFC 6040's normal mode.
    vxlan_inherit4 => Case {
        case: "vxlan-inherit4",
        findings: INHERIT,
        checks: &[mss_clamped_by_the_overhead, outer_ecn_copied, dscp_copied],
        ..BASE
    },
    /// Linux's default outer DS field: DSCP 0, ECN still copied.
    vxlan_fixed4 => Case {
        case: "vxlan-fixed4",
        findings: &[("tunnel_mss_clamped", C2S), ("tunnel_dscp_not_copied", C2S)],
        checks: &[mss_clamped_by_the_overhead, outer_ecn_copied, dscp_not_copied],
        ..BASE
    },
    /// CE marked on the outer header inside the tunnel reaches the client.
    vxlan_ce4 => Case {
        case: "vxlan-ce4",
        findings: INHERIT,
        checks: &[mss_clamped_by_the_overhead, outer_ecn_copied, ce_carried_in],
        ..BASE
    },
    /// ECT(1) on the outer header over an ECT(0) inner one reaches the client.
    vxlan_ect1_4 => Case {
        case: "vxlan-ect1-4",
        findings: INHERIT,
        checks: &[mss_clamped_by_the_overhead, outer_ecn_copied, ect1_carried_in],
        ..BASE
    },
    /// The outer ECN field cleared after encapsulation: compatibility mode.
    vxlan_bleach4 => Case {
        case: "vxlan-bleach4",
        findings: &[
            ("tunnel_mss_clamped", C2S),
            ("tunnel_dscp_copied", C2S),
            ("tunnel_ecn_not_copied", C2S),
        ],
        checks: &[mss_clamped_by_the_overhead, ecn_not_copied],
        ..BASE
    },
    /// `tos inherit` for an IPv6 transfer: the traffic class copied, the
    /// MSS 1440 clamped to 1390, still by the 50-byte overhead.
    vxlan_inherit6 => Case {
        case: "vxlan-inherit6",
        findings: INHERIT,
        checks: &[mss6_clamped_by_the_overhead, outer_ecn_copied, dscp_copied],
        ..BASE
    },
    /// The decapsulated CE set back to ECT(0): the congestion mark lost.
    vxlan_ce_lost4 => Case {
        case: "vxlan-ce-lost4",
        findings: &[
            ("tunnel_mss_clamped", C2S),
            ("tunnel_dscp_copied", C2S),
            ("tunnel_ce_not_propagated", S2C),
        ],
        status: 3,
        checks: &[mss_clamped_by_the_overhead, outer_ecn_copied, ce_lost],
        ..BASE
    },
}

impl Case {
    /// encap-lab.sh's case.
    pub fn case(&self) -> &'static str {
        self.case
    }
}

/// One row's result.
pub struct Run {
    lab: CaseRun,
    compare: Value,
}

fn run_case(ctx: &Ctx, c: &Case) {
    let lab = ctx.encap_lab(c.case, &[]);
    let (inside, underlay) = (lab.inside(), lab.capture("underlay"));
    let (ab, code) = lab.tools().compare(&inside, &underlay);
    let (ba, code_ba) = lab.tools().compare(&underlay, &inside);
    let what = c.case;
    assert_eq!(ab["schema_version"], 2);
    assert_eq!(ab["findings"], ba["findings"], "order matters in {what}");
    assert_eq!(code, code_ba, "{what}");
    let conns = ab["connections"].as_array().expect("connections");
    assert_eq!(conns.len(), 1, "{what}: {ab}");
    // Matched across the encapsulation point: the client's side bare, the
    // server's side in VXLAN VNI 42.
    let conn = &conns[0];
    assert!(
        conn["client_side"].get("tunnels").is_none(),
        "{what}: {conn}"
    );
    for dir in [C2S, S2C] {
        let layer = &conn["server_side"]["tunnels"][dir][0];
        assert_eq!(layer["kind"], "vxlan", "{what}: {conn}");
        assert_eq!(layer["vni"], 42, "{what}: {conn}");
    }
    assert_eq!(kinds(&ab), set(c.findings), "{what}: {}", ab["findings"]);
    assert_eq!(code, c.status, "{what}: {}", ab["findings"]);
    // Notes: none but the routers' TTL decrement, which is not one.
    assert_eq!(ab["notes"], serde_json::json!([]), "{what}");
    let run = Run { lab, compare: ab };
    for check in c.checks {
        check(&run);
    }
}

/// Server-to-client packets of one capture by (outer ECN, inner ECN), the
/// outer `None` on a plain link.
fn ecn_counts(path: &Path, from_server: bool) -> BTreeMap<(Option<u8>, u8), u64> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = CaptureReader::new(file).expect("a capture");
    let mut out = BTreeMap::new();
    while let Some(rec) = r.next_record().expect("readable capture") {
        let Ok(seg) = decode_segment(rec.linktype, rec.data, rec.origlen) else {
            continue;
        };
        let server = u16::from_be_bytes([seg.tcp[0], seg.tcp[1]]) == 5201;
        if server != from_server {
            continue;
        }
        let inner_at = seg.tcp_offset - seg.ip.header_len;
        let outer = seg.tunnels.outer_ip(inner_at).map(|o| o.tos & 3);
        *out.entry((outer, seg.ip.tos & 3)).or_insert(0) += 1;
    }
    out
}

/// The SYN's MSS 1460 became 1410 in the tunnel: exactly VXLAN's 50 bytes.
fn mss_clamped_by_the_overhead(run: &Run) {
    let f = finding(&run.compare, "tunnel_mss_clamped", C2S);
    assert_eq!(f["before"]["mss_bytes"], 1460, "{f}");
    assert_eq!(f["after"]["mss_bytes"], 1410, "{f}");
    assert_eq!(f["confidence"], "high", "{f}");
    let t = &f["tunnel"];
    assert_eq!(t["action"], "encapsulation", "{f}");
    assert_eq!(t["encapsulation"], "vxlan", "{f}");
    assert_eq!(t["overhead_bytes"], 50, "{f}");
    assert_eq!(t["mss_matches_overhead"], true, "{f}");
}

/// The IPv6 SYN's MSS 1440 became 1390 in the tunnel (MTU 1450 less 60).
fn mss6_clamped_by_the_overhead(run: &Run) {
    let f = finding(&run.compare, "tunnel_mss_clamped", C2S);
    assert_eq!(f["before"]["mss_bytes"], 1440, "{f}");
    assert_eq!(f["after"]["mss_bytes"], 1390, "{f}");
    assert_eq!(f["tunnel"]["overhead_bytes"], 50, "{f}");
    assert_eq!(f["tunnel"]["mss_matches_overhead"], true, "{f}");
}

/// Every ECN-capable client packet's outer header carries its ECN field
/// (RFC 6040 normal mode): ECT(0) over ECT(0), no Not-ECT over ECT.
fn outer_ecn_copied(run: &Run) {
    let counts = ecn_counts(&run.lab.capture("underlay"), false);
    lab::note!("client -> server (outer, inner) ECN: {counts:?}");
    assert!(
        counts.get(&(Some(2), 2)).copied().unwrap_or(0) > 50,
        "{counts:?}"
    );
    assert!(
        counts.keys().all(|&(o, i)| o == Some(i)),
        "an outer ECN field not copied: {counts:?}"
    );
}

/// AF41 in and out.
fn dscp_copied(run: &Run) {
    let f = finding(&run.compare, "tunnel_dscp_copied", C2S);
    assert_eq!(f["before"]["dscp"], 34, "{f}");
    assert_eq!(f["after"]["dscp"], 34, "{f}");
    // One inner DSCP: a fixed outer AF41 would look the same.
    assert_eq!(f["confidence"], "medium", "{f}");
}

/// AF41 inside, 0 outside.
fn dscp_not_copied(run: &Run) {
    let f = finding(&run.compare, "tunnel_dscp_not_copied", C2S);
    assert_eq!(f["before"]["dscp"], 34, "{f}");
    assert_eq!(f["after"]["dscp"], 0, "{f}");
    assert_eq!(f["confidence"], "medium", "{f}");
}

/// The server's data came through the underlay CE over ECT(0), and the
/// client received it CE: the kernel carried the mark in.
fn ce_carried_in(run: &Run) {
    let under = ecn_counts(&run.lab.capture("underlay"), true);
    let inside = ecn_counts(&run.lab.inside(), true);
    lab::note!("server -> client ECN: underlay {under:?}, client {inside:?}");
    let marked = under.get(&(Some(3), 2)).copied().unwrap_or(0);
    assert!(marked > 50, "{under:?}");
    assert_eq!(
        inside.get(&(None, 3)).copied().unwrap_or(0),
        marked,
        "{inside:?}"
    );
}

/// ECT(1) over ECT(0) in the underlay, ECT(1) at the client.
fn ect1_carried_in(run: &Run) {
    let under = ecn_counts(&run.lab.capture("underlay"), true);
    let inside = ecn_counts(&run.lab.inside(), true);
    lab::note!("server -> client ECN: underlay {under:?}, client {inside:?}");
    let marked = under.get(&(Some(1), 2)).copied().unwrap_or(0);
    assert!(marked > 50, "{under:?}");
    assert_eq!(
        inside.get(&(None, 1)).copied().unwrap_or(0),
        marked,
        "{inside:?}"
    );
}

/// The client's ECT(0) under an outer Not-ECT.
fn ecn_not_copied(run: &Run) {
    let f = finding(&run.compare, "tunnel_ecn_not_copied", C2S);
    assert_eq!(f["before"]["ecn"], 2, "{f}");
    assert_eq!(f["after"]["ecn"], 0, "{f}");
    assert_eq!(f["tunnel"]["rfc6040"]["ecn"], 2, "{f}");
    assert_eq!(f["confidence"], "medium", "{f}");
    let counts = ecn_counts(&run.lab.capture("underlay"), false);
    assert_eq!(
        f["count"],
        counts.get(&(Some(0), 2)).copied().unwrap_or(0),
        "{counts:?}"
    );
}

/// Outer CE over ECT(0), ECT(0) at the client: every such packet.
fn ce_lost(run: &Run) {
    let f = finding(&run.compare, "tunnel_ce_not_propagated", S2C);
    assert_eq!(f["confidence"], "high", "{f}");
    let t = &f["tunnel"];
    assert_eq!(t["action"], "decapsulation", "{f}");
    assert_eq!(t["outer_ecn"]["ecn"], 3, "{f}");
    assert_eq!(t["rfc6040"]["ecn"], 3, "{f}");
    assert_eq!(f["before"]["ecn"], 2, "{f}");
    assert_eq!(f["after"]["ecn"], 2, "{f}");
    let under = ecn_counts(&run.lab.capture("underlay"), true);
    assert_eq!(
        f["count"],
        under.get(&(Some(3), 2)).copied().unwrap_or(0),
        "{under:?}"
    );
}
