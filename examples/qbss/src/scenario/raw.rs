//! The scenario file's TOML shape, as read before any value is checked: every
//! field that can be wrong keeps its span, so that an error names its line.

use serde::Deserialize;
use toml::Spanned;

/// The whole file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub(super) name: Spanned<String>,
    #[serde(default)]
    pub(super) description: String,
    pub(super) duration_s: Spanned<i64>,
    pub(super) link: RawLink,
    pub(super) vc: Option<RawVc>,
    pub(super) classifier: Option<RawClassifier>,
    pub(super) scheduler: RawScheduler,
    #[serde(default)]
    pub(super) stream: Vec<RawStream>,
}

/// `[link]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub(super) name: Option<String>,
    #[serde(rename = "type")]
    pub(super) kind: Option<Spanned<String>>,
    pub(super) rate: Option<Spanned<String>>,
    pub(super) framing: Option<Spanned<String>>,
}

/// `[vc]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVc {
    pub(super) kind: Spanned<String>,
    pub(super) rate: Spanned<String>,
    pub(super) burst_bytes: Option<Spanned<i64>>,
}

/// `[classifier]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawClassifier {
    pub(super) by: Option<Spanned<String>>,
    pub(super) map: Option<Spanned<String>>,
    pub(super) queues: Option<Spanned<Vec<Spanned<i64>>>>,
}

/// `[scheduler]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScheduler {
    pub(super) fairness: Option<Spanned<String>>,
    pub(super) mtu: Option<Spanned<i64>>,
    pub(super) saturation: Option<Spanned<String>>,
    pub(super) threshold_packets: Option<Spanned<i64>>,
    pub(super) threshold_bytes: Option<Spanned<i64>>,
    pub(super) saturation_queue: Option<Spanned<i64>>,
    pub(super) queue0_outside_wrr: Option<bool>,
    pub(super) ingress_fifo_packets: Option<Spanned<i64>>,
    pub(super) queue: Spanned<Vec<RawQueue>>,
}

/// One entry of `scheduler.queue`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQueue {
    pub(super) name: Option<String>,
    pub(super) class: Option<Spanned<String>>,
    pub(super) weight: Option<Spanned<i64>>,
    pub(super) limit_packets: Option<Spanned<i64>>,
    pub(super) limit_bytes: Option<Spanned<i64>>,
}

/// A DSCP or precedence given as a number or a name.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum IntOrName {
    /// `precedence = 1`.
    Int(i64),
    /// `dscp = "cs1"`.
    Name(String),
}

/// One `[[stream]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStream {
    pub(super) name: Spanned<String>,
    pub(super) kind: Option<Spanned<String>>,
    pub(super) rate: Option<Spanned<String>>,
    pub(super) packet_bytes: Option<Spanned<i64>>,
    pub(super) dscp: Option<Spanned<IntOrName>>,
    pub(super) precedence: Option<Spanned<IntOrName>>,
    pub(super) tos: Option<Spanned<i64>>,
    pub(super) start_s: Option<Spanned<f64>>,
    pub(super) stop_s: Option<Spanned<f64>>,
    pub(super) rtt_ms: Option<Spanned<f64>>,
    pub(super) window_packets: Option<Spanned<i64>>,
    pub(super) access_rate: Option<Spanned<String>>,
    pub(super) cc: Option<Spanned<String>>,
}
