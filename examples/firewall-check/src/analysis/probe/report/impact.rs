//! What a finding costs, in words and, where it is a window, in numbers
//! from `bdp` at the path's measured RTT.

use std::net::IpAddr;
use std::time::Duration;

use super::super::diff::{Change, FieldValue};
use super::Impact;
use crate::finding::Kind;
use crate::output::format::rate_text as rate;

fn ceiling(window: u64, rtt: Duration) -> Option<u64> {
    bdp::ceiling(bdp::Bytes::new(window), rtt)
        .ok()
        .map(|r| r.get())
}

/// An impact of words only.
fn words(summary: impl Into<String>) -> Impact {
    Impact {
        summary: summary.into(),
        rtt_s: None,
        ceiling_bps_before: None,
        ceiling_bps_after: None,
    }
}

/// A value in words (an MSS's bytes).
fn plain(v: &FieldValue) -> String {
    match v {
        FieldValue::Number(n) => n.to_string(),
        other => super::field_json(other).to_string(),
    }
}

/// The cost of a change, with `bdp` where it is a window.
pub fn impact(c: &Change, rtt: Option<Duration>) -> Impact {
    let mut i = words(String::new());
    i.rtt_s = rtt.map(|d| d.as_secs_f64());
    i.summary = match c.kind {
        Kind::WscaleStripped => {
            let shift = match c.before {
                FieldValue::Number(n) => n.min(14) as u8,
                _ => 7,
            };
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
        Kind::SackpermStripped => {
            "no SACK: one loss per round trip is recovered, slow recovery from bursts".into()
        }
        Kind::TimestampsStripped => "no timestamps: RTT sampling and PAWS off".into(),
        Kind::DscpChanged => "the packets lose the class they were marked with (queueing, policing, scavenger service)".into(),
        Kind::EcnChanged => {
            "ECN does not work end to end: congestion shows as loss instead of marks".into()
        }
        Kind::WindowRewritten => {
            "the receiver's advertised window is not what the sender reads".into()
        }
        Kind::Nat => "addresses or ports translated".into(),
        k => k.title().into(),
    };
    i
}

/// The cost of a dropped probe, with the unscaled window's ceiling at
/// `rtt` for a dropped out-of-window segment.
pub fn drop_impact_at(k: Kind, rtt: Option<Duration>) -> Impact {
    let mut i = words(match k {
        Kind::EcnSetupDropped => {
            "connections asking for ECN fail to open until the SYN is retried without it"
        }
        Kind::OutOfWindowDropped => {
            "the sender can never use more than the unscaled window: 64 KiB per round trip"
        }
        _ => "connections using this option or mark cannot be opened",
    });
    if k == Kind::OutOfWindowDropped {
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

/// The costs of the findings about the path as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImpactNote {
    /// Routers answering from the target's address.
    Nat {
        /// Their TTLs.
        hops: Vec<u8>,
        /// The target.
        target: IpAddr,
    },
    /// A SYN proxy.
    Proxied,
}

impl ImpactNote {
    /// The impact.
    pub fn impact(&self) -> Impact {
        match self {
            ImpactNote::Nat { hops, target } => {
                let hops: Vec<String> = hops.iter().map(u8::to_string).collect();
                words(format!(
                    "addresses are translated: hops {} answer from the target's address {target}, so the target is not the host that answers; the reflector shows the translation",
                    hops.join(",")
                ))
            }
            ImpactNote::Proxied => words(
                "the handshake is answered on the path: the server's own options and window scale are not what the client sees",
            ),
        }
    }
}
