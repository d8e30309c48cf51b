//! The prober's side of the control connection, and what it asks the
//! reflector's capture.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use tcp_options::Flags;

use super::super::error::ControlError;
use super::super::prober::ttl_in;
use super::super::wire::{parse_answer, Answer, IcmpError, IcmpKind, Seen};
use super::protocol::{Craft, Dir, Reply, Request, VERSION};

/// How long to wait for the reflector to connect and to answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest reply read.
const MAX_REPLY: u64 = 16 << 20;
/// How long a packet that must be in the reflector's capture is asked for.
pub const CAPTURE_WAIT: Duration = Duration::from_secs(1);

/// A connection to `addr` with the receive buffer
/// [`super::CONTROL_RCVBUF`] (no window scaling to lose on the way).
fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    s.set_recv_buffer_size(super::CONTROL_RCVBUF)?;
    s.connect_timeout(&addr.into(), CONNECT_TIMEOUT)?;
    Ok(s.into())
}

/// The prober's side of the control connection.
pub struct Control {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Control {
    /// Connects and says hello with the reflector's `key`.
    pub fn connect(addr: SocketAddr, key: &str) -> Result<Control, ControlError> {
        let s = connect(addr).map_err(|source| ControlError::Connect { addr, source })?;
        s.set_read_timeout(Some(READ_TIMEOUT))
            .map_err(ControlError::Io)?;
        let writer = s.try_clone().map_err(ControlError::Io)?;
        let mut c = Control {
            reader: BufReader::new(s),
            writer,
        };
        let r = c.call(&Request::Hello {
            version: VERSION,
            key: key.to_string(),
        })?;
        match r.version {
            Some(VERSION) => Ok(c),
            v => Err(ControlError::Version(
                v.map_or_else(|| "null".into(), |v| v.to_string()),
            )),
        }
    }

    /// One request, its answer (an error when `ok` is false).
    pub fn call(&mut self, req: &Request) -> Result<Reply, ControlError> {
        let mut s = serde_json::to_string(req).map_err(ControlError::NotJson)?;
        s.push('\n');
        self.writer
            .write_all(s.as_bytes())
            .map_err(ControlError::Io)?;
        let mut line = String::new();
        (&mut self.reader)
            .take(MAX_REPLY)
            .read_line(&mut line)
            .map_err(ControlError::Io)?;
        let r: Reply = serde_json::from_str(&line).map_err(ControlError::NotJson)?;
        if r.ok {
            Ok(r)
        } else {
            Err(ControlError::Refused {
                message: r.error.unwrap_or_default(),
                code: r.code,
            })
        }
    }

    /// Says what to capture: the prober's ports to the server's port.
    pub fn watch(
        &mut self,
        client: IpAddr,
        ports: (u16, u16),
        server_port: u16,
    ) -> Result<(), ControlError> {
        self.call(&Request::Watch {
            client,
            ports,
            server_port,
        })
        .map(|_| ())
    }

    /// The packets captured for client port `port`; with `ack`, also those
    /// sent to a translated address or port (a NAT) that acknowledge it:
    /// the server's SYN-ACK and the routers' quotes of the reflector's
    /// copies.
    pub fn report(
        &mut self,
        port: u16,
        ack: Option<u32>,
    ) -> Result<Vec<(Dir, Vec<u8>)>, ControlError> {
        let r = self.call(&Request::Report { port, ack })?;
        Ok(r.packets
            .unwrap_or_default()
            .into_iter()
            .map(|p| (p.dir, p.ip.0))
            .collect())
    }

    /// The segments of client port `port` that arrived at the server,
    /// matching `pred`: the first.
    pub fn arrived(
        &mut self,
        port: u16,
        pred: impl Fn(&Seen) -> bool,
    ) -> Result<Option<Seen>, ControlError> {
        Ok(self
            .report(port, None)?
            .into_iter()
            .filter(|(d, _)| *d == Dir::In)
            .filter_map(|(_, ip)| Seen::parse(&ip).ok())
            .find(|s| pred(s)))
    }

    /// The prober's SYN `seq` from `port` as it arrived at the server: by
    /// its port, else (with `by_seq`) by its sequence number from any
    /// address or port (a NAT's translation).
    pub fn arrived_syn(
        &mut self,
        port: u16,
        seq: u32,
        by_seq: bool,
    ) -> Result<Option<Seen>, ControlError> {
        let syn = |s: &Seen| s.seq() == seq && s.has(Flags::SYN) && !s.has(Flags::ACK);
        if let Some(s) = self.arrived(port, syn)? {
            return Ok(Some(s));
        }
        if !by_seq {
            return Ok(None);
        }
        let r = self.call(&Request::ReportSeq { seq })?;
        Ok(r.packets
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| Seen::parse(&p.ip.0).ok())
            .find(|s| syn(s)))
    }

    /// The server's SYN-ACK acknowledging `ack`, as the reflector captured
    /// it: to client port `port`, or to a NAT's translated address and port.
    pub fn server_synack(&mut self, port: u16, ack: u32) -> Result<Option<Seen>, ControlError> {
        Ok(self
            .report(port, Some(ack))?
            .into_iter()
            .filter(|(d, _)| matches!(d, Dir::Out | Dir::Synack))
            .filter_map(|(_, ip)| Seen::parse(&ip).ok())
            .find(|s| s.has(Flags::SYN | Flags::ACK) && s.ack() == Some(ack)))
    }

    /// [`Control::server_synack`] of a SYN-ACK that reached the prober: the
    /// reflector reads its capture while it serves requests, so it is asked
    /// again for up to [`CAPTURE_WAIT`] before it is taken as not seen.
    pub fn awaited_synack(&mut self, port: u16, ack: u32) -> Result<Option<Seen>, ControlError> {
        let until = std::time::Instant::now() + CAPTURE_WAIT;
        loop {
            let found = self.server_synack(port, ack)?;
            if found.is_some() || std::time::Instant::now() >= until {
                return Ok(found);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The routers' quotes of the reflector's copies `ident` (they reach
    /// the reflector, also from beyond a NAT: by the copies' `ack`), one
    /// per TTL, by TTL. `data`: only quotes of data segments.
    pub fn quotes(
        &mut self,
        port: u16,
        ack: u32,
        ident: u16,
        data: bool,
    ) -> Result<Vec<(u8, IcmpError)>, ControlError> {
        let mut quotes: Vec<(u8, IcmpError)> = self
            .report(port, Some(ack))?
            .into_iter()
            .filter(|(d, _)| *d == Dir::Icmp)
            .filter_map(|(_, ip)| match parse_answer(&ip) {
                Some(Answer::Icmp(e)) if e.kind == IcmpKind::TimeExceeded => Some(e),
                _ => None,
            })
            .filter_map(|e| {
                let ttl = ttl_in(e.quote.ident);
                let data_ok = !data || e.quote.payload().is_none_or(|d| !d.is_empty());
                (e.quote.ident & 0xff00 == ident && ttl > 0 && data_ok).then_some((ttl, e))
            })
            .collect();
        quotes.sort_by_key(|(t, _)| *t);
        quotes.dedup_by_key(|(t, _)| *t);
        Ok(quotes)
    }

    /// `send_synack`: the full copy as the reflector sent it (`None`
    /// when the request asked for no full copy).
    pub fn send_synack(&mut self, craft: Craft) -> Result<Option<Seen>, ControlError> {
        Ok(self
            .call(&Request::SendSynack(craft))?
            .sent
            .and_then(|h| Seen::parse(&h.0).ok()))
    }

    /// `send_data`: the full copy as the reflector sent it.
    pub fn send_data(&mut self, craft: Craft) -> Result<Seen, ControlError> {
        let port = craft.port;
        self.call(&Request::SendData(craft))?
            .sent
            .and_then(|h| Seen::parse(&h.0).ok())
            .ok_or(ControlError::NothingSent {
                what: "data segment",
                port,
            })
    }

    /// Says goodbye (the reflector ends the session).
    pub fn bye(mut self) {
        if let Ok(s) = serde_json::to_string(&Request::Bye) {
            let _ = self.writer.write_all((s + "\n").as_bytes());
        }
    }
}
