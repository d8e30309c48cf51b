//! One connection seen in both captures: its packets aligned direction by
//! direction, the matched pairs compared once the sides are known, the
//! packets seen on one side only decided on (the rules are in
//! [`super::engine`]'s docs), and at its end the pieces of the report.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use tcp_options::seq::seq_ge;
use tcp_options::Flags;

use super::engine::{dir_of, Span, C2S, S2C, SLACK_NS, SPAN_MARGIN_NS, WINDOW};
use super::findings::{
    compare_pair, segment_value, syn_ack_value, Acc, Collector, DirCtx, Hit, NoteDetail,
};
use super::impact::Ctx;
use super::matching::{packet_key, Carried, Score};
use super::packet::Packet;
use super::report::{ConnEnds, ConnReport, ConnSide, Rtt, RttSource, SidesBy};
use crate::conn::tracker::CarriedIn;
use crate::finding::{CaptureSide, FieldValue, Kind, Party};

/// Facts about one capture's view of a paired connection.
#[derive(Debug, Clone)]
struct SideFacts {
    ends: ConnEnds,
    /// The tunnels the connection was carried in here.
    tunnels: Option<CarriedIn>,
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
    /// The sender's most recent IPv4 identifications seen here, per
    /// direction (at most [`RECENT_IDS`]; 0 left out): its own sequence,
    /// which tells whether a frame the other capture alone holds was sent
    /// by it ([`Pair::sender_sent`]).
    recent_ids: [VecDeque<u16>; 2],
}

/// IPv4 identifications kept per direction and capture: twice the
/// packets a queue holds before deciding ([`WINDOW`]).
const RECENT_IDS: usize = 2 * WINDOW;

impl SideFacts {
    fn new(ends: ConnEnds) -> SideFacts {
        SideFacts {
            ends,
            tunnels: None,
            packets: 0,
            finished: false,
            syn_ts: None,
            synack_ts: None,
            rtt: None,
            first_c2s_ts: None,
            hs: [None, None],
            max_window: [None, None],
            max_payload: [0, 0],
            dir_packets: [0, 0],
            v6: false,
            carried: Default::default(),
            max_ack: [None, None],
            first_data_frame: [None, None],
            recent_ids: Default::default(),
        }
    }
}

/// A connection seen in both captures.
pub struct Pair {
    /// Its connection in each capture.
    pub ids: [u64; 2],
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
    /// Per capture, the clock ([`Packet::at`]) of the latest packet of
    /// this connection it gave: how far that capture has been read for
    /// this connection, the clock a waiting packet of the other capture is
    /// expired against ([`Pair::expire`]).
    clock: [Option<i128>; 2],
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
        if let (Some(x), Some(y)) = (a.ident().filter(|i| *i != 0), b.ident().filter(|i| *i != 0)) {
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
            matches!((p.ident(), x.ident()), (Some(a), Some(b)) if a != 0 && b != 0 && a != b);
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
        let id = p.ident().is_some() && p.ident() == x.ident();
        Some(u8::from(ts) + u8::from(id))
    }
}

/// What is decided about a pair once its handshake has been read.
#[derive(Debug, Clone, Copy)]
struct Settled {
    /// The capture nearer the client (0 or 1).
    client_side: usize,
    sides_by: SidesBy,
    proxied: bool,
}

/// A finished pair, ready for the report.
pub struct Done {
    /// Sort key: the client side's first client packet time.
    pub key_ts: Option<i128>,
    /// The pieces of the report.
    pub report: ConnReport,
    /// Findings accumulated.
    pub col: Collector,
    /// Connection facts for impacts.
    pub ctx: Ctx,
    /// Per direction facts for impacts.
    pub dir_ctx: [Ctx; 2],
}

impl Pair {
    /// A paired connection of connections `ids` (capture 0's, capture
    /// 1's) with `ends`, while the captures cover `spans`.
    pub fn new(ids: [u64; 2], score: Score, ends: [ConnEnds; 2], spans: [Span; 2]) -> Pair {
        Pair {
            ids,
            score,
            facts: ends.map(SideFacts::new),
            off: [None, None],
            q: Default::default(),
            deferred: Vec::new(),
            settled: None,
            col: Collector::default(),
            matched: 0,
            hops: Default::default(),
            data_aligned: [false, false],
            spans,
            transit_ns: [0, 0],
            id_rules: [Ids::default(); 2],
            clock: [None, None],
        }
    }

    /// The connection has ended in capture `s` after `segments`, with
    /// `ends`; true when it has ended in both.
    pub fn side_finished(
        &mut self,
        s: usize,
        segments: u64,
        ends: ConnEnds,
        tunnels: Option<CarriedIn>,
    ) -> bool {
        let f = &mut self.facts[s];
        f.packets = segments;
        f.ends = ends;
        f.tunnels = tunnels;
        f.finished = true;
        self.facts[1 - s].finished
    }

    /// Packets held: waiting for their counterpart, or matched while the
    /// handshake is read.
    pub fn held(&self) -> usize {
        self.q.iter().flatten().map(VecDeque::len).sum::<usize>() + self.deferred.len()
    }

    /// Packet `p` of direction `d` from capture `s`, while the captures
    /// cover `spans`.
    pub fn packet(&mut self, s: usize, d: usize, p: Packet, spans: [Span; 2]) {
        self.spans = spans;
        if let Some(t) = p.at {
            self.clock[s] = Some(t);
        }
        let f = &mut self.facts[s];
        f.v6 = p.v6();
        f.dir_packets[d] += 1;
        if let Some(id) = p
            .ident()
            .and_then(|i| u16::try_from(i).ok())
            .filter(|i| *i != 0)
        {
            let ids = &mut f.recent_ids[d];
            if ids.len() == RECENT_IDS {
                ids.pop_front();
            }
            ids.push_back(id);
        }
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
        self.expire();
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
                (p.ident().is_none_or(|i| i == 0) || q.ident() == p.ident())
                    && (p.timestamps().is_none()
                        || q.timestamps().map(|t| t.0) == p.timestamps().map(|t| t.0))
            };
            // Copies of one segment (a duplicated frame: same sequence
            // number) agree on the offset: only candidates at different
            // sequence numbers make it ambiguous.
            let unique = |mut it: Box<dyn Iterator<Item = &Packet> + '_>| {
                let seq = it.next()?.seq;
                it.all(|q| q.seq == seq).then_some(seq)
            };
            let has_ids = p.ident().is_some_and(|i| i != 0) || p.timestamps().is_some();
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
                            || c.ident().is_some() && s.ident() == Some(0) && c.ident() != Some(0))
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
    fn decide_sides(&self) -> (usize, SidesBy) {
        let mut votes = 0i32;
        for d in [C2S, S2C] {
            let pairs: Vec<&(usize, Packet, Packet)> =
                self.deferred.iter().filter(|x| x.0 == d).collect();
            let data: Vec<&&(usize, Packet, Packet)> =
                pairs.iter().filter(|x| x.1.payload_len > 0).collect();
            let diff = if let Some(x) = data.first() {
                i32::from(x.1.ip.ttl) - i32::from(x.2.ip.ttl)
            } else {
                let med = |v: Vec<u8>| -> Option<u8> {
                    let mut v = v;
                    v.sort_unstable();
                    v.get(v.len() / 2).copied()
                };
                match (
                    med(pairs.iter().map(|x| x.1.ip.ttl).collect()),
                    med(pairs.iter().map(|x| x.2.ip.ttl).collect()),
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
            return (if votes > 0 { 0 } else { 1 }, SidesBy::Ttl);
        }
        match (self.facts[0].first_c2s_ts, self.facts[1].first_c2s_ts) {
            (Some(a), Some(b)) if a != b => (if a < b { 0 } else { 1 }, SidesBy::Time),
            _ => (0, SidesBy::Assumed),
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
            let h = i16::from(p.ip.ttl) - i16::from(q.ip.ttl);
            let e = self.hops[d].entry(h).or_insert((0, p.ip.ttl, q.ip.ttl));
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
        let clock = self.clock[s];
        let mut i = 0;
        while i < self.q[d][o].len() {
            let p = &self.q[d][o][i];
            let end = p.seq.wrapping_add(p.seq_len()).wrapping_add(os);
            // A retransmission of bytes this capture already saw carried
            // may be acknowledged before it arrives here: only time tells.
            // So may a segment this capture recorded after the
            // acknowledgment (records out of order, or tied in time and
            // merged the other way round): one read less than [`SLACK_NS`]
            // before the acknowledgment is left to [`Pair::expire`].
            let recent = matches!((p.at, clock), (Some(t), Some(c)) if t + SLACK_NS >= c);
            if p.seq_len() > 0 && seq_ge(ack, end) && !recent && !self.other_carried(o, d, p) {
                if let Some(p) = self.q[d][o].remove(i) {
                    self.unmatched(o, d, p);
                }
            } else {
                i += 1;
            }
        }
    }

    /// True when the receiver's acknowledgment seen in the capture other
    /// than `s` covers the sequence range of `p` (direction `d`, from
    /// capture `s`).
    fn other_acked(&self, s: usize, d: usize, p: &Packet) -> bool {
        let (Some((os, _)), Some(ack)) = (self.offsets_from(s, d), self.facts[1 - s].max_ack[d])
        else {
            return false;
        };
        let end = p.seq.wrapping_add(p.seq_len()).wrapping_add(os);
        p.seq_len() > 0 && seq_ge(ack, end)
    }

    /// True when the capture other than `s` already saw the sequence range
    /// of `p` (direction `d`, from capture `s`) carried by some segment.
    fn other_carried(&self, s: usize, d: usize, p: &Packet) -> bool {
        let Some((os, _)) = self.offsets_from(s, d) else {
            return false;
        };
        p.seq_len() > 0 && self.facts[1 - s].carried[d].covers(p.seq.wrapping_add(os), p.seq_len())
    }

    /// Segments without sequence space, retransmissions of bytes the other
    /// capture saw carried, and segments whose bytes the receiver
    /// acknowledged in the other capture, that waited [`SLACK_NS`] past the
    /// other capture's clock for this connection are decided on.
    ///
    /// Both times are capture clocks ([`Packet::at`]), which never go
    /// back, and the other capture's is the connection's own
    /// ([`Pair::clock`]), not the latest record the engine read from that
    /// capture. Before, a waiting packet's own stamp was judged against
    /// the engine's clock of the other capture, which fails in two ways
    /// when a capture is compared with itself: a connection paired late
    /// has its buffered packets replayed while the engine's clocks already
    /// stand at the packet that made the pair, so a replayed bare ACK was
    /// expired before its copy, further down the other capture's buffer,
    /// was replayed (nDPI's amqp.pcap); and a segment stamped earlier than
    /// the records before it (a repeated frame, pieces joined end to end)
    /// looked as if it had waited since its stamp, and was expired before
    /// its copy, the next record of the other capture, was read (tcpdump's
    /// kday4.pcap, Wireshark's grpc_web.pcapng). Either way one frame was
    /// reported dropped on one side and injected or lost on the other.
    fn expire(&mut self) {
        if self.settled.is_none() {
            return;
        }
        for d in [C2S, S2C] {
            for s in [0, 1] {
                let Some(t_other) = self.clock[1 - s] else {
                    continue;
                };
                let mut i = 0;
                while i < self.q[d][s].len() {
                    let p = &self.q[d][s][i];
                    let old = p.at.is_some_and(|t| t + SLACK_NS < t_other);
                    if old
                        && (p.seq_len() == 0
                            || self.other_carried(s, d, p)
                            || self.other_acked(s, d, p))
                    {
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
            self.col.note(dir_of(d), NoteDetail::Unaligned);
            return;
        }
        let x_before = s == self.before_side(d);
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
        let hit = |key, before, after| Hit {
            key,
            before,
            after,
            frame_client_side: fc,
            frame_server_side: fs,
        };
        let proxied = self.settled.is_some_and(|st| st.proxied);
        let handshake_phase =
            p.payload_len == 0 && self.facts[s].first_data_frame[d].is_none_or(|f| p.frame < f);
        if proxied && handshake_phase {
            let key = (d as u8, Kind::HandshakeProxied, None, None);
            self.col.add(hit(key, FieldValue::None, FieldValue::None));
            return;
        }
        let (before, after) = if x_before {
            (segment_value(&p), FieldValue::Missing)
        } else {
            (FieldValue::Missing, segment_value(&p))
        };
        let loss_key = (d as u8, Kind::CaptureLoss, None, Some(side_of(o)));
        // The receiver's acknowledgment in the other capture first: it
        // shows that capture running after the frame crossed its wire,
        // whatever the frame's distance from that capture's end (a
        // transfer of 9 ms that ends with the capture: its last frames lie
        // within the end margin, and once a connection's end waits for the
        // other capture's, they were put outside its span).
        if self.acked_unseen(s, d, &p) {
            self.col.add(hit(loss_key, before, after));
            return;
        }
        if self.outside_span(s, d, &p, x_before) {
            self.col.add(hit(loss_key, before, after)).outside_span += 1;
            return;
        }
        // Seen after the middlebox only: injected only when the sender's
        // own sequence shows it did not send it (its identifications, or
        // bytes beyond all it carried); otherwise the other capture missed
        // it.
        if !x_before {
            let missed = match self.sender_sent(s, d, &p) {
                Some(sent) => sent,
                None => p.seq_len() == 0 || self.sender_reached(s, d, &p),
            };
            if missed {
                self.col.add(hit(loss_key, before, after));
                return;
            }
        }
        let kind = if x_before {
            Kind::PacketDropped
        } else {
            Kind::PacketInjected
        };
        self.col
            .add(hit((d as u8, kind, None, None), before, after));
    }

    /// True when `p`, of direction `d`, held by capture `s` only (the one
    /// before the middlebox when `x_before`), falls outside the other
    /// capture's time span.
    fn outside_span(&self, s: usize, d: usize, p: &Packet, x_before: bool) -> bool {
        let span = self.spans[1 - s];
        // Seen before the middlebox, with its bytes carried by another
        // frame after it (a retransmission): the other capture was running,
        // and the first copy was lost on the way. Seen after it only, the
        // other capture's copy of those bytes says nothing of when it ran
        // (a retransmission past the end of a capture that saw the
        // original is still outside its span: lab_compare's short capture
        // failed now and then on a tail retransmission).
        let carried_there = x_before && self.other_carried(s, d, p);
        match p.ts_ns {
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
        }
    }

    /// Whether the sender of `p` (direction `d`, held by capture `s` only)
    /// sent it, from its own sequence of IPv4 identifications in the other
    /// capture, where the direction's matched packets kept them across the
    /// middlebox (Linux numbers a connection's packets from one counter):
    /// `Some(true)` when that capture saw the identification just below and
    /// just above `p`'s and not `p`'s (a hole exactly where `p` goes: the
    /// capture missed it); `Some(false)` when it saw `p`'s own
    /// identification on another frame (the sender used it for that one);
    /// `None` when it cannot tell (IPv6, identifications 0, rewritten by the
    /// middlebox, or a sender that numbers its packets otherwise: random
    /// identifications show no hole, and then `None`).
    ///
    /// Fooled by: a middlebox that injects a frame carrying the exact
    /// identification the sender skipped (one the sender used for a frame
    /// the other capture missed as well); that frame is called capture loss.
    fn sender_sent(&self, s: usize, d: usize, p: &Packet) -> Option<bool> {
        let rules = self.id_rules[d];
        if rules.ident_changed > 0 || rules.ident_kept == 0 {
            return None;
        }
        let id = p
            .ident()
            .and_then(|i| u16::try_from(i).ok())
            .filter(|i| *i != 0)?;
        let ids = &self.facts[1 - s].recent_ids[d];
        let seen = |x: u16| ids.contains(&x);
        if seen(id) {
            Some(false)
        } else if seen(id.wrapping_sub(1)) && seen(id.wrapping_add(1)) {
            Some(true)
        } else {
            None
        }
    }

    /// True when the sender's data on the other capture's wire (before the
    /// middlebox) reached the end of `p`'s bytes (direction `d`, held by
    /// capture `s` only): it sent them, whether or not that capture saw
    /// this copy (a retransmission it missed, in a direction without
    /// identifications to tell: IPv6). False when `p` carries bytes beyond
    /// all the sender carried there: a segment it never sent.
    ///
    /// Fooled by: a middlebox that injects bytes the sender had already
    /// sent (a copy of its data, or a retransmission of its own, as a
    /// TCP-splitting proxy makes): called capture loss where the direction
    /// keeps no identifications.
    fn sender_reached(&self, s: usize, d: usize, p: &Packet) -> bool {
        let Some((os, _)) = self.offsets_from(s, d) else {
            return false;
        };
        let start = p.seq.wrapping_add(os);
        self.facts[1 - s].carried[d].reaches(start, p.seq_len())
    }

    /// True when the bytes of `p` (direction `d`, held by capture `s`
    /// only) were acknowledged by the receiver on the other capture's wire
    /// but never carried there: that capture missed them.
    fn acked_unseen(&self, s: usize, d: usize, p: &Packet) -> bool {
        let o = 1 - s;
        if p.seq_len() == 0 {
            return false;
        }
        let (Some((os, _)), Some(ack)) = (self.offsets_from(s, d), self.facts[o].max_ack[d]) else {
            return false;
        };
        let start = p.seq.wrapping_add(os);
        let end = start.wrapping_add(p.seq_len());
        seq_ge(ack, end) && !self.facts[o].carried[d].covers(start, p.seq_len())
    }

    /// Decides on what still waits and gives the pieces of the report;
    /// `rtt` is the one given (`--rtt`), `names` the captures'.
    pub fn finish(mut self, spans: [Span; 2], rtt: Option<Duration>, names: &[String; 2]) -> Done {
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
            sides_by: SidesBy::Assumed,
            proxied: false,
        });
        let (cs, ss) = (st.client_side, 1 - st.client_side);
        self.ttl_notes();
        self.fold_nat();
        if st.proxied {
            self.proxied_handshake(cs, ss);
        }
        let measured = [self.facts[cs].rtt, self.facts[ss].rtt]
            .into_iter()
            .flatten()
            .max();
        let rtt = match (rtt, measured) {
            (Some(value), _) => Some(Rtt {
                value,
                source: RttSource::Given,
            }),
            (None, Some(value)) => Some(Rtt {
                value,
                source: RttSource::Handshake,
            }),
            (None, None) => None,
        };
        let report = self.conn_report(st, rtt, names);
        let (ctx, dir_ctx) = self.contexts(cs, rtt.map(|r| r.value));
        Done {
            key_ts: self.facts[cs].first_c2s_ts,
            report,
            col: self.col,
            ctx,
            dir_ctx,
        }
    }

    /// The usual TTL decrement of each direction is routing; others are
    /// notes.
    fn ttl_notes(&mut self) {
        for d in [C2S, S2C] {
            if let Some((&usual, _)) = self.hops[d].iter().max_by_key(|(h, e)| (e.0, -**h)) {
                for (&change, &(n, before, after)) in &self.hops[d] {
                    if change != usual {
                        let detail = NoteDetail::Ttl {
                            change,
                            usual,
                            before,
                            after,
                        };
                        self.col.note_n(dir_of(d), detail, n);
                    }
                }
            }
        }
    }

    /// The connection as the report shows it (its `id` is given later).
    fn conn_report(&self, st: Settled, rtt: Option<Rtt>, names: &[String; 2]) -> ConnReport {
        let side = |k: usize| {
            let f = &self.facts[k];
            ConnSide {
                capture: names[k].clone(),
                client: f.ends.client,
                server: f.ends.server,
                packets: usize::try_from(f.packets.max(f.dir_packets[0] + f.dir_packets[1]))
                    .unwrap_or(usize::MAX),
                tunnels: f.tunnels.clone(),
            }
        };
        let (client_side, server_side) = (side(st.client_side), side(1 - st.client_side));
        ConnReport {
            id: 0,
            client: client_side.client,
            server: server_side.server,
            client_side,
            server_side,
            sides_by: st.sides_by,
            matched_by: self.score.matched_on(),
            matched_packets: self.matched,
            rtt,
        }
    }

    /// The facts impacts need: the connection's, and each direction's as
    /// the capture before the middlebox saw it; `cs` is the client side.
    fn contexts(&self, cs: usize, rtt: Option<Duration>) -> (Ctx, [Ctx; 2]) {
        let ss = 1 - cs;
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
        (ctx, dir_ctx)
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
            let (server, middlebox) = (
                syn_ack_value(Party::Server, &s),
                syn_ack_value(Party::Middlebox, &c),
            );
            let acc: &mut Acc = self.col.add(Hit {
                key: (S2C as u8, Kind::HandshakeProxied, None, None),
                before: server.clone(),
                after: middlebox.clone(),
                frame_client_side: Some(c.frame),
                frame_server_side: Some(s.frame),
            });
            // The finding's values describe the two SYN-ACKs.
            acc.before = server;
            acc.after = middlebox;
        }
    }
}
