//! The probe's report, and every word and JSON value the probe writes:
//! JSON (`schema_version` 1, documented in docs/json.md, schema
//! docs/json-schema/probe.json), text for people ([`text`]), each test's
//! detail in words ([`detail`]), what a change costs ([`mod@impact`]) and the
//! progress lines on standard error ([`progress`]).
//!
//! Everything before this module is typed (directions, kinds, values,
//! outcomes, details); here it becomes text.

pub mod detail;
pub mod impact;
pub mod progress;
pub mod text;

pub use impact::{drop_impact_at, impact, ImpactNote};

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;
use serde_json::{json, Value};

use super::diff::{FieldValue, NatEnds};
use super::evaluate::{Detail, Outcome};
use super::tests::out_of_window::{OowEvidence, ShiftSource};
use crate::conn::Direction;
use crate::finding::Kind;

/// What it costs: the same value `compare` reports.
pub use crate::analysis::compare::impact::Impact;

/// A hop: TTL from the prober, and the address that answered there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HopRef {
    /// Hops from the prober (1 = the first router).
    pub ttl: u8,
    /// The router's (or target's) address.
    pub address: IpAddr,
}

/// A located hop as reported.
pub fn hop_ref(h: Option<(u8, IpAddr)>) -> Option<HopRef> {
    h.map(|(ttl, address)| HopRef { ttl, address })
}

/// A finding's `before` or `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A field's value.
    Field(FieldValue),
    /// A dropped probe's description (the test's).
    Test(&'static str),
    /// Dropped.
    Dropped,
    /// The out-of-window byte.
    OutOfWindow(OowEvidence),
    /// The target's distance.
    TargetTtl(u8),
    /// Where a SYN-ACK came from.
    AnsweredFrom {
        /// Its TTL as received.
        synack_ttl: u8,
        /// The hop that sent it.
        answered_from_ttl: u8,
    },
    /// Not known (`null`).
    Unknown,
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The kind (`wscale_stripped`, `probe_dropped`, ...).
    pub kind: Kind,
    /// The option kind, for option findings.
    pub option_kind: Option<u8>,
    /// Which way.
    pub direction: Direction,
    /// The first hop that showed the change (`None`: not located).
    pub hop: Option<HopRef>,
    /// The last hop before it that showed the field unchanged.
    pub after_hop: Option<HopRef>,
    /// The value as sent.
    pub before: Shown,
    /// The value as seen.
    pub after: Shown,
    /// What it costs.
    pub impact: Impact,
    /// The test that found it first.
    pub test: &'static str,
}

/// One test's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct TestResult {
    /// The test's name.
    pub name: &'static str,
    /// Which way.
    pub direction: Direction,
    /// The result.
    pub result: Outcome,
    /// What was seen.
    pub detail: Vec<Detail>,
}

/// One DSCP value of a DSCP map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// How the run went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportNote {
    /// The kernel's RSTs suppressed by this nftables table.
    RstSuppressed(String),
    /// Reverse hops count from the server.
    ReverseHops,
    /// The target is beyond `--max-ttl` (the value).
    Beyond(u8),
    /// Nothing listens on the target's port (the value).
    PortClosed(u16),
}

/// The whole report.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The target.
    pub target: SocketAddr,
    /// The routers that quoted the path walk, by TTL, and the target last.
    pub path: Vec<HopRef>,
    /// The findings.
    pub findings: Vec<Finding>,
    /// Every test run.
    pub tests: Vec<TestResult>,
    /// The measured SYN to SYN-ACK time.
    pub rtt: Option<Duration>,
    /// How the run went.
    pub notes: Vec<ReportNote>,
    /// `dscp_all`: every value sent and what became of it.
    pub dscp_map: Vec<DscpMapEntry>,
    /// `reverse_dscp_all`: the same from the server (hops count from it).
    pub reverse_dscp_map: Vec<DscpMapEntry>,
}

impl Report {
    /// An empty report for `target`.
    pub fn new(target: SocketAddr, rtt: Option<Duration>) -> Report {
        Report {
            target,
            path: Vec::new(),
            findings: Vec::new(),
            tests: Vec::new(),
            rtt,
            notes: Vec::new(),
            dscp_map: Vec::new(),
            reverse_dscp_map: Vec::new(),
        }
    }

    /// The JSON document, pretty, with a final newline.
    pub fn json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self).map(|s| s + "\n")
    }
}

/// The AE, CWR and ECE flags in words: `AE+CWR+ECE`, `none`.
pub fn ecn_flag_names(f: tcp_options::Flags) -> String {
    use tcp_options::Flags;
    let names: Vec<&str> = [(Flags::AE, "AE"), (Flags::CWR, "CWR"), (Flags::ECE, "ECE")]
        .iter()
        .filter(|(b, _)| f.contains(*b))
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join("+")
    }
}

/// A translation's ends in `compare`'s JSON shape.
fn ends_json(e: &NatEnds) -> Value {
    crate::finding::nat_ends(e.src, e.dst)
}

/// A field's value as JSON: MSS and window scale as numbers, SACK-permitted
/// `"present"`, a missing option `"absent"`, Timestamps `{tsval, tsecr}`,
/// other options as hex, DSCP `{value, name}`, ECN `"ECT(0)"`, the ECN
/// flags `"CWR+ECE"`, a translation's ends.
pub fn field_json(v: &FieldValue) -> Value {
    match v {
        FieldValue::Number(n) => json!(n),
        FieldValue::Present => json!("present"),
        FieldValue::Absent => json!("absent"),
        FieldValue::Timestamps { tsval, tsecr } => json!({"tsval": tsval, "tsecr": tsecr}),
        FieldValue::Bytes(b) => json!(b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
        FieldValue::Dscp(d) => json!({"value": d.value(), "name": d.to_string()}),
        FieldValue::Ecn(e) => json!(e.name()),
        FieldValue::EcnFlags(f) => json!(ecn_flag_names(*f)),
        FieldValue::Ends(e) => ends_json(e),
    }
}

impl fmt::Display for ShiftSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShiftSource::Reflector => "reflector",
            ShiftSource::SynAck => "syn-ack",
            ShiftSource::Inferred => "inferred",
            ShiftSource::Prober => "prober",
        })
    }
}

/// A finding's `before` or `after` as JSON.
pub fn shown_json(v: &Shown) -> Value {
    match v {
        Shown::Field(f) => field_json(f),
        Shown::Test(what) => json!(what),
        Shown::Dropped => json!("dropped"),
        Shown::OutOfWindow(o) => json!({
            "bytes_past_ack": o.offset,
            "unscaled_edge": o.unscaled_edge,
            "scaled_edge": o.scaled_edge,
            "window_field": o.ack_window,
            "shift": o.shift,
            "shift_from": o.shift_source.to_string(),
        }),
        Shown::TargetTtl(l) => json!({"target_ttl": l}),
        Shown::AnsweredFrom {
            synack_ttl,
            answered_from_ttl,
        } => json!({"synack_ttl": synack_ttl, "answered_from_ttl": answered_from_ttl}),
        Shown::Unknown => Value::Null,
    }
}

impl Outcome {
    /// The name in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Unchanged => "unchanged",
            Outcome::Modified => "modified",
            Outcome::Dropped => "dropped",
            Outcome::Unknown => "unknown",
        }
    }
}

impl Serialize for Finding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = if self.option_kind.is_some() { 9 } else { 8 };
        let mut st = s.serialize_struct("Finding", n)?;
        st.serialize_field("kind", &self.kind)?;
        if let Some(k) = self.option_kind {
            st.serialize_field("option_kind", &k)?;
        }
        st.serialize_field("direction", self.direction.as_str())?;
        st.serialize_field("hop", &self.hop)?;
        st.serialize_field("after_hop", &self.after_hop)?;
        st.serialize_field("before", &shown_json(&self.before))?;
        st.serialize_field("after", &shown_json(&self.after))?;
        st.serialize_field("impact", &self.impact)?;
        st.serialize_field("test", self.test)?;
        st.end()
    }
}

impl Serialize for TestResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("TestResult", 4)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("direction", self.direction.as_str())?;
        st.serialize_field("result", self.result.as_str())?;
        st.serialize_field("detail", &detail::joined(&self.detail))?;
        st.end()
    }
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Report", 9)?;
        st.serialize_field("schema_version", &1)?;
        st.serialize_field("target", &self.target.to_string())?;
        st.serialize_field("path", &self.path)?;
        st.serialize_field("findings", &self.findings)?;
        st.serialize_field("tests", &self.tests)?;
        st.serialize_field("rtt_s", &self.rtt.map(|d| d.as_secs_f64()))?;
        let notes: Vec<String> = self.notes.iter().map(ToString::to_string).collect();
        st.serialize_field("notes", &notes)?;
        if !self.dscp_map.is_empty() {
            st.serialize_field("dscp_map", &self.dscp_map)?;
        }
        if !self.reverse_dscp_map.is_empty() {
            st.serialize_field("reverse_dscp_map", &self.reverse_dscp_map)?;
        }
        st.end()
    }
}
