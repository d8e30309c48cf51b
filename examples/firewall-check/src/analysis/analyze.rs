//! `firewall-check analyze`: per connection, what each endpoint's kernel
//! negotiated, what limited each direction, and what the window allowed.
//!
//! # What is measured, per connection
//!
//! - The handshake ([`crate::conn::negotiation`]): the client's SYN and the
//!   server's SYN-ACK option blocks (40 bytes at most each), each read by
//!   `tcp-options`' Linux model as the receiving kernel parses it, into what
//!   each endpoint believes: MSS, window scaling and shifts, SACK,
//!   timestamps; handshake segments a Linux kernel drops for their signature
//!   options, per kernel build; ECN (classic or AccECN) from the flags.
//! - Per direction: segments, payload bytes, retransmissions (payload that
//!   does not advance the highest sequence sent), and the largest receive
//!   window the *receiver* advertised, read as the *sender* interprets it
//!   but never more than the receiver means it.
//! - The RTT: `--rtt` when given; otherwise the handshake (SYN to the
//!   client's ACK of the SYN-ACK, which is one full round trip from any
//!   capture point on the path); otherwise timestamp echoes: for each side,
//!   the smallest delay between a TSval passing the capture point and the
//!   peer's segment echoing it; the two half-paths add up to the RTT.
//! - The ceiling of each direction: the receiver's largest window over the
//!   RTT (`bdp::ceiling`); the achieved throughput: payload bytes that
//!   advanced the sequence, over the time from the first data segment to one
//!   RTT after the last (the last flight still has to be delivered and
//!   acknowledged; without an RTT, to the last data segment).
//! - What limited the sender ([`crate::analysis::limits`]): its busy time split into
//!   receive window, sender and network as Linux's `TCP_INFO` splits it;
//!   data sent beyond the window the receiver advertised; for a window or
//!   buffer limit, the Linux settings that lift it (`bdp::linux`).
//! - Window-limited: the limit is the receive window and the achieved
//!   throughput does not exceed the ceiling. With too little data for the
//!   time split, the older test: a window's worth in flight on at least 10 %
//!   of the data segments, or 70 % to 120 % of the ceiling achieved.
//!
//! # Mid-stream captures
//!
//! Without the handshake the shifts are unknown: the report infers, for
//! each endpoint, the shift its peer reads its window fields with
//! (`wscale_inferred`, see `infer_shift`): bounds that need no
//! assumption (data past the furthest right edge of a shift rules it out;
//! the right edge never moving left and the 1 GiB window bound it from
//! above, as a receiver that never shrinks its window, Linux's default,
//! guarantees), then one value where the capture shows it: the edge a
//! window-limited sender keeps stopping at, or else the shift a Linux
//! receiver's window growth shows (`bdp::linux::WindowGrowth`), on the
//! stated assumption that both ends agree. Next to the receiver, the
//! sender's timestamp echoes say which ACKs it had read (`EdgeEvidence`).
//! A receiver whose fields sit at 65,535 while its peer's data goes past
//! them means no scaling while the peer reads them scaled: the ends
//! disagree (window scaling removed from the SYN-ACK), seen from either
//! side. Windows stay unscaled rather than guessed, unless
//! `--assume-wscale S` asks to read every window field with shift S; the
//! limit of a direction whose receiver's shift the capture pins to one
//! value is computed with it, by replaying the trackers' input logged from
//! the first data segment ([`crate::analysis::limit_log`]) with the RTT the timestamps
//! show (`limit.inferred_shift`).
//!
//! # The broken state
//!
//! The endpoints disagree about window scaling when its option was removed
//! on the way. Seen from the client's side, the SYN-ACK has no window scale
//! yet the server's later window fields are tiny next to its SYN-ACK window
//! (below 1/16 of it): the server scales anyway. Seen from the server's
//! side, the SYN-ACK carries it yet the client's window fields stay at
//! unscaled sizes (its first one at least half its SYN window, with a shift
//! of 2 or more). Either is flagged, with how sure it is.
//!
//! Memory: one fixed-size state per open connection (see [`crate::conn::tracker`]:
//! closed connections leave the table a few thousand frames after their
//! last segment), plus a few hundred bytes of limit trackers and TSval
//! rings once it carries data; reports are written as connections finish,
//! in order of first appearance. Per segment: one hash lookup, one walk of
//! the option block for timestamps, a few comparisons per limit tracker;
//! the handshake is negotiated when the SYN or SYN-ACK arrives.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Read, Write};
use std::time::Duration;

use rustc_hash::FxHashMap;

use bdp::{BitsPerSecond, Bytes, DurationDisplay};
use serde::Serialize;
use tcp_options::seq::seq_lt;
use tcp_options::{kind::MAX_WINDOW_SCALE, Flags, LinuxOptions, TcpOption, Timestamps};

use crate::analysis::limit_log::{self, LimitLog};
use crate::analysis::limits::{Limit, LimitKind, LimitTracker, RoundKind};
use crate::conn::missed::Missed;
use crate::conn::negotiation::{self, EcnMode, HandshakeKind, HandshakeSegment, LinuxDrop};
use crate::conn::tracker::{ConnTracker, Connection, Direction, DEFAULT_CAPACITY};
use crate::decode::{decode_packet, TcpRecord};
use capture::reader::DEFAULT_BUFFER_CAPACITY;
use capture::{CaptureError, CaptureReader, Timestamp};
use std::collections::VecDeque;

/// TSvals remembered per side for RTT samples.
const TS_RING: usize = 16;
/// The window field of a scaling server after the handshake is below this
/// fraction (1/16) of its SYN-ACK window.
const SCALED_WINDOW_DIVISOR: u32 = 16;
/// Fraction (in percent) of data segments sent with a full window that marks a flow window-limited.
const WINDOW_FULL_PERCENT: u64 = 10;
/// Fraction (in percent) of the ceiling achieved that marks a flow window-limited.
const CEILING_PERCENT: u128 = 70;
/// Above this fraction (in percent) of the ceiling the capture contradicts
/// it: the largest window seen was not in force while the data was sent (or
/// the sender read a larger one), so the ceiling is not reported as the
/// limit and the text says what the capture shows instead. 100: a ceiling
/// is a limit only where the achieved throughput does not exceed it.
const CEILING_MAX_PERCENT: u128 = 100;
/// Default target rate for the verdict: 1 Gbit/s (the campus path of DESIGN.md incident 1).
pub const DEFAULT_TARGET_RATE: BitsPerSecond = BitsPerSecond::new(1_000_000_000);
/// The largest window without scaling.
const MAX_UNSCALED: u64 = 65_535;

/// Version of `analyze --json`'s document (`docs/json.md`): 2 added
/// `schema_version` itself, `id`, `evicted`, `continues`,
/// `negotiated.wscale_clamped_from`, `wscale_mismatch_evidence`,
/// `linux_drops`, and made `negotiated.ecn` a mode (`classic`, `accecn`,
/// `null`) instead of a boolean.
pub const SCHEMA_VERSION: u32 = 2;

/// Settings of an analysis.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Use this RTT instead of measuring it.
    pub rtt: Option<Duration>,
    /// The rate the verdict says what window would be needed for.
    pub target_rate: BitsPerSecond,
    /// Read window fields of connections without a handshake with this shift.
    pub assume_wscale: Option<u8>,
    /// For one connection without a handshake, where `assume_wscale` is not
    /// given: the shift each direction's sender (client to server, server
    /// to client) reads the receiver's window fields with. `series` sets it
    /// per connection from a first pass over a capture file ([`learn`]:
    /// what `analyze` infers); `[None, None]` otherwise.
    pub learned_wscale: [Option<u8>; 2],
    /// Cap on open connections.
    pub capacity: usize,
    /// Capture reader buffer in bytes (records above half of it are refused).
    pub buffer_capacity: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rtt: None,
            target_rate: DEFAULT_TARGET_RATE,
            assume_wscale: None,
            learned_wscale: [None, None],
            capacity: DEFAULT_CAPACITY,
            buffer_capacity: DEFAULT_BUFFER_CAPACITY,
        }
    }
}

impl Settings {
    /// The shift direction `d`'s sender reads the receiver's window fields
    /// with when the handshake is not seen: the assumed one, or the learned one.
    pub fn assumed_shift(&self, d: Direction) -> Option<u8> {
        self.assume_wscale
            .or(self.learned_wscale[usize::from(d == Direction::ServerToClient)])
    }
}

/// Per-direction counters (the direction's *sender* sends the data; its
/// window fields advertise its own receive window for the other direction).
#[derive(Debug, Clone, Default)]
struct Side {
    packets: u64,
    bytes: u64,
    retransmissions: u64,
    retransmitted_bytes: u64,
    /// One past the highest sequence number sent.
    snd_nxt: Option<u32>,
    first_data: Option<Timestamp>,
    last_data: Option<Timestamp>,
    largest_payload: usize,
    data_segments: u64,
    window_full: u64,
    /// Window fields this side sent on non-SYN segments.
    max_window_field: Option<u16>,
    first_window_field: Option<u16>,
    /// (time, bytes acknowledged) samples of this side's ACKs, for the
    /// time series' throughput over an RTT (allocated by `series` only).
    acked_ring: Option<Box<AckedRing>>,
    /// This side's recent new data and when it passed, for the time
    /// series' RTT samples (allocated by `series` only).
    rtt_ring: Option<Box<RttRing>>,
    /// Sequence number of this side's first non-SYN segment seen: at or
    /// after its ISN + 1, so no more than 65,535 bytes before the edge of
    /// the handshake's (never scaled) window.
    first_seq: Option<u32>,
    /// Lower bound on this side's window-scale shift from the peer's flight.
    infer_lo: u8,
    /// Upper bound on this side's shift from its right edge never moving left.
    infer_hi: Option<u8>,
    /// This side's previous ACK number and window field.
    prev_ack_field: Option<(u32, u16)>,
    /// What this side's ACKs and its peer's data say about this side's
    /// shift, for a capture without the handshake (allocated once this
    /// side acknowledges something while the handshake is unseen).
    edges: Option<Box<EdgeEvidence>>,
    /// Data segments no larger than the peer's last window field read as
    /// bytes (and below 536 bytes): what a sender sends when it reads a
    /// scaled window field unscaled.
    window_sized_segments: u64,
    last_window_field: Option<u16>,
    /// Highest acknowledgment this side sent.
    highest_ack: Option<u32>,
    /// Recent TSvals this side sent and when they passed (allocated once
    /// the connection carries data: a port scan's SYNs need none).
    ts: Option<Box<TsRing>>,
    /// Smallest delay from one of this side's TSvals to the peer's echo.
    min_echo_ns: Option<u64>,
    /// Holes in this side's data and the bytes of them the peer
    /// acknowledged: what the capture missed (allocated at the first hole).
    missed: Option<Box<Missed>>,
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
}

/// A small ring of (time, cumulative bytes acknowledged), at most one
/// sample per 1/32 of the span it is asked about.
#[derive(Debug, Clone, Copy)]
struct AckedRing {
    items: [(u64, u64); 64],
    len: usize,
    next: usize,
}

impl Default for AckedRing {
    fn default() -> Self {
        AckedRing {
            items: [(0, 0); 64],
            len: 0,
            next: 0,
        }
    }
}

impl AckedRing {
    fn push(&mut self, t: u64, acked: u64) {
        if self.len > 0 {
            let newest = (self.next + 63) % 64;
            if self.items[newest].1 == acked {
                return;
            }
        }
        self.items[self.next] = (t, acked);
        self.next = (self.next + 1) % 64;
        self.len = (self.len + 1).min(64);
    }
    /// The newest sample at or before `t` (or the oldest one kept).
    fn at_or_before(&self, t: u64) -> Option<u64> {
        let mut oldest = None;
        for i in 0..self.len {
            let (at, v) = self.items[(self.next + 63 - i) % 64];
            if at <= t {
                return Some(v);
            }
            oldest = Some(v);
        }
        oldest
    }
}

/// Where this side's new data ended and when each end passed the capture
/// point, for RTT samples: the ACK that covers an end dates the round trip
/// of that segment from here to the receiver and back (Karn's rule: once a
/// retransmission is seen the ring starts again, so an ACK is never matched
/// with a segment that was sent twice).
#[derive(Debug, Clone, Copy, Default)]
struct RttRing {
    items: [(u32, u64); 32],
    len: usize,
    next: usize,
    /// The side's retransmission count when the ring was last cleared.
    retransmissions: u64,
    /// The highest ACK of the peer already matched.
    acked: Option<u32>,
    /// The highest end ever recorded (kept when the ring starts again): a
    /// retransmission does not move it, so it is never recorded.
    last_end: Option<u32>,
}

impl RttRing {
    /// Records that new data up to `end` passed at `t_ns`.
    fn sent(&mut self, end: u32, t_ns: u64) {
        if self.last_end.is_some_and(|last| !seq_lt(last, end)) {
            return;
        }
        self.last_end = Some(end);
        self.items[self.next] = (end, t_ns);
        self.next = (self.next + 1) % 32;
        self.len = (self.len + 1).min(32);
    }

    /// The time since the newest recorded end that `ack` covers, once per
    /// advance of the ACK; the covered ends are dropped.
    fn acked(&mut self, ack: u32, t_ns: u64) -> Option<u64> {
        if self.acked.is_some_and(|a| !seq_lt(a, ack)) {
            return None;
        }
        self.acked = Some(ack);
        let mut sample = None;
        let mut kept = 0;
        let mut out = [(0u32, 0u64); 32];
        for i in 0..self.len {
            let (end, at) = self.items[(self.next + 32 - self.len + i) % 32];
            if seq_lt(ack, end) {
                out[kept] = (end, at);
                kept += 1;
            } else {
                sample = t_ns.checked_sub(at);
            }
        }
        self.items = out;
        self.len = kept;
        self.next = kept % 32;
        sample
    }
}

/// One direction's limit trackers: under the shift the handshake seen here
/// suggests, and (when it could be wrong) under the other reading.
#[derive(Debug, Clone)]
struct LimitPair {
    main: LimitTracker,
    /// Boxed: a tracker is most of a connection's size, and many
    /// connections have no other reading.
    alt: Option<Box<LimitTracker>>,
}

impl Default for LimitPair {
    fn default() -> Self {
        LimitPair {
            main: LimitTracker::new(0),
            alt: None,
        }
    }
}

impl LimitPair {
    fn each(&mut self, mut f: impl FnMut(&mut LimitTracker)) {
        f(&mut self.main);
        if let Some(a) = self.alt.as_mut() {
            f(a);
        }
    }
    /// The tracker reading with `shift`, else the main one.
    fn reading(&self, shift: Option<u8>) -> &LimitTracker {
        match (shift, self.alt.as_deref()) {
            (Some(s), Some(a))
                if a.read_shift() == s.min(MAX_WINDOW_SCALE)
                    && self.main.read_shift() != a.read_shift() =>
            {
                a
            }
            _ => &self.main,
        }
    }
    /// The tracker reading with exactly `shift`, if any.
    fn exactly(&self, shift: u8) -> Option<&LimitTracker> {
        if self.main.read_shift() == shift {
            Some(&self.main)
        } else {
            self.alt.as_deref().filter(|a| a.read_shift() == shift)
        }
    }
}

/// The trackers of a connection that carried no data, built once (a port
/// scan's connections have none; each report built two, 1.9 KB of state,
/// 5.2 M instructions of the many-connections benchmark run's 1.89 G,
/// callgrind).
static UNUSED_LIMITS: std::sync::LazyLock<LimitPair> = std::sync::LazyLock::new(LimitPair::default);

/// What `analyze` keeps per open connection: fixed size; the limit
/// trackers (a few hundred bytes) are allocated once it carries data.
#[derive(Debug, Clone, Default)]
pub struct ConnState {
    /// The client's SYN (the last one seen).
    syn: Option<HandshakeSegment>,
    /// The server's SYN-ACK (the last one seen).
    synack: Option<HandshakeSegment>,
    syn_ts: Option<Timestamp>,
    synack_ts: Option<Timestamp>,
    synack_seq: Option<u32>,
    /// Time origin of the limit trackers (the connection's first segment).
    base_ts: Option<Timestamp>,
    /// What limited each direction's sender ([`crate::analysis::limits`]), under the
    /// reading of the window the handshake suggests and, when the capture
    /// cannot yet tell whether the sender scales, under the other one.
    /// (Allocated once the connection carries data: a port scan's
    /// connections cost nothing here.)
    lim: Option<Box<[LimitPair; 2]>>,
    /// Sequence origin of each direction for time series.
    series_origin: [Option<u32>; 2],
    /// Each direction's last time-series sample (allocated by `series` only).
    series_last: Option<Box<[Option<SeriesSample>; 2]>>,
    /// Set by `series`: the limit trackers also keep what time series read
    /// ([`LimitTracker::keep_rounds`]).
    series: bool,
    /// Without the handshake (and unless `--assume-wscale` and `--rtt` are
    /// both given): the trackers' input, replayed for the report once the
    /// capture has shown the shift and the RTT ([`crate::analysis::limit_log`]).
    limit_log: Option<Box<LimitLog>>,
    handshake_rtt_ns: Option<u64>,
    /// `shifts(false)`, computed again only when the SYN or SYN-ACK changes
    /// (negotiating on every segment cost a fifth of the run time).
    seen_shifts: Option<(u8, u8)>,
    c2s: Side,
    s2c: Side,
}

impl ConnState {
    /// The RTT the capture shows: the handshake's, or the two timestamp
    /// echo loops' (each direction's fastest) added; with its source.
    fn measured_rtt(&self) -> Option<(Duration, &'static str)> {
        if let Some(ns) = self.handshake_rtt_ns.filter(|n| *n > 0) {
            return Some((Duration::from_nanos(ns), "handshake"));
        }
        let ns = self.c2s.min_echo_ns?.saturating_add(self.s2c.min_echo_ns?);
        (ns > 0).then(|| (Duration::from_nanos(ns), "timestamps"))
    }

    /// Segments in the connection's [`LimitLog`].
    fn log_len(&self) -> usize {
        self.limit_log.as_ref().map_or(0, |l| l.len())
    }

    fn side(&mut self, dir: Direction) -> (&mut Side, &mut Side) {
        match dir {
            Direction::ClientToServer => (&mut self.c2s, &mut self.s2c),
            Direction::ServerToClient => (&mut self.s2c, &mut self.c2s),
        }
    }

    /// The shifts each end applies to the window fields it *receives*,
    /// `(client, server)`, when the handshake was seen, as each kernel
    /// holds them ([`negotiation`]). The client follows the SYN-ACK; the
    /// server scales when the SYN offered scaling and either its SYN-ACK
    /// answered or `server_scales_anyway` (the broken state, see the module
    /// docs).
    fn shifts(&self, server_scales_anyway: bool) -> Option<(u8, u8)> {
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

    /// The shifts of direction `d`'s receiver's window fields for the time
    /// series: `(as the sender reads them, as the receiver means them)`,
    /// as the capture shows them so far, with the same mismatch evidence
    /// the report uses.
    fn series_shifts(&self, d: Direction, settings: &Settings) -> SeriesShifts {
        let syn_ws = self.syn.and_then(|s| s.linux().window_scale);
        let synack_ws = self.synack.and_then(|s| s.linux().window_scale);
        let client_unscaled = client_unscaled(self, syn_ws, synack_ws).is_some();
        let server_anyway = server_scales_anyway(self, syn_ws, synack_ws);
        let handshake = self.syn.is_some() && self.synack.is_some();
        if !handshake {
            (settings.assumed_shift(d), settings.assumed_shift(d))
        } else {
            match d {
                // The client reads the server's fields; the server means them.
                Direction::ClientToServer => (
                    Some(if client_unscaled {
                        0
                    } else {
                        synack_ws.unwrap_or(0)
                    }),
                    match synack_ws {
                        Some(s) => Some(s),
                        None if server_anyway => None,
                        None => Some(0),
                    },
                ),
                // The server reads the client's fields; the client means them.
                Direction::ServerToClient => (
                    Some(if synack_ws.is_some() || server_anyway {
                        syn_ws.unwrap_or(0)
                    } else {
                        0
                    }),
                    Some(if synack_ws.is_some() && !client_unscaled {
                        syn_ws.unwrap_or(0)
                    } else {
                        0
                    }),
                ),
            }
        }
    }

    /// A time-series row at the moment direction `d`'s sender learned of
    /// an ACK after its last row (the previous row's state, the phase
    /// decided then), once; `shifts` are [`ConnState::series_shifts`]'s.
    fn learned_sample(&mut self, d: Direction, shifts: SeriesShifts) -> Option<SeriesSample> {
        let (t_ns, phase, round) = self.series_tracker(d, shifts)?.learned_at()?;
        let i = usize::from(d == Direction::ServerToClient);
        let last = self.series_last.as_mut()?[i].as_mut()?;
        let t = t_ns as f64 / 1e9;
        if t <= last.time_s || phase == last.limit && last.limit != "busy" {
            return None;
        }
        let s = SeriesSample {
            time_s: t,
            rtt_s: None,
            limit: phase,
            round,
            ..*last
        };
        *last = s;
        Some(s)
    }

    /// The limit tracker of direction `d` under the reading the time
    /// series shows (`shifts`: [`ConnState::series_shifts`]'s).
    /// `None` unless a tracker reads with exactly that shift and knows the
    /// RTT: while the shift is unknown (no handshake, none assumed), or
    /// without an RTT (no handshake, no `--rtt`), a tracker reading the
    /// fields unscaled would call a scaled window of a few units the limit.
    fn series_tracker(&self, d: Direction, shifts: SeriesShifts) -> Option<&LimitTracker> {
        let (read_shift, _) = shifts;
        self.lim
            .as_ref()?
            .get(usize::from(d == Direction::ServerToClient))?
            .exactly(read_shift?.min(MAX_WINDOW_SCALE))
            .filter(|t| t.is_configured())
    }

    /// The time-series point of direction `d` now ([`SeriesSample`]),
    /// after a data segment of `d` (`data`) or an ACK of its receiver;
    /// `shifts` are [`ConnState::series_shifts`]'s.
    fn sample(
        &mut self,
        id: u64,
        d: Direction,
        data: bool,
        ts: Option<Timestamp>,
        shifts: SeriesShifts,
        settings: &Settings,
    ) -> Option<SeriesSample> {
        let (base, ts) = (self.base_ts?, ts?);
        let t_ns = ts.nanos_since(&base)?;
        let (read_shift, meant_shift) = shifts;
        // Before the receiver's first window after the handshake, the
        // handshake's own (never scaled) window is in force.
        let handshake_window = match d {
            Direction::ClientToServer => self.synack.map(|s| u64::from(s.window)),
            Direction::ServerToClient => self.syn.map(|s| u64::from(s.window)),
        };
        let tracker = self.series_tracker(d, shifts);
        let limit = tracker.map_or("", LimitTracker::phase_name);
        let round = tracker.map_or(0, LimitTracker::round_no);
        let rtt_ns = settings
            .rtt
            .map(|r| u64::try_from(r.as_nanos()).unwrap_or(u64::MAX))
            .or(self.handshake_rtt_ns)
            .filter(|r| *r > 0);
        // The sender's own side of the loop: from the handshake, else
        // from the sender's echoes of the receiver's TSvals.
        let sender_loop = self.handshake_rtt_ns.and(self.sender_loop_ns(d));
        let (me, peer, origin) = match d {
            Direction::ClientToServer => (&mut self.c2s, &mut self.s2c, &mut self.series_origin[0]),
            Direction::ServerToClient => (&mut self.s2c, &mut self.c2s, &mut self.series_origin[1]),
        };
        let nxt = me.snd_nxt?;
        // An RTT sample where the receiver's ACK covers new data: from the
        // newest data segment it covers to it, as seen here, plus the
        // sender's side of the loop.
        let rtt_sample_ns = {
            let retransmissions = me.retransmissions;
            let ring = me.rtt_ring.get_or_insert_with(Box::default);
            if ring.retransmissions != retransmissions {
                **ring = RttRing {
                    retransmissions,
                    acked: ring.acked,
                    last_end: ring.last_end,
                    ..RttRing::default()
                };
            }
            if data {
                ring.sent(nxt, t_ns);
                None
            } else {
                let upstream = sender_loop.or(peer.min_echo_ns);
                peer.highest_ack
                    .and_then(|a| ring.acked(a, t_ns))
                    .and_then(|here| upstream.map(|u| here.saturating_add(u)))
            }
        };
        let o = *origin.get_or_insert(nxt.wrapping_sub(me.bytes.min(u64::from(u32::MAX)) as u32));
        let rel = |x: u32| u64::from(x.wrapping_sub(o));
        let ack = peer.highest_ack.unwrap_or(o);
        let in_flight = u64::from(nxt.wrapping_sub(ack)).min(1 << 31);
        // Bytes acknowledged over the last RTT.
        let throughput_bps = rtt_ns.map(|rtt| {
            let acked = rel(ack);
            let ring = peer.acked_ring.get_or_insert_with(Box::default);
            ring.push(t_ns, acked);
            let back = ring.at_or_before(t_ns.saturating_sub(rtt)).unwrap_or(0);
            let bytes = acked.saturating_sub(back);
            u64::try_from(u128::from(bytes) * 8 * 1_000_000_000 / u128::from(rtt))
                .unwrap_or(u64::MAX)
        });
        let field = peer.last_window_field;
        Some(SeriesSample {
            connection: id,
            direction: d,
            time_s: t_ns as f64 / 1e9,
            seq_end: rel(nxt),
            ack: rel(ack),
            window_bytes: match field {
                Some(f) => meant_shift.map(|s| u64::from(f) << s.min(MAX_WINDOW_SCALE)),
                None => handshake_window,
            },
            window_read_bytes: match field {
                Some(f) => read_shift.map(|s| u64::from(f) << s.min(MAX_WINDOW_SCALE)),
                None => handshake_window,
            },
            in_flight_bytes: in_flight,
            throughput_bps,
            rtt_s: rtt_sample_ns.map(|r| r as f64 / 1e9),
            rtt_estimate_s: rtt_ns.map(|r| r as f64 / 1e9),
            limit,
            round,
        })
    }

    /// The loop from the capture point to direction `d`'s sender and back,
    /// from the handshake: the server's is its SYN to its SYN-ACK; the
    /// client's the rest of the handshake's RTT (SYN-ACK to the ACK that
    /// answers it).
    fn sender_loop_ns(&self, d: Direction) -> Option<u64> {
        let server = self.synack_ts?.nanos_since(&self.syn_ts?)?;
        match d {
            Direction::ServerToClient => Some(server),
            Direction::ClientToServer => self.handshake_rtt_ns?.checked_sub(server),
        }
    }

    /// Sets the limit trackers up once the handshake (or, without one, a
    /// given RTT) tells the round length, each sender's loop delay from the
    /// capture point and its reading of the window.
    fn configure_limits(&mut self, settings: &Settings) {
        let Some(rtt_ns) = settings
            .rtt
            .map(|r| u64::try_from(r.as_nanos()).unwrap_or(u64::MAX))
            .or(self.handshake_rtt_ns)
            .filter(|n| *n > 0)
        else {
            return;
        };
        let since = |a: Option<Timestamp>, b: Option<Timestamp>| match (a, b) {
            (Some(a), Some(b)) => b.nanos_since(&a),
            _ => None,
        };
        let rel = |t: Option<Timestamp>| since(self.base_ts, t).unwrap_or(0);
        let syn_ws = self.syn.and_then(|s| s.linux().window_scale);
        for dir in [Direction::ClientToServer, Direction::ServerToClient] {
            let main = self
                .sender_shift(dir, settings.assumed_shift(dir), false)
                .unwrap_or(0);
            // The other reading: unscaled, or (when the handshake seen here
            // says unscaled) the shift the receiver offered.
            let alt = match dir {
                _ if main != 0 => Some(0),
                Direction::ServerToClient => syn_ws,
                // The SYN-ACK seen here has no window scale: the client
                // certainly did not get one.
                Direction::ClientToServer => None,
            };
            let loop_ns = self.sender_loop_ns(dir);
            let initial = match dir {
                Direction::ServerToClient => self
                    .syn
                    .zip(self.synack_seq)
                    .map(|(s, isn)| (rel(self.syn_ts), isn.wrapping_add(1), s.window)),
                Direction::ClientToServer => self
                    .synack
                    .map(|s| (rel(self.synack_ts), self.c2s.snd_nxt.unwrap_or(0), s.window)),
            };
            let series = self.series;
            let pair = &mut self.lim.get_or_insert_with(Box::default)
                [usize::from(dir == Direction::ServerToClient)];
            pair.main = LimitTracker::new(main);
            pair.alt = alt
                .filter(|a| *a != main)
                .map(|a| Box::new(LimitTracker::new(a)));
            pair.each(|t| {
                if series {
                    t.keep_rounds();
                }
                t.configure(rtt_ns, loop_ns.unwrap_or(0), initial)
            });
        }
    }

    /// Feeds one segment to the limit trackers: data to its direction's,
    /// an ACK to the other direction's; with `log`, also to the connection's
    /// [`LimitLog`] (started with its first data segment).
    fn feed_limits(
        &mut self,
        rec: &TcpRecord<'_>,
        dir: Direction,
        timestamps: Option<Timestamps>,
        log: bool,
    ) {
        let (Some(base), Some(ts)) = (self.base_ts, rec.ts) else {
            return;
        };
        let Some(t) = ts.nanos_since(&base) else {
            return;
        };
        let i = usize::from(dir == Direction::ServerToClient);
        if self.lim.is_none() {
            if rec.payload_len == 0 {
                return;
            }
            self.lim = Some(Box::default());
        }
        if log && self.limit_log.is_none() && rec.payload_len > 0 {
            self.limit_log = Some(Box::default());
        }
        let Some(lim) = self.lim.as_mut() else {
            return;
        };
        let ts = timestamps.map(|ts| (ts.tsval, ts.tsecr));
        let data = (rec.payload_len > 0 && !rec.flags.contains(Flags::SYN)).then(|| {
            let me = match dir {
                Direction::ClientToServer => &self.c2s,
                Direction::ServerToClient => &self.s2c,
            };
            let end = rec.seq.wrapping_add(rec.seq_len());
            limit_log::Data {
                seq: rec.seq,
                len: u32::try_from(rec.payload_len).unwrap_or(u32::MAX),
                retransmitted: me.snd_nxt.is_some_and(|nxt| !seq_lt(nxt, end)),
            }
        });
        let ack = (rec.flags.contains(Flags::ACK) && !rec.flags.contains(Flags::SYN))
            .then_some((rec.ack, rec.window));
        if let Some(log) = self.limit_log.as_mut() {
            log.record(t, dir == Direction::ServerToClient, data, ack, ts);
        }
        if let Some(d) = data {
            lim[i].each(|l| l.on_data(t, d.seq, d.len, d.retransmitted, ts));
        }
        if let Some((a, w)) = ack {
            let tsval = ts.map(|ts| ts.0);
            lim[1 - i].each(|l| l.on_ack(t, a, w, tsval));
        }
    }

    /// The shift the sender of `dir` applies to the receiver's window fields.
    fn sender_shift(&self, dir: Direction, assume: Option<u8>, anyway: bool) -> Option<u8> {
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

    /// Feeds one segment of this connection.
    fn update(&mut self, rec: &TcpRecord<'_>, dir: Direction, settings: &Settings) {
        let syn = rec.flags.contains(Flags::SYN);
        let ack = rec.flags.contains(Flags::ACK);
        if syn && !ack && dir == Direction::ClientToServer {
            self.syn = Some(HandshakeSegment::new(
                rec.options,
                rec.flags,
                rec.window,
                rec.frame,
            ));
            self.syn_ts = rec.ts;
        }
        if syn && ack && dir == Direction::ServerToClient {
            self.synack = Some(HandshakeSegment::new(
                rec.options,
                rec.flags,
                rec.window,
                rec.frame,
            ));
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
        // handshake, and not both the shift and the RTT given.
        let handshake_seen = self.syn.is_some() && self.synack.is_some();
        let given = settings.rtt.is_some()
            && settings.assumed_shift(Direction::ClientToServer).is_some()
            && settings.assumed_shift(Direction::ServerToClient).is_some();
        let log = !(self.series || handshake_seen || given);
        self.feed_limits(rec, dir, timestamps, log);
        let shift = self.sender_shift(dir, settings.assumed_shift(dir), false);
        // Timestamps: remember ours, match the peer's echo (once the
        // connection carries data: the limit trackers exist then).
        let carries_data = self.lim.is_some();
        let handshake = self.syn.is_some() && self.synack.is_some();
        let (me, peer) = self.side(dir);
        me.packets += 1;
        if let (Some(ts), Some(t), true) = (rec.ts, timestamps, carries_data) {
            me.remember_tsval(t.tsval, ts);
            if ack {
                peer.echoed(t.tsecr, ts);
            }
        }
        if !syn && ack {
            // A right edge never moves left (RFC 9293): a field that drops
            // by `df` while the ACK advances by `da` bounds this side's
            // shift by log2(da / df).
            if let (Some((a1, f1)), Some(h)) = (me.prev_ack_field, me.highest_ack) {
                let da = rec.ack.wrapping_sub(a1);
                if f1 > rec.window && !seq_lt(rec.ack, h) && da > 0 && da < 1 << 30 {
                    let df = u32::from(f1 - rec.window);
                    let bound = (da / df)
                        .checked_ilog2()
                        .map_or(0, |b| b.min(u32::from(MAX_WINDOW_SCALE)) as u8);
                    me.infer_hi = Some(me.infer_hi.map_or(bound, |h| h.min(bound)));
                }
            }
            // Only for a connection without its handshake that carries
            // data the other way (a scan's RSTs allocate nothing).
            if me.edges.is_none()
                && !handshake
                && peer.data_segments > 0
                && !rec.flags.contains(Flags::RST)
            {
                me.edges = Some(Box::default());
            }
            if let Some(e) = me.edges.as_mut() {
                if let Some((a1, f1)) = me.prev_ack_field {
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
            me.prev_ack_field = Some((rec.ack, rec.window));
        }
        if !syn {
            me.first_seq.get_or_insert(rec.seq);
            me.first_window_field.get_or_insert(rec.window);
            me.last_window_field = Some(rec.window);
            me.max_window_field = Some(
                me.max_window_field
                    .map_or(rec.window, |m| m.max(rec.window)),
            );
        }
        if ack {
            if let Some(m) = peer.missed.as_mut() {
                m.ack(rec.ack);
            }
            me.highest_ack = Some(match me.highest_ack {
                Some(h) if seq_lt(rec.ack, h) => h,
                _ => rec.ack,
            });
        }
        let end = rec.seq.wrapping_add(rec.seq_len());
        if rec.payload_len > 0 {
            if peer
                .last_window_field
                .is_some_and(|w| rec.payload_len <= usize::from(w) && rec.payload_len < 536)
            {
                me.window_sized_segments += 1;
            }
            me.bytes += rec.payload_len as u64;
            me.data_segments += 1;
            me.largest_payload = me.largest_payload.max(rec.payload_len);
            if me.first_data.is_none() {
                me.first_data = rec.ts;
            }
            if rec.ts.is_some() {
                me.last_data = rec.ts;
            }
            let retransmitted = me.snd_nxt.is_some_and(|nxt| !seq_lt(nxt, end));
            if retransmitted {
                me.retransmissions += 1;
                me.retransmitted_bytes += rec.payload_len as u64;
            }
            // Data the handshake's window may have allowed rules nothing
            // out (see EdgeEvidence).
            let past_handshake_window = me
                .first_seq
                .is_some_and(|f| seq_lt(f.wrapping_add(u32::from(u16::MAX)), end));
            // New data past the right edge a shift gives rules that shift
            // out; ending just below it, a segment or less, is a hit.
            if let Some(e) = peer.edges.as_mut() {
                e.sender_read(timestamps.map(|t| t.tsecr));
                let confirmed = e.sender_data(rec.seq, end, me.snd_nxt);
                peer.infer_lo = peer.infer_lo.max(confirmed);
                if !retransmitted && past_handshake_window {
                    let lo = e.on_data(end, me.largest_payload as u64);
                    peer.infer_lo = peer.infer_lo.max(lo);
                }
            }
            // More in flight than the receiver's largest field: its shift
            // is at least the smallest s with field << s >= flight.
            if let (Some(acked), Some(f), true) = (
                peer.highest_ack,
                peer.max_window_field,
                past_handshake_window,
            ) {
                let top = match me.snd_nxt {
                    Some(n) if seq_lt(end, n) => n,
                    _ => end,
                };
                let in_flight = u64::from(top.wrapping_sub(acked));
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
            // In flight after this segment versus the peer's last window.
            if let (Some(acked), Some(win), Some(shift)) =
                (peer.highest_ack, peer.last_window_field, shift)
            {
                let top = match me.snd_nxt {
                    Some(n) if seq_lt(end, n) => n,
                    _ => end,
                };
                let in_flight = u64::from(top.wrapping_sub(acked));
                let window = u64::from(win) << shift.min(MAX_WINDOW_SCALE);

                if in_flight <= 1 << 31 && in_flight + me.largest_payload as u64 > window {
                    me.window_full += 1;
                }
            }
        }
        if rec.seq_len() > 0 {
            if let Some(nxt) = me.snd_nxt {
                if me.missed.is_some() || seq_lt(nxt, rec.seq) {
                    me.missed
                        .get_or_insert_with(Box::default)
                        .data(rec.seq, end, nxt);
                }
            }
            me.snd_nxt = Some(match me.snd_nxt {
                Some(n) if seq_lt(end, n) => n,
                _ => end,
            });
        }
    }
}

/// The per-direction part of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectionReport {
    /// Segments sent in this direction.
    pub packets: u64,
    /// Payload bytes sent (retransmissions included).
    pub bytes: u64,
    /// Data segments that did not advance the highest sequence number.
    pub retransmissions: u64,
    /// Payload bytes in those segments.
    pub retransmitted_bytes: u64,
    /// Bytes the receiver acknowledged that the capture never showed: the
    /// capture's loss, not the network's (at least this many; see
    /// [`crate::conn::missed`]). `bytes` and `packets` count what the capture
    /// shows; `throughput_bps` includes these.
    pub capture_missed_bytes: u64,
    /// The largest receive window the receiver advertised, as this
    /// direction's sender interprets it, but never more than the receiver
    /// means by it (the two differ when the endpoints disagree about scaling)
    /// (`null`: scale unknown or no window seen).
    pub max_window_bytes: Option<u64>,
    /// The raw largest window field the receiver sent after its SYN.
    pub max_window_field: Option<u16>,
    /// Throughput ceiling of `max_window_bytes` at the RTT, bit/s.
    pub ceiling_bps: Option<u64>,
    /// Achieved throughput (new data only), bit/s.
    pub throughput_bps: Option<u64>,
    /// Whether the receive window capped this direction (`null`: unknown):
    /// the limit is the receive window and the achieved throughput does not
    /// exceed the ceiling.
    pub window_limited: Option<bool>,
    /// What limited the sender ([`crate::analysis::limits`]).
    pub limit: Limit,
    /// Bytes the sender put past the right edge of the window as the
    /// receiver meant it (`null`: the receiver's shift is unknown).
    pub beyond_window_bytes: Option<u64>,
    /// The receiver acknowledged the last of those bytes: it accepted data
    /// beyond the window it advertised (`null` when none was sent).
    pub beyond_window_accepted: Option<bool>,
    /// For a transfer limited by the receive window or the send buffer: the
    /// Linux settings that lift the limit for `--target-rate` at the RTT
    /// (`bdp::linux::advise`); empty otherwise.
    pub advice: Vec<AdviceItem>,
}

/// One Linux setting to change ([`DirectionReport::advice`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdviceItem {
    /// The setting, as `sysctl` names it (`net.ipv4.tcp_rmem max`).
    pub setting: &'static str,
    /// The value: a minimum in bytes for buffers, 1 for switches.
    pub value: u64,
    /// Why, in one sentence.
    pub why: String,
    /// `receiver` or `sender`: the host to change.
    pub host: &'static str,
}

/// Both directions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Directions {
    /// Client to server.
    pub client_to_server: DirectionReport,
    /// Server to client.
    pub server_to_client: DirectionReport,
}

/// A value per endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PerEndpoint<T> {
    /// The client's.
    pub client: T,
    /// The server's.
    pub server: T,
}

/// What was negotiated, as the endpoints believe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Negotiated {
    /// MSS each endpoint announced (`null`: none, or its segment unseen).
    pub mss: PerEndpoint<Option<u16>>,
    /// Shifts each endpoint announced for its own receive window, when
    /// scaling is on for both; `null` otherwise.
    pub wscale: Option<PerEndpoint<u8>>,
    /// Shift offered in each handshake segment as seen (`null`: no option).
    pub wscale_offered: PerEndpoint<Option<u8>>,
    /// A shift above 14 as it was on the wire (Linux uses 14), per endpoint.
    pub wscale_clamped_from: PerEndpoint<Option<u8>>,
    /// Window scaling on, as each endpoint believes (`null`: unknown).
    pub wscale_on: PerEndpoint<Option<bool>>,
    /// The endpoints disagree about window scaling (the broken state).
    pub wscale_mismatch: bool,
    /// What in the capture shows the mismatch (`null` without one).
    pub wscale_mismatch_evidence: Option<MismatchEvidence>,
    /// SACK on for both (each kernel's reading of the peer's handshake).
    pub sack: bool,
    /// Timestamps on for both.
    pub timestamps: bool,
    /// ECN the handshake set up: `classic` (RFC 3168), `accecn` (RFC 9768)
    /// or `null` (none, or a handshake segment unseen).
    pub ecn: Option<EcnMode>,
    /// Handshake segments a Linux kernel drops for their signature options.
    pub linux_drops: Vec<LinuxDrop>,
    /// Without a handshake: the interval each endpoint's window-scale
    /// shift must lie in, from the capture (`null` with a handshake).
    pub wscale_inferred: Option<PerEndpoint<Option<ShiftInterval>>>,
}

/// An interval of window-scale shifts, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ShiftInterval {
    /// Smallest shift the capture allows, on `basis`.
    pub min: u8,
    /// Largest shift the capture allows, on `basis`.
    pub max: u8,
    /// The shift the receiver *means*, read from how a Linux receiver opens
    /// its window (`bdp::linux::WindowGrowth`; medium confidence, `null`
    /// without a run that shows it).
    pub linux_growth_shift: Option<u8>,
    /// The shift at whose right edge the peer's new data kept stopping (a
    /// segment or less below it): the window the sender read, when it was
    /// window-limited (`null`: no such edge).
    pub sender_edge_shift: Option<u8>,
    /// What `min` and `max` rest on: `bounds` (the flight and the window
    /// edges alone), `sender_edge` (the sender stopped at the edge of one
    /// shift), or `linux_growth` (the Linux growth shift, inside the
    /// bounds, assuming the two ends agree about scaling).
    pub basis: &'static str,
    /// `high` for `bounds`, `medium` for `linux_growth`; for `sender_edge`
    /// `high` when the edge's size moved by two segments or more while the
    /// sender kept stopping at it, `medium` when it did not (a sender that
    /// holds its flight at one size for another reason would look the same).
    pub confidence: &'static str,
    /// The interval from the flight and the window edges alone (its lower
    /// end bounds the shift the peer reads; its upper end, from the right
    /// edge never moving left, the one the endpoint means: the same when
    /// the ends agree).
    pub bounds: ShiftBounds,
}

/// An interval of shifts from the flight and the window edges alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ShiftBounds {
    /// Smallest shift.
    pub min: u8,
    /// Largest shift.
    pub max: u8,
}

/// Shifts 0 to 14.
const SHIFTS: usize = MAX_WINDOW_SCALE as usize + 1;
/// Fewest new-data segments ending at one shift's right edge to name it.
const EDGE_HITS: u32 = 16;

/// What one receiver's ACKs and its peer's new data say about the shift
/// the peer reads the receiver's window fields with (a capture without
/// the handshake).
///
/// For each shift `s` the furthest right edge (ACK + field << s) the
/// receiver advertised so far: a sender never sends past the edge it
/// read, and every ACK it read passed the capture point before its data
/// did (from either side of the path), so new data ending beyond the
/// furthest edge of `s` rules `s` out (sound: it needs no assumption about
/// the receiver). A window-limited sender sends up to its edge in whole
/// segments, so its new data keeps ending within a segment below the edge
/// of the shift it reads (`sender_edge`): with the capture next to the
/// sender (or with the window fixed) that is exact; next to the receiver
/// the ACKs seen run ahead of what the sender knew and the hits scatter,
/// which gives no edge rather than a wrong one.
///
/// Next to the receiver, the sender's timestamp echoes say which ACKs it
/// had read: a pure ACK the sender will record the TSval of (its sequence
/// number is one the sender has acknowledged, so Linux's `ts_recent`
/// follows it) waits in `pending` until a data segment echoes its TSval or
/// a later one, and only then moves the edges. So new data is held to the
/// edges the sender could have known, from either side of the path; any
/// other ACK (with data, without timestamps, or beyond [`PENDING_ACKS`]
/// waiting) moves them at once, which can only weaken the bound.
///
/// Data within 65,535 bytes of the sender's first sequence number seen is
/// held to no edge: the handshake's window (never scaled, at most 65,535
/// bytes from ISN + 1) may have allowed it before the sender read any
/// later field.
///
/// It also counts the receiver's ACKs whose field is 65,535: a receiver
/// that does not scale caps its field there (Linux), one that scales
/// rarely advertises exactly that ([`unscaled_cap_evidence`]).
///
/// All of this holds only for ACKs the capture shows: a capture that drops
/// records (tcpdump's "packets dropped by kernel") loses ACKs with them,
/// and the sender's data then runs past edges it read from ACKs the
/// capture missed. Such a drop shows in the sender's data as a hole (new
/// data starting beyond the highest byte seen): while one is open
/// (`gap`), what new data rules out is held back ([`Gap::held_lo`]) and
/// counts no hits. A retransmission that fills the hole shows the loss
/// was the network's, not the capture's: the held bound stands. The
/// receiver's ACK passing the hole without one, once the sender has read
/// it, shows the capture missed those bytes (and may have missed ACKs
/// with them): the held bound is dropped. Seen in the lab: a 150 MB
/// download whose capture dropped a burst of records made the data pass
/// the edges of shift 8 for a receiver at shift 7.
#[derive(Debug, Clone, Default)]
struct EdgeEvidence {
    /// The receiver's pure ACKs (TSval, ACK, field) the sender has not yet
    /// been seen to read, oldest first.
    pending: std::collections::VecDeque<(u32, u32, u16)>,
    /// The receiver's ACKs seen, and those with a field of 65,535.
    acks: u32,
    acks_at_cap: u32,
    edge: [u32; SHIFTS],
    /// The window field of the ACK that set each furthest edge.
    edge_field: [u16; SHIFTS],
    seen: bool,
    hits: [u32; SHIFTS],
    /// Smallest and largest field behind each shift's hits.
    hit_fields: [(u16, u16); SHIFTS],
    /// The sender's largest segment.
    segment: u64,
    /// New-data segments checked against the edges.
    segments: u32,
    /// The receiver's window growth (`bdp::linux::WindowGrowth`).
    growth: bdp::linux::WindowGrowth,
    /// A hole in the sender's data is open.
    gap: Option<Gap>,
}

/// The holes open in the sender's data ([`EdgeEvidence`]).
#[derive(Debug, Clone, Copy)]
struct Gap {
    /// Where the data resumed after the newest hole.
    resume: u32,
    /// Lower bound on the shift from new data sent while it was open.
    held_lo: u8,
}

/// Most receiver ACKs waiting for the sender's echo ([`EdgeEvidence`]).
const PENDING_ACKS: usize = 64;

impl EdgeEvidence {
    /// An ACK of the receiver: with `wait_for` (its TSval) it moves the
    /// edges once the sender echoes that TSval, else now.
    fn receiver_ack(&mut self, ack: u32, field: u16, wait_for: Option<u32>) {
        self.acks = self.acks.saturating_add(1);
        if field == u16::MAX {
            self.acks_at_cap = self.acks_at_cap.saturating_add(1);
        }
        match wait_for {
            Some(tsval) => {
                if self.pending.len() == PENDING_ACKS {
                    if let Some((_, a, f)) = self.pending.pop_front() {
                        self.on_ack(a, f);
                    }
                }
                self.pending.push_back((tsval, ack, field));
            }
            None => {
                self.read_all();
                self.on_ack(ack, field);
            }
        }
    }

    /// The sender echoed `tsecr` (`None`: its data carries no echo): the
    /// ACKs it has read move the edges.
    fn sender_read(&mut self, tsecr: Option<u32>) {
        let Some(e) = tsecr else {
            return self.read_all();
        };
        while let Some(&(tsval, a, f)) = self.pending.front() {
            // TSvals wrap: compare as RFC 7323 does.
            if seq_lt(e, tsval) {
                break;
            }
            self.pending.pop_front();
            self.on_ack(a, f);
        }
    }

    fn read_all(&mut self) {
        while let Some((_, a, f)) = self.pending.pop_front() {
            self.on_ack(a, f);
        }
    }

    fn on_ack(&mut self, ack: u32, field: u16) {
        // The receiver got the hole's bytes, the capture did not show them.
        if self.gap.is_some_and(|g| !seq_lt(ack, g.resume)) {
            self.gap = None;
        }
        for (s, (e, f)) in self
            .edge
            .iter_mut()
            .zip(self.edge_field.iter_mut())
            .enumerate()
        {
            let edge = ack.wrapping_add(u32::from(field) << s);
            if !self.seen || seq_lt(*e, edge) {
                (*e, *f) = (edge, field);
            }
        }
        self.seen = true;
    }

    /// A data segment `seq..end` of the sender, whose highest byte sent
    /// before it was `snd_nxt`: opens a hole when it starts beyond that,
    /// and closes the open one when it retransmits the bytes just below
    /// where the data resumed. Returns the held bound a closed hole
    /// confirms.
    fn sender_data(&mut self, seq: u32, end: u32, snd_nxt: Option<u32>) -> u8 {
        let Some(nxt) = snd_nxt else {
            return 0;
        };
        if seq_lt(nxt, seq) {
            let held_lo = self.gap.map_or(0, |g| g.held_lo);
            self.gap = Some(Gap {
                resume: seq,
                held_lo,
            });
            return 0;
        }
        match self.gap {
            // Retransmissions fill holes lowest first: the newest one
            // last, with the bytes just below where the data resumed.
            Some(g) if !seq_lt(nxt, end) && seq_lt(seq, g.resume) && !seq_lt(end, g.resume) => {
                self.gap = None;
                g.held_lo
            }
            _ => 0,
        }
    }

    /// A lower bound on the shift: to be applied now, or (a hole open)
    /// held until the hole closes.
    fn rule_out(&mut self, lo: u8) -> u8 {
        match self.gap.as_mut() {
            Some(g) => {
                g.held_lo = g.held_lo.max(lo);
                0
            }
            None => lo,
        }
    }

    /// New data ending at `end` (segments up to `segment` bytes): the
    /// smallest shift whose furthest edge it does not pass (held back
    /// while a hole is open, see [`Self::rule_out`]).
    fn on_data(&mut self, end: u32, segment: u64) -> u8 {
        if !self.seen {
            return 0;
        }
        // A hole open: the edges may lag the ACKs the sender read.
        let holding = self.gap.is_some();
        if !holding {
            self.segments = self.segments.saturating_add(1);
            self.segment = self.segment.max(segment);
        }
        let mut lo = 0;
        for s in 0..SHIFTS {
            let e = self.edge[s];
            if seq_lt(e, end) {
                lo = s + 1;
            } else if !holding && u64::from(e.wrapping_sub(end)) < segment {
                let f = self.edge_field[s];
                self.hit_fields[s] = if self.hits[s] == 0 {
                    (f, f)
                } else {
                    (self.hit_fields[s].0.min(f), self.hit_fields[s].1.max(f))
                };
                self.hits[s] = self.hits[s].saturating_add(1);
            }
        }
        self.rule_out(lo.min(SHIFTS - 1) as u8)
    }

    /// The shift whose edge the new data kept stopping at: at least
    /// [`EDGE_HITS`] hits and a quarter of the segments, and no other shift
    /// with half as many; with `true` when the edge's size moved by two
    /// segments or more among the hits (the stops followed the window, not
    /// a flight the sender holds for another reason, as a send buffer's
    /// that happens to lie within a segment of one shift's edge).
    fn edge_shift(&self, lo: u8) -> Option<(u8, bool)> {
        let (best, n) = self
            .hits
            .iter()
            .enumerate()
            .skip(usize::from(lo))
            .max_by_key(|(_, n)| **n)?;
        let clear = self
            .hits
            .iter()
            .enumerate()
            .skip(usize::from(lo))
            .all(|(s, m)| s == best || m * 2 <= *n);
        let (fmin, fmax) = self.hit_fields[best];
        let followed = u64::from(fmax - fmin) << best >= 2 * self.segment;
        (*n >= EDGE_HITS && n * 4 >= self.segments && clear).then_some((best as u8, followed))
    }
}

/// What the capture says about the shift the peer reads the window fields
/// of side `me` with, and whether it shows the two ends disagree.
///
/// The bounds: the peer's new data past the furthest right edge of a shift
/// (and its flight above `me`'s largest field) rules it out from below;
/// `me`'s right edge never moving left and the 1 GiB largest window (RFC
/// 7323) bound it from above. Within them, the shift at whose edge the
/// sender's data kept stopping is the one it reads (`sender_edge`);
/// without one, a Linux receiver's growth shift is the one it means, and
/// the one the peer reads when the two ends agree (`linux_growth`). The
/// growth shift below the bounds (the sender read a larger window than the
/// receiver meant) or a sender edge at another shift is evidence that they
/// do not (returned as the second value).
fn infer_shift(me: &Side, who: &str) -> (Option<ShiftInterval>, Option<MismatchEvidence>) {
    let Some(f) = me.max_window_field else {
        return (None, None);
    };
    let lo = me.infer_lo;
    // 65535 << 14 is the largest window: field << s stays within 2^30.
    let by_size = (0u8..=MAX_WINDOW_SCALE)
        .rev()
        .find(|s| u64::from(f) << s <= 1 << 30)
        .unwrap_or(0);
    let hi = me.infer_hi.map_or(by_size, |h| h.min(by_size));
    // Conflicting evidence (a receiver that shrank its window): keep the
    // flight's bound, which needs no assumption about the receiver.
    let hi = if hi < lo { by_size.max(lo) } else { hi };
    let growth = me.edges.as_ref().and_then(|e| e.growth.shift());
    let edge = me
        .edges
        .as_ref()
        .and_then(|e| e.edge_shift(lo))
        .filter(|(e, _)| *e <= hi);
    if lo == 0 && hi == MAX_WINDOW_SCALE && growth.is_none() && edge.is_none() {
        return (None, None);
    }
    let bounds = ShiftBounds { min: lo, max: hi };
    let interval =
        |min: u8, max: u8, basis: &'static str, confidence: &'static str| ShiftInterval {
            min,
            max,
            linux_growth_shift: growth,
            sender_edge_shift: edge.map(|e| e.0),
            basis,
            confidence,
            bounds,
        };
    let peer = if who == "client" { "server" } else { "client" };
    let cap = me
        .edges
        .as_deref()
        .and_then(|e| unscaled_cap_evidence(e, lo, who, peer));
    let found = match (edge, growth) {
        (Some((e, true)), Some(g)) if e != g => (
            Some(interval(e, e, "sender_edge", "high")),
            Some(MismatchEvidence {
                kind: "sender_edge_differs",
                confidence: "medium",
                detail: format!(
                    "no handshake seen: the {peer}'s new data kept stopping at the right edge of the {who}'s windows read with shift {e}, while the {who}'s window grows as a Linux receiver's at shift {g}: the {peer} reads the {who}'s window fields with another shift than the {who} means"
                ),
            }),
        ),
        // An edge that never moved and a growth shift that disagree:
        // nothing sure either way.
        (Some((e, false)), Some(g)) if e != g => (Some(interval(lo, hi, "bounds", "high")), None),
        (Some((e, followed)), _) => (
            Some(interval(
                e,
                e,
                "sender_edge",
                if followed { "high" } else { "medium" },
            )),
            None,
        ),
        (None, Some(g)) if (lo..=hi).contains(&g) => {
            (Some(interval(g, g, "linux_growth", "medium")), None)
        }
        (None, Some(g)) if g < lo => (
            Some(interval(lo, hi, "bounds", "high")),
            Some(MismatchEvidence {
                kind: "flight_beyond_growth",
                confidence: "medium",
                detail: format!(
                    "no handshake seen: the {who}'s window grows as a Linux receiver's at shift {g}, yet the {peer}'s data went past the right edge that shift gives (it needs shift {lo} or more): the {peer} reads the {who}'s window fields with a larger shift than the {who} means"
                ),
            }),
        ),
        _ => (Some(interval(lo, hi, "bounds", "high")), None),
    };
    match found {
        // The growth shift assumed the ends agree; the cap shows they do not.
        (Some(i), None) if cap.is_some() => (
            Some(if i.basis == "linux_growth" {
                interval(lo, hi, "bounds", "high")
            } else {
                i
            }),
            cap,
        ),
        f => f,
    }
}

/// Fewest receiver ACKs at 65,535 for [`unscaled_cap_evidence`].
const CAP_ACKS: u32 = 16;

/// A receiver whose window fields sit at 65,535 (on at least half of its
/// ACKs, and [`CAP_ACKS`] of them) while the sender's data goes past
/// ACK + 65,535 (`lo`, the lower bound on the shift the sender reads, is 1
/// or more): the receiver caps its fields as one that does not scale does
/// (Linux advertises at most 65,535 bytes then), and the sender reads them
/// scaled. No handshake is needed: what window scaling removed from the
/// SYN-ACK on the way leaves behind, seen from either side. A receiver
/// that scales and sits at its largest window, 65,535 << s, would look the
/// same: Linux picks its shift so that its buffer never needs the largest
/// field, other stacks may not, hence `medium`.
fn unscaled_cap_evidence(
    e: &EdgeEvidence,
    lo: u8,
    who: &str,
    peer: &str,
) -> Option<MismatchEvidence> {
    (lo >= 1 && e.acks_at_cap >= CAP_ACKS && e.acks_at_cap * 2 >= e.acks).then(|| {
        MismatchEvidence {
            kind: "unscaled_cap",
            confidence: "medium",
            detail: format!(
                "no handshake seen: {} of the {who}'s {} ACKs advertise 65,535, the largest window of a receiver that does not scale, yet the {peer}'s data went past ACK + 65,535 (it reads the {who}'s window fields with shift {lo} or more): the {who} means no scaling while the {peer} reads its fields scaled, as when window scaling is removed from the SYN-ACK on the way",
                e.acks_at_cap, e.acks
            ),
        }
    })
}

/// How the window-scale mismatch shows in the capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MismatchEvidence {
    /// `server_scales_anyway` (the SYN-ACK seen here has no window scale,
    /// yet the server's window fields are scaled: the option was removed
    /// between the server and this capture point) or `client_unscaled` (the
    /// SYN-ACK seen here has it, yet the client's window fields are
    /// unscaled: it was removed between this capture point and the client).
    pub kind: &'static str,
    /// `high` or `medium`: how far the window fields are from what the
    /// other reading would give.
    pub confidence: &'static str,
    /// The evidence in words, with the figures.
    pub detail: String,
}

/// The report of one connection (its JSON object is written field by
/// field in one place, its `Serialize` implementation).
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionReport {
    /// The connection's number, from 1, in order of first appearance.
    pub id: u64,
    /// `addr:port` of the SYN sender.
    pub client: String,
    /// `addr:port` of the other side.
    pub server: String,
    /// False when no SYN or SYN-ACK told which side is the client (guessed by port).
    pub client_known: bool,
    /// SYN and SYN-ACK both seen.
    pub handshake_seen: bool,
    /// Pushed out of the full connection table (`--max-connections`)
    /// before it ended; its later segments are reported as a connection
    /// whose `continues` is this one's `id`.
    pub evicted: bool,
    /// The `id` of the evicted connection this one is the rest of (`null`
    /// otherwise).
    pub continues: Option<u64>,
    /// The shift assumed with `--assume-wscale` for a connection without handshake.
    pub assumed_wscale: Option<u8>,
    /// Frame of the first segment.
    pub first_frame: u64,
    /// Frame of the last segment.
    pub last_frame: u64,
    /// Negotiation.
    pub negotiated: Negotiated,
    /// RTT in seconds (`null`: not measurable and not given).
    pub rtt_s: Option<f64>,
    /// `given`, `handshake`, `timestamps` or `null`.
    pub rtt_source: Option<&'static str>,
    /// Per direction figures.
    pub directions: Directions,
    /// The verdict in plain words (fixed text is not allocated).
    pub verdict: Cow<'static, str>,
}

impl Serialize for ConnectionReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.fields(&self.directions, s)
    }
}

/// A report whose `directions` are JSON text written before
/// ([`DirectionsMemo`]); for [`crate::output::fastjson::write_fast`] only.
struct WithDirections<'a>(&'a ConnectionReport, crate::output::fastjson::Raw<'a>);

impl Serialize for WithDirections<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.fields(&self.1, s)
    }
}

impl ConnectionReport {
    /// The JSON object, in the order docs/json.md gives, with `directions`
    /// as given: the report's own, or their JSON written before.
    fn fields<S: serde::Serializer, D: Serialize>(
        &self,
        directions: &D,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // Every field named (no `..`): a field added to the report does not
        // compile until it is written here too.
        let ConnectionReport {
            id,
            client,
            server,
            client_known,
            handshake_seen,
            evicted,
            continues,
            assumed_wscale,
            first_frame,
            last_frame,
            negotiated,
            rtt_s,
            rtt_source,
            directions: _,
            verdict,
        } = self;
        let mut o = s.serialize_struct("ConnectionReport", 15)?;
        o.serialize_field("id", id)?;
        o.serialize_field("client", client)?;
        o.serialize_field("server", server)?;
        o.serialize_field("client_known", client_known)?;
        o.serialize_field("handshake_seen", handshake_seen)?;
        o.serialize_field("evicted", evicted)?;
        o.serialize_field("continues", continues)?;
        o.serialize_field("assumed_wscale", assumed_wscale)?;
        o.serialize_field("first_frame", first_frame)?;
        o.serialize_field("last_frame", last_frame)?;
        o.serialize_field("negotiated", negotiated)?;
        o.serialize_field("rtt_s", rtt_s)?;
        o.serialize_field("rtt_source", rtt_source)?;
        o.serialize_field("directions", directions)?;
        o.serialize_field("verdict", verdict)?;
        o.end()
    }

    /// A broken negotiation, a handshake segment Linux drops, or a
    /// window-limited direction: what makes
    /// `firewall-check analyze` exit with status 3.
    pub fn has_findings(&self) -> bool {
        self.negotiated.wscale_mismatch
            || !self.negotiated.linux_drops.is_empty()
            || self.directions.client_to_server.window_limited == Some(true)
            || self.directions.server_to_client.window_limited == Some(true)
    }
}

/// Formats an integer with thousands separators: `1,250,000`.
pub struct Thousands(pub u64);

impl fmt::Display for Thousands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut digits = [0u8; 20];
        let mut n = self.0;
        let mut len = 0;
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for i in (0..len).rev() {
            fmt::Write::write_char(f, char::from(digits[i]))?;
            if i > 0 && i % 3 == 0 {
                fmt::Write::write_char(f, ',')?;
            }
        }
        Ok(())
    }
}

fn rate_text(bps: u64) -> String {
    format!("{:.1}", BitsPerSecond::new(bps))
}

/// The window a target rate needs and the shift for it, in words.
fn need_text(target: BitsPerSecond, rtt: Duration) -> Option<String> {
    let need = bdp::window_needed(target, rtt).ok()?;
    let shift = match bdp::window_scale_shift(need) {
        Ok(s) => format!("shift {s}"),
        Err(_) => "more than window scaling allows".to_string(),
    };
    Some(format!(
        "{} would need {} bytes ({shift})",
        target,
        Thousands(need.get())
    ))
}

fn ceiling_of(window: u64, rtt: Option<Duration>) -> Option<u64> {
    bdp::ceiling(Bytes::new(window), rtt?)
        .ok()
        .map(BitsPerSecond::get)
}

/// Whether the client's windows show that it does not scale (see
/// [`client_unscaled_evidence`], which says why): the shift it offered.
fn client_unscaled(st: &ConnState, syn_ws: Option<u8>, synack_ws: Option<u8>) -> Option<u8> {
    let (shift, _) = (syn_ws?, synack_ws?);
    let syn_window = st.syn?.window;
    let first = st.c2s.first_window_field?;
    (shift >= 2 && syn_window >= 1024 && u32::from(first) * 2 >= u32::from(syn_window))
        .then_some(shift)
}

/// The client's windows after the handshake are unscaled although the
/// SYN-ACK seen here answered its window-scale offer: evidence that the
/// option was removed between this capture point and the client.
///
/// A Linux client that scales sends, in its first ACK, its receive window
/// shifted right by its own shift: about its SYN window over 2^shift. One
/// that does not scale sends about its SYN window. With a shift of 2 or more
/// the two readings are at least 4x apart; a first field of at least half
/// the SYN window is the unscaled reading (`high` confidence from shift 5,
/// 32x apart, `medium` below). The client's uploads corroborate: a client
/// that reads the server's scaled fields as bytes never has more in flight
/// than the largest raw field.
fn client_unscaled_evidence(
    st: &ConnState,
    syn_ws: Option<u8>,
    synack_ws: Option<u8>,
) -> Option<MismatchEvidence> {
    let shift = client_unscaled(st, syn_ws, synack_ws)?;
    let syn_window = st.syn?.window;
    let first = st.c2s.first_window_field?;
    let max = st.c2s.max_window_field.unwrap_or(first);
    let mut detail = format!(
        "the client's window fields after the handshake stay at unscaled sizes (first {}, largest {}, after a SYN window of {}): read with the shift {shift} it offered they would mean {} bytes, so the client does not scale and never saw the SYN-ACK's window scale",
        first,
        max,
        syn_window,
        Thousands(u64::from(max) << shift.min(MAX_WINDOW_SCALE))
    );
    if st.c2s.window_sized_segments >= 3 {
        detail.push_str(&format!(
            "; {} of its {} data segments were no larger than the server's window field read as bytes (largest field {}): the client sends into what it reads as a window of a few dozen bytes",
            st.c2s.window_sized_segments,
            st.c2s.data_segments,
            st.s2c.max_window_field.unwrap_or(0)
        ));
    }
    Some(MismatchEvidence {
        kind: "client_unscaled",
        confidence: if shift >= 5 { "high" } else { "medium" },
        detail,
    })
}

/// The broken state seen from the client's side: the SYN offered scaling,
/// the SYN-ACK seen here did not answer, yet the server's windows after the
/// handshake look scaled (below 1/16 of its SYN-ACK window).
fn server_scales_anyway(st: &ConnState, syn_ws: Option<u8>, synack_ws: Option<u8>) -> bool {
    syn_ws.is_some()
        && synack_ws.is_none()
        && match (st.synack.map(|s| s.window), st.s2c.max_window_field) {
            (Some(syn_win), Some(max)) => {
                syn_win >= 1024 && u32::from(max) * SCALED_WINDOW_DIVISOR < u32::from(syn_win)
            }
            _ => false,
        }
}

/// The evidence for `server_scales_anyway` (see [`report`]).
fn server_scaled_evidence(st: &ConnState) -> MismatchEvidence {
    let syn_win = st.synack.map_or(0, |s| s.window);
    let max = st.s2c.max_window_field.unwrap_or(0);
    MismatchEvidence {
        kind: "server_scales_anyway",
        // Below 1/16 of the SYN-ACK window; far below (1/256) is certain.
        confidence: if u32::from(max) * 256 < u32::from(syn_win) {
            "high"
        } else {
            "medium"
        },
        detail: format!(
            "the SYN-ACK seen here carries no window scale, yet the server's window fields after it are scaled (largest {max} after a SYN-ACK window of {syn_win}): the server scales, so its option was removed between the server and this capture point"
        ),
    }
}

/// What to change for a direction limited by the receive window or the
/// send buffer, computed by `bdp`'s Linux buffer model for the target rate.
fn advice_for(
    limit: &Limit,
    tracker: &LimitTracker,
    window: Option<u64>,
    rtt: Option<Duration>,
    settings: &Settings,
) -> Vec<AdviceItem> {
    use bdp::linux::{advise, LinuxHost, Side as Host};
    let (side, limiting, host) = match limit.kind {
        // A window the sender read below the one advertised: no setting of
        // the receiver lifts it (the path rewrites it).
        LimitKind::ReceiveWindow
            if limit
                .receive_window_evidence
                .as_ref()
                .is_some_and(|e| e.kind == "flight_plateau") =>
        {
            return Vec::new()
        }
        LimitKind::ReceiveWindow => (Host::Receiver, window, "receiver"),
        LimitKind::Sender if limit.idle_fraction.is_none_or(|i| i <= 0.5) => {
            (Host::Sender, Some(tracker.max_flight()), "sender")
        }
        _ => return Vec::new(),
    };
    let (Some(rtt), Some(limiting)) = (rtt, limiting) else {
        return Vec::new();
    };
    match advise(
        side,
        settings.target_rate,
        rtt,
        Bytes::new(limiting),
        LinuxHost::default(),
    ) {
        Ok(list) => list
            .iter()
            .map(|a| AdviceItem {
                setting: a.setting.name(),
                value: a.value,
                why: a.why.to_string(),
                host,
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Builds the report of a finished connection.
pub fn report(conn: &Connection<ConnState>, settings: &Settings) -> ConnectionReport {
    let st = &conn.state;
    let handshake_seen = st.syn.is_some() && st.synack.is_some();
    let h = negotiation::held(st.syn.as_ref(), st.synack.as_ref());
    let syn_ws = h.syn.and_then(|r| r.window_scale);
    let synack_ws = h.synack.and_then(|r| r.window_scale);
    let server_scales_anyway = server_scales_anyway(st, syn_ws, synack_ws);
    // The broken state seen from the server's side: the SYN-ACK seen here
    // answered, yet the client's windows after the handshake are unscaled.
    let client_unscaled = client_unscaled_evidence(st, syn_ws, synack_ws);
    let client_on = if handshake_seen {
        h.negotiation
            .client
            .map(|v| v.window_scaling && client_unscaled.is_none())
    } else {
        None
    };
    // One capture point: what the SYN-ACK carries is what the server did,
    // unless its windows show it scales anyway.
    let server_on = st
        .synack
        .map(|_| syn_ws.is_some() && (synack_ws.is_some() || server_scales_anyway));
    // Without the handshake: each endpoint's shift from the capture, and
    // what shows the two ends disagree.
    let (inferred, inferred_mismatch) = if handshake_seen {
        (None, None)
    } else {
        let (client, c_ev) = infer_shift(&st.c2s, "client");
        let (server, s_ev) = infer_shift(&st.s2c, "server");
        (Some(PerEndpoint { client, server }), c_ev.or(s_ev))
    };
    let wscale_mismatch = matches!((client_on, server_on), (Some(a), Some(b)) if a != b)
        || inferred_mismatch.is_some();
    let wscale = match (syn_ws, synack_ws) {
        (Some(c), Some(s)) if handshake_seen && !wscale_mismatch => Some(PerEndpoint {
            client: c,
            server: s,
        }),
        _ => None,
    };
    let wscale_evidence = if server_scales_anyway {
        Some(server_scaled_evidence(st))
    } else {
        client_unscaled.or(inferred_mismatch)
    };
    let ecn = match (st.syn, st.synack) {
        (Some(a), Some(b)) => negotiation::ecn_mode(a.flags, b.flags),
        _ => None,
    };
    let linux_drops: Vec<LinuxDrop> = [
        st.syn
            .as_ref()
            .zip(h.syn.as_ref())
            .and_then(|(s, r)| negotiation::linux_drop_parsed(s, r, HandshakeKind::Syn)),
        st.synack
            .as_ref()
            .zip(h.synack.as_ref())
            .and_then(|(s, r)| negotiation::linux_drop_parsed(s, r, HandshakeKind::SynAck)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let negotiated = Negotiated {
        mss: PerEndpoint {
            client: h.syn.and_then(|r| r.mss),
            server: h.synack.and_then(|r| r.mss),
        },
        wscale,
        wscale_offered: PerEndpoint {
            client: syn_ws,
            server: synack_ws,
        },
        wscale_clamped_from: PerEndpoint {
            client: h.syn.and_then(|r| r.window_scale_clamped_from),
            server: h.synack.and_then(|r| r.window_scale_clamped_from),
        },
        wscale_on: PerEndpoint {
            client: client_on,
            server: server_on,
        },
        wscale_mismatch,
        wscale_mismatch_evidence: if wscale_mismatch {
            wscale_evidence
        } else {
            None
        },
        sack: h.syn.is_some_and(|r| r.sack_permitted) && h.synack.is_some_and(|r| r.sack_permitted),
        timestamps: h.syn.is_some_and(|r| r.timestamps.is_some())
            && h.synack.is_some_and(|r| r.timestamps.is_some()),
        ecn,
        linux_drops,
        wscale_inferred: inferred,
    };

    let (rtt, rtt_source) = match settings.rtt {
        Some(r) => (Some(r), Some("given")),
        None => st.measured_rtt().unzip(),
    };

    let assumed = if handshake_seen {
        None
    } else {
        settings.assume_wscale
    };
    // The shift each direction's sender applies to the receiver's window fields.
    // A client shown not to scale reads the server's fields unscaled.
    let shift_for = |dir: Direction| match dir {
        Direction::ClientToServer if handshake_seen && client_on == Some(false) => Some(0),
        _ => st.sender_shift(dir, assumed, server_scales_anyway),
    };
    let direction = |dir: Direction| -> DirectionReport {
        let (me, peer) = match dir {
            Direction::ClientToServer => (&st.c2s, &st.s2c),
            Direction::ServerToClient => (&st.s2c, &st.c2s),
        };
        // The sender reads the receiver's fields with its own shift, but the
        // receiver accepts no more than it means: in the broken state the two
        // differ, and the smaller one is the window the flow can really use.
        let receiver_shift = match dir {
            Direction::ClientToServer => server_on.map(|on| match (on, synack_ws) {
                (true, Some(s)) => s,
                // Scaling on but the shift was removed before this point: only
                // the sender's reading is known.
                (true, None) => u8::MAX,
                (false, _) => 0,
            }),
            Direction::ServerToClient => client_on.map(|on| match (on, syn_ws) {
                (true, Some(s)) => s,
                (true, None) => u8::MAX,
                (false, _) => 0,
            }),
        };
        let usable_shift = match (shift_for(dir), receiver_shift) {
            (Some(s), Some(r)) => Some(s.min(r)),
            (s, _) => s,
        };
        let max_window_bytes = match (peer.max_window_field, usable_shift) {
            (Some(w), Some(s)) => Some(u64::from(w) << s.min(MAX_WINDOW_SCALE)),
            _ => None,
        };
        let ceiling_bps = max_window_bytes.and_then(|w| ceiling_of(w, rtt));
        // New data: what the capture shows once, and what it missed of
        // what the receiver acknowledged.
        let missed = me.missed.as_ref().map_or(0, |m| m.bytes());
        let new_bytes = (me.bytes - me.retransmitted_bytes.min(me.bytes)).saturating_add(missed);
        // The last flight needs one more round trip to be delivered and
        // acknowledged, so the transfer lasts from the first data segment to
        // one RTT after the last (to the last, when the RTT is unknown).
        let rtt_ns = rtt.map_or(0, |r| u64::try_from(r.as_nanos()).unwrap_or(u64::MAX));
        let throughput_bps = match (me.first_data, me.last_data) {
            (Some(a), Some(b)) => b
                .nanos_since(&a)
                .map(|ns| ns.saturating_add(rtt_ns))
                .filter(|ns| *ns > 0)
                .map(|ns| {
                    let bps = u128::from(new_bytes) * 8 * 1_000_000_000 / u128::from(ns);
                    u64::try_from(bps).unwrap_or(u64::MAX)
                }),
            _ => None,
        };
        let pair = st.lim.as_ref().map_or(&*UNUSED_LIMITS, |l| {
            &l[usize::from(dir == Direction::ServerToClient)]
        });
        // Without the handshake the trackers' input was logged: replayed
        // with the shift assumed or, failing that, the one the capture
        // pins (the receiver's `wscale_inferred` as one value), and the RTT
        // the capture shows.
        let inferred_here = inferred.as_ref().and_then(|p| match dir {
            Direction::ClientToServer => p.server,
            Direction::ServerToClient => p.client,
        });
        let pinned = inferred_here.filter(|i| i.min == i.max).map(|i| i.min);
        let log = st.limit_log.as_deref().filter(|_| !handshake_seen);
        let replayed = log.filter(|l| l.dropped().is_none()).and_then(|l| {
            let shift = shift_for(dir).or(pinned)?;
            let mut t = LimitTracker::new(shift);
            // The loop to the sender and back: its echoes of the receiver's TSvals.
            t.configure(rtt_ns, peer.min_echo_ns.unwrap_or(0), None);
            l.replay(dir == Direction::ServerToClient, &mut t);
            Some(t)
        });
        let tracker = replayed.as_ref().unwrap_or(pair.reading(shift_for(dir)));
        // Without the shift the sender reads the receiver's fields with, its
        // receive window is unknown: the tracker (which reads them unscaled)
        // would call a scaled window of a few units the limit.
        let limit = match (shift_for(dir), &replayed, log.and_then(LimitLog::dropped)) {
            (_, Some(t), _) => {
                let mut l = t.limit();
                if shift_for(dir).is_none() {
                    l.inferred_shift = Some(t.read_shift());
                }
                l
            }
            (Some(_), None, _) => tracker.limit(),
            (None, None, Some(why)) => Limit::none(why.reason()),
            (None, None, None) => Limit::none(match inferred_here {
                Some(i) => Cow::Owned(format!(
                    "the window scale is unknown (the handshake is not in the capture; it shows only that the {} reads the {}'s fields with a shift from {} to {}): pass --assume-wscale S",
                    dir.sender(),
                    dir.reverse().sender(),
                    i.min,
                    i.max
                )),
                None => Cow::Borrowed("the window scale is unknown (the handshake is not in the capture): pass --assume-wscale S"),
            }),
        };
        let beyond = receiver_shift
            .filter(|m| *m != u8::MAX)
            .and_then(|m| pair.exactly(m))
            .map(LimitTracker::beyond_window);
        // A ceiling limits only if the capture does not show more achieved.
        let within_ceiling = match (throughput_bps, ceiling_bps) {
            (Some(t), Some(c)) => u128::from(t) * 100 <= u128::from(c) * CEILING_MAX_PERCENT,
            _ => true,
        };
        let window_limited = if me.data_segments == 0 {
            Some(false)
        } else if max_window_bytes.is_none() {
            None
        } else if limit.kind != LimitKind::None {
            Some(limit.kind == LimitKind::ReceiveWindow && within_ceiling)
        } else {
            // Too little data for the time split: a window's worth in
            // flight on many segments, or achieved close to the ceiling.
            let filled = me.data_segments > 0
                && me.window_full * 100 >= me.data_segments * WINDOW_FULL_PERCENT;
            let near_ceiling = match (throughput_bps, ceiling_bps) {
                (Some(t), Some(c)) if c > 0 => {
                    u128::from(t) * 100 >= u128::from(c) * CEILING_PERCENT
                }
                _ => false,
            };
            Some((filled || near_ceiling) && within_ceiling)
        };
        DirectionReport {
            packets: me.packets,
            bytes: me.bytes,
            retransmissions: me.retransmissions,
            retransmitted_bytes: me.retransmitted_bytes,
            capture_missed_bytes: missed,
            max_window_bytes,
            max_window_field: peer.max_window_field,
            ceiling_bps,
            throughput_bps,
            window_limited,
            advice: advice_for(&limit, tracker, max_window_bytes, rtt, settings),
            limit,
            beyond_window_bytes: beyond.map(|b| b.0),
            beyond_window_accepted: beyond.filter(|b| b.0 > 0).map(|b| b.1),
        }
    };
    let directions = Directions {
        client_to_server: direction(Direction::ClientToServer),
        server_to_client: direction(Direction::ServerToClient),
    };
    let mut r = ConnectionReport {
        id: conn.id + 1,
        client: crate::output::format::socket_addr(conn.client),
        server: crate::output::format::socket_addr(conn.server),
        client_known: conn.client_known,
        handshake_seen,
        evicted: conn.evicted,
        continues: conn.continues.map(|id| id + 1),
        assumed_wscale: assumed,
        first_frame: conn.first_frame,
        last_frame: conn.last_frame,
        negotiated,
        rtt_s: rtt.map(|d| d.as_secs_f64()),
        rtt_source,
        directions,
        verdict: Cow::Borrowed(""),
    };
    r.verdict = verdict(&r, st, rtt, settings);
    r
}

fn verdict(
    r: &ConnectionReport,
    st: &ConnState,
    rtt: Option<Duration>,
    settings: &Settings,
) -> Cow<'static, str> {
    let mut parts: Vec<Cow<'static, str>> = Vec::new();
    let target = settings.target_rate;
    let at_rtt = |window: u64, what: &str| -> String {
        match rtt {
            Some(rtt) => {
                let mut s = format!(
                    "at {} that caps {what} throughput at {}",
                    DurationDisplay(rtt),
                    ceiling_of(window, Some(rtt)).map_or("?".to_string(), rate_text)
                );
                if let Some(need) = need_text(target, rtt) {
                    s.push_str("; ");
                    s.push_str(&need);
                }
                s
            }
            None => "the RTT is unknown (pass --rtt to compute the ceiling)".to_string(),
        }
    };
    let n = &r.negotiated;
    if st.syn.is_none() && st.synack.is_none() {
        let mut s = match r.continues {
            Some(id) => format!(
                "continues connection {id}, which was pushed out of the full connection table (--max-connections {}): its handshake is reported there; here window scaling is unknown",
                settings.capacity
            ),
            None => {
                let mut s = "handshake not seen (the capture starts mid-connection): window scaling is unknown".to_string();
                if let Some(inf) = &r.negotiated.wscale_inferred {
                    let text = |who: &str, i: Option<ShiftInterval>| {
                        i.map(|i| {
                            let peer = if who == "client" { "server" } else { "client" };
                            let mut t = if i.min == i.max {
                                format!("the {who}'s shift is {}", i.min)
                            } else {
                                format!("the {who}'s shift is {} to {}", i.min, i.max)
                            };
                            t.push_str(&match i.basis {
                                "sender_edge" => format!(
                                    " (the {peer}'s data kept stopping at the right edge of that shift's window: {} confidence)",
                                    i.confidence
                                ),
                                "linux_growth" => format!(
                                    " (its window grows as a Linux receiver's at shift {}, inside {} to {} from the bytes in flight and the window edges, assuming both ends agree about scaling: medium confidence)",
                                    i.min, i.bounds.min, i.bounds.max
                                ),
                                _ => match i.linux_growth_shift {
                                    Some(g) => format!(
                                        " (from the bytes in flight and the window edges; its window grows as a Linux receiver's at shift {g})"
                                    ),
                                    None => " (from the bytes in flight and the window edges)".to_string(),
                                },
                            });
                            t
                        })
                    };
                    let found: Vec<String> = [text("client", inf.client), text("server", inf.server)]
                        .into_iter()
                        .flatten()
                        .collect();
                    if !found.is_empty() {
                        s.push_str(&format!("; {}", found.join(", ")));
                    }
                    if let Some(e) = &r.negotiated.wscale_mismatch_evidence {
                        s.push_str(&format!(
                            "; the endpoints seem to disagree about window scaling ({} confidence): {}",
                            e.confidence, e.detail
                        ));
                    }
                }
                s
            }
        };
        match r.assumed_wscale {
            Some(a) => s.push_str(&format!(
                "; windows read with the assumed shift {a} (--assume-wscale)"
            )),
            None if [&r.directions.client_to_server, &r.directions.server_to_client]
                .iter()
                .any(|d| d.limit.inferred_shift.is_some()) =>
            {
                s.push_str(
                    "; window sizes and ceilings are not interpreted (pass --assume-wscale S to assume a shift), the limits read the windows with the shift the capture pins",
                )
            }
            None => s.push_str(
                "; windows are not interpreted (pass --assume-wscale S to assume a shift)",
            ),
        }
        parts.push(Cow::from(s));
    } else if st.synack.is_none() {
        parts.push(Cow::from(
            "SYN-ACK not seen: what the client negotiated is unknown",
        ));
    } else if st.syn.is_none() {
        parts.push(Cow::from(
            "SYN not seen: what the server negotiated is unknown",
        ));
    } else {
        match (n.wscale_offered.client, n.wscale_offered.server) {
            (Some(_), None) => {
                let s2c = &r.directions.server_to_client;
                let contradicted = matches!(
                    (s2c.throughput_bps, ceiling_of(MAX_UNSCALED, rtt)),
                    (Some(t), Some(c)) if u128::from(t) * 100 > u128::from(c) * CEILING_MAX_PERCENT
                );
                if contradicted {
                    parts.push(Cow::from(format!(
                        "window scaling was offered by the client but not answered: the client advertises at most {} bytes, which {} would cap server-to-client throughput at {}, yet the capture shows {} achieved: the server sent beyond the window the client advertised{}",
                        Thousands(MAX_UNSCALED),
                        rtt.map_or("at the RTT".to_string(), |r| format!("at {}", DurationDisplay(r))),
                        ceiling_of(MAX_UNSCALED, rtt).map_or("?".to_string(), rate_text),
                        s2c.throughput_bps.map_or("?".to_string(), rate_text),
                        match (s2c.beyond_window_bytes, s2c.beyond_window_accepted) {
                            (Some(b), Some(true)) if b > 0 => format!(
                                " ({} bytes), and the client accepted them (Linux keeps a receive window larger than the 65,535 bytes it can advertise unscaled)",
                                Thousands(b)
                            ),
                            _ => String::new(),
                        }
                    )));
                    if let Some(need) = rtt.and_then(|rtt| need_text(target, rtt)) {
                        parts.push(Cow::from(need));
                    }
                } else {
                    parts.push(Cow::from(format!(
                        "window scaling was offered by the client but not answered: the client's receive window is capped at {} bytes; {}",
                        Thousands(MAX_UNSCALED),
                        at_rtt(MAX_UNSCALED, "server-to-client")
                    )));
                }
                if n.wscale_mismatch {
                    let c2s = &r.directions.client_to_server;
                    let s2c = &r.directions.server_to_client;
                    let mut line = format!(
                        "BROKEN: the endpoints disagree about window scaling: the server's windows after the handshake look scaled (largest field {} after a SYN-ACK window of {}), so something between the server and this capture point removed its window-scale option; the client reads those fields unscaled (at most {} bytes",
                        c2s.max_window_field.unwrap_or(0),
                        st.synack.map_or(0, |s| s.window),
                        Thousands(c2s.max_window_bytes.unwrap_or(0)),
                    );
                    if let Some(c) = c2s.ceiling_bps {
                        line.push_str(&format!(", a client-to-server ceiling of {}", rate_text(c)));
                        if let Some(t) = c2s.throughput_bps.filter(|t| u128::from(*t) * 100 > u128::from(c) * CEILING_MAX_PERCENT) {
                            line.push_str(&format!(
                                "; the capture shows {} achieved, because its first flight went out under the SYN-ACK's own window of {} bytes, which is never scaled",
                                rate_text(t),
                                Thousands(u64::from(st.synack.map_or(0, |s| s.window)))
                            ));
                        }
                    }
                    line.push(')');
                    if let (Some(shift), Some(field)) = (n.wscale_offered.client, s2c.max_window_field) {
                        let bytes = u64::from(field) << shift.min(MAX_WINDOW_SCALE);
                        line.push_str(&format!(
                            ", while the server reads the client's unscaled fields with shift {shift} (up to {} bytes, more than the client offers)",
                            Thousands(bytes)
                        ));
                    }
                    parts.push(Cow::from(line));
                } else {
                    parts.push(Cow::from(format!(
                        "the server's receive window is capped at {} bytes as well (client-to-server)",
                        Thousands(MAX_UNSCALED)
                    )));
                }
            }
            (None, Some(_)) => parts.push(Cow::from(
                "the server sent window scale although the client did not offer it (RFC 7323 forbids this): scaling is off".to_string(),
            )),
            (None, None) => parts.push(Cow::from(format!(
                "window scaling was not offered by the client: both receive windows are capped at {} bytes; {}",
                Thousands(MAX_UNSCALED),
                at_rtt(MAX_UNSCALED, "each direction's")
            ))),
            (Some(c), Some(s)) if n.wscale_mismatch => {
                let c2s = &r.directions.client_to_server;
                let mut line = format!(
                    "BROKEN: the endpoints disagree about window scaling: the SYN-ACK seen here answers the client's offer (client shift {c}, server shift {s}), but {}",
                    n.wscale_mismatch_evidence.as_ref().map_or("the client does not scale", |e| e.detail.as_str())
                );
                line.push_str(&format!(
                    "; the window-scale option was removed between this capture point and the client: the client reads the server's fields unscaled (at most {} bytes",
                    Thousands(c2s.max_window_bytes.unwrap_or(0))
                ));
                if let Some(ceil) = c2s.ceiling_bps {
                    line.push_str(&format!(", a client-to-server ceiling of {}", rate_text(ceil)));
                    if let Some(t) = c2s.throughput_bps.filter(|t| {
                        u128::from(*t) * 100 > u128::from(ceil) * CEILING_MAX_PERCENT
                    }) {
                        line.push_str(&format!(
                            "; the capture shows {} achieved, because its first flight went out under the SYN-ACK's own window of {} bytes, which is never scaled",
                            rate_text(t),
                            Thousands(u64::from(st.synack.map_or(0, |s| s.window)))
                        ));
                    }
                }
                line.push_str(&format!(
                    "), and the server reads the client's unscaled fields with shift {c}, believing it offers up to {} bytes",
                    Thousands(u64::from(r.directions.server_to_client.max_window_field.unwrap_or(0)) << c.min(MAX_WINDOW_SCALE))
                ));
                parts.push(Cow::from(line));
            }
            (Some(c), Some(s)) => parts.push(Cow::from(format!(
                "window scaling on (client shift {c}, server shift {s})"
            ))),
        }
    }
    for d in &n.linux_drops {
        parts.push(Cow::from(d.text()));
    }
    if r.evicted {
        parts.push(Cow::from(format!(
            "evicted: the connection table was full (--max-connections {}), so the rest of this connection is reported separately as its continuation",
            settings.capacity
        )));
    }
    for (dir, d) in [
        (Direction::ClientToServer, &r.directions.client_to_server),
        (Direction::ServerToClient, &r.directions.server_to_client),
    ] {
        let receiver = match dir {
            Direction::ClientToServer => "server",
            Direction::ServerToClient => "client",
        };
        let name = dir.hyphenated();
        let l = &d.limit;
        if let (Some(rw), Some(snd), Some(net)) = (
            l.receive_window_fraction,
            l.sender_fraction,
            l.network_fraction,
        ) {
            let what = match l.kind {
                LimitKind::ReceiveWindow => "the receive window as the sender read it",
                LimitKind::Sender if l.idle_fraction.is_some_and(|i| i > 0.5) => {
                    "the sender: its application left it idle"
                }
                LimitKind::Sender => "the sender itself (its send buffer)",
                LimitKind::Network => "the network (the congestion window)",
                LimitKind::None => "too little data to tell",
            };
            parts.push(Cow::from(format!(
                "{name} was limited by {what}: receive window {:.0}%, sender {:.0}%, network {:.0}% of the sender's busy time{}",
                rw * 100.0,
                snd * 100.0,
                net * 100.0,
                l.idle_fraction
                    .filter(|i| *i >= 0.05)
                    .map_or(String::new(), |i| format!(", idle {:.0}% of the transfer", i * 100.0))
            )));
        }
        if let (Some(w), Some(e)) = (l.window_read_inferred_bytes, &l.receive_window_evidence) {
            if e.kind == "flight_plateau" {
                parts.push(Cow::from(format!(
                    "{name}: the sender read a window of about {} bytes{} although the {receiver} advertised up to {} (a window field rewritten on the way: no setting of the two hosts lifts it; {} confidence): {}",
                    Thousands(w),
                    ceiling_of(w, r.rtt_s.map(Duration::from_secs_f64))
                        .map_or(String::new(), |c| format!(" (a ceiling of {} at the RTT)", rate_text(c))),
                    d.max_window_bytes.map_or("more".to_string(), |m| format!("{} bytes", Thousands(m))),
                    e.confidence,
                    e.detail
                )));
            }
        }
        if let (Some(b), Some(accepted)) = (d.beyond_window_bytes, d.beyond_window_accepted) {
            if b > 0 {
                parts.push(Cow::from(format!(
                    "{name}: {} bytes were sent beyond the window the {receiver} advertised; {}",
                    Thousands(b),
                    if accepted {
                        "the receiver acknowledged them (it accepted more than it advertised): the sender read the window larger than the receiver meant it"
                    } else {
                        "the receiver did not acknowledge them: the sender misread the window"
                    }
                )));
            }
        }
        if !d.advice.is_empty() {
            let items: Vec<String> = d
                .advice
                .iter()
                .map(|a| {
                    if a.value > 1 {
                        format!("{} at least {}", a.setting, Thousands(a.value))
                    } else {
                        format!("{} = {}", a.setting, a.value)
                    }
                })
                .collect();
            parts.push(Cow::from(format!(
                "{name}: to reach {} on Linux, set on the {}: {}",
                settings.target_rate,
                d.advice[0].host,
                items.join(", ")
            )));
        }
        let plateau = l
            .receive_window_evidence
            .as_ref()
            .is_some_and(|e| e.kind == "flight_plateau");
        if d.window_limited == Some(true) && !plateau {
            let w = d.max_window_bytes.unwrap_or(0);
            let mut line = format!(
                "{} was window-limited: achieved {} against a ceiling of {} (the {receiver} advertised at most {} bytes)",
                name,
                d.throughput_bps.map_or("?".to_string(), rate_text),
                d.ceiling_bps.map_or("?".to_string(), rate_text),
                Thousands(w)
            );
            // The unscaled case already said what the target needs.
            if n.wscale.is_some() || r.assumed_wscale.is_some() {
                if let Some(need) = rtt.and_then(|rtt| need_text(target, rtt)) {
                    line.push_str(&format!("; {need}"));
                }
            }
            parts.push(Cow::from(line));
        }
    }
    // Most connections have one part: it is the verdict (no second copy).
    match parts.len() {
        1 => parts.swap_remove(0),
        _ => Cow::Owned(parts.join("; ")),
    }
}

/// Why an analysis stopped.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The capture could not be read further (connections seen so far were reported).
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// Writing the output failed.
    #[error("write error: {0}")]
    Write(#[from] io::Error),
}

/// Output format of `analyze`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalyzeFormat {
    /// Readable text.
    Text,
    /// `{"connections": [...]}`.
    Json,
}

/// One point of a connection's time series ([`series`]): the state of one
/// direction right after a segment of the connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeriesSample {
    /// The connection's `id` (from 1, order of first appearance).
    pub connection: u64,
    /// The direction whose sender this describes.
    pub direction: Direction,
    /// Seconds since the connection's first segment.
    pub time_s: f64,
    /// One past the highest byte sent, relative to the direction's first
    /// sequence number seen.
    pub seq_end: u64,
    /// The highest acknowledgment the receiver sent, same origin.
    pub ack: u64,
    /// The receiver's last window in bytes as the receiver means it
    /// (`None`: its shift unknown).
    pub window_bytes: Option<u64>,
    /// The same window as the sender reads it.
    pub window_read_bytes: Option<u64>,
    /// Bytes sent and not yet acknowledged as seen here.
    pub in_flight_bytes: u64,
    /// Bytes acknowledged over the last RTT, as bit/s (`None`: no RTT).
    pub throughput_bps: Option<u64>,
    /// An RTT sample, seconds, on a row where the receiver's ACK covers new
    /// data: the time from the newest data segment it covers to the ACK as
    /// seen at the capture point, plus the sender's side of the loop (from
    /// the handshake, else from the sender's echoes of the receiver's
    /// TSvals); never from a retransmitted segment (Karn). `None` elsewhere,
    /// and where the sender's side of the loop is unknown.
    pub rtt_s: Option<f64>,
    /// The connection's RTT estimate so far (`--rtt`, else the
    /// handshake's), seconds.
    pub rtt_estimate_s: Option<f64>,
    /// The sender's phase from this sample to the next one, under the
    /// window reading shown in `window_read_bytes`: `receive_window`,
    /// `idle`, and for the rest of the busy time where it went
    /// ([`crate::analysis::limits`], decided per round trip): `network` or `sender`,
    /// or `receive_window` where a plateau of the flight showed a window
    /// the capture does not; `busy` where that was not decided (see
    /// [`series`]); empty before the first data segment.
    pub limit: &'static str,
    /// The limit tracker's round trip the sample falls in (from 0).
    pub round: u64,
}

/// How direction `d`'s receiver's window fields are read by the sender and
/// meant by the receiver ([`ConnState::series_shifts`]).
type SeriesShifts = (Option<u8>, Option<u8>);

/// Most samples [`series`] holds while their round trip is undecided.
pub const SERIES_HELD: usize = 65_536;

/// Samples waiting for their round trip to be decided, in capture order,
/// and what is known of the rounds they wait for.
#[derive(Default)]
struct Held {
    rows: VecDeque<(SeriesSample, Option<RoundKey>)>,
    /// Held rows and the decision, per round waited for.
    rounds: rustc_hash::FxHashMap<RoundKey, (usize, Option<&'static str>)>,
}

/// A connection, a direction and one of its limit tracker's rounds.
type RoundKey = (u64, bool, u64);

impl Held {
    fn push(&mut self, s: SeriesSample) {
        let key = (s.limit == "busy").then_some((
            s.connection,
            s.direction == Direction::ServerToClient,
            s.round,
        ));
        if let Some(k) = key {
            self.rounds.entry(k).or_insert((0, None)).0 += 1;
        }
        self.rows.push_back((s, key));
    }

    /// Records what `t` (direction `d` of connection `id`) decided.
    fn learn(&mut self, id: u64, d: Direction, t: &LimitTracker) {
        if self.rounds.is_empty() {
            return;
        }
        let s2c = d == Direction::ServerToClient;
        for &(no, kind) in t.closed_rounds() {
            if let Some(e) = self.rounds.get_mut(&(id, s2c, no)) {
                e.1 = Some(kind.as_str());
            }
        }
        if let Some((from, to)) = t.plateau_moved() {
            for no in from..=to {
                if let Some(e) = self.rounds.get_mut(&(id, s2c, no)) {
                    e.1 = Some(RoundKind::ReceiveWindow.as_str());
                }
            }
        }
    }

    /// Decides the rounds of connection `id` still open: where each would
    /// go if it closed now (the connection ends, or the capture).
    fn settle(&mut self, id: u64, d: Direction, t: &LimitTracker) {
        self.learn(id, d, t);
        let s2c = d == Direction::ServerToClient;
        if let Some(e) = self.rounds.get_mut(&(id, s2c, t.round_no())) {
            e.1.get_or_insert(t.open_round_kind().as_str());
        }
    }

    /// Hands out the rows from the front whose rounds are decided (and,
    /// beyond [`SERIES_HELD`] rows or when `all`, the others as `busy`).
    fn release(&mut self, all: bool, each: &mut impl FnMut(&SeriesSample)) {
        loop {
            let held = self.rows.len();
            let Some((s, key)) = self.rows.front_mut() else {
                return;
            };
            if let Some(k) = *key {
                if let Some((n, label)) = self.rounds.get_mut(&k) {
                    match label {
                        Some(l) => s.limit = l,
                        None if all || held > SERIES_HELD => {}
                        None => return,
                    }
                    *n -= 1;
                    if *n == 0 {
                        self.rounds.remove(&k);
                    }
                }
            }
            if let Some((s, _)) = self.rows.pop_front() {
                each(&s);
            }
        }
    }
}

/// Reads a capture and calls `each` with a [`SeriesSample`] for the sending
/// direction of every data segment and the receiving direction of every
/// ACK, of the connections `filter` accepts (by id). Memory is the same as
/// [`analyze`]'s; the caller decides what to keep.
pub fn series<R: Read>(
    input: R,
    settings: &Settings,
    filter: impl FnMut(u64) -> bool,
    each: impl FnMut(&SeriesSample),
) -> Result<usize, AnalyzeError> {
    series_learned(input, settings, &FxHashMap::default(), filter, each)
}

/// [`series`], with what a first pass learned ([`learn`]) for connections
/// without a handshake: their windows are read with the learned shifts and
/// their limits timed with the learned RTT, as `analyze` reads them, where
/// `--assume-wscale` and `--rtt` do not say otherwise.
pub fn series_learned<R: Read>(
    input: R,
    settings: &Settings,
    learned: &FxHashMap<u64, Learned>,
    mut filter: impl FnMut(u64) -> bool,
    mut each: impl FnMut(&SeriesSample),
) -> Result<usize, AnalyzeError> {
    // The settings of one connection: the global ones, with what was learned.
    let own = |id: u64| -> Settings {
        match learned.get(&id) {
            Some(l) => Settings {
                learned_wscale: l.wscale,
                rtt: settings.rtt.or(l.rtt),
                ..*settings
            },
            None => *settings,
        }
    };
    let mut reader = CaptureReader::with_capacity(input, settings.buffer_capacity)?;
    let mut tracker: ConnTracker<ConnState> = ConnTracker::new(settings.capacity);
    let mut n = 0usize;
    // Busy time is the network's or the sender's by round trips, decided
    // as each closes: the samples wait for their round (at most
    // SERIES_HELD of them), in capture order.
    let mut held = Held::default();
    let settle = |held: &mut Held, c: &Connection<ConnState>| {
        let settings = own(c.id);
        for d in [Direction::ClientToServer, Direction::ServerToClient] {
            if let Some(t) = c
                .state
                .series_tracker(d, c.state.series_shifts(d, &settings))
            {
                held.settle(c.id + 1, d, t);
            }
        }
    };
    let new_state = || ConnState {
        series: true,
        ..ConnState::default()
    };
    let result: Result<(), AnalyzeError> = loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.into()),
        };
        let Ok(Some(rec)) = decode_packet(&record) else {
            continue;
        };
        let (conn, dir) = tracker.track(&rec, new_state);
        let own_settings = own(conn.id);
        let settings = &own_settings;
        conn.state.update(&rec, dir, settings);
        let id = conn.id + 1;
        if !filter(id) {
            continue;
        }
        // How each direction's window fields are read and meant, once per
        // segment.
        let shifts = [Direction::ClientToServer, Direction::ServerToClient]
            .map(|d| conn.state.series_shifts(d, settings));
        let of = |d: Direction| shifts[usize::from(d == Direction::ServerToClient)];
        for d in [Direction::ClientToServer, Direction::ServerToClient] {
            if let Some(t) = conn.state.series_tracker(d, of(d)) {
                held.learn(id, d, t);
            }
            // The sender learned of an ACK since its last sample: its phase
            // changed then, a row of its own.
            if let Some(s) = conn.state.learned_sample(d, of(d)) {
                n += 1;
                held.push(s);
            }
        }
        let mut emit = |d: Direction| {
            let data = d == dir;
            if let Some(s) = conn.state.sample(id, d, data, rec.ts, of(d), settings) {
                conn.state.series_last.get_or_insert_with(Box::default)
                    [usize::from(d == Direction::ServerToClient)] = Some(s);
                n += 1;
                held.push(s);
            }
        };
        if rec.payload_len > 0 {
            emit(dir);
        }
        if rec.flags.contains(Flags::ACK) {
            emit(dir.reverse());
        }
        if tracker.has_finished() {
            tracker.drain(|c| settle(&mut held, &c));
        }
        held.release(false, &mut each);
    };
    for c in tracker.finish_boxed() {
        settle(&mut held, &c);
    }
    held.release(true, &mut each);
    result.map(|()| n)
}

/// The analysis loop, one home for `analyze` and [`learn`]: every segment
/// through the connection table and its connection's state (the limit logs
/// held to their budget, [`limit_log`]), `finished` for each connection
/// once it and every earlier-started one have finished (see
/// [`crate::conn::tracker`]), and `idle` whenever no record is buffered, before
/// the reader waits for input. An error from `idle` (the output closed)
/// stops at once and is returned as `Err`; a capture error stops the
/// reading, the connections seen so far are still finished, and it comes
/// back as `Ok(Err(..))`.
fn each_connection<R: Read, C>(
    reader: &mut CaptureReader<R>,
    settings: &Settings,
    ctx: &mut C,
    mut finished: impl FnMut(&Connection<ConnState>, &mut C),
    mut idle: impl FnMut(&mut C) -> io::Result<()>,
) -> io::Result<Result<(), AnalyzeError>> {
    let mut tracker: ConnTracker<ConnState> = ConnTracker::new(settings.capacity);
    // Segments in the limit logs of the open connections.
    let mut logged = 0usize;
    let result = loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.into()),
        };
        let Ok(Some(rec)) = decode_packet(&record) else {
            continue;
        };
        let (conn, dir) = tracker.track(&rec, ConnState::default);
        let before = conn.state.log_len();
        conn.state.update(&rec, dir, settings);
        // The log grew, or was dropped at its own bound (then it is empty).
        logged = logged.saturating_sub(before) + conn.state.log_len();
        if logged > limit_log::LOG_BUDGET {
            if let Some(l) = conn.state.limit_log.as_mut() {
                logged = logged.saturating_sub(l.drop_events(limit_log::Dropped::Budget));
            }
        }
        if tracker.has_finished() {
            tracker.drain_boxed(|c| {
                logged = logged.saturating_sub(c.state.log_len());
                finished(&c, ctx);
            });
        }
        if !reader.has_buffered_record() {
            idle(ctx)?;
        }
    };
    for c in tracker.finish_boxed() {
        finished(&c, ctx);
    }
    Ok(result)
}

/// What a first pass over a capture learns for `series` ([`learn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Learned {
    /// Per direction (client to server, server to client): the shift its
    /// sender reads the receiver's window fields with, as `analyze` infers
    /// it (`limit.inferred_shift`).
    pub wscale: [Option<u8>; 2],
    /// The RTT `analyze` reports for the connection.
    pub rtt: Option<Duration>,
}

/// Most connections [`learn`] remembers (about 40 bytes each); those
/// beyond are not learned, and `series` labels their rows only with
/// `--assume-wscale` and `--rtt`.
pub const LEARN_MAX: usize = 1 << 20;

/// A first pass for `series` over a capture file: for each connection
/// without a handshake that `want` selects (by the id reports use, from 1),
/// the shifts and the RTT `analyze` reports for it (keyed by the tracker's
/// id, from 0); a time series streams, and cannot know them when the rows
/// are written. A capture error ends the pass with what was learned before
/// it (the second pass reports the error).
pub fn learn<R: Read>(
    input: R,
    settings: &Settings,
    mut want: impl FnMut(u64) -> bool,
) -> FxHashMap<u64, Learned> {
    let Ok(mut reader) = CaptureReader::with_capacity(input, settings.buffer_capacity) else {
        return FxHashMap::default();
    };
    let mut out: FxHashMap<u64, Learned> = FxHashMap::default();
    let keep = |c: &Connection<ConnState>, out: &mut FxHashMap<u64, Learned>| {
        let handshake = c.state.syn.is_some() && c.state.synack.is_some();
        if handshake || out.len() >= LEARN_MAX || !want(c.id + 1) {
            return;
        }
        let r = report(c, settings);
        let l = Learned {
            wscale: [
                r.directions.client_to_server.limit.inferred_shift,
                r.directions.server_to_client.limit.inferred_shift,
            ],
            rtt: c.state.measured_rtt().map(|(d, _)| d),
        };
        if l != Learned::default() {
            out.insert(c.id, l);
        }
    };
    let _ = each_connection(&mut reader, settings, &mut out, keep, |_| Ok(()));
    out
}

/// Analyses the capture from `input`, writing a report per connection to
/// `out` in order of first appearance, each as soon as it and every
/// earlier-started connection have finished (closed and idle, evicted, or at
/// the end; see [`crate::conn::tracker`] for the bounded exception). On a capture error the connections seen so far are
/// still reported, the output is closed properly, and the error returned.
pub fn analyze<R: Read, W: Write>(
    input: R,
    out: &mut W,
    format: AnalyzeFormat,
    settings: &Settings,
) -> Result<AnalyzeSummary, AnalyzeError> {
    let mut reader = CaptureReader::with_capacity(input, settings.buffer_capacity)?;
    let mut written = 0usize;
    let mut findings = 0usize;
    let mut write_err: Option<io::Error> = None;
    if format == AnalyzeFormat::Json {
        write!(
            out,
            "{{\"schema_version\":{SCHEMA_VERSION},\"connections\":["
        )?;
    }
    // The reports' JSON, gathered here and handed to `out` in blocks of
    // at least JSON_BLOCK bytes, which a `BufWriter` of that capacity
    // writes through instead of copying (the many-connections benchmark
    // writes 190 MB of JSON: a second copy of it was 5% of the run time).
    let mut sink = JsonSink {
        out,
        json: Vec::with_capacity(2 * JSON_BLOCK),
        memo: DirectionsMemo::default(),
    };
    let emit = |conn: &Connection<ConnState>, sink: &mut JsonSink<'_, W>| {
        if write_err.is_some() {
            return;
        }
        let rep = report(conn, settings);
        if rep.has_findings() {
            findings += 1;
        }
        let res = match format {
            AnalyzeFormat::Json => {
                let json = &mut sink.json;
                let start = json.len();
                json.extend_from_slice(if written == 0 { b"\n" } else { b",\n" });
                match write_report_json(&rep, &mut sink.memo, json) {
                    Ok(()) if json.len() >= JSON_BLOCK => sink.write_json(),
                    Ok(()) => Ok(()),
                    Err(e) => {
                        json.truncate(start);
                        Err(io::Error::other(e))
                    }
                }
            }
            AnalyzeFormat::Text => write_text(sink.out, &rep),
        };
        match res {
            Ok(()) => written += 1,
            Err(e) => write_err = Some(e),
        }
    };
    // Reports written so far appear before the tool waits for input.
    let result = each_connection(&mut reader, settings, &mut sink, emit, |sink| {
        sink.write_json()?;
        sink.out.flush()
    })?;
    if let Some(e) = write_err {
        return Err(e.into());
    }
    sink.write_json()?;
    if format == AnalyzeFormat::Json {
        out.write_all(b"\n]}\n")?;
    }
    out.flush()?;
    result?;
    Ok(AnalyzeSummary {
        connections: written,
        findings,
    })
}

/// The JSON of the last few [`Directions`] written, reused for an equal
/// value. A port scan or a busy server gives thousands of short
/// connections whose two directions read the same (one SYN, a RST, no
/// data): on the many-connections benchmark capture, serializing them
/// was a sixth of `analyze --json`'s instructions (callgrind). Only values
/// without a float are kept: equal floats can print differently (`0.0`
/// and `-0.0`), equal integers, strings and enums cannot.
#[derive(Debug, Default)]
struct DirectionsMemo {
    slots: Vec<(Directions, Vec<u8>)>,
    /// The slot the next new value replaces once all are used.
    next: usize,
}

impl DirectionsMemo {
    /// Values kept: a scan's few shapes of short connection, compared in
    /// turn (each comparison is a few dozen fields, well below writing them).
    const SLOTS: usize = 4;

    /// The JSON of `d`, from the memo or written now and kept; `None` for
    /// a value the memo does not keep (one with a float) or that
    /// [`crate::output::fastjson::write`] could not write.
    fn json(&mut self, d: &Directions) -> Option<&[u8]> {
        if [&d.client_to_server, &d.server_to_client]
            .iter()
            .any(|r| r.limit.has_float())
        {
            return None;
        }
        if let Some(i) = self.slots.iter().position(|(v, _)| v == d) {
            return Some(&self.slots[i].1);
        }
        let mut json = Vec::new();
        crate::output::fastjson::write(d, &mut json).ok()?;
        let i = if self.slots.len() < Self::SLOTS {
            self.slots.push((d.clone(), json));
            self.slots.len() - 1
        } else {
            let i = self.next;
            self.slots[i] = (d.clone(), json);
            self.next = (i + 1) % Self::SLOTS;
            i
        };
        Some(&self.slots[i].1)
    }
}

/// Appends the JSON of `rep` to `out`, its directions from `memo` when it
/// has them: byte for byte [`crate::output::fastjson::write`]'s.
fn write_report_json(
    rep: &ConnectionReport,
    memo: &mut DirectionsMemo,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    if let Some(dirs) = memo.json(&rep.directions) {
        let raw = crate::output::fastjson::Raw(dirs);
        if crate::output::fastjson::write_fast(&WithDirections(rep, raw), out).is_ok() {
            return Ok(());
        }
    }
    crate::output::fastjson::write(rep, out)
}

/// Bytes of report JSON [`analyze`] gathers before writing them: the
/// capacity of the tool's own `BufWriter`, which then writes them through.
const JSON_BLOCK: usize = 1 << 16;

/// `analyze`'s output: the writer, and the reports' JSON not yet written to it.
struct JsonSink<'a, W> {
    out: &'a mut W,
    json: Vec<u8>,
    memo: DirectionsMemo,
}

impl<W: Write> JsonSink<'_, W> {
    fn write_json(&mut self) -> io::Result<()> {
        if self.json.is_empty() {
            return Ok(());
        }
        let res = self.out.write_all(&self.json);
        self.json.clear();
        res
    }
}

/// What an analysis reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnalyzeSummary {
    /// Connections reported.
    pub connections: usize,
    /// Connections with a finding: a broken negotiation, a SYN Linux drops,
    /// or a window-limited direction.
    pub findings: usize,
}

fn opt<T: fmt::Display>(v: Option<T>) -> String {
    v.map_or("unknown".to_string(), |v| v.to_string())
}

/// Writes one connection report as readable text.
pub fn write_text<W: Write + ?Sized>(w: &mut W, r: &ConnectionReport) -> io::Result<()> {
    writeln!(
        w,
        "connection {} -> {}{} (frames {}-{})",
        r.client,
        r.server,
        if r.client_known {
            ""
        } else {
            " (client guessed: no handshake)"
        },
        r.first_frame,
        r.last_frame
    )?;
    let n = &r.negotiated;
    let ws = |v: Option<u8>| v.map_or("none".to_string(), |s| s.to_string());
    writeln!(
        w,
        "  handshake {}; MSS client {} server {}; wscale offered client {} server {}; scaling on: client {} server {}{}; SACK {}; timestamps {}; ECN {}",
        if r.handshake_seen { "seen" } else { "not seen" },
        opt(n.mss.client),
        opt(n.mss.server),
        ws(n.wscale_offered.client),
        ws(n.wscale_offered.server),
        opt(n.wscale_on.client),
        opt(n.wscale_on.server),
        if n.wscale_mismatch { " (MISMATCH)" } else { "" },
        n.sack,
        n.timestamps,
        match n.ecn {
            Some(EcnMode::Classic) => "classic",
            Some(EcnMode::Accecn) => "AccECN",
            None => "off",
        }
    )?;
    writeln!(
        w,
        "  RTT {}",
        match (r.rtt_s, r.rtt_source) {
            (Some(s), Some(src)) => format!("{:.3} ms ({src})", s * 1000.0),
            _ => "unknown".to_string(),
        }
    )?;
    for (name, d) in [
        ("client->server", &r.directions.client_to_server),
        ("server->client", &r.directions.server_to_client),
    ] {
        writeln!(
            w,
            "  {name}: {} packets, {} bytes, {} retransmissions; max window {}; ceiling {}; achieved {}; window-limited {}; limit {}",
            d.packets,
            Thousands(d.bytes),
            d.retransmissions,
            d.max_window_bytes.map_or("unknown".to_string(), |b| format!("{} bytes", Thousands(b))),
            d.ceiling_bps.map_or("unknown".to_string(), rate_text),
            d.throughput_bps.map_or("n/a".to_string(), rate_text),
            opt(d.window_limited),
            match (d.limit.kind, d.limit.reason.as_deref()) {
                (LimitKind::None, Some(why)) => format!("none ({why})"),
                (LimitKind::ReceiveWindow, _) => "receive window".to_string(),
                (LimitKind::Sender, _) => "sender".to_string(),
                (LimitKind::Network, _) => "network".to_string(),
                (LimitKind::None, None) => "none".to_string(),
            } + &d
                .limit
                .inferred_shift
                .map_or(String::new(), |s| {
                    format!(" (windows read with shift {s}, inferred from the capture)")
                })
        )?;
        if d.capture_missed_bytes > 0 {
            writeln!(
                w,
                "    the capture missed at least {} bytes the receiver acknowledged (capture loss, not the network's; achieved includes them)",
                Thousands(d.capture_missed_bytes)
            )?;
        }
    }
    writeln!(w, "  verdict: {}", r.verdict)?;
    writeln!(w)
}

/// Command-line arguments of `firewall-check analyze`.
#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeArgs {
    /// The capture file (pcap or pcapng); `-` reads standard input.
    pub capture: std::path::PathBuf,
    /// `{"connections": [...]}` instead of text.
    #[arg(long)]
    pub json: bool,
    /// Use this RTT (e.g. `10ms`) instead of measuring it.
    #[arg(long, value_parser = parse_rtt)]
    pub rtt: Option<Duration>,
    /// The rate the verdict computes the needed window for (e.g. `1Gbps`).
    #[arg(long, value_parser = parse_rate, default_value = "1Gbit/s")]
    pub target_rate: BitsPerSecond,
    /// For connections whose handshake is not in the capture, read window fields with this shift (0-14).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=i64::from(MAX_WINDOW_SCALE)))]
    pub assume_wscale: Option<u8>,
    /// Most connections held open at once (closed ones are evicted first).
    #[arg(long, default_value_t = DEFAULT_CAPACITY)]
    pub max_connections: usize,
}

fn parse_rtt(s: &str) -> Result<Duration, String> {
    let d = bdp::parse_duration(s).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("the RTT must be above zero".to_string());
    }
    Ok(d)
}

fn parse_rate(s: &str) -> Result<BitsPerSecond, String> {
    s.parse::<BitsPerSecond>().map_err(|e| e.to_string())
}

/// Runs `analyze` for the command line; the error is the message to print.
pub fn run(args: &AnalyzeArgs) -> Result<crate::Outcome, crate::Failure> {
    if args.max_connections == 0 {
        return Err(crate::Failure::Usage(
            "--max-connections must be at least 1".to_string(),
        ));
    }
    let input = crate::open_capture(&args.capture)?;
    let settings = Settings {
        rtt: args.rtt,
        target_rate: args.target_rate,
        assume_wscale: args.assume_wscale,
        capacity: args.max_connections,
        ..Settings::default()
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(JSON_BLOCK, stdout.lock());
    let format = if args.json {
        AnalyzeFormat::Json
    } else {
        AnalyzeFormat::Text
    };
    match analyze(input, &mut out, format, &settings) {
        Ok(summary) if summary.findings > 0 => Ok(crate::Outcome::Findings),
        Ok(_) => Ok(crate::Outcome::Clean),
        Err(AnalyzeError::Write(e)) if crate::is_broken_pipe(&e) => Ok(crate::Outcome::Clean),
        Err(e) => Err(format!("{}: {e}", args.capture.display()).into()),
    }
}

#[cfg(test)]
mod rtt_ring_tests {
    use super::RttRing;

    #[test]
    fn an_ack_dates_the_newest_end_it_covers_once() {
        let mut r = RttRing::default();
        r.sent(1000, 10);
        r.sent(2000, 20);
        r.sent(3000, 30);
        // Covers the first two ends: the newest of them dates it.
        assert_eq!(r.acked(2000, 120), Some(100));
        // The same ACK again (a duplicate) gives nothing.
        assert_eq!(r.acked(2000, 125), None);
        // An ACK between two ends covers none of them.
        assert_eq!(r.acked(2500, 126), None);
        assert_eq!(r.acked(3000, 131), Some(101));
        // An end that is not new (a retransmission's) is not recorded,
        // even once the ring is empty.
        r.sent(3000, 140);
        assert_eq!(r.acked(3500, 150), None);
        r.sent(4000, 160);
        assert_eq!(r.acked(4000, 170), Some(10));
    }

    #[test]
    fn ends_wrap_around_the_sequence_space_and_the_ring() {
        let mut r = RttRing::default();
        for i in 0..40u32 {
            r.sent((u32::MAX - 10_000).wrapping_add(i * 1000), u64::from(i));
        }
        // 32 kept: the newest covered end is the 35th (sent at 35).
        let ack = (u32::MAX - 10_000).wrapping_add(35 * 1000);
        assert_eq!(r.acked(ack, 100), Some(65));
        assert_eq!(r.len, 4);
    }
}

#[cfg(test)]
mod held_tests {
    use super::{Direction, Held, SeriesSample, SERIES_HELD};

    fn row(i: u64, limit: &'static str) -> SeriesSample {
        SeriesSample {
            connection: 1,
            direction: Direction::ServerToClient,
            time_s: i as f64,
            seq_end: i,
            ack: 0,
            window_bytes: None,
            window_read_bytes: None,
            in_flight_bytes: 0,
            throughput_bps: None,
            rtt_s: None,
            rtt_estimate_s: None,
            limit,
            round: i / 10,
        }
    }

    #[test]
    fn undecided_rows_wait_in_order_up_to_the_cap() {
        let mut h = Held::default();
        let mut out = Vec::new();
        // A decided row behind an undecided one waits with it.
        h.push(row(0, "busy"));
        h.push(row(1, "idle"));
        h.release(false, &mut |s| out.push((s.seq_end, s.limit)));
        assert!(out.is_empty());
        for i in 2..=SERIES_HELD as u64 {
            h.push(row(i, "busy"));
        }
        // One past the cap: the oldest goes out undecided, in order.
        h.release(false, &mut |s| out.push((s.seq_end, s.limit)));
        assert_eq!(out, vec![(0, "busy"), (1, "idle")]);
        h.release(true, &mut |s| out.push((s.seq_end, s.limit)));
        assert_eq!(out.len(), SERIES_HELD + 1);
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(h.rows.is_empty() && h.rounds.is_empty());
    }
}

#[cfg(test)]
mod edge_tests {
    use super::EdgeEvidence;

    /// The receiver at ACK 1000 with field 100: shift 0's edge is 1100,
    /// shift 1's 1200, shift 2's 1400.
    fn evidence() -> EdgeEvidence {
        let mut e = EdgeEvidence::default();
        e.receiver_ack(1000, 100, None);
        e
    }

    #[test]
    fn data_past_an_edge_with_no_hole_rules_the_shift_out_at_once() {
        let mut e = evidence();
        assert_eq!(e.sender_data(1000, 1300, Some(1000)), 0);
        assert_eq!(e.on_data(1300, 300), 2, "past shift 1's edge at 1200");
    }

    #[test]
    fn a_hole_the_network_filled_confirms_the_held_bound() {
        let mut e = evidence();
        // 1000..1100 missing: the data resumes at 1100.
        assert_eq!(e.sender_data(1100, 1300, Some(1000)), 0);
        assert_eq!(e.on_data(1300, 200), 0, "held while the hole is open");
        // A segment within what was seen closes nothing.
        assert_eq!(e.sender_data(1200, 1300, Some(1300)), 0);
        // The retransmission up to where the data resumed: shift 1 is out.
        assert_eq!(e.sender_data(1000, 1100, Some(1300)), 2);
        assert_eq!(e.on_data(1300, 200), 2, "no hole open: applied at once");
    }

    #[test]
    fn a_hole_the_receiver_acknowledged_unseen_drops_the_held_bound() {
        let mut e = evidence();
        assert_eq!(e.sender_data(1100, 1300, Some(1000)), 0);
        assert_eq!(e.on_data(1300, 200), 0);
        // The receiver has the hole's bytes: the capture missed them, and
        // may have missed the ACKs that allowed the data.
        e.receiver_ack(1300, 100, None);
        assert_eq!(e.sender_data(1000, 1100, Some(1300)), 0, "nothing held");
        assert_eq!(e.on_data(1350, 200), 0, "within every edge of ACK 1300");
        assert_eq!(e.on_data(1450, 200), 1, "past shift 0's edge at 1400");
    }
}

#[cfg(test)]
mod memo_tests {
    use super::{
        each_connection, report, write_report_json, CaptureReader, ConnectionReport,
        DirectionsMemo, Settings,
    };

    /// The reports of a capture file under `examples/data`.
    fn reports(name: &str) -> Vec<ConnectionReport> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../data")
            .join(name);
        let bytes = std::fs::read(&path).expect("shipped capture");
        let settings = Settings::default();
        let mut reader = CaptureReader::new(&bytes[..]).expect("a capture");
        let mut out = Vec::new();
        each_connection(
            &mut reader,
            &settings,
            &mut out,
            |c, out: &mut Vec<ConnectionReport>| out.push(report(c, &settings)),
            |_| Ok(()),
        )
        .expect("no I/O error")
        .expect("a whole capture");
        out
    }

    #[test]
    fn reused_directions_give_what_serde_json_writes() {
        let mut all = Vec::new();
        for side in ["inside", "outside"] {
            for case in ["bulk", "campus", "clean6", "nat", "synproxy"] {
                all.extend(reports(&format!("{case}-{side}.pcap")));
            }
        }
        assert!(all.len() >= 10, "{} reports", all.len());
        // Each report twice in a row (the second from the memo), then a
        // copy that differs in one direction's field only, then copies
        // whose limit holds a float (never kept: `0.0` and `-0.0` are
        // equal but print differently).
        // The shipped captures carry data, so their limits have floats:
        // each is also taken without them.
        let mut cases = Vec::new();
        for r in &all {
            let mut plain = r.clone();
            for d in [
                &mut plain.directions.client_to_server,
                &mut plain.directions.server_to_client,
            ] {
                let l = &mut d.limit;
                l.receive_window_fraction = None;
                l.sender_fraction = None;
                l.network_fraction = None;
                l.idle_fraction = None;
                l.busy_s = None;
            }
            for base in [r, &plain] {
                cases.push(base.clone());
                cases.push(base.clone());
                let mut other = base.clone();
                other.directions.server_to_client.packets += 1;
                cases.push(other);
            }
            for f in [0.0, -0.0] {
                let mut float = plain.clone();
                float.directions.client_to_server.limit.busy_s = Some(f);
                cases.push(float);
            }
        }
        let mut memo = DirectionsMemo::default();
        let mut ours = Vec::new();
        let mut want = Vec::new();
        for r in &cases {
            write_report_json(r, &mut memo, &mut ours).unwrap();
            serde_json::to_writer(&mut want, r).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&want),
                "report {}",
                r.id
            );
        }
        // The memo was used, and kept no more than its slots.
        assert!(!memo.slots.is_empty());
        assert!(memo.slots.len() <= DirectionsMemo::SLOTS);
        assert!(memo
            .slots
            .iter()
            .all(|(d, _)| !d.client_to_server.limit.has_float()));
    }

    #[test]
    fn a_value_with_a_float_is_not_kept() {
        let mut r = reports("campus-inside.pcap").remove(0);
        r.directions.client_to_server.limit.sender_fraction = Some(0.5);
        let mut memo = DirectionsMemo::default();
        assert!(memo.json(&r.directions).is_none());
        assert!(memo.slots.is_empty());
        r.directions.client_to_server.limit.sender_fraction = None;
        r.directions.client_to_server.limit.receive_window_fraction = None;
        r.directions.client_to_server.limit.network_fraction = None;
        r.directions.client_to_server.limit.idle_fraction = None;
        r.directions.client_to_server.limit.busy_s = None;
        r.directions.server_to_client.limit = r.directions.client_to_server.limit.clone();
        let json = memo.json(&r.directions).expect("kept").to_vec();
        assert_eq!(json, serde_json::to_vec(&r.directions).unwrap());
        assert_eq!(memo.slots.len(), 1);
    }
}
