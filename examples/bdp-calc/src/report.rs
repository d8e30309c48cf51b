//! What the calculator answers, as data: the inputs as understood, each figure
//! present when the inputs allow it, and the Linux settings. Text and JSON are
//! written from it ([`crate::render_text`], [`crate::render_json`]); the JSON
//! names every field and tag as written here.

use std::time::Duration;

use bdp::linux::{Setting, Side};
use serde::{Serialize, Serializer};

/// Where the rate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RateSource {
    /// `--rate`.
    Rate,
    /// The goodput of `--link`.
    Link,
}

/// Where the MSS came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MssSource {
    /// `--mss`.
    Mss,
    /// The MTU of `--link` less the headers.
    Link,
    /// Neither: 1460 bytes (IPv4 in 1500, no options).
    Default,
}

/// Which window a figure is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowOf {
    /// The bandwidth-delay product (the window needed).
    Bdp,
    /// The window given (`--window`).
    Window,
}

/// What limits the throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitedBy {
    /// The path rate.
    Rate,
    /// The window over the round-trip time.
    Window,
}

impl From<bdp::Limit> for LimitedBy {
    fn from(l: bdp::Limit) -> Self {
        match l {
            bdp::Limit::Rate => LimitedBy::Rate,
            bdp::Limit::Window => LimitedBy::Window,
        }
    }
}

/// Where the kernel version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelSource {
    /// `--kernel`.
    Kernel,
    /// The newest kernel modelled.
    Default,
}

/// Which rule decides the share of the receive buffer advertised as window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowShareRule {
    /// `net.ipv4.tcp_adv_win_scale`, before Linux 6.6.
    TcpAdvWinScale,
    /// The measured scaling ratio, Linux 6.6 and later.
    ScalingRatio,
}

/// The inputs as understood, echoed in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Inputs {
    /// Rate used, bit/s (from --rate, or the link's goodput).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// Where the rate came from: "rate" or "link".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_source: Option<RateSource>,
    /// RTT in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_seconds: Option<f64>,
    /// RTT, exact, for text output.
    #[serde(skip)]
    pub rtt: Option<Duration>,
    /// Window in bytes, as used: at most RFC 7323's largest window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_bytes: Option<u64>,
    /// The window given, in bytes, when it exceeded RFC 7323's largest
    /// window (65535 << 14) and `window_bytes` is clamped to that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_clamped_from_bytes: Option<u64>,
    /// Transfer size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// MSS in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mss_bytes: Option<u64>,
    /// Where the MSS came from: "mss", "link" or "default".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mss_source: Option<MssSource>,
    /// Loss probability (0..1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Padhye's b.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_every: Option<u32>,
    /// Padhye's t_RTO in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto_seconds: Option<f64>,
    /// Padhye's t_RTO, exact, for text output.
    #[serde(skip)]
    pub rto: Option<Duration>,
    /// Link name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<&'static str>,
    /// IP MTU for the link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu_bytes: Option<u64>,
    /// TCP/IP header bytes per packet counted for goodput/MSS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_bytes: Option<u64>,
}

/// Link figures in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkReport {
    /// Name.
    pub name: &'static str,
    /// Description.
    pub description: &'static str,
    /// Line rate, bit/s.
    pub line_bps: u64,
    /// Rate left for framed packets, bit/s.
    pub payload_bps: u64,
    /// Bytes of capacity one MTU-sized packet occupies.
    pub wire_bytes_per_packet: u64,
    /// TCP goodput with full-MTU segments, bit/s.
    pub goodput_bps: u64,
}

/// Everything computed, each field present when the inputs allow it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// The inputs as understood.
    pub inputs: Inputs,
    /// The link, when --link was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkReport>,
    /// Bandwidth-delay product = window needed, bytes (rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bdp_bytes: Option<u64>,
    /// Smallest window-scale shift for the needed window (or the given one); null above RFC 7323's limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_scale_shift: Option<Option<u8>>,
    /// Which window the shift is for: "bdp" or "window".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_scale_shift_for: Option<WindowOf>,
    /// Why the shift is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_scale_explanation: Option<String>,
    /// Largest window the shift can advertise, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_window_for_shift_bytes: Option<u64>,
    /// What Linux would announce for a buffer of that size (clamp(ilog2 - 15, 0, 14)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linux_rcv_wscale: Option<u8>,
    /// Throughput ceiling of the window at the RTT, bit/s (rounded down).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling_bps: Option<u64>,
    /// Effective steady-state throughput min(rate, window/RTT), bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_bps: Option<u64>,
    /// What limits the throughput: "rate" or "window".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<LimitedBy>,
    /// Steady-state transfer time of --size, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer_seconds: Option<f64>,
    /// Mathis et al. 1997, C = sqrt(3/2), bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mathis_bps: Option<f64>,
    /// Mathis with delayed ACKs, C = sqrt(3/4), bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mathis_delayed_ack_bps: Option<f64>,
    /// Padhye et al. 1998 as in RFC 5348, bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub padhye_bps: Option<f64>,
    /// Exact transfer time, kept for text output.
    #[serde(skip)]
    pub transfer_time: Option<Duration>,
    /// Transfer time of --size with slow start from 10 segments, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer_seconds_slow_start: Option<f64>,
    /// Round trips spent in slow start before the steady state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_start_rounds: Option<u32>,
    /// Bytes sent during those round trips.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_start_bytes: Option<u64>,
    /// Exact slow-start transfer time, kept for text output.
    #[serde(skip)]
    pub transfer_time_slow_start: Option<Duration>,
    /// The Linux settings, with --host linux.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linux: Option<LinuxReport>,
}

/// One setting to change, as in `analyze`'s `advice`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdviceReport {
    /// The setting; in JSON its name: a sysctl, with ` max` for the third value of
    /// tcp_rmem/tcp_wmem.
    #[serde(serialize_with = "setting_name")]
    pub setting: Setting,
    /// The value: at least this many bytes for buffers, exactly this for switches (1).
    pub value: u64,
    /// Why, one sentence.
    pub why: String,
    /// The host it is set on; in JSON "receiver" or "sender".
    #[serde(serialize_with = "side_name")]
    pub side: Side,
    /// A sysctl command that applies it (min and default kept at the kernel's defaults).
    pub command: String,
}

/// The Linux settings for the window (`--host linux`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinuxReport {
    /// Kernel version modelled, "major.minor".
    pub kernel: String,
    /// "kernel" (from --kernel) or "default" (the newest modelled).
    pub kernel_source: KernelSource,
    /// The window planned for, bytes.
    pub window_bytes: u64,
    /// Which window: "bdp" or "window".
    pub window_for: WindowOf,
    /// "tcp_adv_win_scale" (before 6.6) or "scaling_ratio" (6.6 and later).
    pub window_share_rule: WindowShareRule,
    /// tcp_adv_win_scale used, before 6.6.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_adv_win_scale: Option<i8>,
    /// Scaling ratio used, in 256ths, 6.6 and later.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling_ratio_256: Option<u8>,
    /// Share of the receive buffer advertised as window (0..1).
    pub window_share: f64,
    /// Receive buffer that advertises the window = minimum tcp_rmem max, bytes.
    pub receive_buffer_bytes: u64,
    /// SO_RCVBUF request that gives the window = minimum rmem_max, bytes; null when none can.
    pub so_rcvbuf_bytes: Option<u64>,
    /// Send buffer for the window in flight = minimum tcp_wmem max, bytes.
    pub send_buffer_bytes: u64,
    /// SO_SNDBUF request for it = minimum wmem_max, bytes.
    pub so_sndbuf_bytes: u64,
    /// Window-scale shift Linux announces with that tcp_rmem max (or the default, if larger).
    pub rcv_wscale: u8,
    /// The kernel's default tcp_rmem (min, default, max), bytes.
    pub default_tcp_rmem: [u64; 3],
    /// The kernel's default tcp_wmem (min, default, max), bytes.
    pub default_tcp_wmem: [u64; 3],
    /// The settings, receiver's first.
    pub advice: Vec<AdviceReport>,
}

/// A setting in JSON: its name.
fn setting_name<S: Serializer>(setting: &Setting, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(setting.name())
}

/// A side in JSON: its name.
fn side_name<S: Serializer>(side: &Side, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(side.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_written_as_the_json_schema_names_them() {
        let json = |v: serde_json::Value| v.to_string();
        assert_eq!(json(serde_json::json!(RateSource::Link)), "\"link\"");
        assert_eq!(json(serde_json::json!(MssSource::Default)), "\"default\"");
        assert_eq!(json(serde_json::json!(WindowOf::Bdp)), "\"bdp\"");
        assert_eq!(json(serde_json::json!(LimitedBy::Window)), "\"window\"");
        assert_eq!(json(serde_json::json!(KernelSource::Kernel)), "\"kernel\"");
        assert_eq!(
            json(serde_json::json!(WindowShareRule::TcpAdvWinScale)),
            "\"tcp_adv_win_scale\""
        );
        assert_eq!(
            json(serde_json::json!(WindowShareRule::ScalingRatio)),
            "\"scaling_ratio\""
        );
        let advice = AdviceReport {
            setting: Setting::TcpRmemMax,
            value: 1,
            why: "w".into(),
            side: Side::Receiver,
            command: "c".into(),
        };
        assert_eq!(
            serde_json::to_string(&advice).unwrap(),
            r#"{"setting":"net.ipv4.tcp_rmem max","value":1,"why":"w","side":"receiver","command":"c"}"#
        );
    }
}
