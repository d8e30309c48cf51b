//! Connection tracking: which connection and direction each segment belongs to.
//!
//! A connection is keyed by its unordered pair of endpoints. The client is
//! the side that sent the SYN (or received the SYN-ACK); for a connection
//! first seen mid-stream the client is guessed as the endpoint with the
//! higher port (the server usually has the well-known one) and
//! [`Connection::client_known`] is false.
//!
//! A new SYN on a pair whose connection has closed (RST, or FIN both ways),
//! or whose sequence number differs from the SYN seen before, starts a new
//! connection; the old one is handed to the caller as finished.
//!
//! Memory is bounded by the number of *open* connections: the tracker
//! holds at most `capacity` of them. When a new connection would exceed
//! that, every closed connection is finished at once; if none is closed, the
//! least recently active one is finished early and marked
//! [`Connection::evicted`]. Finished connections go to a caller's closure, so
//! summaries can be written out while the capture streams.
//!
//! The state type `T` is the caller's: `analyze` keeps counters and
//! handshake options, `compare` can keep whatever it matches on.

use std::collections::HashMap;
use std::net::SocketAddr;

use tcp_options::Flags;

use super::packet::TcpRecord;
use crate::capture::Timestamp;

/// Default cap on open connections.
pub const DEFAULT_CAPACITY: usize = 100_000;

/// Which way a segment travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client (SYN sender) to the server.
    ClientToServer,
    /// From the server to the client.
    ServerToClient,
}

impl Direction {
    /// The other direction.
    pub fn reverse(self) -> Self {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }

    /// `client_to_server` or `server_to_client`, the names used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client_to_server",
            Direction::ServerToClient => "server_to_client",
        }
    }
}

/// Unordered endpoint pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key(SocketAddr, SocketAddr);

impl Key {
    fn new(a: SocketAddr, b: SocketAddr) -> Self {
        if a <= b {
            Key(a, b)
        } else {
            Key(b, a)
        }
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
    /// The caller's state.
    pub state: T,
}

impl<T> Connection<T> {
    /// Closed by RST or by FIN in both directions.
    pub fn is_closed(&self) -> bool {
        self.rst || (self.fin_from_client && self.fin_from_server)
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

/// The connection table. See the module documentation.
#[derive(Debug)]
pub struct ConnTracker<T> {
    table: HashMap<Key, Connection<T>>,
    capacity: usize,
    next_id: u64,
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
            table: HashMap::new(),
            capacity: capacity.max(1),
            next_id: 0,
        }
    }

    /// Open connections currently held.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no connection is held.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Finds or creates the connection of `rec`, updates its bookkeeping
    /// (last frame and time, FIN/RST) and returns it with the segment's
    /// direction. `init` makes the state of a new connection; `finished`
    /// receives connections that end (replaced by a new SYN, or evicted).
    pub fn track<F>(
        &mut self,
        rec: &TcpRecord<'_>,
        init: impl FnOnce() -> T,
        mut finished: F,
    ) -> (&mut Connection<T>, Direction)
    where
        F: FnMut(Connection<T>),
    {
        let (src, dst) = endpoints(rec);
        let key = Key::new(src, dst);
        let syn_only = rec.flags.contains(Flags::SYN) && !rec.flags.contains(Flags::ACK);
        if let Some(c) = self.table.get(&key) {
            let reused =
                syn_only && (c.is_closed() || c.client_isn.is_some_and(|isn| isn != rec.seq));
            if reused {
                if let Some(old) = self.table.remove(&key) {
                    finished(old);
                }
            }
        }
        if !self.table.contains_key(&key) && self.table.len() >= self.capacity {
            self.make_room(&mut finished);
        }
        let next_id = &mut self.next_id;
        let c = self.table.entry(key).or_insert_with(|| {
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
            let id = *next_id;
            *next_id += 1;
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
                state: init(),
            }
        });
        if syn_only && !c.client_known {
            c.client = src;
            c.server = dst;
            c.client_known = true;
        }
        if syn_only && c.client_isn.is_none() {
            c.client_isn = Some(rec.seq);
        }
        let dir = c.direction_from(src);
        c.last_frame = rec.frame;
        if rec.ts.is_some() {
            c.last_ts = rec.ts;
        }
        c.segments += 1;
        if rec.flags.contains(Flags::FIN) {
            match dir {
                Direction::ClientToServer => c.fin_from_client = true,
                Direction::ServerToClient => c.fin_from_server = true,
            }
        }
        if rec.flags.contains(Flags::RST) {
            c.rst = true;
        }
        (c, dir)
    }

    /// Finishes every closed connection; if none is closed, the least recently active one.
    fn make_room<F: FnMut(Connection<T>)>(&mut self, finished: &mut F) {
        let closed: Vec<Key> = self
            .table
            .iter()
            .filter(|(_, c)| c.is_closed())
            .map(|(k, _)| *k)
            .collect();
        if closed.is_empty() {
            let lru = self
                .table
                .iter()
                .min_by_key(|(_, c)| (c.last_frame, c.id))
                .map(|(k, _)| *k);
            if let Some(mut c) = lru.and_then(|k| self.table.remove(&k)) {
                c.evicted = true;
                finished(c);
            }
            return;
        }
        let mut done: Vec<Connection<T>> =
            closed.iter().filter_map(|k| self.table.remove(k)).collect();
        done.sort_by_key(|c| c.id);
        done.into_iter().for_each(finished);
    }

    /// Ends tracking: every connection still held, in order of first appearance.
    pub fn finish(self) -> Vec<Connection<T>> {
        let mut all: Vec<Connection<T>> = self.table.into_values().collect();
        all.sort_by_key(|c| c.id);
        all
    }
}
