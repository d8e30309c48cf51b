//! Scenario files: the TOML format, its validation, and errors that name the line and
//! the field.
//!
//! ```toml
//! name = "transpac"
//! description = "What the scenario shows."
//! duration_s = 60                    # whole seconds, 1..=3600
//!
//! [link]
//! name = "OC-3 ATM"
//! type = "oc3-atm"                   # a link of bdp::LINKS (rates and framing), or:
//! # rate = "10Gbit/s"                # a line rate, and
//! # framing = "ethernet"             # raw | ethernet | atm (AAL5 LLC/SNAP cells at the rate)
//!
//! [vc]                               # optional virtual circuit
//! kind = "shaped"                    # shaped | policed
//! rate = "10Mbit/s"                  # counted in cells on the wire for ATM
//! burst_bytes = 3180                 # policed only: token bucket depth
//!
//! [classifier]
//! by = "precedence"                  # precedence | dscp
//! map = "juniper-qbss"               # the built-in map, or:
//! # queues = [0, 1, 0, 2, 0, 0, 3, 3]   # one queue per precedence (8) or DSCP (64)
//!
//! [scheduler]
//! fairness = "bytes"                 # bytes (DRR, quantum = weight x mtu) | packets
//! mtu = 1500
//! saturation = "when-saturated"      # when-saturated | work-conserving | forced
//! threshold_packets = 64             # when-saturated: WRR at or above this backlog
//! # Candidate mechanisms of the queue-0 anomaly (docs/qbss-queue0.md), off by default:
//! # saturation_queue = 0             # when-saturated judged on this queue's backlog only
//! # queue0_outside_wrr = true        # queue 0 alternates with the WRR of the others
//! # ingress_fifo_packets = 512       # a class-blind FIFO ahead of the scheduler
//! queue = [
//!   { name = "best-effort", weight = 98, limit_packets = 256 },
//!   { name = "qbss", weight = 1, limit_packets = 256 },
//!   { name = "premium", weight = 0 },
//!   { name = "network-control", weight = 1 },
//! ]
//!
//! [[stream]]
//! name = "qbss"
//! kind = "udp"                       # udp (constant bit rate) | tcp
//! rate = "200Mbit/s"                 # udp only
//! packet_bytes = 1500                # IP packet length
//! precedence = 1                     # or dscp = "cs1", or tos = 0x20 (one of them)
//! start_s = 0.0
//! stop_s = 60.0                      # default 30
//! # tcp only: rtt_ms = 150.0, window_packets = 8192, access_rate = "1Gbit/s",
//! #           cc = "cubic"            # cubic (default, as Linux) | reno
//! ```

use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::classify::{Classifier, ClassifierKind};
use super::link::{Link, RAW};
use super::sched::{QueueSpec, SaturationSpec, SchedulerSpec, MAX_QUEUES, QUEUE_CAPACITY};
use super::time::{secs_to_ns, Nanos, NS_PER_S};
use super::vc::VcKind;

/// Longest scenario, in seconds.
pub const MAX_DURATION_S: u32 = 3600;
/// Most streams in a scenario.
pub const MAX_STREAMS: usize = 64;
/// Most packets all sources together may offer in a run (keeps every run bounded).
pub const MAX_OFFERED_PACKETS: f64 = 4e9;
/// Largest TCP receive window in packets.
pub const MAX_WINDOW_PACKETS: u32 = 1 << 20;
/// Stop time of a stream that gives none, in seconds.
pub const DEFAULT_STOP_S: f64 = 30.0;

/// A scenario file that could not be used: where, which field, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {field}: {message}")]
pub struct ScenarioError {
    /// 1-based line of the problem.
    pub line: usize,
    /// The field, as a path: `stream[2].rate` (array entries counted from 1),
    /// `scheduler.queue[1].weight`, or the table (`link`) when a field is missing.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// A validated scenario, ready to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Short name (`transpac`).
    pub name: String,
    /// What the scenario shows.
    pub description: String,
    /// Simulated time in whole seconds.
    pub duration_s: u32,
    /// The output link.
    pub link: Link,
    /// The virtual circuit, if any.
    pub vc: Option<Vc>,
    /// DS field to output queue.
    pub classifier: Classifier,
    /// The WRR profile.
    pub scheduler: SchedulerSpec,
    /// The traffic.
    pub streams: Vec<Stream>,
}

/// A virtual circuit on the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vc {
    /// Policed or shaped.
    pub kind: VcKind,
    /// Rate in bit/s, on the link's wire (cells for ATM).
    pub rate_bps: u64,
    /// Token bucket depth in bytes (policed).
    pub burst_bytes: u64,
}

/// What kind of source a stream is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// Constant-bit-rate UDP at `rate_bps`.
    Udp {
        /// Rate in bit/s (IP packets).
        rate_bps: u64,
    },
    /// A bulk TCP transfer.
    Tcp {
        /// Base round-trip time (propagation, without queueing).
        rtt_ns: Nanos,
        /// Receive window in packets.
        window_packets: u32,
        /// Rate of the sender's access link in bit/s (paces its bursts).
        access_bps: u64,
        /// Congestion control.
        cc: super::tcp::Cc,
    },
}

/// One traffic stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    /// Name (`qbss`, `be`, `premium`).
    pub name: String,
    /// UDP or TCP.
    pub kind: StreamKind,
    /// IP packet length in bytes.
    pub packet_bytes: u32,
    /// DS field (TOS byte) of every packet.
    pub ds: u8,
    /// First packet time.
    pub start_ns: Nanos,
    /// No packet at or after this time.
    pub stop_ns: Nanos,
}

// ---------------------------------------------------------------------------
// The raw TOML shape.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    duration_s: Spanned<i64>,
    link: RawLink,
    vc: Option<RawVc>,
    classifier: Option<RawClassifier>,
    scheduler: RawScheduler,
    #[serde(default)]
    stream: Vec<RawStream>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    name: Option<String>,
    #[serde(rename = "type")]
    kind: Option<Spanned<String>>,
    rate: Option<Spanned<String>>,
    framing: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVc {
    kind: Spanned<String>,
    rate: Spanned<String>,
    burst_bytes: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClassifier {
    by: Option<Spanned<String>>,
    map: Option<Spanned<String>>,
    queues: Option<Spanned<Vec<Spanned<i64>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScheduler {
    fairness: Option<Spanned<String>>,
    mtu: Option<Spanned<i64>>,
    saturation: Option<Spanned<String>>,
    threshold_packets: Option<Spanned<i64>>,
    threshold_bytes: Option<Spanned<i64>>,
    saturation_queue: Option<Spanned<i64>>,
    queue0_outside_wrr: Option<bool>,
    ingress_fifo_packets: Option<Spanned<i64>>,
    queue: Spanned<Vec<RawQueue>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQueue {
    name: Option<String>,
    class: Option<Spanned<String>>,
    weight: Option<Spanned<i64>>,
    limit_packets: Option<Spanned<i64>>,
    limit_bytes: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum IntOrName {
    Int(i64),
    Name(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStream {
    name: Spanned<String>,
    kind: Option<Spanned<String>>,
    rate: Option<Spanned<String>>,
    packet_bytes: Option<Spanned<i64>>,
    dscp: Option<Spanned<IntOrName>>,
    precedence: Option<Spanned<IntOrName>>,
    tos: Option<Spanned<i64>>,
    start_s: Option<Spanned<f64>>,
    stop_s: Option<Spanned<f64>>,
    rtt_ms: Option<Spanned<f64>>,
    window_packets: Option<Spanned<i64>>,
    access_rate: Option<Spanned<String>>,
    cc: Option<Spanned<String>>,
}

// ---------------------------------------------------------------------------
// Locating errors.

/// 1-based line of byte `offset` in `src`.
fn line_of(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    1 + src.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The field path of a deserialization error, as this module names fields: tables
/// and keys joined by dots, array entries counted from 1 (`stream[2].rate`).
fn field_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => {
                let _ = fmt::Write::write_fmt(&mut out, format_args!("[{}]", index + 1));
            }
            // `toml::Spanned` wraps a value in a private one-field table: not a field.
            Segment::Map { key } | Segment::Enum { variant: key } if key.starts_with("$__") => {}
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

struct Ctx<'a> {
    src: &'a str,
}

impl Ctx<'_> {
    fn err(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl fmt::Display,
    ) -> ScenarioError {
        ScenarioError {
            line: line_of(self.src, span.start),
            field: field.into(),
            message: message.to_string(),
        }
    }

    fn int(&self, v: &Spanned<i64>, field: &str, lo: i64, hi: i64) -> Result<i64, ScenarioError> {
        let x = *v.get_ref();
        if x < lo || x > hi {
            return Err(self.err(v.span(), field, format!("{x} is outside {lo}..={hi}")));
        }
        Ok(x)
    }

    fn rate(&self, v: &Spanned<String>, field: &str) -> Result<u64, ScenarioError> {
        // `bdp` reads a bare number as bit/s; in a scenario that is almost always a
        // forgotten unit ("200" meant 200 Mbit/s), so the unit is required.
        let text = v.get_ref().trim();
        if text.ends_with(|c: char| c.is_ascii_digit() || c == '.') {
            return Err(self.err(
                v.span(),
                field,
                format_args!("{text:?} has no unit: write it with one, as \"{text}Mbit/s\""),
            ));
        }
        let r: bdp::BitsPerSecond = v
            .get_ref()
            .parse()
            .map_err(|e| self.err(v.span(), field, format_args!("{:?}: {e}", v.get_ref())))?;
        if r.get() == 0 || r.get() > 10_000_000_000_000 {
            return Err(self.err(
                v.span(),
                field,
                "a rate must be above 0 and at most 10 Tbit/s",
            ));
        }
        Ok(r.get())
    }

    fn secs(&self, v: &Spanned<f64>, field: &str, max_s: u32) -> Result<Nanos, ScenarioError> {
        let s = *v.get_ref();
        match secs_to_ns(s) {
            Some(ns) if ns <= u64::from(max_s) * NS_PER_S => Ok(ns),
            _ => Err(self.err(
                v.span(),
                field,
                format!("{s} is not a time between 0 and {max_s} s"),
            )),
        }
    }
}

impl Scenario {
    /// Parses and validates a scenario from TOML text.
    pub fn from_toml(src: &str) -> Result<Scenario, ScenarioError> {
        // The deserializer's own span locates the line; serde_path_to_error names the
        // field (the path it had reached when the error happened).
        let de = toml::Deserializer::new(src);
        let raw: RawScenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = field_path(e.path());
            let inner = e.into_inner();
            let span = inner.span().unwrap_or(0..0);
            ScenarioError {
                line: line_of(src, span.start),
                field,
                message: match inner.message().trim() {
                    // The TOML parser gives some syntax errors (a lone
                    // carriage return, say) no text of their own.
                    "" => "invalid TOML syntax".to_string(),
                    m => m.to_string(),
                },
            }
        })?;
        let cx = Ctx { src };
        validate(&cx, raw)
    }

    /// The scenario with every rate divided by `factor`: the link's line and payload
    /// rates, the VC's rate, UDP rates and TCP access rates. Sizes, times, windows and
    /// queue limits stay, so a scaled run is the same story at a slower pace (a TCP
    /// stream's bandwidth-delay product in packets shrinks by `factor`). Refused when
    /// `factor` is not a finite number of at least 1 or a rate would fall below 1 kbit/s.
    pub fn scaled(&self, factor: f64) -> Result<Scenario, String> {
        if !(factor.is_finite() && factor >= 1.0) {
            return Err(format!("scale {factor}: give a number of at least 1"));
        }
        let div = |bps: u64, what: &str| -> Result<u64, String> {
            let r = (bps as f64 / factor).round() as u64;
            if r < 1000 {
                Err(format!("scale {factor} leaves {what} below 1 kbit/s"))
            } else {
                Ok(r)
            }
        };
        let mut sc = self.clone();
        sc.link.line_bps = div(sc.link.line_bps, "the link rate")?;
        sc.link.payload_bps = div(sc.link.payload_bps, "the link rate")?;
        if let Some(vc) = &mut sc.vc {
            vc.rate_bps = div(vc.rate_bps, "the VC rate")?;
        }
        for s in &mut sc.streams {
            match &mut s.kind {
                StreamKind::Udp { rate_bps } => *rate_bps = div(*rate_bps, &s.name)?,
                StreamKind::Tcp { access_bps, .. } => *access_bps = div(*access_bps, &s.name)?,
            }
        }
        Ok(sc)
    }

    /// Duration in nanoseconds.
    pub fn duration_ns(&self) -> Nanos {
        u64::from(self.duration_s) * NS_PER_S
    }

    /// Packet length the link goodput is quoted for: the largest stream packet
    /// (1500 bytes when there is no stream).
    pub fn reference_packet_bytes(&self) -> u32 {
        self.streams
            .iter()
            .map(|s| s.packet_bytes)
            .max()
            .unwrap_or(1500)
    }
}

fn one_of<'a>(
    cx: &Ctx,
    v: &Spanned<String>,
    field: &str,
    options: &[&'a str],
) -> Result<&'a str, ScenarioError> {
    options
        .iter()
        .find(|o| **o == v.get_ref().as_str())
        .copied()
        .ok_or_else(|| {
            cx.err(
                v.span(),
                field,
                format_args!("{:?} is not one of {}", v.get_ref(), options.join(", ")),
            )
        })
}

fn validate(cx: &Ctx, raw: RawScenario) -> Result<Scenario, ScenarioError> {
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() || name.len() > 64 {
        return Err(cx.err(raw.name.span(), "name", "must be 1 to 64 characters"));
    }
    let duration_s = cx.int(&raw.duration_s, "duration_s", 1, i64::from(MAX_DURATION_S))? as u32;

    // Link.
    let link = match (&raw.link.kind, &raw.link.rate) {
        (Some(k), None) => {
            if let Some(f) = &raw.link.framing {
                return Err(cx.err(f.span(), "link.framing", "a link type has its own framing"));
            }
            Link::by_name(k.get_ref(), raw.link.name.clone()).ok_or_else(|| {
                let names: Vec<&str> = bdp::LINKS.iter().map(|l| l.name).collect();
                cx.err(
                    k.span(),
                    "link.type",
                    format_args!("{:?} is not one of {}", k.get_ref(), names.join(", ")),
                )
            })?
        }
        (None, Some(rate)) => {
            let framing = match &raw.link.framing {
                None => RAW,
                Some(f) => match one_of(cx, f, "link.framing", &["raw", "ethernet", "atm"])? {
                    "ethernet" => bdp::Framing::Ethernet { vlan_tags: 0 },
                    "atm" => bdp::Framing::Aal5 {
                        encapsulation: bdp::AtmEncapsulation::LlcSnap,
                    },
                    _ => RAW,
                },
            };
            let line_bps = cx.rate(rate, "link.rate")?;
            Link {
                name: raw
                    .link
                    .name
                    .clone()
                    .unwrap_or_else(|| rate.get_ref().clone()),
                line_bps,
                payload_bps: line_bps,
                framing,
            }
        }
        (Some(k), Some(_)) => {
            return Err(cx.err(k.span(), "link.type", "give type or rate, not both"))
        }
        (None, None) => {
            return Err(ScenarioError {
                line: line_of(cx.src, cx.src.find("[link]").unwrap_or(0)),
                field: "link".into(),
                message: "give the link's type (oc3-atm, ethernet-10g, ...) or its rate".into(),
            })
        }
    };
    let framing = link.framing;

    // VC.
    let vc = match &raw.vc {
        None => None,
        Some(v) => {
            let kind = match one_of(cx, &v.kind, "vc.kind", &["policed", "shaped"])? {
                "policed" => VcKind::Policed,
                _ => VcKind::Shaped,
            };
            let rate_bps = cx.rate(&v.rate, "vc.rate")?;
            if rate_bps > link.payload_bps() {
                return Err(cx.err(
                    v.rate.span(),
                    "vc.rate",
                    "a VC cannot be faster than the link's payload rate",
                ));
            }
            let burst_bytes = match &v.burst_bytes {
                Some(b) => cx.int(b, "vc.burst_bytes", 64, 1 << 30)? as u64,
                None => 2 * super::link::wire_bytes(framing, 1500),
            };
            Some(Vc {
                kind,
                rate_bps,
                burst_bytes,
            })
        }
    };

    // Scheduler.
    let s = &raw.scheduler;
    let mtu = match &s.mtu {
        Some(m) => cx.int(m, "scheduler.mtu", 64, 65535)? as u32,
        None => 1500,
    };
    let packets_fair = match &s.fairness {
        None => false,
        Some(f) => one_of(cx, f, "scheduler.fairness", &["bytes", "packets"])? == "packets",
    };
    let saturation = match s
        .saturation
        .as_ref()
        .map(|x| {
            one_of(
                cx,
                x,
                "scheduler.saturation",
                &["when-saturated", "work-conserving", "forced"],
            )
        })
        .transpose()?
    {
        Some("work-conserving") => SaturationSpec::WorkConserving,
        Some("forced") => SaturationSpec::Forced,
        _ => match (&s.threshold_packets, &s.threshold_bytes) {
            (Some(p), None) => SaturationSpec::WhenSaturatedPackets(cx.int(
                p,
                "scheduler.threshold_packets",
                0,
                1 << 40,
            )? as u64),
            (None, Some(b)) => SaturationSpec::WhenSaturatedBytes(cx.int(
                b,
                "scheduler.threshold_bytes",
                0,
                1 << 50,
            )? as u64),
            (Some(p), Some(_)) => {
                return Err(cx.err(
                    p.span(),
                    "scheduler.threshold_packets",
                    "give threshold_packets or threshold_bytes, not both",
                ))
            }
            (None, None) => {
                let span = s.saturation.as_ref().map_or(s.queue.span(), |x| x.span());
                return Err(cx.err(
                    span,
                    "scheduler.saturation",
                    "when-saturated needs threshold_packets or threshold_bytes",
                ));
            }
        },
    };
    let queues_raw = s.queue.get_ref();
    if queues_raw.is_empty() || queues_raw.len() > MAX_QUEUES {
        return Err(cx.err(
            s.queue.span(),
            "scheduler.queue",
            format!("give 1 to {MAX_QUEUES} queues"),
        ));
    }
    let mut queues = Vec::with_capacity(queues_raw.len());
    for (i, q) in queues_raw.iter().enumerate() {
        let path = format!("scheduler.queue[{}]", i + 1);
        let class = match &q.class {
            None => "weighted",
            Some(c) => one_of(
                cx,
                c,
                &format!("{path}.class"),
                &["weighted", "scavenger", "priority"],
            )?,
        };
        let weight = match (&q.weight, class) {
            (Some(w), _) => cx.int(w, &format!("{path}.weight"), 0, 1 << 20)? as u32,
            (None, "priority") => 0,
            (None, _) => return Err(cx.err(s.queue.span(), path, "missing field `weight`")),
        };
        let limit_packets = match &q.limit_packets {
            Some(l) => cx.int(
                l,
                &format!("{path}.limit_packets"),
                1,
                QUEUE_CAPACITY as i64,
            )? as usize,
            None => QUEUE_CAPACITY,
        };
        let limit_bytes = match &q.limit_bytes {
            Some(l) => cx.int(l, &format!("{path}.limit_bytes"), 1, 1 << 40)? as u64,
            None => u64::MAX,
        };
        queues.push(QueueSpec {
            name: q.name.clone().unwrap_or_else(|| format!("queue {i}")),
            class: match class {
                "scavenger" => super::sched::ClassSpec::Scavenger(weight),
                "priority" => super::sched::ClassSpec::Priority,
                _ => super::sched::ClassSpec::Weighted(weight),
            },
            limit_packets,
            limit_bytes,
        });
    }
    if queues
        .iter()
        .filter(|q| q.class == super::sched::ClassSpec::Priority)
        .count()
        > 1
    {
        return Err(cx.err(
            s.queue.span(),
            "scheduler.queue",
            "at most one priority queue",
        ));
    }
    let saturation_queue = match &s.saturation_queue {
        Some(q) => {
            if !matches!(
                saturation,
                SaturationSpec::WhenSaturatedPackets(_) | SaturationSpec::WhenSaturatedBytes(_)
            ) {
                return Err(cx.err(
                    q.span(),
                    "scheduler.saturation_queue",
                    "only saturation = \"when-saturated\" has a queue to watch",
                ));
            }
            Some(cx.int(q, "scheduler.saturation_queue", 0, queues.len() as i64 - 1)? as usize)
        }
        None => None,
    };
    let ingress_fifo_packets = match &s.ingress_fifo_packets {
        Some(n) => Some(cx.int(n, "scheduler.ingress_fifo_packets", 1, 1 << 20)? as usize),
        None => None,
    };
    let scheduler = SchedulerSpec {
        fairness_mtu: (!packets_fair).then_some(mtu),
        saturation,
        queues,
        hypotheses: super::sched::Hypotheses {
            saturation_queue,
            queue0_outside_wrr: s.queue0_outside_wrr.unwrap_or(false),
            ingress_fifo_packets,
        },
    };

    // Classifier.
    let classifier = match &raw.classifier {
        None => Classifier::juniper_qbss(),
        Some(c) => {
            let kind = match &c.by {
                None => ClassifierKind::Precedence,
                Some(b) => match one_of(cx, b, "classifier.by", &["precedence", "dscp"])? {
                    "dscp" => ClassifierKind::Dscp,
                    _ => ClassifierKind::Precedence,
                },
            };
            match (&c.map, &c.queues) {
                (Some(m), None) => {
                    one_of(cx, m, "classifier.map", &["juniper-qbss"])?;
                    if kind != ClassifierKind::Precedence {
                        return Err(cx.err(
                            m.span(),
                            "classifier.map",
                            "juniper-qbss is a precedence map: use by = \"precedence\"",
                        ));
                    }
                    Classifier::juniper_qbss()
                }
                (None, Some(qs)) => {
                    let want = kind.entries();
                    if qs.get_ref().len() != want {
                        return Err(cx.err(
                            qs.span(),
                            "classifier.queues",
                            format!("give exactly {want} queue numbers, one per {}", kind.name()),
                        ));
                    }
                    let mut table = Vec::with_capacity(want);
                    for (i, q) in qs.get_ref().iter().enumerate() {
                        table.push(cx.int(
                            q,
                            &format!("classifier.queues[{}]", i + 1),
                            0,
                            scheduler.queues.len() as i64 - 1,
                        )? as u8);
                    }
                    Classifier::from_table(kind, &table)
                }
                (Some(m), Some(_)) => {
                    return Err(cx.err(m.span(), "classifier.map", "give map or queues, not both"))
                }
                (None, None) => Classifier::juniper_qbss(),
            }
        }
    };
    if let Some(q) = classifier.max_queue() {
        if usize::from(q) >= scheduler.queues.len() {
            let span = raw.scheduler.queue.span();
            return Err(cx.err(
                span,
                "scheduler.queue",
                format!("the classifier uses queue {q}: define {} queues", q + 1),
            ));
        }
    }

    // Streams.
    if raw.stream.is_empty() || raw.stream.len() > MAX_STREAMS {
        return Err(ScenarioError {
            line: 1,
            field: "stream".into(),
            message: format!("give 1 to {MAX_STREAMS} [[stream]] tables"),
        });
    }
    let mut streams: Vec<Stream> = Vec::with_capacity(raw.stream.len());
    let mut offered = 0.0f64;
    for (i, r) in raw.stream.iter().enumerate() {
        let p = format!("stream[{}]", i + 1);
        let f = |k: &str| format!("{p}.{k}");
        let name = r.name.get_ref().trim().to_string();
        if name.is_empty() || name.len() > 32 || name.contains(|c: char| c.is_control() || c == ',')
        {
            return Err(cx.err(
                r.name.span(),
                f("name"),
                "must be 1 to 32 characters, no commas or control characters",
            ));
        }
        if streams.iter().any(|s| s.name == name) {
            return Err(cx.err(
                r.name.span(),
                f("name"),
                format!("{name:?} is used by another stream"),
            ));
        }
        let packet_bytes = match &r.packet_bytes {
            Some(b) => cx.int(b, &f("packet_bytes"), 20, 65535)? as u32,
            None => 1500,
        };
        if let Some(m) = scheduler.fairness_mtu {
            if packet_bytes > m {
                let span = r.packet_bytes.as_ref().map_or(r.name.span(), |b| b.span());
                return Err(cx.err(
                    span,
                    f("packet_bytes"),
                    format!("{packet_bytes} exceeds the scheduler mtu of {m}"),
                ));
            }
        }
        let marks = [r.dscp.is_some(), r.precedence.is_some(), r.tos.is_some()];
        if marks.iter().filter(|&&m| m).count() > 1 {
            return Err(cx.err(
                r.name.span(),
                p.clone(),
                "mark a stream by one of dscp, precedence or tos",
            ));
        }
        let ds = if let Some(d) = &r.dscp {
            let dscp: dscp::Dscp = match d.get_ref() {
                IntOrName::Int(n) => u8::try_from(*n)
                    .ok()
                    .and_then(|n| dscp::Dscp::new(n).ok())
                    .ok_or_else(|| {
                        cx.err(d.span(), f("dscp"), format!("{n} is not a DSCP (0..=63)"))
                    })?,
                IntOrName::Name(s) => s
                    .parse()
                    .map_err(|e| cx.err(d.span(), f("dscp"), format!("{s:?}: {e}")))?,
            };
            dscp::DsField::new(0).with_dscp(dscp).value()
        } else if let Some(pr) = &r.precedence {
            let prec: dscp::Precedence = match pr.get_ref() {
                IntOrName::Int(n) => u8::try_from(*n)
                    .ok()
                    .and_then(|n| dscp::Precedence::new(n).ok())
                    .ok_or_else(|| {
                        cx.err(
                            pr.span(),
                            f("precedence"),
                            format!("{n} is not a precedence (0..=7)"),
                        )
                    })?,
                IntOrName::Name(s) => s
                    .parse()
                    .map_err(|e| cx.err(pr.span(), f("precedence"), format!("{s:?}: {e}")))?,
            };
            dscp::DsField::new(0)
                .with_dscp(prec.class_selector())
                .value()
        } else if let Some(t) = &r.tos {
            cx.int(t, &f("tos"), 0, 255)? as u8
        } else {
            0
        };
        let start_ns = match &r.start_s {
            Some(s) => cx.secs(s, &f("start_s"), duration_s)?,
            None => 0,
        };
        let stop_ns = match &r.stop_s {
            Some(s) => cx.secs(s, &f("stop_s"), MAX_DURATION_S)?,
            None => secs_to_ns(DEFAULT_STOP_S).unwrap_or(0),
        };
        if stop_ns <= start_ns {
            let span = r.stop_s.as_ref().map_or(r.name.span(), |s| s.span());
            return Err(cx.err(span, f("stop_s"), "the stream must stop after it starts"));
        }
        let kind_name = match &r.kind {
            None => "udp",
            Some(k) => one_of(cx, k, &f("kind"), &["udp", "tcp"])?,
        };
        let active_s = (stop_ns
            .min(u64::from(duration_s) * NS_PER_S)
            .saturating_sub(start_ns)) as f64
            / 1e9;
        let kind = if kind_name == "udp" {
            for (field, present) in [
                ("rtt_ms", r.rtt_ms.is_some()),
                ("window_packets", r.window_packets.is_some()),
                ("access_rate", r.access_rate.is_some()),
                ("cc", r.cc.is_some()),
            ] {
                if present {
                    return Err(cx.err(
                        r.name.span(),
                        f(field),
                        "only a tcp stream takes this field",
                    ));
                }
            }
            let rate = r
                .rate
                .as_ref()
                .ok_or_else(|| cx.err(r.name.span(), f("rate"), "a udp stream needs a rate"))?;
            let rate_bps = cx.rate(rate, &f("rate"))?;
            offered += rate_bps as f64 / (f64::from(packet_bytes) * 8.0) * active_s;
            StreamKind::Udp { rate_bps }
        } else {
            if let Some(rate) = &r.rate {
                return Err(cx.err(
                    rate.span(),
                    f("rate"),
                    "a tcp stream sends as fast as its window allows: use access_rate",
                ));
            }
            let rtt = r
                .rtt_ms
                .as_ref()
                .ok_or_else(|| cx.err(r.name.span(), f("rtt_ms"), "a tcp stream needs rtt_ms"))?;
            let rtt_ms = *rtt.get_ref();
            if !(rtt_ms.is_finite() && (0.001..=10_000.0).contains(&rtt_ms)) {
                return Err(cx.err(
                    rtt.span(),
                    f("rtt_ms"),
                    format!("{rtt_ms} is not between 0.001 and 10000 ms"),
                ));
            }
            let window_packets = match &r.window_packets {
                Some(w) => {
                    cx.int(w, &f("window_packets"), 2, i64::from(MAX_WINDOW_PACKETS))? as u32
                }
                None => 8192,
            };
            let access_bps = match &r.access_rate {
                Some(a) => cx.rate(a, &f("access_rate"))?,
                None => link.line_bps,
            };
            let cc = match &r.cc {
                None => super::tcp::Cc::Cubic,
                Some(c) => match one_of(cx, c, &f("cc"), &["cubic", "reno"])? {
                    "reno" => super::tcp::Cc::Reno,
                    _ => super::tcp::Cc::Cubic,
                },
            };
            offered += access_bps as f64 / (f64::from(packet_bytes) * 8.0) * active_s;
            StreamKind::Tcp {
                rtt_ns: (rtt_ms * 1e6).round() as Nanos,
                window_packets,
                access_bps,
                cc,
            }
        };
        if offered > MAX_OFFERED_PACKETS {
            return Err(cx.err(
                r.name.span(),
                p,
                format!("the scenario would offer more than {MAX_OFFERED_PACKETS:e} packets"),
            ));
        }
        streams.push(Stream {
            name,
            kind,
            packet_bytes,
            ds,
            start_ns,
            stop_ns,
        });
    }
    Ok(Scenario {
        name,
        description: raw.description.trim().to_string(),
        duration_s,
        link,
        vc,
        classifier,
        scheduler,
        streams,
    })
}
