//! Scenario files: the TOML format, its validation, and errors that name the line and
//! the field.
//!
//! A file is read in two steps. First its TOML shape (`raw`), every value with its
//! span; a syntax error, an unknown field or a value of the wrong type stops here.
//! Then each table is checked and turned into its model type, one function per
//! table (`validate`: link, VC, scheduler, classifier; `stream`: the streams),
//! through the few checks every field goes through (`check`: ranges, rates,
//! times, and keywords read through tables that map each to what it stands for).
//! The first problem met is the [`ScenarioError`], with its line and field.
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

mod check;
mod raw;
mod stream;
mod validate;

use super::classify::Classifier;
use super::link::Link;
use super::sched::SchedulerSpec;
use super::time::{Nanos, NS_PER_S};
use super::vc::{Policer, VcKind};

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

/// Slowest rate a scaled scenario may have, in bit/s.
pub const MIN_SCALED_BPS: u64 = 1000;

/// Why [`Scenario::scaled`] refused a factor.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScaleError {
    /// Not a finite number of at least 1.
    #[error("scale {factor}: give a number of at least 1")]
    Factor {
        /// The factor given.
        factor: f64,
    },
    /// A rate would fall below [`MIN_SCALED_BPS`].
    #[error("scale {factor} leaves {rate} below 1 kbit/s")]
    TooSlow {
        /// The factor given.
        factor: f64,
        /// The first rate it leaves too slow.
        rate: ScaledRate,
    },
}

/// A rate of a scenario that [`Scenario::scaled`] divides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScaledRate {
    /// The link's line or payload rate.
    Link,
    /// The VC's rate.
    Vc,
    /// The rate (UDP) or access rate (TCP) of the stream of this name.
    Stream(String),
}

impl fmt::Display for ScaledRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScaledRate::Link => f.write_str("the link rate"),
            ScaledRate::Vc => f.write_str("the VC rate"),
            ScaledRate::Stream(name) => f.write_str(name),
        }
    }
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

impl Vc {
    /// The token bucket in front of the classifier when the VC is policed (full
    /// at the start); `None` when it is shaped.
    pub fn policer(&self) -> Option<Policer> {
        (self.kind == VcKind::Policed).then(|| Policer::new(self.rate_bps, self.burst_bytes))
    }
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

impl Scenario {
    /// Parses and validates a scenario from TOML text.
    pub fn from_toml(src: &str) -> Result<Scenario, ScenarioError> {
        let raw = check::deserialize(src)?;
        validate::validate(&check::Ctx { src }, raw)
    }

    /// The scenario with every rate divided by `factor`: the link's line and payload
    /// rates, the VC's rate, UDP rates and TCP access rates. Sizes, times, windows and
    /// queue limits stay, so a scaled run is the same story at a slower pace (a TCP
    /// stream's bandwidth-delay product in packets shrinks by `factor`). Refused when
    /// `factor` is not a finite number of at least 1 or a rate would fall below 1 kbit/s.
    pub fn scaled(&self, factor: f64) -> Result<Scenario, ScaleError> {
        if !(factor.is_finite() && factor >= 1.0) {
            return Err(ScaleError::Factor { factor });
        }
        let div = |bps: u64, rate: ScaledRate| -> Result<u64, ScaleError> {
            let r = (bps as f64 / factor).round() as u64;
            if r < MIN_SCALED_BPS {
                Err(ScaleError::TooSlow { factor, rate })
            } else {
                Ok(r)
            }
        };
        let mut sc = self.clone();
        sc.link.line_bps = div(sc.link.line_bps, ScaledRate::Link)?;
        sc.link.payload_bps = div(sc.link.payload_bps, ScaledRate::Link)?;
        if let Some(vc) = &mut sc.vc {
            vc.rate_bps = div(vc.rate_bps, ScaledRate::Vc)?;
        }
        for s in &mut sc.streams {
            let stream = || ScaledRate::Stream(s.name.clone());
            match &mut s.kind {
                StreamKind::Udp { rate_bps } => *rate_bps = div(*rate_bps, stream())?,
                StreamKind::Tcp { access_bps, .. } => *access_bps = div(*access_bps, stream())?,
            }
        }
        Ok(sc)
    }

    /// The rate the output server carries packets at: the VC's when the VC is
    /// shaped (the scheduler's queues are its buffer), else the link's payload rate.
    pub fn server_bps(&self) -> u64 {
        match self.vc {
            Some(vc) if vc.kind == VcKind::Shaped => vc.rate_bps,
            _ => self.link.payload_bps(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"name = "t"
duration_s = 5
[link]
rate = "100Mbit/s"
[vc]
kind = "shaped"
rate = "10Mbit/s"
[scheduler]
saturation = "forced"
queue = [{ weight = 1 }, { weight = 1 }, { weight = 1 }, { weight = 1 }]
[[stream]]
name = "slow"
rate = "20kbit/s"
"#;

    #[test]
    fn a_shaped_vc_paces_the_server_and_a_policed_one_polices() {
        let shaped = Scenario::from_toml(SRC).unwrap();
        assert_eq!(shaped.server_bps(), 10_000_000);
        assert!(shaped.vc.unwrap().policer().is_none());
        let policed = Scenario::from_toml(&SRC.replace("shaped", "policed")).unwrap();
        assert_eq!(policed.server_bps(), 100_000_000);
        let mut bucket = policed.vc.unwrap().policer().unwrap();
        // A full bucket of the default burst (two 1500-byte packets on the wire).
        assert!(bucket.conform(0, 1500) && bucket.conform(0, 1500));
        assert!(!bucket.conform(0, 1500));
        let bare =
            Scenario::from_toml(&SRC.replace("[vc]\nkind = \"shaped\"\nrate = \"10Mbit/s\"\n", ""))
                .unwrap();
        assert_eq!((bare.vc, bare.server_bps()), (None, 100_000_000));
    }

    #[test]
    fn a_scale_refusal_names_the_first_rate_it_leaves_too_slow() {
        let sc = Scenario::from_toml(SRC).unwrap();
        assert_eq!(sc.scaled(0.99), Err(ScaleError::Factor { factor: 0.99 }));
        assert_eq!(
            sc.scaled(f64::INFINITY).unwrap_err().to_string(),
            "scale inf: give a number of at least 1"
        );
        let e = sc.scaled(21.0).unwrap_err();
        assert_eq!(
            e,
            ScaleError::TooSlow {
                factor: 21.0,
                rate: ScaledRate::Stream("slow".into())
            }
        );
        assert_eq!(e.to_string(), "scale 21 leaves slow below 1 kbit/s");
        let e = sc.scaled(20_000.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "scale 20000 leaves the VC rate below 1 kbit/s"
        );
        let e = sc.scaled(200_000.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "scale 200000 leaves the link rate below 1 kbit/s"
        );
        let ok = sc.scaled(20.0).unwrap();
        assert_eq!(ok.streams[0].kind, StreamKind::Udp { rate_bps: 1000 });
        assert_eq!(ok.vc.map(|v| v.rate_bps), Some(500_000));
    }
}
