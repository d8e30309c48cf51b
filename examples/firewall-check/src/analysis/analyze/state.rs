//! What `analyze` keeps per open connection, and how each segment moves it.
//!
//! The handshake as each endpoint's kernel holds it (the client's last SYN,
//! the server's last SYN-ACK, negotiated by `tcp-options`' Linux model),
//! the RTT, each direction's `Side`, and what limited each sender
//! (`super::limit_feed`). Fixed size; the limit trackers, TSval rings and
//! edge evidence are allocated only once the connection carries data.

use std::time::Duration;

use capture::Timestamp;
use tcp_options::{Flags, LinuxOptions, TcpOption};

use crate::analysis::limit_log::LimitLog;
use crate::conn::negotiation::{self, HandshakeSegment};
use crate::conn::Direction;
use crate::decode::TcpRecord;

use super::limit_feed::LimitPair;
use super::side::Side;
use super::{RttSource, Settings};

/// What a SYN offers the server, as its kernel reads it: MSS, window
/// scale (and the shift on the wire), SACK-Permitted, Timestamps (not the
/// TSval).
fn offer(seg: &HandshakeSegment) -> (Option<u16>, Option<u8>, Option<u8>, bool, bool) {
    let r = seg.linux();
    (
        r.mss,
        r.window_scale,
        r.window_scale_clamped_from,
        r.sack_permitted,
        r.timestamps.is_some(),
    )
}

/// Most SYNs with different option blocks kept per connection.
pub(crate) const MAX_SYNS: usize = 8;

/// Why a SYN was taken as the one the SYN-ACK answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerBasis {
    /// The SYN-ACK's TSecr is this SYN's TSval (RFC 7323 section 3.2).
    TimestampEcho,
    /// The only SYN that offered every option the SYN-ACK answers.
    OptionsAnswered,
}

/// Which of several client SYNs with different options the SYN-ACK answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynAnswered {
    /// This one.
    Frame {
        /// Its index among the kept SYNs.
        index: usize,
        /// Its frame.
        frame: u64,
        /// SYNs with different options seen.
        syns: usize,
        /// What shows it.
        basis: AnswerBasis,
    },
    /// The capture does not show which: no timestamp echo matches, and
    /// more than one SYN offered what the SYN-ACK answers (or none did).
    Unknown {
        /// SYNs with different options seen.
        syns: usize,
    },
}

/// What `analyze` keeps per open connection: fixed size; the limit
/// trackers (a few hundred bytes) are allocated once it carries data.
#[derive(Debug, Clone, Default)]
pub struct ConnState {
    /// The client's SYN: the one the kept SYN-ACK answers
    /// ([`SynAnswered`]); before the SYN-ACK, the last one seen.
    pub(crate) syn: Option<HandshakeSegment>,
    /// The client's SYNs when it sent more than one with different option
    /// blocks (empty otherwise: nothing allocated), with their times.
    pub(crate) syns: Vec<(HandshakeSegment, Option<Timestamp>)>,
    /// Which SYN the SYN-ACK answers, when the client sent SYNs with
    /// different options (`None`: one SYN, or all alike).
    pub(crate) syn_answered: Option<SynAnswered>,
    /// The server's SYN-ACK: the first acceptable one (see
    /// [`ConnState::acceptable_synack`]); a later segment with SYN and ACK
    /// does not renegotiate.
    pub(crate) synack: Option<HandshakeSegment>,
    pub(crate) syn_ts: Option<Timestamp>,
    /// The last SYN's sequence number (the client's ISN) and payload
    /// length (Fast Open data a SYN-ACK may acknowledge).
    pub(crate) syn_seq: Option<(u32, u32)>,
    pub(crate) synack_ts: Option<Timestamp>,
    pub(crate) synack_seq: Option<u32>,
    /// Time origin of the limit trackers (the connection's first segment).
    pub(crate) base_ts: Option<Timestamp>,
    /// What limited each direction's sender ([`crate::analysis::limits`]),
    /// under the reading of the window the handshake suggests and, when the
    /// capture cannot yet tell whether the sender scales, under the other
    /// one. (Allocated once the connection carries data: a port scan's
    /// connections cost nothing here.)
    pub(crate) lim: Option<Box<[LimitPair; 2]>>,
    /// Without the handshake (and unless `--assume-wscale` and `--rtt` are
    /// both given): the trackers' input, replayed for the report once the
    /// capture has shown the shift and the RTT ([`crate::analysis::limit_log`]).
    pub(crate) limit_log: Option<Box<LimitLog>>,
    pub(crate) handshake_rtt_ns: Option<u64>,
    /// `shifts(false)`, computed again only when the SYN or SYN-ACK changes
    /// (negotiating on every segment cost a fifth of the run time).
    pub(crate) seen_shifts: Option<(u8, u8)>,
    pub(crate) c2s: Side,
    pub(crate) s2c: Side,
}

impl ConnState {
    /// SYN and SYN-ACK both seen.
    pub fn handshake_seen(&self) -> bool {
        self.syn.is_some() && self.synack.is_some()
    }

    /// The RTT the capture shows: the handshake's, or the two timestamp
    /// echo loops' (each direction's fastest) added; with its source.
    pub fn measured_rtt(&self) -> Option<(Duration, RttSource)> {
        if let Some(ns) = self.handshake_rtt_ns.filter(|n| *n > 0) {
            return Some((Duration::from_nanos(ns), RttSource::Handshake));
        }
        let ns = self.c2s.min_echo_ns?.saturating_add(self.s2c.min_echo_ns?);
        (ns > 0).then(|| (Duration::from_nanos(ns), RttSource::Timestamps))
    }

    /// Segments in the connection's [`LimitLog`].
    pub(crate) fn log_len(&self) -> usize {
        self.limit_log.as_ref().map_or(0, |l| l.len())
    }

    /// The side sending `dir` and its peer.
    pub(crate) fn side(&mut self, dir: Direction) -> (&mut Side, &mut Side) {
        match dir {
            Direction::ClientToServer => (&mut self.c2s, &mut self.s2c),
            Direction::ServerToClient => (&mut self.s2c, &mut self.c2s),
        }
    }

    /// The side sending `dir` and its peer, to read.
    pub(crate) fn sides(&self, dir: Direction) -> (&Side, &Side) {
        match dir {
            Direction::ClientToServer => (&self.c2s, &self.s2c),
            Direction::ServerToClient => (&self.s2c, &self.c2s),
        }
    }

    /// The shifts each end applies to the window fields it *receives*,
    /// `(client, server)`, when the handshake was seen, as each kernel
    /// holds them ([`negotiation`]). The client follows the SYN-ACK; the
    /// server scales when the SYN offered scaling and either its SYN-ACK
    /// answered or `server_scales_anyway` (the broken state, see
    /// [`super::mismatch`]).
    pub(crate) fn shifts(&self, server_scales_anyway: bool) -> Option<(u8, u8)> {
        let (syn, synack) = (self.syn.as_ref()?, self.synack.as_ref()?);
        let h = negotiation::held(Some(syn), Some(synack));
        let client = h.negotiation.client.map_or(0, |v| v.snd_wscale);
        let server_on = h.syn.is_some_and(|r| r.window_scale.is_some())
            && (h.synack.is_some_and(|r| r.window_scale.is_some()) || server_scales_anyway);
        let server = match h.negotiation.server {
            Some(v) if server_on => v.snd_wscale,
            _ => 0,
        };
        Some((client, server))
    }

    /// The shift the sender of `dir` applies to the receiver's window fields.
    pub(crate) fn sender_shift(
        &self,
        dir: Direction,
        assume: Option<u8>,
        anyway: bool,
    ) -> Option<u8> {
        let shifts = if anyway {
            self.shifts(true)
        } else {
            self.seen_shifts
        };
        match shifts {
            Some((c, s)) => Some(match dir {
                Direction::ClientToServer => c,
                Direction::ServerToClient => s,
            }),
            None => assume,
        }
    }

    /// The loop from the capture point to direction `d`'s sender and back,
    /// from the handshake: the server's is its SYN to its SYN-ACK; the
    /// client's the rest of the handshake's RTT (SYN-ACK to the ACK that
    /// answers it).
    pub(crate) fn sender_loop_ns(&self, d: Direction) -> Option<u64> {
        let server = self.synack_ts?.nanos_since(&self.syn_ts?)?;
        match d {
            Direction::ServerToClient => Some(server),
            Direction::ClientToServer => self.handshake_rtt_ns?.checked_sub(server),
        }
    }

    /// Keeps a client SYN: the latest one, and every one whose option
    /// block differs from the others (at most [`MAX_SYNS`]).
    fn keep_syn(&mut self, seg: HandshakeSegment, ts: Option<Timestamp>) {
        if let Some(prev) = self.syn {
            // What the server negotiates from: a retransmission that differs
            // only in its TSval (Linux) offers the same.
            let differs = offer(&prev) != offer(&seg);
            if self.syns.is_empty() && differs {
                self.syns.push((prev, self.syn_ts));
            }
            if !self.syns.is_empty() && self.syns.len() < MAX_SYNS {
                self.syns.push((seg, ts));
            }
        }
        self.syn = Some(seg);
        self.syn_ts = ts;
    }

    /// Whether a segment with SYN and ACK from the server is the SYN-ACK
    /// the client's kernel negotiates from: none kept yet (the client
    /// leaves SYN-SENT at the first; a later one meets an established
    /// connection, which answers a SYN with a challenge ACK, RFC 5961
    /// section 4, and renegotiates nothing), no RST (in SYN-SENT an
    /// acceptable ACK with RST resets the connection, RFC 9293 section
    /// 3.10.7.3, Linux `tcp_rcv_synsent_state_process`), and, with the SYN
    /// seen, acknowledging the client's ISN + 1 (an unacceptable ACK is
    /// answered with a reset). A mid-connection segment with every flag set
    /// fails all three.
    pub(crate) fn acceptable_synack(&self, rec: &TcpRecord<'_>) -> bool {
        if self.synack.is_some() || rec.flags.contains(Flags::RST) {
            return false;
        }
        match self.syn.as_ref() {
            Some(_) => self
                .syn_seq
                .is_none_or(|(isn, data)| rec.ack.wrapping_sub(isn.wrapping_add(1)) <= data),
            None => true,
        }
    }

    /// Which of the client's SYNs `synack` answers when they differ:
    /// the one whose TSval its Timestamps option echoes; else the only one
    /// it is consistent with (RFC 7323 section 2.2 and 3.2 and RFC 2018:
    /// a SYN-ACK carries Window Scale, Timestamps or SACK-Permitted only
    /// when the SYN it answers did); else unknown.
    fn answered(&self, synack: &HandshakeSegment) -> Option<SynAnswered> {
        if self.syns.is_empty() {
            return None;
        }
        let syns = self.syns.len();
        let sa = synack.linux();
        let frame = |index: usize, basis| SynAnswered::Frame {
            index,
            frame: self.syns[index].0.frame,
            syns,
            basis,
        };
        if let Some(echo) = sa.timestamps.map(|t| t.tsecr) {
            let hit = self
                .syns
                .iter()
                .rposition(|(s, _)| s.linux().timestamps.is_some_and(|t| t.tsval == echo));
            if let Some(i) = hit {
                return Some(frame(i, AnswerBasis::TimestampEcho));
            }
        }
        let consistent: Vec<usize> = self
            .syns
            .iter()
            .enumerate()
            .filter(|(_, (s, _))| {
                let r = s.linux();
                (sa.window_scale.is_none() || r.window_scale.is_some())
                    && (sa.timestamps.is_none() || r.timestamps.is_some())
                    && (!sa.sack_permitted || r.sack_permitted)
            })
            .map(|(i, _)| i)
            .collect();
        match consistent[..] {
            [] => Some(SynAnswered::Unknown { syns }),
            [.., last]
                if consistent
                    .iter()
                    .all(|i| offer(&self.syns[*i].0) == offer(&self.syns[last].0)) =>
            {
                Some(frame(last, AnswerBasis::OptionsAnswered))
            }
            _ => Some(SynAnswered::Unknown { syns }),
        }
    }

    /// Feeds one segment of this connection.
    pub(crate) fn update(&mut self, rec: &TcpRecord<'_>, dir: Direction, settings: &Settings) {
        let syn = rec.flags.contains(Flags::SYN);
        let ack = rec.flags.contains(Flags::ACK);
        self.handshake(rec, dir, settings);
        // The Linux walk, at most once per segment and only for connections
        // that carry data: the last Timestamps option is what the kernel
        // records.
        let timestamps = (rec.payload_len > 0 || self.lim.is_some())
            .then(|| {
                LinuxOptions::new(rec.options)
                    .filter_map(|o| match o.option {
                        TcpOption::Timestamps(ts) => Some(ts),
                        _ => None,
                    })
                    .last()
            })
            .flatten();
        // Log the trackers' input only where the report may replay it: no
        // handshake, and not both the shift and the RTT given; never for a
        // time series, which builds no report.
        let given = settings.rtt.is_some()
            && settings.assumed_shift(Direction::ClientToServer).is_some()
            && settings.assumed_shift(Direction::ServerToClient).is_some();
        let log = !(settings.time_series || self.handshake_seen() || given);
        self.feed_limits(rec, dir, timestamps, log);
        // Timestamps: remember ours, match the peer's echo (once the
        // connection carries data: the limit trackers exist then).
        let carries_data = self.lim.is_some();
        let handshake = self.handshake_seen();
        let (me, peer) = self.side(dir);
        me.packets += 1;
        if carries_data {
            me.timestamps(peer, rec, timestamps, ack);
        }
        let rst = rec.flags.contains(Flags::RST);
        if !syn && ack {
            me.ack_edges(peer, rec, timestamps, handshake, rst);
        }
        // A reset's window field advertises nothing (Linux sends its RSTs
        // with window 0): read as a window, data the peer sent after it
        // counted as filling a zero window (nDPI's reddit.pcap: TLS
        // connections the client reset while the server's last flight was
        // on its way were called window-limited).
        if !syn && !rst {
            me.window_field(rec);
        }
        if ack {
            me.acknowledged(peer, rec.ack);
        }
        if rec.payload_len > 0 {
            me.data(peer, rec, timestamps);
        }
        if rec.seq_len() > 0 {
            me.advance(rec.seq, rec.seq.wrapping_add(rec.seq_len()));
        }
    }

    /// The handshake part of a segment: the SYN or SYN-ACK kept, the
    /// shifts negotiated again, the handshake's RTT at the client's ACK of
    /// the SYN-ACK, and the limit trackers set up once the RTT is known.
    fn handshake(&mut self, rec: &TcpRecord<'_>, dir: Direction, settings: &Settings) {
        let syn = rec.flags.contains(Flags::SYN);
        let ack = rec.flags.contains(Flags::ACK);
        let segment = || HandshakeSegment::new(rec.options, rec.flags, rec.window, rec.frame);
        // A listener discards a SYN with RST or FIN (Linux
        // `tcp_rcv_state_process`, LISTEN); a SYN after the SYN-ACK was
        // kept is answered by no new negotiation (unless it is the first
        // SYN seen: a capture that reordered the two).
        let bad = Flags::RST | Flags::FIN;
        if syn
            && !ack
            && dir == Direction::ClientToServer
            && !rec.flags.intersects(bad)
            && (self.synack.is_none() || self.syn.is_none())
        {
            self.keep_syn(segment(), rec.ts);
            self.syn_seq = Some((rec.seq, u32::try_from(rec.payload_len).unwrap_or(u32::MAX)));
        }
        if syn && ack && dir == Direction::ServerToClient && self.acceptable_synack(rec) {
            let sa = segment();
            self.syn_answered = self.answered(&sa);
            // The negotiation follows the answered SYN; the handshake RTT
            // still runs from the latest SYN (Karn: which copy the SYN-ACK
            // answers in time is ambiguous, and the earlier one would count
            // the client's retransmission timeout).
            if let Some(SynAnswered::Frame { index, .. }) = self.syn_answered {
                if let Some((s, _)) = self.syns.get(index) {
                    self.syn = Some(*s);
                }
            }
            self.synack = Some(sa);
            self.synack_seq = Some(rec.seq);
            self.synack_ts = rec.ts;
        }
        if self.base_ts.is_none() {
            self.base_ts = rec.ts;
        }
        if syn
            && ((!ack && dir == Direction::ClientToServer)
                || (ack && dir == Direction::ServerToClient))
        {
            self.seen_shifts = self.shifts(false);
        }
        if !syn && ack && dir == Direction::ClientToServer && self.handshake_rtt_ns.is_none() {
            if let (Some(isn), Some(t0), Some(t1)) = (self.synack_seq, self.syn_ts, rec.ts) {
                if rec.ack == isn.wrapping_add(1) {
                    self.handshake_rtt_ns = t1.nanos_since(&t0);
                    self.configure_limits(settings);
                }
            }
        }
        if rec.payload_len > 0
            && settings.rtt.is_some()
            && !self.lim.as_ref().is_some_and(|l| l[0].main.is_configured())
        {
            // No handshake: trackers run with the given RTT and the assumed shift.
            self.configure_limits(settings);
        }
    }
}
