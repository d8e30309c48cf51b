//! The reflector's side: the control port, its sessions and what each
//! request does.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use dscp::DsField;
use tcp_options::Flags;

use super::super::error::{NetError, RequestError};
use super::super::net::RawSender;
use super::super::wire::{packet, parse_answer, Answer, IpFields, Seen, Segment};
use super::capture::{self, Captured, Shared, Watch};
use super::protocol::{Craft, Dir, Hex, Packet, Reply, Request, VERSION};
use super::{
    same_key, CONTROL_RCVBUF, KEY_ENV, MAX_SENT_PER_REQUEST, MAX_SENT_PER_SESSION,
    MAX_SYNACK_PAYLOAD,
};

/// Request line length at most.
const MAX_LINE: u64 = 64 * 1024;
/// A session idle this long is closed.
const IDLE: Duration = Duration::from_secs(120);
/// Pause between two crafted packets (at most 500 a second).
const PACE: Duration = Duration::from_millis(2);
/// How long a `send_*` waits for the server's SYN-ACK to be captured.
const SYNACK_WAIT: Duration = Duration::from_secs(1);

/// What a session may still make the reflector send.
#[derive(Debug, Clone)]
pub struct Session {
    /// The peer of the control connection: the only destination.
    pub peer: IpAddr,
    /// Crafted packets sent so far.
    pub sent: usize,
}

impl Session {
    /// Takes `n` packets to `dst` from the session's budget, or says why not.
    pub fn allow(&mut self, dst: IpAddr, n: usize) -> Result<(), RequestError> {
        let peer = match self.peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(self.peer, IpAddr::V4),
            v4 => v4,
        };
        if dst != peer {
            return Err(RequestError::NotPeer { dst, peer });
        }
        if n > MAX_SENT_PER_REQUEST {
            return Err(RequestError::TooManyCopies(MAX_SENT_PER_REQUEST));
        }
        if self.sent + n > MAX_SENT_PER_SESSION {
            return Err(RequestError::SessionBudget {
                max: MAX_SENT_PER_SESSION,
                sent: self.sent,
            });
        }
        self.sent += n;
        Ok(())
    }
}

/// Serves the control port until an error (or, with `once`, one session).
pub fn serve(listen: SocketAddr, key: &str, once: bool) -> Result<(), NetError> {
    let cap = capture::socket()?;
    let raw = RawSender::open()?;
    let listener = listener(listen).map_err(|source| NetError::Listen {
        addr: listen,
        source,
    })?;
    eprintln!("firewall-check reflect: listening on {listen}");
    let shared = Arc::new(Mutex::new(Shared::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = capture::spawn(cap, Arc::clone(&shared), Arc::clone(&stop));
    let result = (|| {
        for conn in listener.incoming() {
            let conn = conn.map_err(NetError::Accept)?;
            let peer = conn.peer_addr().ok();
            if let Err(e) = session(conn, &shared, &raw, key) {
                eprintln!("firewall-check reflect: session with {peer:?}: {e}");
            }
            if let Ok(mut g) = shared.lock() {
                *g = Shared::default();
            }
            if once {
                break;
            }
        }
        Ok(())
    })();
    stop.store(true, Ordering::Relaxed);
    let _ = reader.join();
    result
}

/// The control port, its receive buffer [`CONTROL_RCVBUF`] (inherited by
/// each connection: no window scaling to lose on the way).
fn listener(addr: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    s.set_recv_buffer_size(CONTROL_RCVBUF)?;
    s.bind(&addr.into())?;
    s.listen(16)?;
    Ok(s.into())
}

/// Why a session ended early.
#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("refused a control connection without the key")]
    NoKey,
}

fn send_line(out: &mut TcpStream, reply: &Reply) -> std::io::Result<()> {
    let mut s = serde_json::to_string(reply).map_err(std::io::Error::other)?;
    s.push('\n');
    out.write_all(s.as_bytes())
}

/// One session: `hello` with the key first, then requests until `bye`.
fn session(
    conn: TcpStream,
    shared: &Mutex<Shared>,
    raw: &RawSender,
    key: &str,
) -> Result<(), SessionError> {
    conn.set_read_timeout(Some(IDLE))?;
    let peer = conn.peer_addr()?.ip();
    let mut state = Session { peer, sent: 0 };
    let mut authorized = false;
    let mut out = conn.try_clone()?;
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if (&mut reader).take(MAX_LINE).read_line(&mut line)? == 0 {
            return Ok(());
        }
        let req = serde_json::from_str::<Request>(&line);
        let reply = match req {
            Ok(Request::Hello { key: k, .. })
                if !authorized && same_key(k.as_bytes(), key.as_bytes()) =>
            {
                authorized = true;
                Reply {
                    version: Some(VERSION),
                    ..Reply::ok()
                }
            }
            _ if !authorized => {
                let why = match &req {
                    Err(e) => format!("not JSON: {e}"),
                    Ok(_) => format!("refused: the first request must be hello with the reflector's key (probe --reflector-key, or {KEY_ENV})"),
                };
                let _ = send_line(&mut out, &Reply::refused(why, None));
                return Err(SessionError::NoKey);
            }
            Ok(Request::Bye) => return Ok(()),
            Ok(r) => handle(&r, shared, raw, &mut state)
                .unwrap_or_else(|e| Reply::refused(e.to_string(), Some(e.refusal()))),
            Err(e) => Reply::refused(format!("not JSON: {e}"), None),
        };
        send_line(&mut out, &reply)?;
    }
}

/// Serves one request.
fn handle(
    req: &Request,
    shared: &Mutex<Shared>,
    raw: &RawSender,
    state: &mut Session,
) -> Result<Reply, RequestError> {
    let lock = || shared.lock().map_err(|_| RequestError::Lock);
    match req {
        Request::Hello { .. } => Ok(Reply {
            version: Some(VERSION),
            ..Reply::ok()
        }),
        Request::Watch {
            client,
            ports,
            server_port,
        } => {
            let mut g = lock()?;
            g.packets.clear();
            g.watch = Some(Watch {
                client: *client,
                ports: *ports,
                server_port: *server_port,
            });
            Ok(Reply::ok())
        }
        Request::ReportSeq { seq } => {
            let g = lock()?;
            let hits = g
                .packets
                .iter()
                .filter(|c| matches!(c.dir, Dir::In | Dir::Syn))
                .filter(|c| Seen::parse(&c.ip).is_ok_and(|s| s.seq() == *seq));
            Ok(packets(hits))
        }
        Request::Report { port, ack } => {
            let g = lock()?;
            let hits = g
                .packets
                .iter()
                .filter(|c| c.client_port == *port || (c.client_port == 0 && acks(c, *ack)));
            Ok(packets(hits))
        }
        Request::SendSynack(c) => craft(c, false, shared, raw, state),
        Request::SendData(c) => craft(c, true, shared, raw, state),
        Request::Bye => Ok(Reply::ok()),
    }
}

/// A reply listing `hits`.
fn packets<'a>(hits: impl Iterator<Item = &'a Captured>) -> Reply {
    Reply {
        packets: Some(
            hits.map(|c| Packet {
                dir: c.dir,
                ip: Hex(c.ip.clone()),
            })
            .collect(),
        ),
        ..Reply::ok()
    }
}

/// Whether a packet kept for no watched port (a SYN-ACK to a translated
/// address, a router's quote of a copy sent there) acknowledges `ack`.
fn acks(c: &Captured, ack: Option<u32>) -> bool {
    let Some(a) = ack else { return false };
    let tcp = match parse_answer(&c.ip) {
        Some(Answer::Tcp(s)) => s,
        Some(Answer::Icmp(e)) => e.quote,
        None => return false,
    };
    tcp.ack() == Some(a) && tcp.has(Flags::ACK)
}

/// The data of a crafted segment: one byte for `send_data`, else the
/// request's payload (at most [`MAX_SYNACK_PAYLOAD`] bytes), else none.
pub fn synack_payload(c: &Craft, data: bool) -> Result<Vec<u8>, RequestError> {
    if data {
        return Ok(vec![b'R']);
    }
    let p = c.payload.clone().map(|h| h.0).unwrap_or_default();
    if p.len() > MAX_SYNACK_PAYLOAD {
        return Err(RequestError::PayloadTooLong {
            len: p.len(),
            max: MAX_SYNACK_PAYLOAD,
        });
    }
    Ok(p)
}

/// The server's SYN-ACK to client port `port`, or with `ack` the last one
/// acknowledging that number wherever it went (a NAT's translated address
/// and port, a SYN proxy's handshake with the server). The capture thread
/// may not have read it yet: waits up to a second.
fn server_synack(
    shared: &Mutex<Shared>,
    port: u16,
    ack: Option<u32>,
) -> Result<Seen, RequestError> {
    let find = || -> Option<Seen> {
        let g = shared.lock().ok()?;
        g.packets
            .iter()
            .rev()
            .filter(|c| {
                (c.dir == Dir::Out && c.client_port == port)
                    || (c.dir == Dir::Synack && ack.is_some())
            })
            .filter_map(|c| Seen::parse(&c.ip).ok())
            .find(|s| s.has(Flags::SYN | Flags::ACK) && ack.is_none_or(|a| s.ack() == Some(a)))
    };
    let until = Instant::now() + SYNACK_WAIT;
    loop {
        if let Some(o) = find() {
            return Ok(o);
        }
        if Instant::now() >= until {
            return Err(RequestError::NoSynAck { port });
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// `send_synack` / `send_data`: copies of the server's SYN-ACK (or a data
/// byte from its side), changed as asked, to the SYN-ACK's destination
/// only if it is the session's peer, within the budget.
fn craft(
    c: &Craft,
    data: bool,
    shared: &Mutex<Shared>,
    raw: &RawSender,
    state: &mut Session,
) -> Result<Reply, RequestError> {
    if c.ttls.contains(&0) {
        return Err(RequestError::Field {
            field: "ttls",
            what: "1..255",
        });
    }
    if c.ttls.len() > MAX_SENT_PER_REQUEST {
        return Err(RequestError::TooManyCopies(MAX_SENT_PER_REQUEST));
    }
    let payload = synack_payload(c, data)?;
    let original = server_synack(shared, c.port, c.ack)?;
    let (src, dst) = (original.src, original.dst);
    state.allow(dst, c.ttls.len())?;
    let mut flags = Flags::SYN | Flags::ACK;
    match c.extra_flags {
        Some(f) => flags |= Flags::from_bits_truncate(f),
        None => flags |= original.flags().unwrap_or(flags) & (Flags::ECE | Flags::CWR | Flags::AE),
    }
    if data {
        flags = Flags::PSH | Flags::ACK;
    }
    let options = match (&c.options, data) {
        (Some(h), _) => h.0.clone(),
        (None, true) => Vec::new(),
        (None, false) => original.options().unwrap_or(&[]).to_vec(),
    };
    // A data byte: the server's first, or `offset` bytes past it.
    let isn = original.seq();
    let seg = Segment {
        seq: if data {
            isn.wrapping_add(1).wrapping_add(c.offset.unwrap_or(0))
        } else {
            isn
        },
        ack: original.ack().unwrap_or(0),
        flags,
        window: original.window().unwrap_or(0),
        options,
        payload,
        ..Segment::new(original.sport(), original.dport())
    };
    let ds = DsField::new(c.tos.unwrap_or(original.ds.value()));
    let mut full = Vec::new();
    for &ttl in &c.ttls {
        let id = if ttl >= 64 {
            c.ident
        } else {
            c.ident | u16::from(ttl)
        };
        let p = packet(src, dst, IpFields::new(ds, ttl, id), &seg)?;
        raw.send(dst, &p)?;
        if ttl >= 64 {
            full = p;
        }
        thread::sleep(PACE);
    }
    Ok(Reply {
        sent: Some(Hex(full)),
        ..Reply::ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn a_session_sends_only_to_its_peer_and_within_its_budget() {
        let peer = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 2));
        let mut s = Session { peer, sent: 0 };
        assert!(s.allow(peer, 4).is_ok());
        let other = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 3));
        let e = s.allow(other, 1).unwrap_err().to_string();
        assert!(e.contains("not to this control connection's peer"), "{e}");
        assert!(s.allow(peer, MAX_SENT_PER_REQUEST + 1).is_err());
        // 4 + 15 * 64 + 60 = 1024 packets, then no more.
        for _ in 0..15 {
            s.allow(peer, 64).unwrap();
        }
        assert_eq!(s.sent, 964);
        assert!(s.allow(peer, 61).is_err());
        assert!(s.allow(peer, 60).is_ok());
        assert_eq!(s.sent, MAX_SENT_PER_SESSION);
        let e = s.allow(peer, 1).unwrap_err().to_string();
        assert!(e.contains("per session"), "{e}");
        // A peer on an IPv4 listener bound to :: is written IPv4-mapped.
        let mapped = IpAddr::V6(Ipv4Addr::new(198, 18, 41, 2).to_ipv6_mapped());
        let mut s = Session {
            peer: mapped,
            sent: 0,
        };
        assert!(s.allow(peer, 1).is_ok());
        let v6 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0x41, 0, 0, 0, 0, 2));
        assert!(s.allow(v6, 1).is_err());
    }

    #[test]
    fn synack_payload_is_bounded() {
        let with = |p: Option<Vec<u8>>| Craft {
            payload: p.map(Hex),
            ..Craft::default()
        };
        assert_eq!(
            synack_payload(&with(None), false).unwrap(),
            Vec::<u8>::new()
        );
        assert_eq!(synack_payload(&with(Some(vec![0xab])), true).unwrap(), b"R");
        assert_eq!(
            synack_payload(&with(Some(vec![0, 1, 0xff])), false).unwrap(),
            [0, 1, 0xff]
        );
        let most = vec![0u8; MAX_SYNACK_PAYLOAD];
        assert_eq!(
            synack_payload(&with(Some(most.clone())), false)
                .unwrap()
                .len(),
            MAX_SYNACK_PAYLOAD
        );
        let mut over = most;
        over.push(0);
        let e = synack_payload(&with(Some(over)), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 512"), "{e}");
    }
}
