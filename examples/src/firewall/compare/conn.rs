//! TCP connections of one capture, each split into its two directions.
//!
//! The client is the endpoint that sent the SYN. Without a SYN in the capture
//! the SYN-ACK's receiver is the client; without either, the endpoint with the
//! higher port (the usual ephemeral side), and the connection is marked as
//! seen mid-stream. A new SYN with a different initial sequence number after
//! a FIN or RST on the same addresses and ports starts a new connection.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};

use super::packet::{Packet, FIN, RST};

/// An address and port.
pub type Endpoint = (IpAddr, u16);

/// Formats an endpoint as `addr:port` (`[v6]:port`).
pub fn endpoint_str(e: Endpoint) -> String {
    SocketAddr::new(e.0, e.1).to_string()
}

/// One direction of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// From the client (the SYN's sender) to the server.
    ClientToServer,
    /// From the server to the client.
    ServerToClient,
}

impl Direction {
    /// Both directions, client to server first.
    pub const BOTH: [Direction; 2] = [Direction::ClientToServer, Direction::ServerToClient];
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client_to_server",
            Direction::ServerToClient => "server_to_client",
        }
    }
    /// The other direction.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::ClientToServer => "client -> server",
            Direction::ServerToClient => "server -> client",
        })
    }
}

/// A connection in one capture.
#[derive(Debug, Clone)]
pub struct Conn {
    /// The client endpoint.
    pub client: Endpoint,
    /// The server endpoint.
    pub server: Endpoint,
    /// True when the client's SYN or the server's SYN-ACK is in the capture.
    pub handshake_seen: bool,
    /// Indices (into the capture's packets) of client-to-server packets.
    pub c2s: Vec<usize>,
    /// Indices of server-to-client packets.
    pub s2c: Vec<usize>,
    /// Whether a FIN or RST was seen (a later SYN then opens a new connection).
    closed: bool,
    /// The client's initial sequence number, when its SYN was seen.
    pub client_isn: Option<u32>,
}

impl Conn {
    /// The packet indices of one direction.
    pub fn dir(&self, d: Direction) -> &[usize] {
        match d {
            Direction::ClientToServer => &self.c2s,
            Direction::ServerToClient => &self.s2c,
        }
    }
    /// Packets in both directions.
    pub fn len(&self) -> usize {
        self.c2s.len() + self.s2c.len()
    }
    /// True without packets (never for a built connection).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `client -> server` in words.
    pub fn label(&self) -> String {
        format!(
            "{} -> {}",
            endpoint_str(self.client),
            endpoint_str(self.server)
        )
    }
}

/// Splits a capture's packets into connections, in order of first packet.
pub fn connections(packets: &[Packet]) -> Vec<Conn> {
    let mut conns: Vec<Conn> = Vec::new();
    let mut by_key: HashMap<(Endpoint, Endpoint), usize> = HashMap::new();
    for (i, p) in packets.iter().enumerate() {
        let a = (p.src, p.sport);
        let b = (p.dst, p.dport);
        let key = if a <= b { (a, b) } else { (b, a) };
        let existing = by_key.get(&key).copied();
        let start_new = match existing {
            None => true,
            Some(ci) => {
                let c = &conns[ci];
                p.is_syn() && c.closed && c.client_isn != Some(p.seq)
            }
        };
        let ci = if start_new {
            let (client, server, seen) = if p.is_syn() {
                (a, b, true)
            } else if p.is_syn_ack() {
                (b, a, true)
            } else if p.sport > p.dport {
                (a, b, false)
            } else if p.sport < p.dport {
                (b, a, false)
            } else {
                (a, b, false)
            };
            conns.push(Conn {
                client,
                server,
                handshake_seen: seen,
                c2s: Vec::new(),
                s2c: Vec::new(),
                closed: false,
                client_isn: if p.is_syn() { Some(p.seq) } else { None },
            });
            by_key.insert(key, conns.len() - 1);
            conns.len() - 1
        } else {
            existing.unwrap_or(0)
        };
        let c = &mut conns[ci];
        // A SYN seen after mid-stream packets fixes the roles.
        if !c.handshake_seen && (p.is_syn() || p.is_syn_ack()) {
            let (client, server) = if p.is_syn() { (a, b) } else { (b, a) };
            if (client, server) != (c.client, c.server) {
                std::mem::swap(&mut c.c2s, &mut c.s2c);
                c.client = client;
                c.server = server;
            }
            c.handshake_seen = true;
        }
        if p.is_syn() && c.client_isn.is_none() {
            c.client_isn = Some(p.seq);
        }
        if p.flags.intersects(FIN | RST) {
            c.closed = true;
        }
        if a == c.client {
            c.c2s.push(i);
        } else {
            c.s2c.push(i);
        }
    }
    conns
}
