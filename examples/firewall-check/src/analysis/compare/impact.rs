//! What a finding costs, computed with `bdp` (the usual causes are in
//! [`crate::finding::Kind::cause`]).

use std::time::Duration;

use serde::Serialize;

/// Largest unscaled TCP window (RFC 7323).
pub const MAX_UNSCALED: u64 = 65_535;

/// The cost of a finding.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Impact {
    /// In words.
    pub summary: String,
    /// Round-trip time the numbers assume, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_s: Option<f64>,
    /// Throughput ceiling without the change, bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling_bps_before: Option<u64>,
    /// Throughput ceiling with the change, bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ceiling_bps_after: Option<u64>,
}

/// `window` bytes over `rtt` in bit/s, through `bdp::ceiling`.
pub fn ceiling(window: u64, rtt: Option<Duration>) -> Option<u64> {
    let rtt = rtt?;
    bdp::ceiling(bdp::Bytes::new(window), rtt)
        .ok()
        .map(|r| r.get())
}

/// The largest window a shift allows (`65535 << shift`, shift clamped to 14).
pub fn max_window(shift: u8) -> u64 {
    bdp::max_window(shift.min(14))
        .map(|b| b.get())
        .unwrap_or(MAX_UNSCALED << 14)
}

/// `52.4 Mbit/s`, `640 kbit/s`, `1.25 Gbit/s`.
pub fn rate(bps: u64) -> String {
    let b = bps as f64;
    if b >= 1e12 {
        format!("{:.2} Tbit/s", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.2} Gbit/s", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} Mbit/s", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} kbit/s", b / 1e3)
    } else {
        format!("{bps} bit/s")
    }
}

/// `1,250,000`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `10.9 ms`.
pub fn ms(rtt: Duration) -> String {
    format!("{:.1} ms", rtt.as_secs_f64() * 1e3)
}

/// Facts about the connection that impacts need.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ctx {
    /// Round-trip time (measured or given).
    pub rtt: Option<Duration>,
    /// Window-scale shift in the client's SYN as the client sent it.
    pub client_shift: Option<u8>,
    /// Largest window field the server sent after the handshake, as the client received it.
    pub server_max_window_field: Option<u16>,
    /// Largest window field the client sent after the handshake, as the server received it.
    pub client_max_window_field: Option<u16>,
    /// IPv6 (40-byte header) rather than IPv4.
    pub v6: bool,
    /// Packets in the direction of the finding (for loss rates).
    pub packets_in_direction: u64,
    /// Largest payload seen in the direction of the finding.
    pub max_payload: u32,
}

fn with_rtt(summary: String, ctx: &Ctx, before: Option<u64>, after: Option<u64>) -> Impact {
    Impact {
        summary,
        rtt_s: ctx.rtt.map(|r| r.as_secs_f64()),
        ceiling_bps_before: before,
        ceiling_bps_after: after,
    }
}

/// What 1 Gbit/s would need at the RTT: `; 1 Gbit/s at 10.0 ms needs a
/// window of 1,250,000 bytes (shift 5)`.
fn gigabit_needs(ctx: &Ctx) -> String {
    let Some(rtt) = ctx.rtt else {
        return String::new();
    };
    let Some(gbit) = bdp::BitsPerSecond::from_gbps(1) else {
        return String::new();
    };
    match bdp::window_needed(gbit, rtt) {
        Ok(w) => format!(
            "; 1 Gbit/s at {} needs a window of {} bytes (shift {})",
            ms(rtt),
            thousands(w.get()),
            bdp::window_scale_shift(w)
                .map(|s| s.to_string())
                .unwrap_or_else(|_| "beyond 14".to_string())
        ),
        Err(_) => String::new(),
    }
}

/// Window-scale option removed. `c2s`: from the client's SYN; else from the SYN-ACK.
pub fn wscale_stripped(c2s: bool, shift: Option<u8>, ctx: &Ctx) -> Impact {
    let unscaled = ceiling(MAX_UNSCALED, ctx.rtt);
    let at = ctx
        .rtt
        .map(|r| format!(" at {}", ms(r)))
        .unwrap_or_default();
    let cap = unscaled
        .map(|c| format!(", a ceiling of {}{at}", rate(c)))
        .unwrap_or_else(|| " (give --rtt for the throughput ceiling)".to_string());
    if c2s {
        let summary = format!(
            "the server never saw the client's window scale, so neither side scales (RFC 7323 needs it in both SYNs): every receive window is capped at 65,535 bytes{cap}, in both directions{}",
            gigabit_needs(ctx)
        );
        with_rtt(summary, ctx, None, unscaled)
    } else {
        let mut summary = format!(
            "the client offered scaling{} but never saw the server's answer: the client does not scale while the server does. Server -> client is capped by the client's unscaled receive window of 65,535 bytes{cap}",
            ctx.client_shift.map(|s| format!(" (shift {s})")).unwrap_or_default()
        );
        if let (Some(w), Some(s)) = (ctx.server_max_window_field, shift) {
            let meant = u64::from(w) << s.min(14);
            summary.push_str(&format!(
                "; client -> server is worse: the client reads the server's scaled window fields as bytes (largest {} bytes instead of {})",
                thousands(u64::from(w)),
                thousands(meant)
            ));
            if let Some(c) = ceiling(u64::from(w), ctx.rtt) {
                summary.push_str(&format!(", a ceiling of {}", rate(c)));
            }
        }
        summary.push_str(&gigabit_needs(ctx));
        with_rtt(summary, ctx, None, unscaled)
    }
}

/// Window-scale shift changed from `before` to `after` in the announcing direction.
pub fn wscale_changed(before: u8, after: u8, window_field: Option<u16>, ctx: &Ctx) -> Impact {
    let field = u64::from(window_field.unwrap_or(u16::MAX));
    let true_w = field << before.min(14);
    let read_w = field << after.min(14);
    let (cb, ca) = (ceiling(true_w, ctx.rtt), ceiling(read_w, ctx.rtt));
    let mut summary = format!(
        "the peer scales this side's window fields by 2^{after} while they mean 2^{before}: a window field of {} is read as {} bytes instead of {}",
        thousands(field),
        thousands(read_w),
        thousands(true_w)
    );
    if let (Some(b), Some(a)) = (cb, ca) {
        summary.push_str(&format!(" (ceiling {} instead of {})", rate(a), rate(b)));
    }
    if after > before {
        summary
            .push_str("; overestimating the window overruns the receiver, which drops the excess");
    }
    with_rtt(summary, ctx, cb, ca)
}

/// MSS clamped or changed.
pub fn mss(before: u16, after: u16, ctx: &Ctx) -> Impact {
    let hdr = if ctx.v6 { 60.0 } else { 40.0 };
    // Ethernet framing per packet: preamble 8, header 14, FCS 4, gap 12.
    let eff = |m: f64| m / (m + hdr + 38.0);
    let (b, a) = (f64::from(before), f64::from(after));
    let summary = if after < before && after > 0 {
        format!(
            "segments carry at most {after} instead of {before} bytes: {:.1}% more packets for the same data, Ethernet goodput {:.1}% instead of {:.1}% of the line rate",
            (b / a - 1.0) * 100.0,
            eff(a) * 100.0,
            eff(b) * 100.0
        )
    } else {
        format!(
            "the peer may send segments of {after} bytes although this side announced {before}: larger than the path or host accepts, they are fragmented or dropped (a PMTU black hole)"
        )
    };
    with_rtt(summary, ctx, None, None)
}

/// Loss: `dropped` of the direction's packets.
pub fn dropped(dropped: u64, ctx: &Ctx) -> Impact {
    let total = ctx.packets_in_direction.max(dropped).max(1);
    let p = dropped as f64 / total as f64;
    let mut summary = format!(
        "{dropped} of {total} packets ({:.2}%) crossed one side and not the other",
        p * 100.0
    );
    let mut after = None;
    if let Some(rtt) = ctx.rtt {
        let mss = u64::from(ctx.max_payload.max(536));
        if let Ok(bps) = bdp::mathis(bdp::Bytes::new(mss), rtt, p, bdp::MathisConstant::Periodic) {
            if bps.is_finite() && bps > 0.0 {
                after = Some(bps as u64);
                summary.push_str(&format!(
                    "; at that loss rate TCP Reno-style throughput is limited to about {} (Mathis et al. 1997, MSS {mss}, RTT {})",
                    rate(bps as u64),
                    ms(rtt)
                ));
            }
        }
    }
    with_rtt(summary, ctx, None, after)
}

/// Window field rewritten: largest before and after.
pub fn window(before_max: u16, after_max: u16, shift: Option<u8>, ctx: &Ctx) -> Impact {
    let s = shift.unwrap_or(0).min(14);
    let (b, a) = (u64::from(before_max) << s, u64::from(after_max) << s);
    let (cb, ca) = (ceiling(b, ctx.rtt), ceiling(a, ctx.rtt));
    let mut summary = format!(
        "largest advertised window {} bytes before, {} bytes after",
        thousands(b),
        thousands(a)
    );
    if let (Some(x), Some(y)) = (cb, ca) {
        summary.push_str(&format!(": ceiling {} instead of {}", rate(y), rate(x)));
    }
    with_rtt(summary, ctx, cb, ca)
}

/// An impact that is words only.
pub fn words(text: &str, ctx: &Ctx) -> Impact {
    with_rtt(text.to_string(), ctx, None, None)
}
