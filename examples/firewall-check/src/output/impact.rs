//! What a finding costs, in words and as JSON: one sentence per
//! [`Cost`], with the [`Impact`]'s figures; the JSON object is
//! `{"summary", "rtt_s", "ceiling_bps_before", "ceiling_bps_after"}`
//! (`docs/json.md`), the figures absent when unknown.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::finding::impact::{LossLimit, MisreadWindow, Need, PhbClass};
use crate::finding::{CaptureSide, Cost, FieldValue, Impact, Kind};
use crate::output::finding::value_text;
use crate::output::format::{duration_text as ms, rate_text as rate, Thousands};

impl Serialize for Impact {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let figures = [
            self.rtt.is_some(),
            self.ceiling_bps_before.is_some(),
            self.ceiling_bps_after.is_some(),
        ];
        let n = 1 + figures.iter().filter(|f| **f).count();
        let mut st = s.serialize_struct("Impact", n)?;
        st.serialize_field("summary", &impact_text(self))?;
        if let Some(r) = self.rtt {
            st.serialize_field("rtt_s", &r.as_secs_f64())?;
        }
        if let Some(c) = self.ceiling_bps_before {
            st.serialize_field("ceiling_bps_before", &c)?;
        }
        if let Some(c) = self.ceiling_bps_after {
            st.serialize_field("ceiling_bps_after", &c)?;
        }
        st.end()
    }
}

/// The cost in words (the JSON's `summary`).
pub fn impact_text(i: &Impact) -> String {
    match &i.cost {
        Cost::WscaleStrippedFromSyn { gigabit } => format!(
            "the server never saw the client's window scale, so neither side scales (RFC 7323 needs it in both SYNs): every receive window is capped at 65,535 bytes{}, in both directions{}",
            unscaled_cap(i),
            gigabit_text(i, gigabit)
        ),
        Cost::WscaleStrippedFromSynAck {
            client_shift,
            misread,
            gigabit,
        } => syn_ack_stripped_text(i, *client_shift, misread, gigabit),
        &Cost::WscaleChanged {
            before,
            after,
            field,
            meant,
            read,
        } => wscale_changed_text(i, (before, after), field, meant, read),
        &Cost::MssLowered {
            before,
            after,
            more_packets_percent,
            goodput_before_percent,
            goodput_after_percent,
        } => format!(
            "segments carry at most {after} instead of {before} bytes: {more_packets_percent:.1}% more packets for the same data, Ethernet goodput {goodput_after_percent:.1}% instead of {goodput_before_percent:.1}% of the line rate"
        ),
        &Cost::MssRaised { before, after } => format!(
            "the peer may send segments of {after} bytes although this side announced {before}: larger than the path or host accepts, they are fragmented or dropped (a PMTU black hole)"
        ),
        Cost::SequenceOffset { offset } => format!(
            "offset {} (mod 2^32) on the first affected packet; no throughput cost while the translation is consistent (SACK blocks must be translated too); it hides the host's own sequence numbers",
            offset.map_or_else(|| "unknown".to_string(), |o| o.to_string())
        ),
        &Cost::WindowRewritten {
            largest_before,
            largest_after,
        } => window_text(i, largest_before, largest_after),
        &Cost::DscpRemarked {
            before,
            after,
            class,
        } => format!(
            "downstream routers queue these packets as {} instead of {}: {}",
            value_text(&FieldValue::Dscp(after)),
            value_text(&FieldValue::Dscp(before)),
            phb_text(class)
        ),
        &Cost::Nat { replies_translated } => format!(
            "none by itself; the addresses and ports the two ends see differ{}",
            if replies_translated > 0 {
                format!(" ({replies_translated} replies translated back)")
            } else {
                String::new()
            }
        ),
        &Cost::CaptureLoss {
            missing_from,
            frames,
            outside_span,
        } => capture_loss_text(missing_from, frames, outside_span),
        &Cost::PacketsDropped {
            dropped,
            total,
            loss_rate,
            limit,
        } => dropped_text(i, dropped, total, loss_rate, limit),
        Cost::OptionAltered { option_kind } => format!(
            "option kind {} altered",
            option_kind.map(|k| k.to_string()).unwrap_or_default()
        ),
        Cost::ProbeOnly(kind) => kind.title().to_string(),
        Cost::Tunnel(kind) => tunnel_text(*kind).to_string(),
        cost @ (Cost::WscaleChangedUnread
        | Cost::WscaleAdded
        | Cost::MssChangedUnread
        | Cost::SackpermStripped
        | Cost::TimestampsStripped
        | Cost::TimestampsChanged
        | Cost::EcnChanged
        | Cost::HandshakeProxied
        | Cost::PacketsInjected) => fixed_text(cost).to_string(),
    }
}

/// What a tunnel kind costs, in words.
fn tunnel_text(kind: Kind) -> &'static str {
    match kind {
        Kind::TunnelDscpCopied => {
            "none: the underlay queues the packets by their own class"
        }
        Kind::TunnelEcnNotCopied => {
            "routers inside the tunnel cannot mark these packets: they signal congestion by dropping them, as for a sender without ECN"
        }
        Kind::TunnelCeNotPropagated => {
            "congestion marks set inside the tunnel never reach the receiver: the sender does not slow down until the queue overflows and drops packets"
        }
        _ => {
            "the ECN signal through the tunnel is not the one RFC 6040 defines: congestion marks may be lost, or packets dropped that a mark would have spared"
        }
    }
}

/// The sentences without figures (the variants [`impact_text`] hands
/// over).
fn fixed_text(cost: &Cost) -> &'static str {
    match cost {
        Cost::WscaleChangedUnread => "window scale changed",
        Cost::WscaleAdded => "the receiver of this SYN believes the sender scales its window although it did not offer to: the sender's window fields are multiplied by the invented shift, overrunning it",
        Cost::MssChangedUnread => "MSS changed",
        Cost::SackpermStripped => "SACK is not negotiated: after several losses in one window the sender repairs one segment per round trip, so recovery on a long path takes many RTTs",
        Cost::TimestampsStripped => "without timestamps there is one RTT sample per window instead of per segment, and no PAWS protection against wrapped sequence numbers (needed above about 1 Gbit/s); when stripped only from data segments after both ends negotiated them, RFC 7323 receivers may discard those segments",
        Cost::TimestampsChanged => "RTT measurement keeps working while the translation is consistent; an inconsistent one breaks PAWS and the receiver drops segments",
        Cost::EcnChanged => "congestion marks are lost or invented: without ECN the path signals congestion by dropping packets instead",
        Cost::HandshakeProxied => "the client's handshake was answered by the middlebox, not the server: the options the client learned (window scale, MSS, SACK, timestamps) are the proxy's, and any mismatch with the server's lasts for the whole connection",
        Cost::PacketsInjected => "packets the far end never sent: injected resets end connections, injected ACKs hide loss from the sender",
        // The others have figures: `impact_text` writes them.
        _ => "",
    }
}

/// The unscaled window's ceiling (`ceiling_bps_after`) at the RTT, or how
/// to get it.
fn unscaled_cap(i: &Impact) -> String {
    let at = i.rtt.map(|r| format!(" at {}", ms(r))).unwrap_or_default();
    i.ceiling_bps_after.map_or_else(
        || " (give --rtt for the throughput ceiling)".to_string(),
        |c| format!(", a ceiling of {}{at}", rate(c)),
    )
}

/// What 1 Gbit/s needs at the RTT: `; 1 Gbit/s at 10.0 ms needs a window
/// of 1,250,000 bytes (shift 5)`.
fn gigabit_text(i: &Impact, need: &Option<Need>) -> String {
    let (Some(n), Some(rtt)) = (need, i.rtt) else {
        return String::new();
    };
    format!(
        "; 1 Gbit/s at {} needs a window of {} bytes (shift {})",
        ms(rtt),
        Thousands(n.bytes),
        n.shift
            .map_or_else(|| "beyond 14".to_string(), |s| s.to_string())
    )
}

fn syn_ack_stripped_text(
    i: &Impact,
    client_shift: Option<u8>,
    misread: &Option<MisreadWindow>,
    gigabit: &Option<Need>,
) -> String {
    let mut t = format!(
        "the client offered scaling{} but never saw the server's answer: the client does not scale while the server does. Server -> client is capped by the client's unscaled receive window of 65,535 bytes{}",
        client_shift.map(|s| format!(" (shift {s})")).unwrap_or_default(),
        unscaled_cap(i)
    );
    if let Some(m) = misread {
        t.push_str(&format!(
            "; client -> server is worse: the client reads the server's scaled window fields as bytes (largest {} bytes instead of {})",
            Thousands(u64::from(m.field)),
            Thousands(m.meant)
        ));
        if let Some(c) = m.ceiling {
            t.push_str(&format!(", a ceiling of {}", rate(c)));
        }
    }
    t.push_str(&gigabit_text(i, gigabit));
    t
}

fn wscale_changed_text(
    i: &Impact,
    (before, after): (u8, u8),
    field: u64,
    meant: u64,
    read: u64,
) -> String {
    let mut t = format!(
        "the peer scales this side's window fields by 2^{after} while they mean 2^{before}: a window field of {} is read as {} bytes instead of {}",
        Thousands(field),
        Thousands(read),
        Thousands(meant)
    );
    if let (Some(b), Some(a)) = (i.ceiling_bps_before, i.ceiling_bps_after) {
        t.push_str(&format!(" (ceiling {} instead of {})", rate(a), rate(b)));
    }
    if after > before {
        t.push_str("; overestimating the window overruns the receiver, which drops the excess");
    }
    t
}

fn window_text(i: &Impact, largest_before: u64, largest_after: u64) -> String {
    let mut t = format!(
        "largest advertised window {} bytes before, {} bytes after",
        Thousands(largest_before),
        Thousands(largest_after)
    );
    if let (Some(b), Some(a)) = (i.ceiling_bps_before, i.ceiling_bps_after) {
        t.push_str(&format!(": ceiling {} instead of {}", rate(a), rate(b)));
    }
    t
}

fn phb_text(class: PhbClass) -> &'static str {
    match class {
        PhbClass::Scavenger => "a scavenger class that gets almost nothing while other traffic fills the link (on TransPAC QBSS got about 1% of an OC-3)",
        PhbClass::BestEffort => "best effort, losing any priority or assured forwarding the sender asked for",
        PhbClass::Other => "a different per-hop behaviour than the sender asked for",
    }
}

fn capture_loss_text(missing_from: Option<CaptureSide>, frames: u64, outside_span: u64) -> String {
    format!(
        "none on the traffic: the {} capture lacks {frames} frame(s) that crossed its wire{}, so they could not be compared; they are not counted as dropped or injected",
        match missing_from {
            None => "other",
            Some(CaptureSide::ClientSide) => "client-side",
            Some(CaptureSide::ServerSide) => "server-side",
        },
        if outside_span == frames {
            " before it started or after it stopped".to_string()
        } else if outside_span > 0 {
            format!(" ({outside_span} of them before it started or after it stopped; the others acknowledged by the receiver there)")
        } else {
            " (the receiver acknowledged their bytes on that side)".to_string()
        }
    )
}

fn dropped_text(
    i: &Impact,
    dropped: u64,
    total: u64,
    loss_rate: f64,
    limit: Option<LossLimit>,
) -> String {
    let mut t = format!(
        "{dropped} of {total} packets ({:.2}%) crossed one side and not the other",
        loss_rate * 100.0
    );
    if let (Some(l), Some(bps), Some(rtt)) = (limit, i.ceiling_bps_after, i.rtt) {
        t.push_str(&format!(
            "; at that loss rate TCP Reno-style throughput is limited to about {} (Mathis et al. 1997, MSS {}, RTT {})",
            rate(bps),
            l.mss,
            ms(rtt)
        ));
    }
    t
}
