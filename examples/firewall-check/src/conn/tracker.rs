//! Connection tracking: which connection and direction each segment belongs to.
//!
//! A connection is keyed by its unordered pair of endpoints and the tunnel
//! it was carried in (`capture`'s [`TunnelKey`]: per layer the kind, the
//! outer endpoints and the identifier both directions share, such as the
//! GRE key or the VNI), so that two inner connections that differ only by
//! their tunnel are two connections; each connection keeps the layers of
//! the first segment seen from each endpoint ([`Connection::tunnels`]). A
//! plain link's key has no tunnel, and costs nothing more. The client is
//! the side that sent the SYN (or received the SYN-ACK); for a connection
//! first seen mid-stream the client is guessed as the endpoint with the
//! higher port (the server usually has the well-known one) and
//! [`Connection::client_known`] is false.
//!
//! A new SYN on a pair whose connection has closed (RST, or FIN both ways),
//! or whose sequence number differs from the SYN seen before, starts a new
//! connection; the old one is handed to the caller as finished.
//!
//! Memory is bounded by the number of *open* connections. A connection
//! closed by RST or by FIN in both directions lingers for
//! [`LINGER_FRAMES`] frames after its last segment (up to twice that when a
//! late segment arrives while it lingers: the count restarts from it) (so the last ACK and
//! late retransmissions still land on it), then it is finished and removed.
//! Besides, the tracker holds at most `capacity` connections: when a new
//! one would exceed that, every closed connection is finished at once; if
//! none is closed, the least recently active sixteenth
//! ([`EVICT_DIVISOR`]) is finished early and marked
//! [`Connection::evicted`] (one scan of the table per many arrivals). The
//! rest of an evicted connection is tracked as its continuation
//! ([`Connection::continues`]).
//!
//! Finished connections are handed out in order of first appearance: one
//! that finishes while an earlier-started connection is still open waits in
//! a small ordered buffer. That buffer holds at most [`MAX_PENDING`]
//! connections; beyond that the oldest waiting one is handed out at once
//! (so a very long-lived connection cannot make memory follow the capture
//! size), and the order becomes the order of finishing for it.
//!
//! The state type `T` is the caller's: `analyze` keeps counters and
//! handshake options, `compare` can keep whatever it matches on.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::Hasher;
use std::net::SocketAddr;

use capture::encap::{OwnedTunnels, TunnelKey};
use tcp_options::Flags;

use crate::conn::open_ids::OpenIds;
pub use crate::conn::Direction;
use crate::decode::TcpRecord;
use capture::Timestamp;

/// Default cap on open connections.
pub const DEFAULT_CAPACITY: usize = 100_000;
/// Frames a closed connection stays in the table after its last segment.
pub const LINGER_FRAMES: u64 = 4096;
/// Most finished connections waiting for an earlier-started one.
pub const MAX_PENDING: usize = 4096;

/// The table keys are endpoint pairs from the capture, hashed once per
/// segment, where SipHash's flooding resistance costs a quarter of the run
/// time: the Fx hash (`rustc-hash`) instead. A capture crafted to collide
/// only slows this offline tool down.
type FxBuild = rustc_hash::FxBuildHasher;

/// A full table with nothing closed evicts this fraction (1/16) of its
/// least recently active connections at once.
pub const EVICT_DIVISOR: usize = 16;

/// Most evicted endpoint pairs remembered, so that the rest of an evicted
/// connection is reported as its continuation, not as a capture that starts
/// mid-connection.
pub const EVICTED_MEMORY: usize = 65_536;

/// The largest tunnel id ([`TUNNEL_ID_BITS`] bits).
pub const MAX_TUNNEL_IDS: u32 = (1 << TUNNEL_ID_BITS) - 1;

/// Most tunnels given an id of their own, in order of appearance (about
/// 400 bytes each: the table's memory stays bounded whatever the capture
/// holds). The tunnels met after that many take an id above these from a
/// hash of their identity: two of them share one only when their hashes
/// collide in the 2^26 - 2^16 ids left, and then their inner connections
/// are told apart by addresses and ports alone.
pub const INTERNED_TUNNELS: u32 = 1 << 16;

/// Bits of a tunnel's id in the key: the bits above each endpoint's family
/// and port (19 bits) in the key's last word, 13 in each half.
pub const TUNNEL_ID_BITS: u32 = 26;

/// Unordered endpoint pair and tunnel, packed in five words: the two
/// addresses (an IPv4 address as a number below 2^32), lower endpoint
/// first, then both families and ports and the tunnel's id (0 on a plain
/// link, see [`ConnTracker`]'s table of tunnels), so comparing and hashing is a few integer
/// operations and a table entry (key and box) is 48 bytes, not 80 (the
/// table is probed once per segment; on the many-connections benchmark
/// capture it holds about 27,000 connections, beyond the CPU caches).
#[derive(Debug, Clone, Copy, Eq)]
struct Key([u64; 5]);

/// Word by word, without the `memcmp` call the derived comparison of the
/// array becomes (4% of `analyze`'s CPU on the many-connections benchmark).
impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.0, &other.0);
        ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) | (a[4] ^ b[4])) == 0
    }
}

impl std::hash::Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let [a0, a1, b0, b1, ports] = self.0;
        state.write_u64(a0);
        state.write_u64(b0);
        state.write_u64(a1 ^ b1.rotate_left(32) ^ ports);
    }
}

/// One endpoint: address, and family (4 or 6) shifted above the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Endpoint(u128, u32);

impl Endpoint {
    fn new(a: SocketAddr) -> Self {
        match a {
            SocketAddr::V4(v4) => Endpoint(
                u128::from(u32::from(*v4.ip())),
                (4 << 16) | u32::from(v4.port()),
            ),
            SocketAddr::V6(v6) => Endpoint(u128::from(*v6.ip()), (6 << 16) | u32::from(v6.port())),
        }
    }
}

impl Key {
    fn new(a: SocketAddr, b: SocketAddr, tunnel: u32) -> Self {
        let (a, b) = (Endpoint::new(a), Endpoint::new(b));
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        // Family and port take 19 bits of each half; the tunnel's id the
        // 13 bits above them in each.
        let t = u64::from(tunnel.min(MAX_TUNNEL_IDS));
        let tunnel_bits = ((t & 0x1fff) << 19) | ((t >> 13) << 51);
        Key([
            a.0 as u64,
            (a.0 >> 64) as u64,
            b.0 as u64,
            (b.0 >> 64) as u64,
            (u64::from(a.1) << 32) | u64::from(b.1) | tunnel_bits,
        ])
    }
}

/// One tracked connection with the caller's state.
#[derive(Debug, Clone)]
pub struct Connection<T> {
    /// Sequential id, in order of first appearance in the capture (from 0).
    pub id: u64,
    /// The client endpoint (SYN sender, or the guess described in the module docs).
    pub client: SocketAddr,
    /// The server endpoint.
    pub server: SocketAddr,
    /// True when a SYN or SYN-ACK identified the client.
    pub client_known: bool,
    /// Initial sequence number of the client's SYN, once seen.
    pub client_isn: Option<u32>,
    /// First and last frame numbers of the connection.
    pub first_frame: u64,
    /// Last frame number seen.
    pub last_frame: u64,
    /// Time of the first segment.
    pub first_ts: Option<Timestamp>,
    /// Time of the last segment.
    pub last_ts: Option<Timestamp>,
    /// Segments seen.
    pub segments: u64,
    /// The client sent a FIN.
    pub fin_from_client: bool,
    /// The server sent a FIN.
    pub fin_from_server: bool,
    /// A RST was seen.
    pub rst: bool,
    /// Finished early because the table was full and it was least recently active.
    pub evicted: bool,
    /// This connection is the rest of connection `id`, which was evicted
    /// from the full table (its handshake, if any, is in that one).
    pub continues: Option<u64>,
    /// The tunnels and encapsulations the connection was carried in: the
    /// layers of the first segment seen from each endpoint (the source
    /// endpoint, the layers), at most two; empty on a plain link.
    pub tunnels: Vec<(SocketAddr, OwnedTunnels)>,
    /// The caller's state.
    pub state: T,
}

impl<T> Connection<T> {
    /// Closed by RST or by FIN in both directions.
    pub fn is_closed(&self) -> bool {
        self.rst || (self.fin_from_client && self.fin_from_server)
    }

    /// The layers of the first segment seen in direction `d`, if it was
    /// carried in a tunnel.
    pub fn tunnels_of(&self, d: Direction) -> Option<&OwnedTunnels> {
        let src = match d {
            Direction::ClientToServer => self.client,
            Direction::ServerToClient => self.server,
        };
        self.tunnels.iter().find(|(a, _)| *a == src).map(|(_, t)| t)
    }

    /// The layers the connection was carried in, per direction (`None` on
    /// a plain link).
    pub fn carried_in(&self) -> Option<CarriedIn> {
        (!self.tunnels.is_empty()).then(|| CarriedIn {
            client_to_server: self.tunnels_of(Direction::ClientToServer).cloned(),
            server_to_client: self.tunnels_of(Direction::ServerToClient).cloned(),
        })
    }

    /// Direction of a segment from `src`.
    pub fn direction_from(&self, src: SocketAddr) -> Direction {
        if src == self.client {
            Direction::ClientToServer
        } else {
            Direction::ServerToClient
        }
    }
}

/// The layers a tunneled connection was carried in, per direction: those
/// of the first segment seen that way (`None` when no segment was seen that
/// way). Both directions, because some ids are per direction (the GTP-U
/// TEID, MPLS labels) and the outer endpoints are swapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarriedIn {
    /// The client's segments.
    pub client_to_server: Option<OwnedTunnels>,
    /// The server's segments.
    pub server_to_client: Option<OwnedTunnels>,
}

/// The connection table. See the module documentation.
#[derive(Debug)]
pub struct ConnTracker<T> {
    /// Boxed: a connection's state is moved between the table and the
    /// ordered buffer without copying it, and the table's spare capacity
    /// holds pointers, not states.
    table: HashMap<Key, Box<Connection<T>>, FxBuild>,
    capacity: usize,
    next_id: u64,
    /// Ids of the connections in `table`.
    open_ids: OpenIds,
    /// Closed connections to finish once they have been idle long enough:
    /// key, id, and the frame from which to count.
    closing: VecDeque<(Key, u64, u64)>,
    /// Finished connections waiting for an earlier-started one.
    pending: BTreeMap<u64, Box<Connection<T>>>,
    /// Something finished since [`ConnTracker::drain`] last stopped: only
    /// then can a waiting connection be handed out.
    ready: bool,
    /// Endpoint pairs of evicted connections: id, client, server, whether
    /// the client was known (at most [`EVICTED_MEMORY`], oldest forgotten).
    evicted: HashMap<Key, (u64, SocketAddr, SocketAddr, bool), FxBuild>,
    evicted_order: VecDeque<Key>,
    /// Hand finished connections out in order of first appearance (the
    /// default); a live capture hands each out as it finishes.
    ordered: bool,
    /// The ids of the tunnels met, from 1 (0 is a plain link's), at most
    /// [`INTERNED_TUNNELS`].
    tunnel_ids: HashMap<TunnelKey, u32, FxBuild>,
}

/// A new connection first seen with `rec`, from `src` to `dst`.
fn new_connection<T>(
    id: u64,
    rec: &TcpRecord<'_>,
    src: SocketAddr,
    dst: SocketAddr,
    state: T,
) -> Connection<T> {
    let syn_only = rec.flags.contains(Flags::SYN) && !rec.flags.contains(Flags::ACK);
    let synack = rec.flags.contains(Flags::SYN | Flags::ACK);
    let (client, server, known) = if syn_only {
        (src, dst, true)
    } else if synack {
        (dst, src, true)
    } else if src.port() >= dst.port() {
        (src, dst, false)
    } else {
        (dst, src, false)
    };
    Connection {
        id,
        client,
        server,
        client_known: known,
        client_isn: None,
        first_frame: rec.frame,
        last_frame: rec.frame,
        first_ts: rec.ts,
        last_ts: rec.ts,
        segments: 0,
        fin_from_client: false,
        fin_from_server: false,
        rst: false,
        evicted: false,
        continues: None,
        tunnels: Vec::new(),
        state,
    }
}

/// The id of tunnel `key` (see [`Key`] and [`INTERNED_TUNNELS`]): its own
/// for the first tunnels met, from 1, remembered in `ids`; then one from a
/// hash of the key, above those.
fn tunnel_id(ids: &mut HashMap<TunnelKey, u32, FxBuild>, key: TunnelKey) -> u32 {
    let next = u32::try_from(ids.len())
        .unwrap_or(u32::MAX)
        .saturating_add(1);
    if next <= INTERNED_TUNNELS {
        return *ids.entry(key).or_insert(next);
    }
    if let Some(&id) = ids.get(&key) {
        return id;
    }
    let mut h = rustc_hash::FxHasher::default();
    std::hash::Hash::hash(&key, &mut h);
    let spare = u64::from(MAX_TUNNEL_IDS - INTERNED_TUNNELS);
    INTERNED_TUNNELS + 1 + u32::try_from(h.finish() % spare).unwrap_or(0)
}

/// Keeps the layers of `rec`, the first segment seen from `src`: the
/// frame's headers up to the end of the inner TCP header.
#[cold]
#[inline(never)]
fn keep_tunnels<T>(c: &mut Connection<T>, rec: &TcpRecord<'_>, src: SocketAddr) {
    let end = rec
        .tcp_offset
        .saturating_add(rec.header_len.min(rec.tcp.len()));
    c.tunnels.push((src, rec.tunnels.to_owned_prefix(end)));
}

/// Source and destination socket addresses of a segment.
pub fn endpoints(rec: &TcpRecord<'_>) -> (SocketAddr, SocketAddr) {
    (
        SocketAddr::new(rec.ip.src, rec.src_port),
        SocketAddr::new(rec.ip.dst, rec.dst_port),
    )
}

impl<T> ConnTracker<T> {
    /// A tracker holding at most `capacity` open connections (at least 1).
    pub fn new(capacity: usize) -> Self {
        ConnTracker {
            table: HashMap::default(),
            capacity: capacity.max(1),
            next_id: 0,
            open_ids: OpenIds::new(),
            closing: VecDeque::new(),
            pending: BTreeMap::new(),
            ready: false,
            evicted: HashMap::default(),
            evicted_order: VecDeque::new(),
            ordered: true,
            tunnel_ids: HashMap::default(),
        }
    }

    /// Whether finished connections wait for earlier-started open ones
    /// (`true`, the default: reports in order of first appearance) or are
    /// handed out as they finish (a live capture, where a long-lived
    /// connection would hold back every report behind it).
    pub fn set_ordered(&mut self, ordered: bool) {
        self.ordered = ordered;
    }

    /// Finishes the closed connections whose last segment is at least
    /// `linger` before `now`, whatever the frames since: on a live
    /// capture, frames may not come to age them. One pass over the
    /// closing connections.
    pub fn expire_by_time(&mut self, now: Timestamp, linger: std::time::Duration) {
        let linger = u64::try_from(linger.as_nanos()).unwrap_or(u64::MAX);
        let mut keep = VecDeque::with_capacity(self.closing.len());
        while let Some((key, id, since)) = self.closing.pop_front() {
            let Entry::Occupied(o) = self.table.entry(key) else {
                continue;
            };
            let c = o.get();
            if c.id != id || !c.is_closed() {
                continue;
            }
            let idle = c.last_ts.and_then(|t| now.nanos_since(&t));
            if idle.is_some_and(|ns| ns >= linger) {
                let c = o.remove();
                self.finish_one(c);
            } else {
                keep.push_back((key, id, since));
            }
        }
        self.closing = keep;
    }

    /// Connections currently held in the table (open, or closed and lingering).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no connection is held.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Finds or creates the connection of `rec`, updates its bookkeeping
    /// (last frame and time, FIN/RST) and returns it with the segment's
    /// direction. `init` makes the state of a new connection. Connections
    /// that end (closed and idle, replaced by a new SYN, or evicted) wait
    /// in the tracker until [`ConnTracker::drain`] hands them out.
    pub fn track(
        &mut self,
        rec: &TcpRecord<'_>,
        init: impl FnOnce() -> T,
    ) -> (&mut Connection<T>, Direction) {
        self.expire(rec.frame);
        let (src, dst) = endpoints(rec);
        let tunnel = if rec.tunnels.is_empty() {
            0
        } else {
            self.tunnel_id(rec)
        };
        let key = Key::new(src, dst, tunnel);
        let syn_only = rec.flags.contains(Flags::SYN) && !rec.flags.contains(Flags::ACK);
        // One lookup on the common path; a full table looks up once more.
        if self.table.len() >= self.capacity && !self.table.contains_key(&key) {
            self.make_room();
        }
        let c = match self.table.entry(key) {
            Entry::Occupied(mut o) => {
                let c = o.get();
                let reused =
                    syn_only && (c.is_closed() || c.client_isn.is_some_and(|isn| isn != rec.seq));
                if reused {
                    let id = self.next_id;
                    self.next_id += 1;
                    let old = o.insert(Box::new(new_connection(id, rec, src, dst, init())));
                    self.open_ids.remove(old.id);
                    self.pending.insert(old.id, old);
                    self.ready = true;
                    let pushed = self.open_ids.push(id);
                    debug_assert!(pushed, "ids grow");
                }
                &mut **o.into_mut()
            }
            Entry::Vacant(v) => {
                let id = self.next_id;
                self.next_id += 1;
                let pushed = self.open_ids.push(id);
                debug_assert!(pushed, "ids grow");
                let mut c = new_connection(id, rec, src, dst, init());
                // The rest of an evicted connection (a new SYN starts a new one).
                if !syn_only && !self.evicted.is_empty() {
                    if let Some((old, client, server, known)) = self.evicted.remove(&key) {
                        c.continues = Some(old);
                        c.client = client;
                        c.server = server;
                        c.client_known = known;
                    }
                }
                &mut **v.insert(Box::new(c))
            }
        };
        if syn_only && !c.client_known {
            c.client = src;
            c.server = dst;
            c.client_known = true;
        }
        if syn_only && c.client_isn.is_none() {
            c.client_isn = Some(rec.seq);
        }
        if tunnel != 0 && c.tunnels.len() < 2 && c.tunnels.iter().all(|(a, _)| *a != src) {
            keep_tunnels(c, rec, src);
        }
        let dir = c.direction_from(src);
        c.last_frame = rec.frame;
        if rec.ts.is_some() {
            c.last_ts = rec.ts;
        }
        c.segments += 1;
        let was_closed = c.is_closed();
        if rec.flags.contains(Flags::FIN) {
            match dir {
                Direction::ClientToServer => c.fin_from_client = true,
                Direction::ServerToClient => c.fin_from_server = true,
            }
        }
        if rec.flags.contains(Flags::RST) {
            c.rst = true;
        }
        if !was_closed && c.is_closed() {
            self.closing.push_back((key, c.id, rec.frame));
        }
        (c, dir)
    }

    /// The id of the tunnel `rec` was carried in (see [`Key`]).
    #[cold]
    #[inline(never)]
    fn tunnel_id(&mut self, rec: &TcpRecord<'_>) -> u32 {
        tunnel_id(&mut self.tunnel_ids, rec.tunnels.key())
    }

    /// Finishes the closed connections idle for [`LINGER_FRAMES`] frames before `frame`.
    fn expire(&mut self, frame: u64) {
        while let Some(&(key, id, since)) = self.closing.front() {
            if since.saturating_add(LINGER_FRAMES) > frame {
                return;
            }
            self.closing.pop_front();
            // One lookup to check and remove.
            let Entry::Occupied(o) = self.table.entry(key) else {
                continue;
            };
            let c = o.get();
            if c.id != id || !c.is_closed() {
                continue;
            }
            if c.last_frame.saturating_add(LINGER_FRAMES) > frame {
                // Late segments arrived: count again from the last one.
                let last = c.last_frame;
                self.closing.push_back((key, id, last));
                continue;
            }
            let c = o.remove();
            self.finish_one(c);
        }
    }

    /// Moves a connection out of the table into the ordered buffer.
    fn finish_one(&mut self, c: Box<Connection<T>>) {
        self.open_ids.remove(c.id);
        self.pending.insert(c.id, c);
        self.ready = true;
    }

    /// Finishes every closed connection; if none is closed, the least
    /// recently active sixteenth of the table (at least one), so that a full
    /// table costs one scan per many new connections, not one per each.
    fn make_room(&mut self) {
        let closed: Vec<Key> = self
            .table
            .iter()
            .filter(|(_, c)| c.is_closed())
            .map(|(k, _)| *k)
            .collect();
        if closed.is_empty() {
            let mut by_age: Vec<(u64, u64, Key)> = self
                .table
                .iter()
                .map(|(k, c)| (c.last_frame, c.id, *k))
                .collect();
            let n = (by_age.len() / EVICT_DIVISOR).max(1).min(by_age.len());
            if n < by_age.len() {
                by_age.select_nth_unstable_by_key(n, |e| (e.0, e.1));
            }
            for &(_, _, k) in &by_age[..n] {
                if let Some((k, mut c)) = self.table.remove_entry(&k) {
                    c.evicted = true;
                    if self.evicted_order.len() >= EVICTED_MEMORY {
                        if let Some(old) = self.evicted_order.pop_front() {
                            self.evicted.remove(&old);
                        }
                    }
                    self.evicted
                        .insert(k, (c.id, c.client, c.server, c.client_known));
                    self.evicted_order.push_back(k);
                    self.finish_one(c);
                }
            }
            return;
        }
        for k in closed {
            if let Some(c) = self.table.remove(&k) {
                self.finish_one(c);
            }
        }
    }

    /// Hands out the finished connections no earlier-started open
    /// connection is waiting for, in order of first appearance (and the
    /// oldest beyond [`MAX_PENDING`] waiting ones).
    pub fn drain<F: FnMut(Connection<T>)>(&mut self, mut finished: F) {
        self.drain_boxed(|c| finished(*c));
    }

    /// [`ConnTracker::drain`] without moving each connection out of its box.
    pub fn drain_boxed<F: FnMut(Box<Connection<T>>)>(&mut self, mut finished: F) {
        while let Some(&first) = self.pending.keys().next() {
            let blocked = self.ordered && self.open_ids.first().is_some_and(|open| open < first);
            if blocked && self.pending.len() <= MAX_PENDING {
                self.ready = false;
                return;
            }
            if let Some(c) = self.pending.remove(&first) {
                finished(c);
            }
        }
    }

    /// True when [`ConnTracker::drain`] has something to hand out.
    pub fn has_finished(&self) -> bool {
        self.ready && !self.pending.is_empty()
    }

    /// Ends tracking: every connection not yet handed out, in order of first appearance.
    pub fn finish(self) -> Vec<Connection<T>> {
        self.finish_boxed().into_iter().map(|c| *c).collect()
    }

    /// [`ConnTracker::finish`] without moving each connection out of its
    /// box (sorting boxes moves pointers, not states).
    pub fn finish_boxed(mut self) -> Vec<Box<Connection<T>>> {
        let mut all: Vec<Box<Connection<T>>> = self.table.drain().map(|(_, c)| c).collect();
        all.extend(std::mem::take(&mut self.pending).into_values());
        // Ids are unique: an unstable sort gives the same order.
        all.sort_unstable_by_key(|c| c.id);
        all
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use super::*;
    use crate::decode::Truncation;
    use capture::{IpInfo, IpVersion};

    /// A segment from 192.0.2.1:`port` to 192.0.2.2:80 (the other way when `back`).
    fn rec(frame: u64, port: u16, back: bool, flags: Flags) -> TcpRecord<'static> {
        let (c, s) = (
            IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
            IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2)),
        );
        let (src, dst, src_port, dst_port) = if back {
            (s, c, 80, port)
        } else {
            (c, s, port, 80)
        };
        TcpRecord {
            frame,
            ts: None,
            ip: IpInfo {
                version: IpVersion::V4,
                src,
                dst,
                tos: 0,
                ttl: 64,
                ident: None,
                df: false,
                flow_label: None,
                header_len: 20,
            },
            src_port,
            dst_port,
            seq: 1000,
            ack: 0,
            flags,
            window: 100,
            urgent: 0,
            checksum: 0,
            header_len: 20,
            options: &[],
            payload_len: 0,
            payload: &[],
            truncation: Truncation::None,
            tcp: &[],
            tcp_offset: 0,
            tunnels: capture::Tunnels::empty(&[]),
        }
    }

    fn ids(t: &mut ConnTracker<()>) -> Vec<u64> {
        let mut out = Vec::new();
        if t.has_finished() {
            t.drain(|c| out.push(c.id));
        }
        out
    }

    #[test]
    fn live_tracking_finishes_a_closed_connection_by_time_and_out_of_order() {
        let at = |secs| Some(Timestamp { secs, nanos: 0 });
        let mut t: ConnTracker<()> = ConnTracker::new(16);
        t.set_ordered(false);
        // Connection 0 stays open; connection 1 opens and closes by RST.
        let mut first = rec(1, 5000, false, Flags::SYN);
        first.ts = at(100);
        t.track(&first, || ());
        let mut syn = rec(2, 5001, false, Flags::SYN);
        syn.ts = at(100);
        t.track(&syn, || ());
        let mut rst = rec(3, 5001, true, Flags::RST);
        rst.ts = at(101);
        t.track(&rst, || ());
        let linger = std::time::Duration::from_secs(1);
        t.expire_by_time(
            Timestamp {
                secs: 101,
                nanos: 999_999_999,
            },
            linger,
        );
        assert_eq!(ids(&mut t), Vec::<u64>::new(), "not yet idle for 1 s");
        t.expire_by_time(
            Timestamp {
                secs: 102,
                nanos: 0,
            },
            linger,
        );
        assert_eq!(
            ids(&mut t),
            vec![1],
            "handed out before the open connection 0"
        );
        let rest: Vec<u64> = t.finish().iter().map(|c| c.id).collect();
        assert_eq!(rest, vec![0]);
    }

    #[test]
    fn tunnel_ids_are_bounded_and_stable() {
        use capture::encap::{EncapKind, KeyPart};
        let key = |n: u32| {
            let a = IpAddr::V4(Ipv4Addr::from(0xc612_0000 | (n & 0xffff)));
            let b = IpAddr::V4(Ipv4Addr::from(0xc613_0000 | (n >> 16)));
            TunnelKey::from_parts(&[KeyPart {
                kind: Some(EncapKind::Gre),
                outer: Some((a.min(b), a.max(b))),
                id: Some(n),
            }])
            .expect("one layer")
        };
        let mut ids = HashMap::default();
        // The first tunnels get 1, 2, ... in order, and keep them.
        for n in 0..INTERNED_TUNNELS {
            assert_eq!(tunnel_id(&mut ids, key(n)), n + 1);
        }
        assert_eq!(tunnel_id(&mut ids, key(7)), 8);
        // Then no more memory: ids from the key's hash, above the interned
        // ones, the same each time, and (here) all different.
        let mut seen = std::collections::HashSet::new();
        for n in INTERNED_TUNNELS..INTERNED_TUNNELS + 1000 {
            let id = tunnel_id(&mut ids, key(n));
            assert!(id > INTERNED_TUNNELS && id <= MAX_TUNNEL_IDS, "{id}");
            assert_eq!(tunnel_id(&mut ids, key(n)), id);
            assert!(seen.insert(id), "{n}: {id} again");
        }
        assert_eq!(ids.len(), INTERNED_TUNNELS as usize);
        assert_eq!(tunnel_id(&mut ids, key(7)), 8);
    }

    #[test]
    fn the_key_holds_the_tunnel_apart_from_the_endpoints() {
        let a: SocketAddr = "192.0.2.1:40000".parse().unwrap();
        let b: SocketAddr = "[2001:db8::2]:65535".parse().unwrap();
        // Either order of the endpoints, one key.
        assert_eq!(Key::new(a, b, 0), Key::new(b, a, 0));
        assert_eq!(Key::new(a, b, 9), Key::new(b, a, 9));
        // Every id, up to the largest, is a key of its own, and the
        // endpoints' words are untouched by it.
        let ids = [
            0,
            1,
            2,
            0x1fff,
            0x2000,
            0x2001,
            MAX_TUNNEL_IDS - 1,
            MAX_TUNNEL_IDS,
        ];
        let keys: Vec<Key> = ids.iter().map(|&t| Key::new(a, b, t)).collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(k.0[..4], keys[0].0[..4]);
            // The families and ports read back from the low 19 bits of each half.
            assert_eq!(k.0[4] & 0x7_ffff, keys[0].0[4] & 0x7_ffff);
            assert_eq!((k.0[4] >> 32) & 0x7_ffff, (keys[0].0[4] >> 32) & 0x7_ffff);
            for (j, l) in keys.iter().enumerate() {
                assert_eq!(i == j, k == l, "ids {} and {}", ids[i], ids[j]);
            }
        }
        // Beyond the largest id, the largest.
        assert_eq!(Key::new(a, b, u32::MAX), Key::new(a, b, MAX_TUNNEL_IDS));
    }

    #[test]
    fn closed_connections_leave_the_table_in_first_appearance_order() {
        let mut t: ConnTracker<()> = ConnTracker::new(DEFAULT_CAPACITY);
        let mut frame = 0;
        let mut feed = |t: &mut ConnTracker<()>, port, back, flags| {
            frame += 1;
            t.track(&rec(frame, port, back, flags), || ()).0.id
        };
        // Connection 0 opens; connection 1 opens and closes with FINs.
        assert_eq!(feed(&mut t, 1000, false, Flags::SYN), 0);
        assert_eq!(feed(&mut t, 2000, false, Flags::SYN), 1);
        feed(&mut t, 2000, true, Flags::SYN | Flags::ACK);
        feed(&mut t, 2000, false, Flags::FIN | Flags::ACK);
        feed(&mut t, 2000, true, Flags::FIN | Flags::ACK);
        // The last ACK arrives after the close and still lands on connection 1.
        assert_eq!(feed(&mut t, 2000, false, Flags::ACK), 1);
        assert_eq!(t.len(), 2);
        for _ in 0..LINGER_FRAMES {
            feed(&mut t, 1000, false, Flags::ACK);
        }
        // Connection 1 left the table but waits for connection 0.
        assert_eq!(t.len(), 1);
        assert_eq!(ids(&mut t), Vec::<u64>::new());
        feed(&mut t, 1000, true, Flags::RST);
        for _ in 0..=LINGER_FRAMES {
            feed(&mut t, 3000, false, Flags::ACK);
        }
        assert_eq!(ids(&mut t), vec![0, 1]);
        assert_eq!(t.len(), 1);
        assert_eq!(t.finish().iter().map(|c| c.id).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn the_rest_of_an_evicted_connection_continues_it() {
        let mut t: ConnTracker<()> = ConnTracker::new(1);
        let id0 = t.track(&rec(1, 1000, false, Flags::SYN), || ()).0.id;
        // A second connection pushes the first out of the one-slot table.
        t.track(&rec(2, 2000, false, Flags::SYN), || ());
        let mut out = Vec::new();
        t.drain(|c| out.push((c.id, c.evicted)));
        assert_eq!(out, vec![(id0, true)]);
        // The first one's server answers: the same connection, continued,
        // with the client the evicted one had (not a port guess).
        let (c, dir) = t.track(&rec(3, 1000, true, Flags::ACK), || ());
        assert_eq!(c.continues, Some(id0));
        assert!(c.client_known);
        assert_eq!(dir, Direction::ServerToClient);
        // A new SYN on the same pair after eviction is a new connection.
        let mut t: ConnTracker<()> = ConnTracker::new(1);
        t.track(&rec(1, 1000, false, Flags::SYN), || ());
        t.track(&rec(2, 2000, false, Flags::SYN), || ());
        assert_eq!(
            t.track(&rec(3, 1000, false, Flags::SYN), || ()).0.continues,
            None
        );
    }

    #[test]
    fn waiting_behind_a_long_connection_is_bounded() {
        let mut t: ConnTracker<()> = ConnTracker::new(DEFAULT_CAPACITY);
        let mut frame = 0;
        t.track(&rec(frame, 1, false, Flags::SYN), || ());
        let mut handed = Vec::new();
        for port in 2..(MAX_PENDING as u16 + 3) {
            frame += 1;
            t.track(&rec(frame, port, false, Flags::RST), || ());
            frame += LINGER_FRAMES;
            t.track(&rec(frame, 1, false, Flags::ACK), || ());
            handed.extend(ids(&mut t));
        }
        // Connection 0 is still open: the oldest waiting one went out anyway.
        assert_eq!(handed, vec![1]);
        assert!(t.len() <= 2);
    }
}
