//! The streaming comparison: both captures read together in time order
//! (each at its own clock, which never goes back: see [`Input`]'s), each
//! through the shared decode ([`decode_counted`]: plain links, tunnels and
//! encapsulations, counted in [`Input::tally`]) and its own
//! [`ConnTracker`], connections paired across the captures as the evidence
//! arrives, each direction aligned within a bounded window, and a pair's
//! findings folded when both of its connections have ended.
//!
//! # Memory
//!
//! What is held is bounded by the connections open at once, not by the
//! size of the captures:
//!
//! - per capture, the tracker's table (at most [`super::Options::max_connections`]
//!   open connections, see [`crate::conn::tracker`]);
//! - per connection not yet paired, at most [`EARLY`] packets waiting for
//!   their counterpart connection (older ones are not compared);
//! - per paired connection, direction and capture, at most [`WINDOW`]
//!   packets without a counterpart yet, and at most [`WINDOW`] matched pairs
//!   waiting while the handshake is still being read;
//! - the report itself: one entry per connection seen in both captures and
//!   the ends of each connection seen in one only.
//!
//! # Packets seen in one capture only
//!
//! A packet waits in its pair's queue until its counterpart arrives, or
//! until it is decided on, in this order:
//!
//! 1. no sequence offset was ever learned for its direction: nothing can be
//!    said (note `unaligned`);
//! 2. a bare segment of a proxied handshake: `handshake_proxied`;
//! 3. it falls outside the other capture's time span (before its first
//!    record, or within twice the longest transit seen of its last) and the
//!    other capture never carried its bytes: `capture_loss`;
//! 4. it occupies sequence space, the receiver's acknowledgment seen in the
//!    other capture covers it, and no frame of the other capture carried
//!    those bytes: they crossed that wire unseen, `capture_loss`;
//! 5. seen after the middlebox only, it is `packet_injected` only when the
//!    sender's own sequence shows it did not send it: the capture before
//!    the middlebox saw its IPv4 identification on another frame (where
//!    the direction kept identifications across the middlebox), or,
//!    without identifications to tell, it carries bytes beyond all the
//!    sender carried on that wire; a frame whose identification fills a
//!    hole in the sender's sequence there (the ones just below and above
//!    seen, its own not), a bare ACK without such evidence, and data whose
//!    bytes the sender's data there reached, is `capture_loss`;
//! 6. otherwise `packet_dropped` (seen before the middlebox only).
//!
//! Segments without sequence space, and retransmissions of bytes the other
//! capture saw carried, or recorded less than [`SLACK_NS`] before the
//! acknowledgment covering them, are decided [`SLACK_NS`] after the other
//! capture's
//! clock for their connection (the time of the latest packet of that
//! connection it gave, not of its latest record: see [`Pair`]) has passed
//! them; others when the acknowledgment covers them, when the queue is full, or when the connection ends in both captures. Without
//! timestamps (pcapng Simple Packet Blocks) such packets merge first, so
//! captures without times compare only within the window.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Read;
use std::net::SocketAddr;
use std::time::Duration;

use super::matching::{keys_of, Evidence, Key, Score, MAX_CANDIDATES, MIN_SCORE};
use super::packet::Packet;
use super::pair::Pair;
use super::report::{CaptureWarning, ConnEnds, SummaryParts};
use crate::conn::tracker::{ConnTracker, Connection, Direction};
use crate::decode::{decode_counted, Unrecorded};
use capture::tally::Tally;
use capture::{CaptureError, CaptureReader};

pub use super::pair::Done;

/// Packets without a counterpart held per paired connection, direction and
/// capture; beyond it the oldest is decided on as unmatched.
pub const WINDOW: usize = 2048;
/// Packets held per connection until it is paired with one of the other capture.
pub const EARLY: usize = 512;
/// How long (capture time) a segment that occupies no sequence space waits
/// for its counterpart once the other capture has moved past it.
pub const SLACK_NS: i128 = 500_000_000;
/// The least margin at the start and end of a capture within which a
/// frame missing from it is put down to the captures' different time spans;
/// the margin is twice the longest time a matched packet of the direction
/// took from one capture point to the other, and at least this.
pub const SPAN_MARGIN_NS: i128 = 1_000_000;

/// The index of client-to-server in per-direction arrays.
pub(super) const C2S: usize = 0;
/// The index of server-to-client.
pub(super) const S2C: usize = 1;

fn di(d: Direction) -> usize {
    match d {
        Direction::ClientToServer => C2S,
        Direction::ServerToClient => S2C,
    }
}

/// The direction of index `k`.
pub(super) fn dir_of(k: usize) -> Direction {
    if k == C2S {
        Direction::ClientToServer
    } else {
        Direction::ServerToClient
    }
}

/// One packet, decoded and placed in its connection, waiting to be merged.
struct Item {
    pkt: Packet,
    conn: u64,
    dir: Direction,
    client: SocketAddr,
    server: SocketAddr,
}

/// The time span a capture covers (its first and last record times).
#[derive(Debug, Clone, Copy, Default)]
pub struct Span {
    /// The first record's time, nanoseconds.
    pub(super) first: Option<i128>,
    /// The last record's time, nanoseconds.
    pub(super) last: Option<i128>,
    /// The capture has been read to its end.
    pub(super) eof: bool,
}

/// One capture being read.
pub struct Input<R: Read> {
    /// The name given.
    pub name: String,
    reader: CaptureReader<R>,
    tracker: Option<ConnTracker<()>>,
    next: Option<Item>,
    finished: VecDeque<Connection<()>>,
    /// Packet records read.
    pub records: u64,
    /// TCP segments decoded.
    pub tcp_packets: u64,
    /// Records that could not be decoded.
    pub undecodable: u64,
    /// Segments per encapsulation, and records without one by cause.
    pub tally: Tally,
    /// Problems that made the result partial.
    pub warnings: Vec<CaptureWarning>,
    span: Span,
    /// The latest time of a TCP segment read so far: the capture's clock,
    /// which never goes back. Segments are merged at it, not at their own
    /// time, so that a capture whose times go back (pieces joined end to
    /// end, a segment stamped earlier than the one before) is not read
    /// ahead of the other for the whole earlier-stamped stretch: two
    /// identical captures then merge record for record, and a connection
    /// of that stretch does not end in one capture before the other has
    /// shown it. Captures in time order merge as before.
    clock: Option<i128>,
}

impl<R: Read> Input<R> {
    /// Opens a capture; an error when it is not a capture at all.
    pub fn new(name: &str, r: R, max_connections: usize) -> Result<Self, CaptureError> {
        Ok(Input {
            name: name.to_string(),
            reader: CaptureReader::new(r)?,
            tracker: Some(ConnTracker::new(max_connections)),
            next: None,
            finished: VecDeque::new(),
            records: 0,
            tcp_packets: 0,
            undecodable: 0,
            tally: Tally::default(),
            warnings: Vec::new(),
            span: Span::default(),
            clock: None,
        })
    }

    /// Reads up to the next TCP segment (unless one is waiting).
    fn fill(&mut self) {
        while self.next.is_none() && !self.span.eof {
            let rec = match self.reader.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => {
                    self.end();
                    break;
                }
                Err(error) => {
                    self.warnings.push(CaptureWarning::CutShort {
                        error,
                        records: self.records,
                    });
                    self.end();
                    break;
                }
            };
            self.records += 1;
            if let Some(t) = rec.ts {
                let ns = i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos);
                self.span.first.get_or_insert(ns);
                self.span.last = Some(self.span.last.map_or(ns, |l| l.max(ns)));
            }
            let seg = match decode_counted(&rec, &mut self.tally) {
                Ok(s) => s,
                Err(why) => {
                    if matches!(why, Unrecorded::Bad(_)) {
                        self.undecodable += 1;
                    }
                    continue;
                }
            };
            self.tcp_packets += 1;
            let Some(tracker) = self.tracker.as_mut() else {
                break;
            };
            let (c, dir) = tracker.track(&seg, || ());
            let mut pkt = Packet::from_record(&seg);
            if let Some(t) = pkt.ts_ns {
                self.clock = Some(self.clock.map_or(t, |c| c.max(t)));
                pkt.at = self.clock;
            }
            let item = Item {
                pkt,
                conn: c.id,
                dir,
                client: c.client,
                server: c.server,
            };
            if tracker.has_finished() {
                let fin = &mut self.finished;
                tracker.drain(|c| fin.push_back(c));
            }
            self.next = Some(item);
        }
    }

    /// What the report says of this capture (its warnings taken).
    pub fn summary_parts(&mut self) -> SummaryParts {
        SummaryParts {
            path: self.name.clone(),
            records: self.records,
            tcp_packets: self.tcp_packets,
            tally: std::mem::take(&mut self.tally),
            warnings: std::mem::take(&mut self.warnings),
        }
    }

    fn end(&mut self) {
        self.span.eof = true;
        if let Some(t) = self.tracker.take() {
            self.finished.extend(t.finish());
        }
        if self.undecodable > 0 {
            self.warnings
                .push(CaptureWarning::Undecodable(self.undecodable));
        }
    }
}

/// A connection of one capture, as the engine follows it.
struct SideConn {
    client: SocketAddr,
    server: SocketAddr,
    pair: Option<u64>,
    evidence: Evidence,
    keys: Vec<Key>,
    /// Candidate partners in the other capture (only on capture 0's side).
    cands: BTreeMap<u64, Score>,
    early: VecDeque<(Direction, Packet)>,
}

/// The comparison state.
pub struct Engine {
    rtt: Option<Duration>,
    names: [String; 2],
    conns: [HashMap<u64, SideConn>; 2],
    /// Per capture: key -> (connection, sequence number of the segment that showed it).
    index: [HashMap<Key, Vec<(u64, u32)>>; 2],
    pairs: HashMap<u64, Pair>,
    next_pair: u64,
    /// Finished pairs.
    pub done: Vec<Done>,
    /// Connections of each capture that were never paired, in the order
    /// they ended.
    pub unmatched: [Vec<ConnEnds>; 2],
    /// Connections seen per capture.
    pub connections: [usize; 2],
    /// Connections evicted per capture (ended early by a full table).
    pub evicted: [u64; 2],
    /// The most connections (of both captures) followed at once.
    pub peak_connections: usize,
    /// The most paired connections held at once.
    pub peak_pairs: usize,
    /// The most packets one paired connection held at once (waiting for
    /// their counterpart, or matched while the handshake is read).
    pub peak_held_packets: usize,
    spans: [Span; 2],
}

/// Reads both captures to their end and compares them.
pub fn run<A: Read, B: Read>(a: &mut Input<A>, b: &mut Input<B>, rtt: Option<Duration>) -> Engine {
    let mut e = Engine {
        rtt,
        names: [a.name.clone(), b.name.clone()],
        conns: [HashMap::new(), HashMap::new()],
        index: [HashMap::new(), HashMap::new()],
        pairs: HashMap::new(),
        next_pair: 0,
        done: Vec::new(),
        unmatched: [Vec::new(), Vec::new()],
        connections: [0, 0],
        evicted: [0, 0],
        peak_connections: 0,
        peak_pairs: 0,
        peak_held_packets: 0,
        spans: [Span::default(), Span::default()],
    };
    loop {
        a.fill();
        b.fill();
        e.spans = [a.span, b.span];
        // The connections a capture's end closes wait for the other
        // capture's end: one whose records ran out first (a shorter
        // capture, or a stretch stamped earlier merged ahead) may still be
        // paired with a connection the other capture shows later.
        if !a.span.eof || b.span.eof {
            while let Some(c) = a.finished.pop_front() {
                e.conn_finished(0, &c);
            }
        }
        if !b.span.eof || a.span.eof {
            while let Some(c) = b.finished.pop_front() {
                e.conn_finished(1, &c);
            }
        }
        let side = match (&a.next, &b.next) {
            (None, None) => break,
            (Some(_), None) => 0,
            (None, Some(_)) => 1,
            (Some(x), Some(y)) => usize::from(merge_key(&x.pkt) > merge_key(&y.pkt)),
        };
        let item = if side == 0 {
            a.next.take()
        } else {
            b.next.take()
        };
        if let Some(item) = item {
            e.packet(side, item);
        }
    }
    let mut rest: Vec<u64> = e.pairs.keys().copied().collect();
    rest.sort_unstable();
    for pid in rest {
        e.finish_pair(pid);
    }
    e
}

/// Merge order: the capture's clock when `p` was read ([`Packet::at`],
/// see [`Input::clock`]), then its own time (in order within a stretch
/// stamped earlier than the clock), then the segment's own fields (so that
/// equal times merge the same whichever capture is given first).
fn merge_key(p: &Packet) -> (i128, i128, u32, u32, u16, u32, u16, u16) {
    (
        p.at.unwrap_or(i128::MIN),
        p.ts_ns.unwrap_or(i128::MIN),
        p.seq,
        p.ack,
        p.flags.bits(),
        p.payload_len,
        p.sport,
        p.dport,
    )
}

impl Engine {
    fn packet(&mut self, s: usize, item: Item) {
        let Item {
            pkt,
            conn,
            dir,
            client,
            server,
        } = item;
        if !self.conns[s].contains_key(&conn) {
            self.connections[s] += 1;
            self.peak_connections = self
                .peak_connections
                .max(self.conns[0].len() + self.conns[1].len() + 1);
        }
        let c = self.conns[s].entry(conn).or_insert_with(|| SideConn {
            client,
            server,
            pair: None,
            evidence: Evidence::default(),
            keys: Vec::new(),
            cands: BTreeMap::new(),
            early: VecDeque::new(),
        });
        c.client = client;
        c.server = server;
        if let Some(pid) = c.pair {
            self.pair_packet(pid, s, dir, pkt);
            return;
        }
        let mut keys = Vec::new();
        keys_of(&pkt, dir, &mut c.evidence, &mut keys);
        c.early.push_back((dir, pkt));
        if c.early.len() > EARLY {
            c.early.pop_front();
        }
        for (k, seq) in keys {
            self.offer(s, conn, k, seq);
            if self.conns[s].get(&conn).is_some_and(|c| c.pair.is_some()) {
                return;
            }
        }
    }

    /// Connection `x` of capture `s` shows `k`: index it and score it
    /// against the other capture's unpaired connections that showed it.
    fn offer(&mut self, s: usize, x: u64, k: Key, seq: u32) {
        let o = 1 - s;
        let list = self.index[s].entry(k).or_default();
        // A key counts once per connection (its first segment): repeated
        // payloads add nothing.
        if list.iter().any(|e| e.0 == x) {
            return;
        }
        if list.len() < MAX_CANDIDATES {
            list.push((x, seq));
            if let Some(c) = self.conns[s].get_mut(&x) {
                c.keys.push(k);
            }
        }
        let Some(others) = self.index[o].get(&k).cloned() else {
            return;
        };
        for (y, oseq) in others {
            let (a, b) = if s == 0 { (x, y) } else { (y, x) };
            let delta = if s == 0 {
                oseq.wrapping_sub(seq)
            } else {
                seq.wrapping_sub(oseq)
            };
            let Some(cb) = self.conns[1].get(&b) else {
                continue;
            };
            if cb.pair.is_some() {
                continue;
            }
            let tb = (cb.client, cb.server);
            let [c0, c1] = &mut self.conns;
            let Some(ca) = c0.get_mut(&a) else {
                continue;
            };
            if ca.pair.is_some() {
                return;
            }
            if !ca.cands.contains_key(&b) && ca.cands.len() >= MAX_CANDIDATES {
                ca.cands
                    .retain(|id, _| c1.get(id).is_some_and(|c| c.pair.is_none()));
                if ca.cands.len() >= MAX_CANDIDATES {
                    continue;
                }
            }
            let sc = ca.cands.entry(b).or_default();
            sc.add(&k, delta);
            sc.tuple = (ca.client, ca.server) == tb;
            if sc.value() >= MIN_SCORE {
                let sc = *sc;
                let ends = [
                    ConnEnds {
                        client: ca.client,
                        server: ca.server,
                    },
                    ConnEnds {
                        client: tb.0,
                        server: tb.1,
                    },
                ];
                self.make_pair([a, b], sc, ends);
                return;
            }
        }
    }

    fn unindex(&mut self, s: usize, x: u64) {
        let keys = self.conns[s]
            .get_mut(&x)
            .map(|c| std::mem::take(&mut c.keys))
            .unwrap_or_default();
        for k in keys {
            if let Some(v) = self.index[s].get_mut(&k) {
                v.retain(|e| e.0 != x);
                if v.is_empty() {
                    self.index[s].remove(&k);
                }
            }
        }
    }

    /// Pairs connection `a` of capture 0 with `b` of capture 1, whose ends
    /// are `ends`, and replays what both buffered.
    fn make_pair(&mut self, [a, b]: [u64; 2], score: Score, ends: [ConnEnds; 2]) {
        let pid = self.next_pair;
        self.next_pair += 1;
        self.unindex(0, a);
        self.unindex(1, b);
        let mut early = [VecDeque::new(), VecDeque::new()];
        for (s, id) in [(0, a), (1, b)] {
            if let Some(c) = self.conns[s].get_mut(&id) {
                c.pair = Some(pid);
                c.cands.clear();
                early[s] = std::mem::take(&mut c.early);
            }
        }
        self.pairs
            .insert(pid, Pair::new([a, b], score, ends, self.spans));
        self.peak_pairs = self.peak_pairs.max(self.pairs.len());
        // Replay what both sides buffered, in merge order.
        let [mut ea, mut eb] = early;
        loop {
            let side = match (ea.front(), eb.front()) {
                (None, None) => break,
                (Some(_), None) => 0,
                (None, Some(_)) => 1,
                (Some(x), Some(y)) => usize::from(merge_key(&x.1) > merge_key(&y.1)),
            };
            let next = if side == 0 {
                ea.pop_front()
            } else {
                eb.pop_front()
            };
            if let Some((d, p)) = next {
                self.pair_packet(pid, side, d, p);
            }
        }
    }

    fn conn_finished(&mut self, s: usize, c: &Connection<()>) {
        if c.evicted {
            self.evicted[s] += 1;
        }
        self.unindex(s, c.id);
        let Some(sc) = self.conns[s].remove(&c.id) else {
            return;
        };
        match sc.pair {
            None => {
                // Capture 0's candidates naming it go stale: they are
                // skipped when scored and purged when a list is full.
                self.unmatched[s].push(ConnEnds {
                    client: c.client,
                    server: c.server,
                });
            }
            Some(pid) => {
                let ends = ConnEnds {
                    client: c.client,
                    server: c.server,
                };
                let both = self
                    .pairs
                    .get_mut(&pid)
                    .is_some_and(|p| p.side_finished(s, c.segments, ends, c.carried_in()));
                if both {
                    self.finish_pair(pid);
                }
            }
        }
    }

    fn pair_packet(&mut self, pid: u64, s: usize, dir: Direction, p: Packet) {
        let spans = self.spans;
        let Some(pair) = self.pairs.get_mut(&pid) else {
            return;
        };
        pair.packet(s, di(dir), p, spans);
        self.peak_held_packets = self.peak_held_packets.max(pair.held());
    }

    fn finish_pair(&mut self, pid: u64) {
        let Some(pair) = self.pairs.remove(&pid) else {
            return;
        };
        for (s, id) in pair.ids.into_iter().enumerate() {
            if let Some(c) = self.conns[s].get(&id) {
                if c.pair == Some(pid) {
                    self.conns[s].remove(&id);
                }
            }
        }
        let done = pair.finish(self.spans, self.rtt, &self.names);
        self.done.push(done);
    }
}
