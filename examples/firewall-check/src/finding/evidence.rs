//! What shows a finding: one variant of [`Evidence`] per way of finding
//! things. `compare`'s is [`Compared`] (two captures of the same traffic,
//! packet by packet); `analyze` and `probe` add their own variants beside
//! it, each with the facts its judgment rests on.

use crate::finding::value::FieldValue;

/// What a finding rests on, by the analysis that made it.
#[derive(Debug, Clone, PartialEq)]
pub enum Evidence {
    /// Two captures from the two sides of a middlebox, compared packet by
    /// packet (`compare`).
    Compared(Compared),
}

/// Which of the two captures of `compare` (by its place on the path, not
/// by the order given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaptureSide {
    /// The capture nearer the client.
    ClientSide,
    /// The capture nearer the server.
    ServerSide,
}

/// Frame numbers (1-based records) of the packets a finding affected, per
/// capture: at most [`Frames::KEPT`] each, in the order they were decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frames {
    /// In the client-side capture.
    pub client_side: Vec<u64>,
    /// In the server-side capture.
    pub server_side: Vec<u64>,
}

impl Frames {
    /// Frames kept per capture.
    pub const KEPT: usize = 10;

    /// Keeps `frame` for `side` while there is room.
    pub fn push(&mut self, side: CaptureSide, frame: u64) {
        let v = match side {
            CaptureSide::ClientSide => &mut self.client_side,
            CaptureSide::ServerSide => &mut self.server_side,
        };
        if v.len() < Frames::KEPT {
            v.push(frame);
        }
    }
}

/// Where the usual cause of a finding is to be looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The kind's usual causes ([`crate::finding::Kind::cause`]).
    Usual,
    /// The SYN proxy that answered the handshake: once it has, it announces
    /// its own options and translates sequence numbers and timestamps, so
    /// the changes of these kinds are its own.
    SynProxy,
}

/// `compare`'s evidence: the packets of one connection, direction and kind
/// (and option kind, and for capture loss the capture that lacks them) seen
/// on both sides of the middlebox, or on one side only.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The connection's number in the report, from 1.
    pub connection: usize,
    /// Packets affected.
    pub count: u64,
    /// The first affected value before the middlebox.
    pub before: FieldValue,
    /// The same value after it.
    pub after: FieldValue,
    /// Distinct before/after pairs among the affected packets (counted up
    /// to 1000).
    pub distinct_values: u64,
    /// The option kind, for `option_stripped`, `option_added` and
    /// `option_changed`.
    pub option_kind: Option<u8>,
    /// For `capture_loss`: the capture that lacks the frames.
    pub missing_from: Option<CaptureSide>,
    /// For `capture_loss`: how many of `count` fall outside the time span
    /// of the capture that lacks them (the rest were acknowledged by the
    /// receiver on that capture's wire).
    pub outside_span: Option<u64>,
    /// For `nat` client to server: the replies translated back by the same
    /// translation, packets.
    pub replies_translated: Option<u64>,
    /// The affected frames in each capture.
    pub frames: Frames,
    /// Whose doing the change most likely is.
    pub cause: Cause,
    /// For the `tunnel_*` kinds: the encapsulation point the packets
    /// crossed between the two captures.
    pub tunnel: Option<TunnelPoint>,
}

/// What the box between the two captures did to the packets of a finding
/// with the tunnel: put them into it or took them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TunnelAction {
    /// Bare (or in another tunnel) before the box, encapsulated after it.
    Encapsulation,
    /// Encapsulated before the box, bare (or in another tunnel) after it.
    Decapsulation,
}

impl TunnelAction {
    /// `encapsulation` or `decapsulation`, the names in JSON and text.
    pub const fn as_str(self) -> &'static str {
        match self {
            TunnelAction::Encapsulation => "encapsulation",
            TunnelAction::Decapsulation => "decapsulation",
        }
    }
}

/// The encapsulation point a `tunnel_*` finding's packets crossed, as the
/// first affected packet showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunnelPoint {
    /// Into the tunnel or out of it.
    pub action: TunnelAction,
    /// The tunnel (the layer the outer IP header carries).
    pub encapsulation: capture::EncapKind,
    /// Bytes the tunnel adds in front of the inner IP header: the outer IP
    /// header and the headers after it.
    pub overhead: u16,
    /// `tunnel_mss_clamped`: the MSS fell by exactly [`Self::overhead`]
    /// (a clamp to the tunnel's MTU from a full-sized MSS).
    pub mss_matches_overhead: Option<bool>,
    /// The ECN kinds: the ECN field of the outer header (at encapsulation
    /// as the box wrote it, at decapsulation as it arrived).
    pub outer_ecn: Option<u8>,
    /// The ECN kinds: what RFC 6040 gives (normal mode at encapsulation,
    /// Figure 4 at decapsulation); `None` inside for a packet RFC 6040
    /// drops (inner Not-ECT under an outer CE).
    pub rfc6040: Option<Option<u8>>,
}
