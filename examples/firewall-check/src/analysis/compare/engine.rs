//! The streaming comparison: both captures read together in time order,
//! each through the shared decode ([`decode_packet`]) and its own
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
//!   one label per connection seen in one only (kept to sort the report).
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
//! 5. otherwise `packet_dropped` (seen before the middlebox only) or
//!    `packet_injected` (seen after it only).
//!
//! Segments without sequence space, and retransmissions of bytes the other
//! capture saw carried, are decided [`SLACK_NS`] after the other capture's
//! clock has passed them; others when the acknowledgment covers them, when
//! the queue is full, or when the connection ends in both captures. Without
//! timestamps (pcapng Simple Packet Blocks) such packets merge first, so
//! captures without times compare only within the window.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Read;
use std::net::SocketAddr;
use std::time::Duration;

use tcp_options::seq::seq_ge;
use tcp_options::Flags;

use super::findings::{compare_pair, Acc, CaptureSide, Collector, DirCtx, Hit, Val};
use super::impact::Ctx;
use super::matching::{
    keys_of, packet_key, Carried, Evidence, Key, Score, MAX_CANDIDATES, MIN_SCORE,
};
use super::packet::Packet;
use crate::conn::tracker::{ConnTracker, Connection, Direction};
use crate::decode::decode_packet;
use crate::finding::Kind;
use capture::{CaptureError, CaptureReader};

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

const C2S: usize = 0;
const S2C: usize = 1;

fn di(d: Direction) -> usize {
    match d {
        Direction::ClientToServer => C2S,
        Direction::ServerToClient => S2C,
    }
}

fn dir_of(k: usize) -> Direction {
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
    first: Option<i128>,
    last: Option<i128>,
    eof: bool,
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
    /// Problems that made the result partial.
    pub warnings: Vec<String>,
    span: Span,
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
            warnings: Vec::new(),
            span: Span::default(),
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
                Err(e) => {
                    self.warnings.push(format!(
                        "{e}; using the {} packet records before it",
                        self.records
                    ));
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
            let seg = match decode_packet(&rec) {
                Ok(Some(s)) => s,
                Ok(None) => continue,
                Err(_) => {
                    self.undecodable += 1;
                    continue;
                }
            };
            self.tcp_packets += 1;
            let Some(tracker) = self.tracker.as_mut() else {
                break;
            };
            let (c, dir) = tracker.track(&seg, || ());
            let item = Item {
                pkt: Packet::from_record(&seg),
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

    fn end(&mut self) {
        self.span.eof = true;
        if let Some(t) = self.tracker.take() {
            self.finished.extend(t.finish());
        }
        if self.undecodable > 0 {
            self.warnings.push(format!(
                "{} packet record(s) could not be decoded and were skipped",
                self.undecodable
            ));
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

/// Facts about one capture's view of a paired connection.
#[derive(Debug, Clone, Default)]
struct SideFacts {
    client: Option<SocketAddr>,
    server: Option<SocketAddr>,
    packets: u64,
    finished: bool,
    syn_ts: Option<i128>,
    synack_ts: Option<i128>,
    rtt: Option<Duration>,
    first_c2s_ts: Option<i128>,
    /// First SYN seen, per direction.
    hs: [Option<Packet>; 2],
    /// Largest window field after the handshake, per direction.
    max_window: [Option<u16>; 2],
    max_payload: [u32; 2],
    dir_packets: [u64; 2],
    v6: bool,
    /// Bytes seen carried, per direction.
    carried: [Carried; 2],
    /// Highest acknowledgment the receiver of each direction sent, as seen here.
    max_ack: [Option<u32>; 2],
    /// Frame of the first matched data segment, per direction.
    first_data_frame: [Option<u64>; 2],
}

/// A connection seen in both captures.
struct Pair {
    ids: [u64; 2],
    score: Score,
    facts: [SideFacts; 2],
    /// Sequence offset per direction: capture 1's number minus capture 0's.
    off: [Option<u32>; 2],
    /// Unmatched packets per direction and capture.
    q: [[VecDeque<Packet>; 2]; 2],
    /// Matched (direction, capture 0's packet, capture 1's packet) waiting for settling.
    deferred: Vec<(usize, Packet, Packet)>,
    settled: Option<Settled>,
    col: Collector,
    matched: usize,
    /// TTL decrement histogram per direction: decrement -> (count, first before, first after).
    hops: [BTreeMap<i16, (u64, u8, u8)>; 2],
    data_aligned: [bool; 2],
    spans: [Span; 2],
    /// Longest time a matched packet took from the before capture to the
    /// after capture, per direction (nanoseconds).
    transit_ns: [i128; 2],
    /// Per direction, what the matched packets showed of their
    /// identifiers across the middlebox ([`Ids`]).
    id_rules: [Ids; 2],
}

/// Whether a direction's matched packets kept their IP identification and
/// TSval across the middlebox. Once one has always been kept, a waiting
/// packet that differs in it is not this packet's counterpart (it is an
/// original whose retransmission, same bytes and same key, is still to
/// come): matching it anyway would make the result depend on which capture
/// is read first whenever the two copies carry the same time.
#[derive(Debug, Clone, Copy, Default)]
struct Ids {
    ident_kept: u32,
    ident_changed: u32,
    ts_kept: u32,
    ts_changed: u32,
}

impl Ids {
    fn learn(&mut self, a: &Packet, b: &Packet) {
        if let (Some(x), Some(y)) = (a.ident.filter(|i| *i != 0), b.ident.filter(|i| *i != 0)) {
            if x == y {
                self.ident_kept += 1;
            } else {
                self.ident_changed += 1;
            }
        }
        if let (Some(x), Some(y)) = (a.timestamps(), b.timestamps()) {
            if x.0 == y.0 {
                self.ts_kept += 1;
            } else {
                self.ts_changed += 1;
            }
        }
    }

    /// How far `x`, a waiting packet of the other capture, agrees with `p`
    /// in the identifiers: how many of TSval and IP ID it carries equal,
    /// or `None` when it differs in one this direction has always kept (it
    /// cannot be `p`'s copy).
    fn agreement(&self, p: &Packet, x: &Packet) -> Option<u8> {
        let ident_differs =
            matches!((p.ident, x.ident), (Some(a), Some(b)) if a != 0 && b != 0 && a != b);
        let ts_differs =
            matches!((p.timestamps(), x.timestamps()), (Some(a), Some(b)) if a.0 != b.0);
        let always = |kept: u32, changed: u32| kept > 0 && changed == 0;
        if (ident_differs && always(self.ident_kept, self.ident_changed))
            || (ts_differs && always(self.ts_kept, self.ts_changed))
        {
            return None;
        }
        let ts =
            p.timestamps().is_some() && p.timestamps().map(|t| t.0) == x.timestamps().map(|t| t.0);
        let id = p.ident.is_some() && p.ident == x.ident;
        Some(u8::from(ts) + u8::from(id))
    }
}

/// What is decided about a pair once its handshake has been read.
#[derive(Debug, Clone, Copy)]
struct Settled {
    /// The capture nearer the client (0 or 1).
    client_side: usize,
    sides_by: &'static str,
    proxied: bool,
}

/// A finished pair, ready for the report.
pub struct Done {
    /// Sort key: the client side's first client packet time.
    pub key_ts: Option<i128>,
    /// The pieces of the report.
    pub report: super::ConnReport,
    /// Findings accumulated.
    pub col: Collector,
    /// Connection facts for impacts.
    pub ctx: Ctx,
    /// Per direction facts for impacts.
    pub dir_ctx: [Ctx; 2],
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
    /// Connections of each capture that were never paired.
    pub unmatched: [Vec<String>; 2],
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
    now: [Option<i128>; 2],
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
        now: [None, None],
        spans: [Span::default(), Span::default()],
    };
    loop {
        a.fill();
        b.fill();
        e.spans = [a.span, b.span];
        while let Some(c) = a.finished.pop_front() {
            e.conn_finished(0, &c);
        }
        while let Some(c) = b.finished.pop_front() {
            e.conn_finished(1, &c);
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
            if let Some(t) = item.pkt.ts_ns {
                e.now[side] = Some(e.now[side].map_or(t, |n| n.max(t)));
            }
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

/// Merge order: time, then the segment's own fields (so that equal times
/// merge the same whichever capture is given first).
fn merge_key(p: &Packet) -> (i128, u32, u32, u16, u32, u16, u16) {
    (
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
                self.make_pair(a, b, sc);
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

    fn make_pair(&mut self, a: u64, b: u64, score: Score) {
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
        let mut facts = [SideFacts::default(), SideFacts::default()];
        for (s, id) in [(0, a), (1, b)] {
            if let Some(c) = self.conns[s].get(&id) {
                facts[s].client = Some(c.client);
                facts[s].server = Some(c.server);
            }
        }
        self.pairs.insert(
            pid,
            Pair {
                ids: [a, b],
                score,
                facts,
                off: [None, None],
                q: Default::default(),
                deferred: Vec::new(),
                settled: None,
                col: Collector::default(),
                matched: 0,
                hops: Default::default(),
                data_aligned: [false, false],
                spans: self.spans,
                transit_ns: [0, 0],
                id_rules: [Ids::default(); 2],
            },
        );
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
                self.unmatched[s].push(format!("{} -> {}", c.client, c.server));
            }
            Some(pid) => {
                let both = match self.pairs.get_mut(&pid) {
                    Some(p) => {
                        p.facts[s].packets = c.segments;
                        p.facts[s].client = Some(c.client);
                        p.facts[s].server = Some(c.server);
                        p.facts[s].finished = true;
                        p.facts[1 - s].finished
                    }
                    None => false,
                };
                if both {
                    self.finish_pair(pid);
                }
            }
        }
    }

    fn pair_packet(&mut self, pid: u64, s: usize, dir: Direction, p: Packet) {
        let (now, spans) = (self.now, self.spans);
        let Some(pair) = self.pairs.get_mut(&pid) else {
            return;
        };
        pair.packet(s, di(dir), p, now, spans);
        let held = pair.q.iter().flatten().map(VecDeque::len).sum::<usize>() + pair.deferred.len();
        self.peak_held_packets = self.peak_held_packets.max(held);
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

impl Pair {
    fn packet(&mut self, s: usize, d: usize, p: Packet, now: [Option<i128>; 2], spans: [Span; 2]) {
        self.spans = spans;
        let f = &mut self.facts[s];
        f.v6 = p.v6;
        f.dir_packets[d] += 1;
        f.max_payload[d] = f.max_payload[d].max(p.payload_len);
        if !p.has(Flags::SYN) {
            f.max_window[d] = Some(f.max_window[d].map_or(p.window, |w| w.max(p.window)));
        }
        if d == C2S && f.first_c2s_ts.is_none() {
            f.first_c2s_ts = p.ts_ns;
        }
        // Handshake RTT: the client's SYN to the ACK completing the handshake.
        if p.is_syn() && d == C2S && f.syn_ts.is_none() {
            f.syn_ts = p.ts_ns;
        } else if p.is_syn_ack() && d == S2C && f.synack_ts.is_none() {
            f.synack_ts = p.ts_ns;
        } else if d == C2S && p.has(Flags::ACK) && !p.has(Flags::SYN) && f.rtt.is_none() {
            if let (Some(syn), Some(sa), Some(t)) = (f.syn_ts, f.synack_ts, p.ts_ns) {
                if t >= sa && t > syn {
                    f.rtt = u64::try_from(t - syn).ok().map(Duration::from_nanos);
                }
            }
        }
        if p.has(Flags::SYN) && f.hs[d].is_none() {
            f.hs[d] = Some(p.clone());
        }
        f.carried[d].insert(p.seq, p.seq_len());
        // The acknowledgment covers the other direction's bytes.
        let acked = if p.has(Flags::ACK) {
            let r = 1 - d;
            let m = &mut f.max_ack[r];
            if m.is_none_or(|old| seq_ge(p.ack, old)) {
                *m = Some(p.ack);
                Some(r)
            } else {
                None
            }
        } else {
            None
        };
        // Learn this direction's sequence offset.
        if self.off[d].is_none() {
            self.learn_offset(s, d, &p);
        }
        self.place(s, d, p);
        if let Some(r) = acked {
            self.resolve_acked(r, s);
        }
        self.expire(now);
    }

    /// Offset (capture 1 minus capture 0) from two SYNs, or from a data
    /// segment with the same length and first bytes on both sides.
    fn learn_offset(&mut self, s: usize, d: usize, p: &Packet) {
        let o = 1 - s;
        let other = if p.has(Flags::SYN) {
            self.facts[o].hs[d].as_ref().map(|q| q.seq)
        } else if p.payload_len > 0 {
            // The same segment on the other side: same length and first
            // bytes, and, since payloads repeat (a bulk transfer of one
            // pattern), the same TSval or IP ID where there is one; only an
            // unambiguous candidate teaches the offset.
            let same =
                |q: &&Packet| q.payload_len == p.payload_len && q.payload_head == p.payload_head;
            let strong = |q: &&Packet| {
                (p.ident.is_none_or(|i| i == 0) || q.ident == p.ident)
                    && (p.timestamps().is_none()
                        || q.timestamps().map(|t| t.0) == p.timestamps().map(|t| t.0))
            };
            let unique = |mut it: Box<dyn Iterator<Item = &Packet> + '_>| {
                let first = it.next()?;
                it.next().is_none().then_some(first.seq)
            };
            let has_ids = p.ident.is_some_and(|i| i != 0) || p.timestamps().is_some();
            if has_ids {
                unique(Box::new(self.q[d][o].iter().filter(same).filter(strong)))
            } else {
                unique(Box::new(self.q[d][o].iter().filter(same)))
            }
        } else {
            None
        };
        let Some(oseq) = other else {
            return;
        };
        self.off[d] = Some(if s == 1 {
            p.seq.wrapping_sub(oseq)
        } else {
            oseq.wrapping_sub(p.seq)
        });
        self.replay();
    }

    /// An offset was learned: what waits in either direction may now align
    /// (acknowledgment numbers use the other direction's offset), so
    /// capture 0's queues are matched again against capture 1's.
    fn replay(&mut self) {
        for d in [C2S, S2C] {
            if self.off[d].is_none() {
                continue;
            }
            let waiting: Vec<Packet> = self.q[d][0].drain(..).collect();
            for w in waiting {
                self.place(0, d, w);
            }
        }
    }

    /// Seq and ack offsets that take capture `s`'s packet of direction `d`
    /// into the other capture's numbers.
    fn offsets_from(&self, s: usize, d: usize) -> Option<(u32, u32)> {
        let fwd = self.off[d]?;
        let rev = self.off[1 - d].unwrap_or(0);
        Some(if s == 0 {
            (fwd, rev)
        } else {
            (fwd.wrapping_neg(), rev.wrapping_neg())
        })
    }

    /// Matches `p` with a waiting packet of the other capture, or queues it.
    fn place(&mut self, s: usize, d: usize, p: Packet) {
        let o = 1 - s;
        if let Some((os, oa)) = self.offsets_from(s, d) {
            let q = &self.q[d][o];
            // Among packets with the same key (an original and its
            // retransmission, or duplicate ACKs), the one with the same
            // TSval and IP ID; where a middlebox translates timestamps and
            // IPv6 has no IP ID, the one that also carries SACK blocks when
            // this one does and has the same window field.
            // A packet that differs in an identifier the direction always
            // kept is never taken (see [`Ids`]).
            let ids = self.id_rules[d];
            let best = |with_ack: bool| {
                let k = packet_key(&p, os, oa, with_ack);
                let sack = p.carries(tcp_options::kind::SACK);
                q.iter()
                    .enumerate()
                    .filter(|(_, x)| packet_key(x, 0, 0, with_ack) == k)
                    .filter_map(|(i, x)| ids.agreement(&p, x).map(|n| (i, x, n)))
                    .max_by_key(|(i, x, agree)| {
                        let same_sack = sack == x.carries(tcp_options::kind::SACK);
                        let same_window = p.window == x.window;
                        (*agree, same_sack, same_window, std::cmp::Reverse(*i))
                    })
                    .map(|(i, _, _)| i)
            };
            // Without the acknowledgment number only segments that occupy
            // sequence space are told apart; bare ACKs of one direction
            // share their sequence number.
            let found = best(true).or_else(|| (p.seq_len() > 0).then(|| best(false)).flatten());
            if let Some(i) = found {
                if let Some(other) = self.q[d][o].remove(i) {
                    let (pa, pb) = if s == 0 { (p, other) } else { (other, p) };
                    self.matched(d, pa, pb);
                }
                return;
            }
        }
        self.q[d][s].push_back(p);
        if self.q[d][s].len() > WINDOW {
            if let Some(old) = self.q[d][s].pop_front() {
                self.unmatched(s, d, old);
            }
        }
    }

    fn matched(&mut self, d: usize, pa: Packet, pb: Packet) {
        self.matched += 1;
        self.id_rules[d].learn(&pa, &pb);
        // The acknowledgment numbers of a matched pair give the other
        // direction's offset (a direction of bare ACKs has no data to learn
        // it from).
        let r = 1 - d;
        let learn_rev = self.off[r].is_none() && pa.has(Flags::ACK) && pb.has(Flags::ACK);
        if learn_rev {
            self.off[r] = Some(pb.ack.wrapping_sub(pa.ack));
        }
        if pa.payload_len > 0 {
            for (s, p) in [(0, &pa), (1, &pb)] {
                self.facts[s].first_data_frame[d].get_or_insert(p.frame);
            }
        }
        let data = pa.payload_len > 0;
        if self.settled.is_some() {
            self.compare(d, &pa, &pb);
        } else {
            self.deferred.push((d, pa, pb));
            if data || self.deferred.len() >= WINDOW {
                self.settle_now();
            }
        }
        if learn_rev {
            self.replay();
        }
    }

    /// Decides which capture is nearer the client and whether the
    /// handshake was proxied, then compares what waited for it.
    fn settle_now(&mut self) {
        if self.settled.is_some() {
            return;
        }
        let (client_side, sides_by) = self.decide_sides();
        let cs = client_side;
        let ss = 1 - cs;
        let proxied = {
            let syn_cli = self.facts[cs].hs[C2S].as_ref().filter(|p| p.is_syn());
            let syn_srv = self.facts[ss].hs[C2S].as_ref().filter(|p| p.is_syn());
            let sa_srv = self.facts[ss].hs[S2C].as_ref().filter(|p| p.is_syn_ack());
            let sa_cli = self.facts[cs].hs[S2C].as_ref().filter(|p| p.is_syn_ack());
            match (syn_cli, syn_srv, sa_srv, sa_cli) {
                (Some(c), Some(s), Some(_), Some(_)) => {
                    self.off[S2C].is_some_and(|o| o != 0)
                        && (c.window != s.window
                            || s.timestamps().is_some_and(|t| t.1 != 0)
                            || c.ident.is_some() && s.ident == Some(0) && c.ident != Some(0))
                }
                _ => false,
            }
        };
        self.settled = Some(Settled {
            client_side,
            sides_by,
            proxied,
        });
        self.data_aligned = [false, false];
        for (d, pa, pb) in std::mem::take(&mut self.deferred) {
            self.compare(d, &pa, &pb);
        }
    }

    /// Which capture is nearer the client: TTL / hop limit of the matched
    /// packets (packets lose hops crossing the middlebox; data segments
    /// first, as a proxy builds its own handshake packets), then time.
    fn decide_sides(&self) -> (usize, &'static str) {
        let mut votes = 0i32;
        for d in [C2S, S2C] {
            let pairs: Vec<&(usize, Packet, Packet)> =
                self.deferred.iter().filter(|x| x.0 == d).collect();
            let data: Vec<&&(usize, Packet, Packet)> =
                pairs.iter().filter(|x| x.1.payload_len > 0).collect();
            let diff = if let Some(x) = data.first() {
                i32::from(x.1.ttl) - i32::from(x.2.ttl)
            } else {
                let med = |v: Vec<u8>| -> Option<u8> {
                    let mut v = v;
                    v.sort_unstable();
                    v.get(v.len() / 2).copied()
                };
                match (
                    med(pairs.iter().map(|x| x.1.ttl).collect()),
                    med(pairs.iter().map(|x| x.2.ttl).collect()),
                ) {
                    (Some(a), Some(b)) => i32::from(a) - i32::from(b),
                    _ => 0,
                }
            };
            // Client to server: the capture with the higher TTL is nearer
            // the client; server to client: the other way round.
            votes += if d == C2S {
                diff.signum()
            } else {
                -diff.signum()
            };
        }
        if votes != 0 {
            return (if votes > 0 { 0 } else { 1 }, "ttl");
        }
        match (self.facts[0].first_c2s_ts, self.facts[1].first_c2s_ts) {
            (Some(a), Some(b)) if a != b => (if a < b { 0 } else { 1 }, "time"),
            _ => (0, "assumed"),
        }
    }

    /// The capture before the middlebox for direction `d`.
    fn before_side(&self, d: usize) -> usize {
        let cs = self.settled.map_or(0, |s| s.client_side);
        if d == C2S {
            cs
        } else {
            1 - cs
        }
    }

    fn dir_ctx(&self, d: usize) -> DirCtx {
        let bs = self.before_side(d);
        // The reverse direction's before side is this direction's after side.
        let rev_after_minus_before = self.off[1 - d]
            .map(|o| if 1 - bs == 0 { o } else { o.wrapping_neg() })
            .unwrap_or(0);
        DirCtx {
            dir: dir_of(d),
            before_is_client_side: d == C2S,
            ack_offset: rev_after_minus_before.wrapping_neg(),
            proxied: self.settled.is_some_and(|s| s.proxied),
        }
    }

    fn compare(&mut self, d: usize, pa: &Packet, pb: &Packet) {
        let bs = self.before_side(d);
        let (p, q) = if bs == 0 { (pa, pb) } else { (pb, pa) };
        let cx = self.dir_ctx(d);
        compare_pair(&mut self.col, &cx, p, q);
        if let (Some(tb), Some(ta)) = (p.ts_ns, q.ts_ns) {
            // Clocks may disagree by more than the transit: only a bounded
            // positive transit counts.
            if ta > tb && ta - tb < SLACK_NS {
                self.transit_ns[d] = self.transit_ns[d].max(ta - tb);
            }
        }
        // TTL: the usual decrement between the sides is routing; a packet
        // that loses a different number of hops was rewritten (or
        // originated) by the middlebox. Proxy-built handshake packets are
        // left out.
        let proxy_built =
            p.has(Flags::SYN) || q.has(Flags::SYN) || (p.payload_len == 0 && !self.data_aligned[d]);
        if p.payload_len > 0 {
            self.data_aligned[d] = true;
        }
        if !(cx.proxied && proxy_built) {
            let h = i16::from(p.ttl) - i16::from(q.ttl);
            let e = self.hops[d].entry(h).or_insert((0, p.ttl, q.ttl));
            e.0 += 1;
        }
    }

    /// The receiver of direction `d` acknowledged more, as capture `s` saw:
    /// packets of `d` that only the other capture holds and whose bytes
    /// that acknowledgment covers are decided on.
    fn resolve_acked(&mut self, d: usize, s: usize) {
        if self.settled.is_none() {
            return;
        }
        let o = 1 - s;
        let Some(ack) = self.facts[s].max_ack[d] else {
            return;
        };
        let Some((os, _)) = self.offsets_from(o, d) else {
            return;
        };
        let mut i = 0;
        while i < self.q[d][o].len() {
            let p = &self.q[d][o][i];
            let end = p.seq.wrapping_add(p.seq_len()).wrapping_add(os);
            // A retransmission of bytes this capture already saw carried
            // may be acknowledged before it arrives here: only time tells.
            if p.seq_len() > 0 && seq_ge(ack, end) && !self.other_carried(o, d, p) {
                if let Some(p) = self.q[d][o].remove(i) {
                    self.unmatched(o, d, p);
                }
            } else {
                i += 1;
            }
        }
    }

    /// True when the capture other than `s` already saw the sequence range
    /// of `p` (direction `d`, from capture `s`) carried by some segment.
    fn other_carried(&self, s: usize, d: usize, p: &Packet) -> bool {
        let Some((os, _)) = self.offsets_from(s, d) else {
            return false;
        };
        p.seq_len() > 0 && self.facts[1 - s].carried[d].covers(p.seq.wrapping_add(os), p.seq_len())
    }

    /// Segments without sequence space, and retransmissions of bytes the
    /// other capture saw carried, that waited [`SLACK_NS`] past the other
    /// capture's clock are decided on.
    fn expire(&mut self, now: [Option<i128>; 2]) {
        if self.settled.is_none() {
            return;
        }
        for d in [C2S, S2C] {
            for s in [0, 1] {
                let Some(t_other) = now[1 - s] else {
                    continue;
                };
                let mut i = 0;
                while i < self.q[d][s].len() {
                    let p = &self.q[d][s][i];
                    let old = p.ts_ns.is_some_and(|t| t + SLACK_NS < t_other);
                    if old && (p.seq_len() == 0 || self.other_carried(s, d, p)) {
                        if let Some(p) = self.q[d][s].remove(i) {
                            self.unmatched(s, d, p);
                        }
                    } else {
                        i += 1;
                    }
                }
            }
        }
    }

    /// Decides on a packet of direction `d` that only capture `s` holds.
    fn unmatched(&mut self, s: usize, d: usize, p: Packet) {
        self.settle_now();
        if self.off[d].is_none() {
            // Never aligned: neither SYNs on both sides nor an unambiguous
            // segment told the sequence offset; nothing can be said of it.
            self.col.note(
                dir_of(d),
                "unaligned",
                "packets not compared: the two captures' sequence numbers could not be aligned in this direction (no SYN in both, no unambiguous data segment or acknowledgment)".to_string(),
            );
            return;
        }
        let bs = self.before_side(d);
        let x_before = s == bs;
        let o = 1 - s;
        let cs = self.settled.map_or(0, |st| st.client_side);
        let side_of = |k: usize| {
            if k == cs {
                CaptureSide::ClientSide
            } else {
                CaptureSide::ServerSide
            }
        };
        let (fc, fs) = if s == cs {
            (Some(p.frame), None)
        } else {
            (None, Some(p.frame))
        };
        let span = self.spans[o];
        // Seen before the middlebox, with its bytes carried by another
        // frame after it (a retransmission): the other capture was running,
        // and the first copy was lost on the way. Seen after it only, the
        // other capture's copy of those bytes says nothing of when it ran
        // (a retransmission past the end of a capture that saw the
        // original is still outside its span: lab_compare's short capture
        // failed now and then on a tail retransmission).
        let carried_there = x_before && self.other_carried(s, d, &p);
        let outside = match p.ts_ns {
            Some(t) if !carried_there && (span.first.is_some() || span.eof) => {
                let first = span.first.unwrap_or(i128::MAX);
                let last = span.last.unwrap_or(i128::MIN);
                let margin = self.transit_ns[d].saturating_mul(2).max(SPAN_MARGIN_NS);
                if x_before {
                    t < first || (span.eof && t.saturating_add(margin) > last)
                } else {
                    t < first.saturating_add(margin) || (span.eof && t > last)
                }
            }
            _ => false,
        };
        let (missing, here) = (Val::missing(), Val::segment(&p));
        let (before, after) = if x_before {
            (here, missing)
        } else {
            (missing, here)
        };
        let loss_key = (d as u8, Kind::CaptureLoss, None, Some(side_of(o)));
        let proxied = self.settled.is_some_and(|st| st.proxied);
        let handshake_phase =
            p.payload_len == 0 && self.facts[s].first_data_frame[d].is_none_or(|f| p.frame < f);
        if proxied && handshake_phase {
            self.col.add(Hit {
                key: (d as u8, Kind::HandshakeProxied, None, None),
                before: Val::none(),
                after: Val::none(),
                frame_client_side: fc,
                frame_server_side: fs,
            });
            return;
        }
        if outside {
            let acc = self.col.add(Hit {
                key: loss_key,
                before,
                after,
                frame_client_side: fc,
                frame_server_side: fs,
            });
            acc.outside_span += 1;
            return;
        }
        // Bytes the receiver acknowledged on the other capture's wire but
        // that capture never carried: the capture missed them.
        if p.seq_len() > 0 {
            if let (Some((os, _)), Some(ack)) = (self.offsets_from(s, d), self.facts[o].max_ack[d])
            {
                let start = p.seq.wrapping_add(os);
                let end = start.wrapping_add(p.seq_len());
                if seq_ge(ack, end) && !self.facts[o].carried[d].covers(start, p.seq_len()) {
                    self.col.add(Hit {
                        key: loss_key,
                        before,
                        after,
                        frame_client_side: fc,
                        frame_server_side: fs,
                    });
                    return;
                }
            }
        }
        let kind = if x_before {
            Kind::PacketDropped
        } else {
            Kind::PacketInjected
        };
        self.col.add(Hit {
            key: (d as u8, kind, None, None),
            before,
            after,
            frame_client_side: fc,
            frame_server_side: fs,
        });
    }

    fn finish(mut self, spans: [Span; 2], rtt_opt: Option<Duration>, names: &[String; 2]) -> Done {
        self.spans = spans;
        self.settle_now();
        for d in [C2S, S2C] {
            for s in [0, 1] {
                let waiting: Vec<Packet> = self.q[d][s].drain(..).collect();
                for p in waiting {
                    self.unmatched(s, d, p);
                }
            }
        }
        let st = self.settled.unwrap_or(Settled {
            client_side: 0,
            sides_by: "assumed",
            proxied: false,
        });
        let (cs, ss) = (st.client_side, 1 - st.client_side);
        // TTL notes.
        for d in [C2S, S2C] {
            if let Some((&usual, _)) = self.hops[d].iter().max_by_key(|(h, e)| (e.0, -**h)) {
                for (&h, &(n, b, a)) in &self.hops[d] {
                    if h != usual {
                        self.col.note_n(
                            dir_of(d),
                            "ttl",
                            format!(
                                "TTL/hop limit changed by {h} instead of the usual {usual} (e.g. {b} -> {a})"
                            ),
                            n,
                        );
                    }
                }
            }
        }
        self.fold_nat();
        if st.proxied {
            self.proxied_handshake(cs, ss);
        }
        let measured = [self.facts[cs].rtt, self.facts[ss].rtt]
            .into_iter()
            .flatten()
            .max();
        let (rtt, rtt_source) = match (rtt_opt, measured) {
            (Some(r), _) => (Some(r), "given"),
            (None, Some(r)) => (Some(r), "handshake"),
            (None, None) => (None, "unknown"),
        };
        let side = |k: usize| {
            let f = &self.facts[k];
            super::ConnSide {
                capture: names[k].clone(),
                client: f.client.map(|a| a.to_string()).unwrap_or_default(),
                server: f.server.map(|a| a.to_string()).unwrap_or_default(),
                packets: usize::try_from(f.packets.max(f.dir_packets[0] + f.dir_packets[1]))
                    .unwrap_or(usize::MAX),
            }
        };
        let (csv, ssv) = (side(cs), side(ss));
        let report = super::ConnReport {
            id: 0,
            client: csv.client.clone(),
            server: ssv.server.clone(),
            client_side: csv,
            server_side: ssv,
            sides_by: st.sides_by,
            matched_by: self.score.evidence(),
            matched_packets: self.matched,
            rtt_s: rtt.map(|r| r.as_secs_f64()),
            rtt_source,
        };
        let ctx = Ctx {
            rtt,
            client_shift: self.facts[cs].hs[C2S]
                .as_ref()
                .filter(|p| p.is_syn())
                .and_then(|p| p.wscale()),
            server_max_window_field: self.facts[cs].max_window[S2C],
            client_max_window_field: self.facts[ss].max_window[C2S],
            v6: self.facts[cs].v6,
            ..Ctx::default()
        };
        let dir_ctx = [C2S, S2C].map(|d| {
            let b = if d == C2S { cs } else { ss };
            Ctx {
                rtt,
                v6: self.facts[b].v6,
                packets_in_direction: self.facts[b].dir_packets[d],
                max_payload: self.facts[b].max_payload[d],
                ..Ctx::default()
            }
        });
        Done {
            key_ts: self.facts[cs].first_c2s_ts,
            report,
            col: self.col,
            ctx,
            dir_ctx,
        }
    }

    /// Replies translated back by the NAT that rewrote the client's
    /// packets are part of the same translation: the server-to-client
    /// finding is folded into the client-to-server one when it mirrors it.
    fn fold_nat(&mut self) {
        let c2s = (C2S as u8, Kind::Nat, None, None);
        let s2c = (S2C as u8, Kind::Nat, None, None);
        let (Some(f), Some(r)) = (self.col.map.get(&c2s), self.col.map.get(&s2c)) else {
            return;
        };
        let (Some([bs, bd, as_, ad]), Some([rbs, rbd, ras, rad])) = (f.nat, r.nat) else {
            return;
        };
        // Reply before = forward after, mirrored; reply after = forward before, mirrored.
        if rbs == ad && rbd == as_ && ras == bd && rad == bs {
            if let Some(r) = self.col.map.remove(&s2c) {
                if let Some(f) = self.col.map.get_mut(&c2s) {
                    f.replies_translated = r.count;
                }
            }
        }
    }

    fn proxied_handshake(&mut self, cs: usize, ss: usize) {
        let sa_srv = self.facts[ss].hs[S2C].clone().filter(|p| p.is_syn_ack());
        let sa_cli = self.facts[cs].hs[S2C].clone().filter(|p| p.is_syn_ack());
        if let (Some(s), Some(c)) = (sa_srv, sa_cli) {
            let acc: &mut Acc = self.col.add(Hit {
                key: (S2C as u8, Kind::HandshakeProxied, None, None),
                before: Val::syn_ack("server", &s),
                after: Val::syn_ack("middlebox", &c),
                frame_client_side: Some(c.frame),
                frame_server_side: Some(s.frame),
            });
            // The finding's values describe the two SYN-ACKs.
            acc.before = Val::syn_ack("server", &s);
            acc.after = Val::syn_ack("middlebox", &c);
        }
    }
}
