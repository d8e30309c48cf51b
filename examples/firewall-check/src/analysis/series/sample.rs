//! The time series' samples: the state of each direction of each
//! connection after every segment, as `analyze`'s connection state holds
//! it, observed segment by segment ([`SeriesConn`]) without changing it.
//!
//! A direction's row follows each of its data segments and each ACK of its
//! receiver; besides, a direction gets a row (with the previous row's
//! figures) where its sender learned of an ACK between two segments: its
//! phase changes there. A row whose round trip is not yet decided
//! (`busy`: network or sender) waits for it in `Held`, at most
//! [`SERIES_HELD`] rows.

use std::collections::VecDeque;
use std::io::Read;

use capture::{CaptureReader, Timestamp};
use rustc_hash::FxHashMap;
use tcp_options::kind::MAX_WINDOW_SCALE;
use tcp_options::seq::seq_lt;
use tcp_options::Flags;

use crate::analysis::analyze::mismatch::{client_fields, server_scales_anyway, ClientFields};
use crate::analysis::analyze::{AnalyzeError, ConnState, Learned, Settings};
use crate::analysis::limits::{LimitTracker, SenderPhase};
use crate::conn::tracker::{ConnTracker, Connection};
use crate::conn::Direction;
use crate::decode::decode_counted;
use capture::tally::Tally;

/// A connection as a time series observes it: `analyze`'s state, and what
/// only the series needs (each direction's sequence origin, last row, and
/// the rings behind its RTT samples and throughput).
#[derive(Debug, Clone, Default)]
pub struct SeriesConn {
    st: ConnState,
    /// Sequence origin of each direction.
    origin: [Option<u32>; 2],
    /// Each direction's last row.
    last: [Option<SeriesSample>; 2],
    /// Each direction's sender's new data and when it passed, for RTT samples.
    rtt_ring: [Option<Box<RttRing>>; 2],
    /// (time, bytes acknowledged) of each direction's receiver, for the
    /// throughput over an RTT.
    acked_ring: [Option<Box<AckedRing>>; 2],
}

impl SeriesConn {
    /// The shifts of direction `d`'s receiver's window fields for the time
    /// series: `(as the sender reads them, as the receiver means them)`,
    /// as the capture shows them so far, with the same mismatch evidence
    /// the report uses.
    fn shifts(&self, d: Direction, settings: &Settings) -> SeriesShifts {
        let st = &self.st;
        let syn_ws = st.syn.and_then(|s| s.linux().window_scale);
        let synack_ws = st.synack.and_then(|s| s.linux().window_scale);
        let client_unscaled = matches!(
            client_fields(st, syn_ws, synack_ws),
            ClientFields::Unscaled(_)
        );
        let server_anyway = server_scales_anyway(st, syn_ws, synack_ws);
        if !st.handshake_seen() {
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
    /// decided then), once; `shifts` are [`SeriesConn::shifts`]'s.
    fn learned_sample(&mut self, d: Direction, shifts: SeriesShifts) -> Option<SeriesSample> {
        let (t_ns, phase, round) = self.tracker(d, shifts)?.learned_at()?;
        let last = self.last[d.index()].as_mut()?;
        let t = t_ns as f64 / 1e9;
        if t <= last.time_s || phase == last.limit && last.limit != Some(SenderPhase::Busy) {
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
    /// series shows (`shifts`: [`SeriesConn::shifts`]'s).
    /// `None` unless a tracker reads with exactly that shift and knows the
    /// RTT: while the shift is unknown (no handshake, none assumed), or
    /// without an RTT (no handshake, no `--rtt`), a tracker reading the
    /// fields unscaled would call a scaled window of a few units the limit.
    fn tracker(&self, d: Direction, shifts: SeriesShifts) -> Option<&LimitTracker> {
        let (read_shift, _) = shifts;
        self.st
            .lim
            .as_ref()?
            .get(d.index())?
            .exactly(read_shift?.min(MAX_WINDOW_SCALE))
            .filter(|t| t.is_configured())
    }

    /// The time-series point of direction `d` now ([`SeriesSample`]),
    /// after a data segment of `d` (`data`) or an ACK of its receiver;
    /// `shifts` are [`SeriesConn::shifts`]'s.
    fn sample(
        &mut self,
        id: u64,
        d: Direction,
        data: bool,
        ts: Option<Timestamp>,
        shifts: SeriesShifts,
        settings: &Settings,
    ) -> Option<SeriesSample> {
        let (base, ts) = (self.st.base_ts?, ts?);
        let t_ns = ts.nanos_since(&base)?;
        let (read_shift, meant_shift) = shifts;
        // Before the receiver's first window after the handshake, the
        // handshake's own (never scaled) window is in force.
        let handshake_window = match d {
            Direction::ClientToServer => self.st.synack.map(|s| u64::from(s.window)),
            Direction::ServerToClient => self.st.syn.map(|s| u64::from(s.window)),
        };
        let tracker = self.tracker(d, shifts);
        let limit = tracker.and_then(LimitTracker::phase_name);
        let round = tracker.map_or(0, LimitTracker::round_no);
        let rtt_ns = settings
            .rtt
            .map(|r| u64::try_from(r.as_nanos()).unwrap_or(u64::MAX))
            .or(self.st.handshake_rtt_ns)
            .filter(|r| *r > 0);
        // The sender's own side of the loop: from the handshake, else
        // from the sender's echoes of the receiver's TSvals.
        let sender_loop = self.st.handshake_rtt_ns.and(self.st.sender_loop_ns(d));
        let (me, peer) = self.st.sides(d);
        let origin = &mut self.origin[d.index()];
        let nxt = me.snd_nxt?;
        // An RTT sample where the receiver's ACK covers new data: from the
        // newest data segment it covers to it, as seen here, plus the
        // sender's side of the loop.
        let rtt_sample_ns = {
            let retransmissions = me.retransmissions;
            let ring = self.rtt_ring[d.index()].get_or_insert_with(Box::default);
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
            let ring = self.acked_ring[d.index()].get_or_insert_with(Box::default);
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
    /// [`series`]); `None` before the first data segment.
    pub limit: Option<SenderPhase>,
    /// The limit tracker's round trip the sample falls in (from 0).
    pub round: u64,
}

/// How direction `d`'s receiver's window fields are read by the sender and
/// meant by the receiver ([`SeriesConn::shifts`]).
type SeriesShifts = (Option<u8>, Option<u8>);

/// Most samples [`series`] holds while their round trip is undecided.
pub const SERIES_HELD: usize = 65_536;

/// Samples waiting for their round trip to be decided, in capture order,
/// and what is known of the rounds they wait for.
#[derive(Default)]
struct Held {
    rows: VecDeque<(SeriesSample, Option<RoundKey>)>,
    /// Held rows and the decision, per round waited for.
    rounds: FxHashMap<RoundKey, (usize, Option<SenderPhase>)>,
}

/// A connection, a direction and one of its limit tracker's rounds.
type RoundKey = (u64, bool, u64);

impl Held {
    fn push(&mut self, s: SeriesSample) {
        let key = (s.limit == Some(SenderPhase::Busy)).then_some((
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
                e.1 = Some(SenderPhase::from(kind));
            }
        }
        if let Some((from, to)) = t.plateau_moved() {
            for no in from..=to {
                if let Some(e) = self.rounds.get_mut(&(id, s2c, no)) {
                    e.1 = Some(SenderPhase::ReceiveWindow);
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
            e.1.get_or_insert(SenderPhase::from(t.open_round_kind()));
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
                        Some(l) => s.limit = Some(*l),
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
/// [`analyze`](crate::analysis::analyze::analyze)'s; the caller decides what to keep.
pub fn series<R: Read>(
    input: R,
    settings: &Settings,
    filter: impl FnMut(u64) -> bool,
    each: impl FnMut(&SeriesSample),
) -> Result<usize, AnalyzeError> {
    series_learned(input, settings, &FxHashMap::default(), filter, each)
}

/// [`series`], with what a first pass learned ([`learn`](crate::analysis::analyze::learn)) for connections
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
    // The settings of one connection: the global ones for a time series,
    // with what was learned.
    let settings = &Settings {
        time_series: true,
        ..*settings
    };
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
    let mut tracker: ConnTracker<SeriesConn> = ConnTracker::new(settings.capacity);
    let mut n = 0usize;
    // Busy time is the network's or the sender's by round trips, decided
    // as each closes: the samples wait for their round (at most
    // SERIES_HELD of them), in capture order.
    let mut held = Held::default();
    let settle = |held: &mut Held, c: &Connection<SeriesConn>| {
        let settings = own(c.id);
        for d in [Direction::ClientToServer, Direction::ServerToClient] {
            if let Some(t) = c.state.tracker(d, c.state.shifts(d, &settings)) {
                held.settle(c.id + 1, d, t);
            }
        }
    };
    // Counted, not reported: series writes rows, not a capture's summary.
    let mut tally = Tally::default();
    let result: Result<(), AnalyzeError> = loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.into()),
        };
        // Through tunnels, as analyze's `learn` reads the capture: the
        // connections and their ids are the same in both passes.
        let Ok(rec) = decode_counted(&record, &mut tally) else {
            continue;
        };
        let (conn, dir) = tracker.track(&rec, SeriesConn::default);
        let own_settings = own(conn.id);
        let settings = &own_settings;
        conn.state.st.update(&rec, dir, settings);
        let id = conn.id + 1;
        if !filter(id) {
            continue;
        }
        // How each direction's window fields are read and meant, once per
        // segment.
        let shifts = [Direction::ClientToServer, Direction::ServerToClient]
            .map(|d| conn.state.shifts(d, settings));
        let of = |d: Direction| shifts[d.index()];
        for d in [Direction::ClientToServer, Direction::ServerToClient] {
            if let Some(t) = conn.state.tracker(d, of(d)) {
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
                conn.state.last[d.index()] = Some(s);
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
    use super::{Direction, Held, SenderPhase, SeriesSample, SERIES_HELD};

    fn row(i: u64, limit: Option<SenderPhase>) -> SeriesSample {
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
        h.push(row(0, Some(SenderPhase::Busy)));
        h.push(row(1, Some(SenderPhase::Idle)));
        h.release(false, &mut |s| out.push((s.seq_end, s.limit)));
        assert!(out.is_empty());
        for i in 2..=SERIES_HELD as u64 {
            h.push(row(i, Some(SenderPhase::Busy)));
        }
        // One past the cap: the oldest goes out undecided, in order.
        h.release(false, &mut |s| out.push((s.seq_end, s.limit)));
        assert_eq!(
            out,
            vec![(0, Some(SenderPhase::Busy)), (1, Some(SenderPhase::Idle))]
        );
        h.release(true, &mut |s| out.push((s.seq_end, s.limit)));
        assert_eq!(out.len(), SERIES_HELD + 1);
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(h.rows.is_empty() && h.rounds.is_empty());
    }
}
