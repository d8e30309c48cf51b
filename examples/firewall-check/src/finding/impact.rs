//! What a finding costs: the figures (the RTT they assume, throughput
//! ceilings from `bdp`) and the kind of cost ([`Cost`]) with the figures
//! its sentence needs. The sentences themselves are the output stage's
//! (`crate::output::impact`).

use std::time::Duration;

use bdp::BitsPerSecond;

use crate::finding::evidence::CaptureSide;
use crate::finding::Kind;

/// The cost of a finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Impact {
    /// The round-trip time the figures assume (measured or given); `None`
    /// when unknown.
    pub rtt: Option<Duration>,
    /// Throughput ceiling without the change, bit/s.
    pub ceiling_bps_before: Option<u64>,
    /// Throughput ceiling with the change, bit/s (for dropped packets: the
    /// loss-limited rate).
    pub ceiling_bps_after: Option<u64>,
    /// What kind of cost, with its own figures.
    pub cost: Cost,
}

/// Where an RTT comes from (`analyze`'s connections, `compare`'s
/// impacts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RttSource {
    /// `--rtt`.
    Given,
    /// The handshake: the client's SYN to its ACK of the SYN-ACK
    /// (`compare`: the larger of the two captures' figures).
    Handshake,
    /// The two timestamp echo loops added (`analyze`, for a connection
    /// without its handshake).
    Timestamps,
}

impl RttSource {
    /// `given`, `handshake` or `timestamps`.
    pub fn as_str(self) -> &'static str {
        match self {
            RttSource::Given => "given",
            RttSource::Handshake => "handshake",
            RttSource::Timestamps => "timestamps",
        }
    }
}

/// The window a rate needs at an RTT (`bdp::window_needed`) and the
/// smallest window-scale shift that lets it be advertised: `analyze`'s
/// verdict for `--target-rate`, `compare`'s impact for 1 Gbit/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// The rate.
    pub target: BitsPerSecond,
    /// The window it needs, bytes.
    pub bytes: u64,
    /// The shift; `None` when it is beyond 14 (RFC 7323's largest).
    pub shift: Option<u8>,
}

impl Need {
    /// What `target` needs at `rtt` (`None` where `bdp` cannot say).
    pub fn at(target: BitsPerSecond, rtt: Duration) -> Option<Need> {
        let need = bdp::window_needed(target, rtt).ok()?;
        Some(Need {
            target,
            bytes: need.get(),
            shift: bdp::window_scale_shift(need).ok(),
        })
    }
}

/// A window field the client read unscaled although the server meant it
/// scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MisreadWindow {
    /// The largest window field the server sent after the handshake.
    pub field: u16,
    /// What the server meant by it: the field shifted by its shift, bytes.
    pub meant: u64,
    /// The ceiling of the field read as bytes, at the impact's RTT, bit/s.
    pub ceiling: Option<u64>,
}

/// The loss-limited throughput of a TCP Reno-style sender (Mathis et al.
/// 1997, `bdp::mathis`), at the impact's RTT; the rate itself is the
/// impact's `ceiling_bps_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossLimit {
    /// The segment size the model assumes, bytes (the largest payload seen,
    /// at least 536).
    pub mss: u64,
}

/// The per-hop behaviour downstream routers give a DSCP a packet was
/// re-marked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PhbClass {
    /// A scavenger class (CS1, LE): almost nothing while other traffic
    /// fills the link.
    Scavenger,
    /// Best effort (0).
    BestEffort,
    /// Another per-hop behaviour than the one the sender asked for.
    Other,
}

/// The kind of cost, one variant per kind of impact sentence, each with the
/// figures its sentence needs beyond the [`Impact`]'s own (the RTT and the
/// ceilings, which the sentences that name them read from there).
#[derive(Debug, Clone, PartialEq)]
pub enum Cost {
    /// The window-scale option was removed from the client's SYN: neither
    /// side scales; the unscaled window's ceiling is `ceiling_bps_after`.
    WscaleStrippedFromSyn {
        /// What 1 Gbit/s needs at the RTT.
        gigabit: Option<Need>,
    },
    /// The window-scale option was removed from the server's SYN-ACK: the
    /// client does not scale while the server does; the unscaled window's
    /// ceiling is `ceiling_bps_after`.
    WscaleStrippedFromSynAck {
        /// The shift the client offered.
        client_shift: Option<u8>,
        /// The server's window fields as the client reads them (when both
        /// the server's largest field and its shift are known).
        misread: Option<MisreadWindow>,
        /// What 1 Gbit/s needs at the RTT.
        gigabit: Option<Need>,
    },
    /// The window-scale shift was changed: the peer reads the window fields
    /// with the wrong shift; the ceilings are the true and the read window's.
    WscaleChanged {
        /// The shift the sender meant.
        before: u8,
        /// The shift the peer reads with.
        after: u8,
        /// The window field the figures use (the largest seen, else 65,535).
        field: u64,
        /// The window the field means, bytes.
        meant: u64,
        /// The window the peer reads, bytes.
        read: u64,
    },
    /// The window-scale option was changed, but a kernel reads no shift
    /// from one of the two (outside a SYN, or of the wrong length).
    WscaleChangedUnread,
    /// A window-scale option was added to a SYN without one.
    WscaleAdded,
    /// The MSS was lowered.
    MssLowered {
        /// The MSS announced, bytes.
        before: u16,
        /// The MSS the peer received, bytes.
        after: u16,
        /// How many more packets the same data takes, percent.
        more_packets_percent: f64,
        /// Ethernet goodput with the announced MSS, percent of the line rate.
        goodput_before_percent: f64,
        /// Ethernet goodput with the lowered MSS, percent of the line rate.
        goodput_after_percent: f64,
    },
    /// The MSS was raised (or set to 0): the peer may send segments larger
    /// than the path or host accepts.
    MssRaised {
        /// The MSS announced, bytes.
        before: u16,
        /// The MSS the peer received, bytes.
        after: u16,
    },
    /// The MSS option was changed, but a kernel reads no MSS from one of
    /// the two (outside a SYN, 0, or of the wrong length).
    MssChangedUnread,
    /// SACK-permitted was removed: no SACK.
    SackpermStripped,
    /// The timestamps option was removed.
    TimestampsStripped,
    /// Timestamp values were translated.
    TimestampsChanged,
    /// Sequence or acknowledgment numbers were translated.
    SequenceOffset {
        /// After minus before (mod 2^32) on the first affected packet;
        /// `None` when a value is missing.
        offset: Option<u32>,
    },
    /// The window field was rewritten; the ceilings are the largest
    /// window's before and after.
    WindowRewritten {
        /// The largest advertised window before, bytes.
        largest_before: u64,
        /// The largest advertised window after, bytes.
        largest_after: u64,
    },
    /// The DSCP was re-marked.
    DscpRemarked {
        /// The DSCP the sender set.
        before: u8,
        /// The DSCP downstream routers see.
        after: u8,
        /// How they treat it.
        class: PhbClass,
    },
    /// ECN marks or flags were rewritten.
    EcnChanged,
    /// Addresses or ports were translated.
    Nat {
        /// Replies translated back by the same translation, packets.
        replies_translated: u64,
    },
    /// Frames one capture lacks.
    CaptureLoss {
        /// The capture that lacks them.
        missing_from: Option<CaptureSide>,
        /// How many.
        frames: u64,
        /// How many of them fall outside its time span.
        outside_span: u64,
    },
    /// The handshake was answered by the middlebox.
    HandshakeProxied,
    /// Packets crossed one side and not the other.
    PacketsDropped {
        /// Packets dropped.
        dropped: u64,
        /// Packets of the direction (at least `dropped`, at least 1).
        total: u64,
        /// `dropped / total`.
        loss_rate: f64,
        /// The loss-limited throughput, when the RTT is known.
        limit: Option<LossLimit>,
    },
    /// Packets the far end never sent.
    PacketsInjected,
    /// Another option was stripped, added or rewritten.
    OptionAltered {
        /// Its kind.
        option_kind: Option<u8>,
    },
    /// A kind only active probing finds: its title.
    ProbeOnly(Kind),
    /// What a tunnel kind other than the MSS's and a DSCP not copied
    /// costs (those have their figures): the kind.
    Tunnel(Kind),
}
