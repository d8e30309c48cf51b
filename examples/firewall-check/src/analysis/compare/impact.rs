//! What each finding costs, computed with `bdp`: the ceilings a window
//! gives at the RTT, the window 1 Gbit/s needs, the loss-limited rate, the
//! goodput an MSS gives; typed ([`finding::Impact`], [`Cost`]), the
//! sentences are the output stage's (`crate::output::impact`). The usual
//! causes are in [`crate::finding::Kind::cause`].

use std::time::Duration;

use serde::Serialize;

use super::findings::Acc;
use crate::conn::tracker::Direction;
use crate::finding::impact::{LossLimit, MisreadWindow, Need, PhbClass};
use crate::finding::{self, CaptureSide, Cost, FieldValue, Kind};

/// Largest unscaled TCP window (RFC 7323).
pub const MAX_UNSCALED: u64 = 65_535;

/// The impact `probe` reports, its sentence built in the analysis
/// (`crate::analysis::probe::report` names it by this path, as
/// `compare::impact::Impact`). `compare`'s findings carry the typed
/// [`finding::Impact`]; the probe moves to it in its own step, and this
/// type goes then.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ProbeImpact {
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

/// The name `probe` uses for [`ProbeImpact`].
pub use ProbeImpact as Impact;

/// `window` bytes over `rtt` in bit/s, through `bdp::ceiling`.
pub fn ceiling(window: u64, rtt: Option<Duration>) -> Option<u64> {
    let rtt = rtt?;
    bdp::ceiling(bdp::Bytes::new(window), rtt)
        .ok()
        .map(|r| r.get())
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

/// What a finding folded in `acc` costs.
#[derive(Debug, Clone, Copy)]
pub struct Folded<'a> {
    /// Its kind.
    pub kind: Kind,
    /// Its direction.
    pub dir: Direction,
    /// What was accumulated.
    pub acc: &'a Acc,
    /// Its option kind.
    pub option_kind: Option<u8>,
    /// For capture loss, the capture that lacks the frames.
    pub missing_from: Option<CaptureSide>,
}

impl Ctx {
    /// An impact at this RTT with the given ceilings.
    fn impact(&self, cost: Cost, before: Option<u64>, after: Option<u64>) -> finding::Impact {
        finding::Impact {
            rtt: self.rtt,
            ceiling_bps_before: before,
            ceiling_bps_after: after,
            cost,
        }
    }

    /// An impact without figures of its own.
    fn plain(&self, cost: Cost) -> finding::Impact {
        self.impact(cost, None, None)
    }
}

/// What finding `f` costs: `ctx` holds the connection's facts, `dctx` its
/// direction's (packets, payload) for loss rates.
pub fn impact_of(f: Folded<'_>, ctx: &Ctx, dctx: &Ctx) -> finding::Impact {
    let acc = f.acc;
    match f.kind {
        Kind::WscaleStripped => wscale_stripped(
            f.dir == Direction::ClientToServer,
            shift_of(&acc.before),
            ctx,
        ),
        Kind::WscaleChanged => match (shift_of(&acc.before), shift_of(&acc.after)) {
            (Some(b), Some(a)) => {
                let field = if f.dir == Direction::ClientToServer {
                    ctx.client_max_window_field
                } else {
                    ctx.server_max_window_field
                };
                wscale_changed(b, a, field, ctx)
            }
            _ => ctx.plain(Cost::WscaleChangedUnread),
        },
        Kind::WscaleAdded => ctx.plain(Cost::WscaleAdded),
        Kind::MssClamped | Kind::MssChanged | Kind::TunnelMssClamped => {
            match (&acc.before, &acc.after) {
                (&FieldValue::Mss(b), &FieldValue::Mss(a)) => mss(b, a, ctx),
                _ => ctx.plain(Cost::MssChangedUnread),
            }
        }
        Kind::SackpermStripped => ctx.plain(Cost::SackpermStripped),
        Kind::TimestampsStripped => ctx.plain(Cost::TimestampsStripped),
        Kind::TimestampsChanged => ctx.plain(Cost::TimestampsChanged),
        Kind::SeqRewritten | Kind::AckRewritten => ctx.plain(Cost::SequenceOffset {
            offset: match (acc.before.number(), acc.after.number()) {
                (Some(b), Some(a)) => Some((a as u32).wrapping_sub(b as u32)),
                _ => None,
            },
        }),
        Kind::WindowRewritten => window(
            acc.max_before
                .and_then(|v| u16::try_from(v).ok())
                .unwrap_or(0),
            acc.max_after
                .and_then(|v| u16::try_from(v).ok())
                .unwrap_or(0),
            ctx,
        ),
        Kind::DscpChanged => dscp(&acc.before, &acc.after, ctx),
        Kind::EcnChanged => ctx.plain(Cost::EcnChanged),
        // The underlay queues the tunnel's packets by the outer DSCP.
        Kind::TunnelDscpNotCopied => dscp(&acc.before, &acc.after, ctx),
        Kind::TunnelDscpCopied
        | Kind::TunnelEcnNotCopied
        | Kind::TunnelEcnNonstandard
        | Kind::TunnelCeNotPropagated => ctx.plain(Cost::Tunnel(f.kind)),
        Kind::Nat => ctx.plain(Cost::Nat {
            replies_translated: acc.replies_translated,
        }),
        Kind::CaptureLoss => ctx.plain(Cost::CaptureLoss {
            missing_from: f.missing_from,
            frames: acc.count,
            outside_span: acc.outside_span,
        }),
        // Seen only by active probing; two captures never produce them.
        Kind::ProbeDropped | Kind::EcnSetupDropped | Kind::OutOfWindowDropped => {
            ctx.plain(Cost::ProbeOnly(f.kind))
        }
        Kind::HandshakeProxied => ctx.plain(Cost::HandshakeProxied),
        Kind::PacketDropped => dropped(acc.count, dctx),
        Kind::PacketInjected => ctx.plain(Cost::PacketsInjected),
        Kind::OptionStripped | Kind::OptionAdded | Kind::OptionChanged => {
            ctx.plain(Cost::OptionAltered {
                option_kind: f.option_kind,
            })
        }
    }
}

/// The shift of a window-scale value.
fn shift_of(v: &FieldValue) -> Option<u8> {
    match *v {
        FieldValue::Shift(s) => Some(s),
        _ => None,
    }
}

/// What 1 Gbit/s needs at the RTT.
fn gigabit_needs(ctx: &Ctx) -> Option<Need> {
    Need::at(bdp::BitsPerSecond::from_gbps(1)?, ctx.rtt?)
}

/// Window-scale option removed. `c2s`: from the client's SYN; else from the
/// SYN-ACK, whose shift was `shift`.
pub fn wscale_stripped(c2s: bool, shift: Option<u8>, ctx: &Ctx) -> finding::Impact {
    let unscaled = ceiling(MAX_UNSCALED, ctx.rtt);
    let gigabit = gigabit_needs(ctx);
    let cost = if c2s {
        Cost::WscaleStrippedFromSyn { gigabit }
    } else {
        let misread = match (ctx.server_max_window_field, shift) {
            (Some(field), Some(s)) => Some(MisreadWindow {
                field,
                meant: u64::from(field) << s.min(14),
                ceiling: ceiling(u64::from(field), ctx.rtt),
            }),
            _ => None,
        };
        Cost::WscaleStrippedFromSynAck {
            client_shift: ctx.client_shift,
            misread,
            gigabit,
        }
    };
    ctx.impact(cost, None, unscaled)
}

/// Window-scale shift changed from `before` to `after` in the announcing
/// direction, whose largest window field was `window_field`.
pub fn wscale_changed(
    before: u8,
    after: u8,
    window_field: Option<u16>,
    ctx: &Ctx,
) -> finding::Impact {
    let field = u64::from(window_field.unwrap_or(u16::MAX));
    let meant = field << before.min(14);
    let read = field << after.min(14);
    let (cb, ca) = (ceiling(meant, ctx.rtt), ceiling(read, ctx.rtt));
    let cost = Cost::WscaleChanged {
        before,
        after,
        field,
        meant,
        read,
    };
    ctx.impact(cost, cb, ca)
}

/// MSS clamped or changed.
pub fn mss(before: u16, after: u16, ctx: &Ctx) -> finding::Impact {
    let hdr = if ctx.v6 { 60.0 } else { 40.0 };
    // Ethernet framing per packet: preamble 8, header 14, FCS 4, gap 12.
    let eff = |m: f64| m / (m + hdr + 38.0);
    let (b, a) = (f64::from(before), f64::from(after));
    let cost = if after < before && after > 0 {
        Cost::MssLowered {
            before,
            after,
            more_packets_percent: (b / a - 1.0) * 100.0,
            goodput_before_percent: eff(b) * 100.0,
            goodput_after_percent: eff(a) * 100.0,
        }
    } else {
        Cost::MssRaised { before, after }
    };
    ctx.plain(cost)
}

/// Loss: `dropped` of the direction's packets.
pub fn dropped(dropped: u64, ctx: &Ctx) -> finding::Impact {
    let total = ctx.packets_in_direction.max(dropped).max(1);
    let p = dropped as f64 / total as f64;
    let mut limit = None;
    let mut after = None;
    if let Some(rtt) = ctx.rtt {
        let mss = u64::from(ctx.max_payload.max(536));
        if let Ok(bps) = bdp::mathis(bdp::Bytes::new(mss), rtt, p, bdp::MathisConstant::Periodic) {
            if bps.is_finite() && bps > 0.0 {
                after = Some(bps as u64);
                limit = Some(LossLimit { mss });
            }
        }
    }
    let cost = Cost::PacketsDropped {
        dropped,
        total,
        loss_rate: p,
        limit,
    };
    ctx.impact(cost, None, after)
}

/// Window field rewritten: largest before and after.
pub fn window(before_max: u16, after_max: u16, ctx: &Ctx) -> finding::Impact {
    let (b, a) = (u64::from(before_max), u64::from(after_max));
    let (cb, ca) = (ceiling(b, ctx.rtt), ceiling(a, ctx.rtt));
    let cost = Cost::WindowRewritten {
        largest_before: b,
        largest_after: a,
    };
    ctx.impact(cost, cb, ca)
}

/// DSCP re-marked from `before` to `after`.
fn dscp(before: &FieldValue, after: &FieldValue, ctx: &Ctx) -> finding::Impact {
    let (&FieldValue::Dscp(b), &FieldValue::Dscp(a)) = (before, after) else {
        // Only DSCP values are folded into a `dscp_changed` finding.
        return ctx.plain(Cost::DscpRemarked {
            before: 0,
            after: 0,
            class: PhbClass::Other,
        });
    };
    ctx.plain(Cost::DscpRemarked {
        before: b,
        after: a,
        class: phb_class(a),
    })
}

/// How downstream routers treat DSCP `v`: CS1 and LE are scavenger
/// classes (on TransPAC, QBSS got about 1% of an OC-3), 0 (CS0, DF) best
/// effort.
pub fn phb_class(v: u8) -> PhbClass {
    if v == u8::from(dscp::Dscp::CS1) || v == u8::from(dscp::Dscp::LE) {
        PhbClass::Scavenger
    } else if v == u8::from(dscp::Dscp::CS0) {
        PhbClass::BestEffort
    } else {
        PhbClass::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phb_classes_follow_the_names() {
        // The rule by name, as the report has always applied it to the
        // re-marked value's upper-case name.
        for v in 0..64u8 {
            let name = dscp::Dscp::new(v)
                .ok()
                .and_then(|d| d.name())
                .map(str::to_uppercase)
                .unwrap_or_default();
            let by_name = if name.starts_with("CS1") || name.starts_with("LE") {
                PhbClass::Scavenger
            } else if v == 0 || name.starts_with("CS0") || name.starts_with("DF") {
                PhbClass::BestEffort
            } else {
                PhbClass::Other
            };
            assert_eq!(phb_class(v), by_name, "{v} {name}");
        }
    }

    #[test]
    fn the_campus_incident_at_10_ms() {
        // A 64 KiB window over 10 ms is 65535*8/0.010 = 52.4 Mbit/s; 1 Gbit/s
        // needs 1,250,000 bytes, shift 5 (DESIGN.md, incident 1).
        let ctx = Ctx {
            rtt: Some(Duration::from_millis(10)),
            ..Ctx::default()
        };
        let i = wscale_stripped(true, Some(7), &ctx);
        assert_eq!(i.ceiling_bps_after, Some(52_428_000));
        assert_eq!(
            i.cost,
            Cost::WscaleStrippedFromSyn {
                gigabit: Some(Need {
                    target: bdp::BitsPerSecond::new(1_000_000_000),
                    bytes: 1_250_000,
                    shift: Some(5)
                })
            }
        );
    }
}
