//! The reflector's capture: every packet on every interface (`AF_PACKET`,
//! both directions), the watched connections' kept in a buffer.

use std::io::Read;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};
use tcp_options::Flags;

use super::super::error::NetError;
use super::super::wire::{parse_answer, Answer};
use super::protocol::Dir;
use capture::link::{decode_link, Network};

/// Packets buffered per session at most (the oldest dropped).
pub const MAX_PACKETS: usize = 4096;

/// Bytes kept of a captured TCP packet (IP header, extension headers, TCP
/// header): its data is not needed.
const TCP_KEEP: usize = 200;
/// Bytes kept of a captured ICMP error.
const ICMP_KEEP: usize = 1500;

/// What to capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    /// The prober's address.
    pub client: IpAddr,
    /// Its source ports, inclusive.
    pub ports: (u16, u16),
    /// The server's port.
    pub server_port: u16,
}

/// A kept packet.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Which way.
    pub dir: Dir,
    /// The client port (0: a translated connection's, found otherwise).
    pub client_port: u16,
    /// The IP packet, cut.
    pub ip: Vec<u8>,
}

/// The session's watch and buffer, shared with the capture thread.
#[derive(Default)]
pub struct Shared {
    /// What to capture (nothing before `watch`).
    pub watch: Option<Watch>,
    /// What was captured.
    pub packets: Vec<Captured>,
}

/// What a captured IPv4 or IPv6 packet is to the watch: direction and
/// client port.
pub fn classify(w: &Watch, ip: &[u8]) -> Option<(Dir, u16)> {
    let in_range = |p: u16| p >= w.ports.0 && p <= w.ports.1;
    match parse_answer(ip)? {
        Answer::Tcp(s) => {
            let (sp, dp) = (s.sport(), s.dport());
            let flags = s.flags()?;
            if s.src == w.client && dp == w.server_port && in_range(sp) {
                Some((Dir::In, sp))
            } else if s.dst == w.client && sp == w.server_port && in_range(dp) {
                Some((Dir::Out, dp))
            } else if flags.contains(Flags::SYN) && !flags.contains(Flags::ACK) {
                // Any other SYN: a probe that a NAT translated arrives
                // from another address or port (found by its sequence).
                Some((Dir::Syn, 0))
            } else if flags.contains(Flags::SYN | Flags::ACK) {
                // Any other SYN-ACK: the server's to a translated address
                // and port (a NAT, which may also have translated the
                // server's port), found by its acknowledgment, the probe's
                // sequence number + 1, which a NAT leaves as it is.
                Some((Dir::Synack, 0))
            } else {
                None
            }
        }
        Answer::Icmp(e) => {
            let q = &e.quote;
            let (sp, dp) = (q.sport(), q.dport());
            if q.dst == w.client && sp == w.server_port && in_range(dp) {
                Some((Dir::Icmp, dp))
            } else {
                // A quote of a copy sent to a translated address and port:
                // found by the copy's acknowledgment number.
                Some((Dir::Icmp, 0))
            }
        }
    }
}

/// Keeps the headers of a TCP packet, an ICMP error up to 1500 bytes.
pub fn trim(ip: &[u8]) -> Vec<u8> {
    let keep = match parse_answer(ip) {
        Some(Answer::Tcp(_)) => TCP_KEEP,
        _ => ICMP_KEEP,
    };
    ip[..ip.len().min(keep)].to_vec()
}

/// The capture socket: every frame on every interface, both directions.
pub fn socket() -> Result<Socket, NetError> {
    let eth_p_all = i32::from(0x0003u16.to_be());
    let s =
        Socket::new(Domain::PACKET, Type::RAW, Some(Protocol::from(eth_p_all))).map_err(|e| {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                NetError::NoPermission(e)
            } else {
                NetError::RawSocket(e)
            }
        })?;
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(|source| NetError::SocketOption {
            option: "capture timeout",
            source,
        })?;
    let _ = s.set_recv_buffer_size(4 << 20);
    Ok(s)
}

/// Reads `cap` until `stop`, keeping what the watch selects in `shared`.
pub fn spawn(
    cap: Socket,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut cap = cap;
        let mut buf = vec![0u8; 65536];
        while !stop.load(Ordering::Relaxed) {
            let Ok(n) = cap.read(&mut buf) else { continue };
            let Ok(l) = decode_link(1, &buf[..n]) else {
                continue;
            };
            if l.network != Network::Ipv4 && l.network != Network::Ipv6 {
                continue;
            }
            let ip = &buf[l.offset..n];
            let Ok(mut g) = shared.lock() else { return };
            let Some(w) = g.watch.clone() else { continue };
            if let Some((dir, client_port)) = classify(&w, ip) {
                if g.packets.len() >= MAX_PACKETS {
                    g.packets.remove(0);
                }
                g.packets.push(Captured {
                    dir,
                    client_port,
                    ip: trim(ip),
                });
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::wire::{packet, IpFields, Seen, Segment};
    use dscp::DsField;
    use std::net::Ipv4Addr;
    use tcp_options::Ipv4Repr;

    #[test]
    fn watch_classifies_both_directions_and_icmp_quotes() {
        let c = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 2));
        let s = IpAddr::V4(Ipv4Addr::new(198, 18, 44, 2));
        let w = Watch {
            client: c,
            ports: (40000, 40010),
            server_port: 5201,
        };
        let seg = |sport, dport, flags| Segment {
            seq: 1,
            flags,
            window: 1000,
            payload: vec![1, 2, 3],
            ..Segment::new(sport, dport)
        };
        let ip = |src, dst, s: &Segment| {
            packet(src, dst, IpFields::new(DsField::new(0), 60, 1), s).unwrap()
        };
        let syn = ip(c, s, &seg(40003, 5201, Flags::SYN));
        assert_eq!(classify(&w, &syn), Some((Dir::In, 40003)));
        let synack = ip(s, c, &seg(5201, 40003, Flags::SYN | Flags::ACK));
        assert_eq!(classify(&w, &synack), Some((Dir::Out, 40003)));
        // Another SYN is kept as "syn" (a translated probe is found by its
        // sequence number); other segments of other connections are not.
        let other = ip(c, s, &seg(50000, 5201, Flags::SYN));
        assert_eq!(classify(&w, &other), Some((Dir::Syn, 0)));
        let data = ip(c, s, &seg(50000, 5201, Flags::ACK));
        assert_eq!(classify(&w, &data), None);
        // trim keeps a TCP packet's first 200 bytes (its headers).
        assert_eq!(trim(&syn), syn);
        let mut big = seg(40003, 5201, Flags::SYN);
        big.payload = vec![7; 1000];
        let big = ip(c, s, &big);
        assert_eq!(trim(&big), &big[..200]);
        assert_eq!(Seen::parse(&trim(&big)).unwrap().options(), Some(&[][..]));
        // A router's time exceeded to the server quoting the SYN-ACK.
        let r = Ipv4Addr::new(198, 18, 43, 1);
        let mut msg = vec![11, 0, 0, 0, 0, 0, 0, 0];
        msg.extend_from_slice(&synack);
        let outer = Ipv4Repr {
            protocol: 1,
            ..Ipv4Repr::tcp(r, Ipv4Addr::new(198, 18, 44, 2))
        };
        let mut icmp = vec![0u8; 20 + msg.len()];
        outer.emit(&mut icmp, msg.len()).unwrap();
        icmp[20..].copy_from_slice(&msg);
        assert_eq!(classify(&w, &icmp), Some((Dir::Icmp, 40003)));
    }
}
