//! The probe's report: JSON (`schema_version` 1, documented in
//! docs/json.md) and text for people, one line per finding.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::diff::{Change, ProbeKind};
use crate::finding::Kind;

/// A hop: TTL from the prober, and the address that answered there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HopRef {
    /// Hops from the prober (1 = the first router).
    pub ttl: u8,
    /// The router's (or target's) address.
    pub address: IpAddr,
}

/// What it costs: the same value `compare` reports.
pub use crate::analysis::compare::impact::Impact;

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The kind (`wscale_stripped`, `probe_dropped`, ...).
    pub kind: ProbeKind,
    /// The option kind, for option findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_kind: Option<u8>,
    /// `client_to_server` or `server_to_client`.
    pub direction: &'static str,
    /// The first hop that showed the change (null: not located).
    pub hop: Option<HopRef>,
    /// The last hop before it that showed the field unchanged.
    pub after_hop: Option<HopRef>,
    /// The value as sent.
    pub before: Value,
    /// The value as seen.
    pub after: Value,
    /// What it costs.
    pub impact: Impact,
    /// The test that found it first.
    pub test: &'static str,
}

/// One test's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestResult {
    /// The test's name.
    pub name: &'static str,
    /// `client_to_server` or `server_to_client`.
    pub direction: &'static str,
    /// `unchanged`, `modified`, `dropped` or `unknown`.
    pub result: &'static str,
    /// What was seen, in words.
    pub detail: String,
}

/// One DSCP value of the `dscp_all` test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DscpMapEntry {
    /// The DSCP sent (0-63).
    pub sent: u8,
    /// The DSCP the last observer saw (null: nobody saw the probe).
    pub seen: Option<u8>,
    /// Where it changed (null: unchanged or not located).
    pub hop: Option<HopRef>,
    /// The last observer before `hop` that saw it unchanged.
    pub after_hop: Option<HopRef>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// 1.
    pub schema_version: u32,
    /// The target as `address:port`.
    pub target: String,
    /// The routers that quoted the probe, by TTL, and the target last.
    pub path: Vec<HopRef>,
    /// The findings.
    pub findings: Vec<Finding>,
    /// Every test run.
    pub tests: Vec<TestResult>,
    /// The measured SYN to SYN-ACK time, s.
    pub rtt_s: Option<f64>,
    /// How the run went (RST suppression, limits).
    pub notes: Vec<String>,
    /// The `dscp_all` test: every value sent and what became of it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dscp_map: Vec<DscpMapEntry>,
    /// The `reverse_dscp_all` test (with the reflector): every value the
    /// reflector's SYN-ACKs carried and what arrived here; hops count from
    /// the server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reverse_dscp_map: Vec<DscpMapEntry>,
}

impl Report {
    /// An empty report for `target`.
    pub fn new(target: SocketAddr, rtt: Option<Duration>) -> Report {
        Report {
            schema_version: 1,
            target: target.to_string(),
            path: Vec::new(),
            findings: Vec::new(),
            tests: Vec::new(),
            rtt_s: rtt.map(|d| d.as_secs_f64()),
            notes: Vec::new(),
            dscp_map: Vec::new(),
            reverse_dscp_map: Vec::new(),
        }
    }

    /// The text report.
    pub fn text(&self) -> String {
        let mut s = format!("probe {}", self.target);
        if let Some(r) = self.rtt_s {
            s += &format!(", RTT {:.3} ms", r * 1e3);
        }
        s += "\npath:";
        for h in &self.path {
            s += &format!(" {}:{}", h.ttl, h.address);
        }
        s += "\n";
        if self.findings.is_empty() {
            s += "no findings: nothing on the path changed the probes\n";
        }
        for f in &self.findings {
            let at = match (&f.hop, &f.after_hop) {
                (Some(h), Some(a)) => format!(
                    "hop {} ({}), after hop {} ({})",
                    h.ttl, h.address, a.ttl, a.address
                ),
                (Some(h), None) => format!("hop {} ({})", h.ttl, h.address),
                (None, Some(a)) => format!("after hop {} ({})", a.ttl, a.address),
                (None, None) => "somewhere on the path".into(),
            };
            let opt = f
                .option_kind
                .map_or(String::new(), |k| format!(" (kind {k})"));
            s += &format!(
                "{at}, {}: {}{opt}: {} -> {}; {}\n",
                f.direction.replace('_', " "),
                f.kind.title(),
                plain(&f.before),
                plain(&f.after),
                f.impact.summary
            );
        }
        s += "tests:\n";
        for t in &self.tests {
            s += &format!("  {:<18} {:<10} {}\n", t.name, t.result, t.detail);
        }
        for n in &self.notes {
            s += &format!("note: {n}\n");
        }
        s
    }
}

/// A finding's `before` or `after` in words, for the text report.
fn plain(v: &Value) -> String {
    if let Some(ends) = crate::finding::nat_ends_text(v) {
        return ends;
    }
    match v {
        Value::Null => "not seen".into(),
        Value::String(s) => s.clone(),
        Value::Object(m) if m.contains_key("name") => {
            format!(
                "{} ({})",
                plain(&m["name"]),
                m.get("value").map_or(String::new(), plain)
            )
        }
        Value::Object(m) if m.contains_key("bytes_past_ack") => format!(
            "one byte {} bytes past the acknowledged point (unscaled window edge {}, scaled edge {}: field {} shift {} from the {})",
            m["bytes_past_ack"],
            m["unscaled_edge"],
            m["scaled_edge"],
            m["window_field"],
            m["shift"],
            plain(&m["shift_from"])
        ),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k} {}", plain(v)))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// `52.4 Mbit/s`.
pub fn rate(bps: u64) -> String {
    let b = bps as f64;
    if b >= 1e12 {
        format!("{:.2} Tbit/s", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.2} Gbit/s", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} Mbit/s", b / 1e6)
    } else {
        format!("{:.0} kbit/s", b / 1e3)
    }
}

fn ceiling(window: u64, rtt: Duration) -> Option<u64> {
    bdp::ceiling(bdp::Bytes::new(window), rtt)
        .ok()
        .map(|r| r.get())
}

/// The cost of a change, with `bdp` where it is a window.
pub fn impact(c: &Change, rtt: Option<Duration>) -> Impact {
    let mut i = Impact {
        summary: String::new(),
        rtt_s: rtt.map(|d| d.as_secs_f64()),
        ceiling_bps_before: None,
        ceiling_bps_after: None,
    };
    let k = c.kind;
    if matches!(
        k,
        Kind::ProbeDropped | Kind::EcnSetupDropped | Kind::OutOfWindowDropped
    ) {
        i.summary = drop_impact(k).summary;
        return i;
    }
    i.summary = match k {
        Kind::WscaleStripped => {
            let shift = c.before.as_u64().unwrap_or(7).min(14) as u8;
            let big = bdp::max_window(shift).map(|b| b.get()).unwrap_or(65_535);
            if let Some(r) = rtt.filter(|r| !r.is_zero()) {
                i.ceiling_bps_before = ceiling(big, r);
                i.ceiling_bps_after = ceiling(65_535, r);
            }
            match (i.ceiling_bps_before, i.ceiling_bps_after) {
                (Some(b), Some(a)) => format!(
                    "window limited to 65,535 bytes: at most {} at this path's RTT instead of {} with shift {shift}",
                    rate(a),
                    rate(b)
                ),
                _ => "window limited to 65,535 bytes (52.4 Mbit/s at 10 ms)".into(),
            }
        }
        Kind::MssClamped | Kind::MssChanged => format!(
            "segments carry at most {} bytes of payload (the sender offered {})",
            plain(&c.after),
            plain(&c.before)
        ),
        Kind::SackpermStripped => "no SACK: one loss per round trip is recovered, slow recovery from bursts".into(),
        Kind::TimestampsStripped => "no timestamps: RTT sampling and PAWS off".into(),
        Kind::DscpChanged => "the packets lose the class they were marked with (queueing, policing, scavenger service)".into(),
        Kind::EcnChanged => "ECN does not work end to end: congestion shows as loss instead of marks".into(),
        Kind::WindowRewritten => "the receiver's advertised window is not what the sender reads".into(),
        Kind::Nat => "addresses or ports translated".into(),
        _ => k.title().into(),
    };
    i
}

/// The cost of a dropped probe, with the unscaled window's ceiling at
/// `rtt` for a dropped out-of-window segment.
pub fn drop_impact_at(k: ProbeKind, rtt: Option<Duration>) -> Impact {
    let mut i = drop_impact(k);
    if k == ProbeKind::OutOfWindowDropped {
        if let Some(r) = rtt.filter(|r| !r.is_zero()) {
            i.rtt_s = Some(r.as_secs_f64());
            i.ceiling_bps_after = ceiling(65_535, r);
            if let Some(c) = i.ceiling_bps_after {
                i.summary = format!(
                    "a sender can never have more than the unscaled window (64 KiB) in flight: at most {} at this path's RTT, whatever the hosts' buffers",
                    rate(c)
                );
            }
        }
    }
    i
}

/// The cost of a dropped probe.
pub fn drop_impact(k: ProbeKind) -> Impact {
    Impact {
        summary: match k {
            ProbeKind::EcnSetupDropped => {
                "connections asking for ECN fail to open until the SYN is retried without it".into()
            }
            ProbeKind::OutOfWindowDropped => {
                "the sender can never use more than the unscaled window: 64 KiB per round trip"
                    .into()
            }
            _ => "connections using this option or mark cannot be opened".into(),
        },
        rtt_s: None,
        ceiling_bps_before: None,
        ceiling_bps_after: None,
    }
}
