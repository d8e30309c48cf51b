//! One direction of a connection as the capture point sees it: what its
//! sender sent, and the window fields, ACKs and TSvals the same endpoint
//! sent the other way.
//!
//! [`Side`] is updated per segment by the connection state
//! ([`super::state::ConnState::update`]), always with its peer at hand: a
//! data segment is checked against the window its receiver advertised, an
//! ACK against the data it covers.

use capture::Timestamp;
use tcp_options::kind::MAX_WINDOW_SCALE;
use tcp_options::seq::seq_lt;
use tcp_options::Timestamps;

use crate::conn::missed::Missed;
use crate::decode::TcpRecord;

use super::shift::EdgeEvidence;

/// TSvals remembered per side for RTT samples.
const TS_RING: usize = 16;
/// Data segments below this size that fit the peer's window field read as
/// bytes count as window-sized (a sender reading a scaled field unscaled).
const SMALL_SEGMENT: usize = 536;

/// Per-direction counters (the direction's *sender* sends the data; its
/// window fields advertise its own receive window for the other direction).
#[derive(Debug, Clone, Default)]
pub(crate) struct Side {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) retransmissions: u64,
    pub(crate) retransmitted_bytes: u64,
    /// One past the highest sequence number sent.
    pub(crate) snd_nxt: Option<u32>,
    pub(crate) first_data: Option<Timestamp>,
    pub(crate) last_data: Option<Timestamp>,
    pub(crate) largest_payload: usize,
    pub(crate) data_segments: u64,
    /// Window fields this side sent on non-SYN segments.
    pub(crate) max_window_field: Option<u16>,
    pub(crate) first_window_field: Option<u16>,
    /// Sequence number of this side's first non-SYN segment seen: at or
    /// after its ISN + 1, so no more than 65,535 bytes before the edge of
    /// the handshake's (never scaled) window.
    pub(crate) first_seq: Option<u32>,
    /// Lower bound on this side's window-scale shift from the peer's flight.
    pub(crate) infer_lo: u8,
    /// Upper bound on this side's shift from its right edge never moving left.
    pub(crate) infer_hi: Option<u8>,
    /// This side's previous ACK number and window field.
    pub(crate) prev_ack_field: Option<(u32, u16)>,
    /// What this side's ACKs and its peer's data say about this side's
    /// shift, for a capture without the handshake (allocated once this
    /// side acknowledges something while the handshake is unseen).
    pub(crate) edges: Option<Box<EdgeEvidence>>,
    /// Data segments no larger than the peer's last window field read as
    /// bytes (and below 536 bytes): what a sender sends when it reads a
    /// scaled window field unscaled.
    pub(crate) window_sized_segments: u64,
    pub(crate) last_window_field: Option<u16>,
    /// Highest acknowledgment this side sent.
    pub(crate) highest_ack: Option<u32>,
    /// Recent TSvals this side sent and when they passed (allocated once
    /// the connection carries data: a port scan's SYNs need none).
    ts: Option<Box<TsRing>>,
    /// Smallest delay from one of this side's TSvals to the peer's echo.
    pub(crate) min_echo_ns: Option<u64>,
    /// Holes in this side's data and the bytes of them the peer
    /// acknowledged: what the capture missed (allocated at the first hole).
    pub(crate) missed: Option<Box<Missed>>,
}

/// Recent TSvals of one side and when they passed the capture point. The
/// TSvals apart from the times: matching an echo reads one cache line of
/// them (the rings of hundreds of open connections do not stay cached).
#[derive(Debug, Clone, Copy)]
struct TsRing {
    tsvals: [u32; TS_RING],
    times: [Timestamp; TS_RING],
    len: usize,
    next: usize,
}

/// The highest of `end` and `snd_nxt`: one past the highest byte sent.
fn top(end: u32, snd_nxt: Option<u32>) -> u32 {
    match snd_nxt {
        Some(n) if seq_lt(end, n) => n,
        _ => end,
    }
}

impl Side {
    fn remember_tsval(&mut self, tsval: u32, at: Timestamp) {
        let r = self.ts.get_or_insert_with(|| {
            Box::new(TsRing {
                tsvals: [0; TS_RING],
                times: [at; TS_RING],
                len: 0,
                next: 0,
            })
        });
        let newest = (r.next + TS_RING - 1) % TS_RING;
        if r.len > 0 && r.tsvals[newest] == tsval {
            return;
        }
        r.tsvals[r.next] = tsval;
        r.times[r.next] = at;
        r.next = (r.next + 1) % TS_RING;
        r.len = (r.len + 1).min(TS_RING);
    }

    fn echoed(&mut self, tsecr: u32, at: Timestamp) {
        let Some(r) = self.ts.as_ref() else {
            return;
        };
        let found = r.tsvals[..r.len]
            .iter()
            .position(|v| *v == tsecr)
            .map(|i| r.times[i]);
        if let Some(sample) = found.and_then(|t| at.nanos_since(&t)) {
            self.min_echo_ns = Some(self.min_echo_ns.map_or(sample, |m| m.min(sample)));
        }
    }

    /// Timestamps of a segment this side sent: its TSval remembered, the
    /// peer's TSval it echoes matched (once the connection carries data).
    pub(crate) fn timestamps(
        &mut self,
        peer: &mut Side,
        rec: &TcpRecord<'_>,
        timestamps: Option<Timestamps>,
        ack: bool,
    ) {
        if let (Some(ts), Some(t)) = (rec.ts, timestamps) {
            self.remember_tsval(t.tsval, ts);
            if ack {
                peer.echoed(t.tsecr, ts);
            }
        }
    }

    /// An ACK this side sent (not on a SYN): what its window fields say
    /// about its shift (a right edge never moves left, RFC 9293: a field
    /// that drops by `df` while the ACK advances by `da` bounds the shift
    /// by log2(da / df)), and, for a connection without its handshake
    /// (`handshake` false) that carries data the other way, the evidence
    /// of the edges ([`EdgeEvidence`]).
    pub(crate) fn ack_edges(
        &mut self,
        peer: &Side,
        rec: &TcpRecord<'_>,
        timestamps: Option<Timestamps>,
        handshake: bool,
        rst: bool,
    ) {
        if let (Some((a1, f1)), Some(h)) = (self.prev_ack_field, self.highest_ack) {
            let da = rec.ack.wrapping_sub(a1);
            if f1 > rec.window && !seq_lt(rec.ack, h) && da > 0 && da < 1 << 30 {
                let df = u32::from(f1 - rec.window);
                let bound = (da / df)
                    .checked_ilog2()
                    .map_or(0, |b| b.min(u32::from(MAX_WINDOW_SCALE)) as u8);
                self.infer_hi = Some(self.infer_hi.map_or(bound, |h| h.min(bound)));
            }
        }
        // Only for a connection without its handshake that carries data the
        // other way (a scan's RSTs allocate nothing).
        if self.edges.is_none() && !handshake && peer.data_segments > 0 && !rst {
            self.edges = Some(Box::default());
        }
        if let Some(e) = self.edges.as_mut() {
            if let Some((a1, f1)) = self.prev_ack_field {
                let segment = u32::try_from(peer.largest_payload).unwrap_or(0);
                e.growth
                    .ack(rec.ack.wrapping_sub(a1), f1, rec.window, segment);
            }
            // A pure ACK whose sequence number the sender has already
            // acknowledged: the sender records its TSval, and echoes it
            // once it has read it.
            let echoed =
                rec.payload_len == 0 && peer.highest_ack.is_some_and(|h| !seq_lt(h, rec.seq));
            let wait_for = timestamps.filter(|_| echoed).map(|t| t.tsval);
            e.receiver_ack(rec.ack, rec.window, wait_for);
        }
        self.prev_ack_field = Some((rec.ack, rec.window));
    }

    /// The window field of a segment this side sent (not a SYN).
    pub(crate) fn window_field(&mut self, rec: &TcpRecord<'_>) {
        self.first_seq.get_or_insert(rec.seq);
        self.first_window_field.get_or_insert(rec.window);
        self.last_window_field = Some(rec.window);
        self.max_window_field = Some(
            self.max_window_field
                .map_or(rec.window, |m| m.max(rec.window)),
        );
    }

    /// An acknowledgment this side sent.
    pub(crate) fn acknowledged(&mut self, peer: &mut Side, ack: u32) {
        if let Some(m) = peer.missed.as_mut() {
            m.ack(ack);
        }
        self.highest_ack = Some(match self.highest_ack {
            Some(h) if seq_lt(ack, h) => h,
            _ => ack,
        });
    }

    /// A data segment this side sent (`end`: one past its last byte):
    /// counted, and checked against the windows the peer advertised.
    pub(crate) fn data(
        &mut self,
        peer: &mut Side,
        rec: &TcpRecord<'_>,
        timestamps: Option<Timestamps>,
    ) {
        let end = rec.seq.wrapping_add(rec.seq_len());
        if peer
            .last_window_field
            .is_some_and(|w| rec.payload_len <= usize::from(w) && rec.payload_len < SMALL_SEGMENT)
        {
            self.window_sized_segments += 1;
        }
        self.bytes += rec.payload_len as u64;
        self.data_segments += 1;
        self.largest_payload = self.largest_payload.max(rec.payload_len);
        if self.first_data.is_none() {
            self.first_data = rec.ts;
        }
        if rec.ts.is_some() {
            self.last_data = rec.ts;
        }
        let retransmitted = self.snd_nxt.is_some_and(|nxt| !seq_lt(nxt, end));
        if retransmitted {
            self.retransmissions += 1;
            self.retransmitted_bytes += rec.payload_len as u64;
        }
        self.rule_out_shifts(peer, rec.seq, end, timestamps, retransmitted);
    }

    /// What new data `seq..end` rules out of the shifts the peer's window
    /// fields may be read with: data past the right edge a shift gives
    /// (ending just below it, a segment or less, is a hit), and more in
    /// flight than the peer's largest field allows unscaled. Data the
    /// handshake's window may have allowed rules nothing out
    /// ([`EdgeEvidence`]).
    fn rule_out_shifts(
        &mut self,
        peer: &mut Side,
        seq: u32,
        end: u32,
        timestamps: Option<Timestamps>,
        retransmitted: bool,
    ) {
        let past_handshake_window = self
            .first_seq
            .is_some_and(|f| seq_lt(f.wrapping_add(u32::from(u16::MAX)), end));
        if let Some(e) = peer.edges.as_mut() {
            e.sender_read(timestamps.map(|t| t.tsecr));
            let confirmed = e.sender_data(seq, end, self.snd_nxt);
            peer.infer_lo = peer.infer_lo.max(confirmed);
            if !retransmitted && past_handshake_window {
                let lo = e.on_data(end, self.largest_payload as u64);
                peer.infer_lo = peer.infer_lo.max(lo);
            }
        }
        // More in flight than the receiver's largest field: its shift is at
        // least the smallest s with field << s >= flight.
        if let (Some(acked), Some(f), true) = (
            peer.highest_ack,
            peer.max_window_field,
            past_handshake_window,
        ) {
            let in_flight = u64::from(top(end, self.snd_nxt).wrapping_sub(acked));
            if f > 0 && in_flight <= 1 << 30 && in_flight > u64::from(f) {
                let lo = (0u8..=MAX_WINDOW_SCALE)
                    .find(|s| u64::from(f) << s >= in_flight)
                    .unwrap_or(MAX_WINDOW_SCALE);
                // A hole open: the capture may have missed the ACKs.
                let lo = match peer.edges.as_mut() {
                    Some(e) => e.rule_out(lo),
                    None => lo,
                };
                peer.infer_lo = peer.infer_lo.max(lo);
            }
        }
    }

    /// A segment of this side that takes sequence space (`seq..end`): the
    /// holes the capture shows, and the highest byte sent.
    pub(crate) fn advance(&mut self, seq: u32, end: u32) {
        if let Some(nxt) = self.snd_nxt {
            if self.missed.is_some() || seq_lt(nxt, seq) {
                self.missed
                    .get_or_insert_with(Box::default)
                    .data(seq, end, nxt);
            }
        }
        self.snd_nxt = Some(top(end, self.snd_nxt));
    }
}
