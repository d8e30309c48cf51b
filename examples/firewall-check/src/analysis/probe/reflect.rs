//! `firewall-check reflect`: the far end of `probe --reflector`.
//!
//! It runs on the target's host. A prober connects to its control port
//! (TCP, one JSON object per line each way) and says which connections to
//! watch; the reflector captures them on every interface (`AF_PACKET`, both
//! directions, ICMP errors quoting them too) and, on request, sends crafted
//! copies of the server's own SYN-ACK (other options, DS byte, flags, TTL),
//! so the server-to-client direction is tested as the other one is.
//!
//! The control connection is not open to anyone who reaches the port: the
//! first request must be `hello` with the reflector's key, a shared secret
//! (`reflect --key`, else the environment's `FIREWALL_CHECK_REFLECT_KEY`,
//! else a random one printed at start; the prober's `--reflector-key` or the
//! same variable). Anything else is refused and the connection closed.
//! And what a session can make the reflector send is bounded: crafted
//! SYN-ACKs go only to the peer of the control connection (a key holder
//! cannot aim them at a third host; so the control connection runs over
//! the probes' address family), at most 64 per request and 1024 per
//! session, paced 2 ms (at most 500 packets a second).
//!
//! Requests (`op`) and answers:
//! - `{"op":"hello","version":1,"key":"..."}` -> `{"ok":true,"version":1}`
//! - `{"op":"watch","client":"ADDR","ports":[LO,HI],"server_port":P}`:
//!   capture TCP between the client's ports LO..=HI and local port P, and
//!   ICMP errors quoting it (the buffer is emptied) -> `{"ok":true}`
//! - `{"op":"report","port":N,"ack":A?}` -> `{"ok":true,"packets":[{"dir":"in"|"out"|"icmp"|"synack","ip":HEX}]}`:
//!   what was captured for client port N (IP packets; TCP payload cut);
//!   with `ack`, also the SYN-ACKs to other addresses or ports and the ICMP
//!   errors quoting segments sent there that acknowledge A (a NAT's
//!   translation of the client: every SYN-ACK and every ICMP error quoting
//!   TCP is kept for this)
//! - `{"op":"report_seq","seq":S}` -> the same for SYNs with sequence
//!   number S arriving from any address or port (a NAT's translation);
//!   besides the watched connections every other arriving SYN is kept
//! - `{"op":"send_synack","port":N,"ack":A?,"ident":I,"ttls":[..],"tos":T?,"extra_flags":F?,"options":HEX?}`:
//!   the last SYN-ACK the server sent to client port N, or with `ack` the
//!   last one acknowledging A wherever it went (a NAT's translated address
//!   and port: the copies go there too, and the NAT translates them back),
//!   refused unless its destination is this connection's peer, with the given
//!   DS byte, flags besides SYN+ACK and option block (each kept when
//!   absent) and `"payload":HEX?` (data in the SYN-ACK, as Fast Open
//!   allows, at most 512 bytes; none when absent), sent once per TTL (identification `I | ttl`, the TTL-64 copy
//!   `I`), paced 2 ms -> `{"ok":true,"sent":HEX}` (the TTL-64 copy)
//! - `{"op":"send_data", ...}`: the same fields plus `"offset":N?`; one data
//!   byte (PSH+ACK, no options) from the server's side of that connection,
//!   at sequence number ISN + 1 + N (the server's first byte, or N bytes past
//!   it), with the SYN-ACK's acknowledgment and window
//! - `{"op":"bye"}` ends the session.
//!
//! Errors are `{"ok":false,"error":"..."}`. Limits: at most 4096 packets
//! buffered per session (the oldest dropped), request lines of 64 KiB, 64
//! copies per request, a session idle for 120 s is closed; sessions are
//! served one at a time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use clap::Args;
use serde_json::{json, Value};
use socket2::{Domain, Protocol, Socket, Type};
use tcp_options::Flags;

use super::net::RawSender;
use super::wire::{build_ip, parse_ip_answer, Answer, Seen, Segment};
use crate::{Failure, Outcome};
use capture::link::{decode_link, Network};

/// Command-line arguments of `reflect`.
#[derive(Debug, Clone, Args)]
pub struct ReflectArgs {
    /// The control port's address.
    #[arg(long, default_value = "0.0.0.0:7207")]
    pub listen: String,
    /// Serve one session, then exit.
    #[arg(long)]
    pub once: bool,
    /// The shared secret a prober must present (`probe --reflector-key`);
    /// default: the environment's FIREWALL_CHECK_REFLECT_KEY, else a random
    /// key printed at start.
    #[arg(long)]
    pub key: Option<String>,
}

/// The environment variable both sides read the key from.
pub const KEY_ENV: &str = "FIREWALL_CHECK_REFLECT_KEY";
/// Shortest key accepted, bytes.
pub const MIN_KEY_LEN: usize = 8;
/// Crafted packets one session may make the reflector send at most.
const MAX_SENT_PER_SESSION: usize = 1024;
/// Crafted packets one request may ask for at most.
const MAX_SENT_PER_REQUEST: usize = 64;
/// Data a crafted SYN-ACK may carry at most, bytes.
const MAX_SYNACK_PAYLOAD: usize = 512;

/// The key from the command line, else from [`KEY_ENV`] (`None`: neither).
pub fn key_from(arg: Option<&str>) -> Option<String> {
    arg.map(str::to_string)
        .or_else(|| std::env::var(KEY_ENV).ok())
        .filter(|k| !k.is_empty())
}

/// A random key: 16 bytes from the kernel's random source, as hex.
fn random_key() -> Result<String, String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| format!("cannot read /dev/urandom for a key: {e}"))?;
    Ok(hex(&b))
}

/// Whether two keys are equal, in time that depends on their lengths only.
pub fn same_key(a: &[u8], b: &[u8]) -> bool {
    let mut d = usize::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        d |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    d == 0
}

/// What a session may still make the reflector send.
#[derive(Debug, Clone)]
struct Session {
    /// The peer of the control connection: the only destination.
    peer: IpAddr,
    /// Crafted packets sent so far.
    sent: usize,
}

impl Session {
    /// Takes `n` packets to `dst` from the session's budget, or says why not.
    fn allow(&mut self, dst: IpAddr, n: usize) -> Result<(), String> {
        let peer = match self.peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(self.peer, IpAddr::V4),
            v4 => v4,
        };
        if dst != peer {
            return Err(format!(
                "refused: the packets would go to {dst}, not to this control connection's peer {peer}"
            ));
        }
        if n > MAX_SENT_PER_REQUEST {
            return Err(format!("at most {MAX_SENT_PER_REQUEST} copies per request"));
        }
        if self.sent + n > MAX_SENT_PER_SESSION {
            return Err(format!(
                "refused: at most {MAX_SENT_PER_SESSION} packets per session ({} sent)",
                self.sent
            ));
        }
        self.sent += n;
        Ok(())
    }
}

/// Packets buffered per session at most.
const MAX_PACKETS: usize = 4096;
/// Request line length at most.
const MAX_LINE: u64 = 64 * 1024;

#[derive(Debug, Clone)]
struct Watch {
    client: IpAddr,
    ports: (u16, u16),
    server_port: u16,
}

#[derive(Debug, Clone)]
struct Captured {
    dir: &'static str,
    client_port: u16,
    ip: Vec<u8>,
}

#[derive(Default)]
struct Shared {
    watch: Option<Watch>,
    packets: Vec<Captured>,
}

/// Hex of bytes.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Bytes of hex (`None` on odd length or a non-hex digit).
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What a captured IPv4 or IPv6 packet is to the watch: (dir, client port).
fn classify(w: &Watch, ip: &[u8]) -> Option<(&'static str, u16)> {
    let in_range = |p: u16| p >= w.ports.0 && p <= w.ports.1;
    match parse_ip_answer(ip)? {
        Answer::Tcp(s) => {
            let (sp, dp) = (s.sport()?, s.dport()?);
            let flags = s.flags()?;
            if s.src == w.client && dp == w.server_port && in_range(sp) {
                Some(("in", sp))
            } else if s.dst == w.client && sp == w.server_port && in_range(dp) {
                Some(("out", dp))
            } else if flags.contains(Flags::SYN) && !flags.contains(Flags::ACK) {
                // Any other SYN: a probe that a NAT translated arrives
                // from another address or port (found by its sequence).
                Some(("syn", 0))
            } else if flags.contains(Flags::SYN | Flags::ACK) {
                // Any other SYN-ACK: the server's to a translated address
                // and port (a NAT, which may also have translated the
                // server's port), found by its acknowledgment, the probe's
                // sequence number + 1, which a NAT leaves as it is.
                Some(("synack", 0))
            } else {
                None
            }
        }
        Answer::Icmp(e) => {
            let q = &e.quote;
            let (sp, dp) = (q.sport()?, q.dport()?);
            if q.dst == w.client && sp == w.server_port && in_range(dp) {
                Some(("icmp", dp))
            } else {
                // A quote of a copy sent to a translated address and port:
                // found by the copy's acknowledgment number.
                Some(("icmp", 0))
            }
        }
    }
}

/// Keeps the headers of a TCP packet (its first 200 bytes: IP header,
/// extension headers, TCP header), an ICMP error up to 1500 bytes.
fn trim(ip: &[u8]) -> Vec<u8> {
    let keep = match parse_ip_answer(ip) {
        Some(Answer::Tcp(_)) => 200,
        _ => 1500,
    };
    ip[..ip.len().min(keep)].to_vec()
}

fn capture_socket() -> Result<Socket, String> {
    let eth_p_all = i32::from(0x0003u16.to_be());
    let s =
        Socket::new(Domain::PACKET, Type::RAW, Some(Protocol::from(eth_p_all))).map_err(|e| {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                format!("capturing needs root or CAP_NET_RAW ({e})")
            } else {
                format!("cannot open an AF_PACKET socket: {e}")
            }
        })?;
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(|e| format!("capture timeout: {e}"))?;
    let _ = s.set_recv_buffer_size(4 << 20);
    Ok(s)
}

/// Runs `firewall-check reflect`.
pub fn run(args: &ReflectArgs) -> Result<Outcome, Failure> {
    let listen: SocketAddr = args.listen.parse().map_err(|e| {
        Failure::Usage(format!(
            "--listen {}: {e} (expected ADDRESS:PORT)",
            args.listen
        ))
    })?;
    let key = match key_from(args.key.as_deref()) {
        Some(k) if k.len() < MIN_KEY_LEN => {
            return Err(Failure::Usage(format!(
                "the key must have at least {MIN_KEY_LEN} bytes"
            )))
        }
        Some(k) => k,
        None => {
            let k = random_key()?;
            eprintln!("firewall-check reflect: key {k} (probe --reflector-key, or {KEY_ENV})");
            k
        }
    };
    let cap = capture_socket()?;
    let raw = RawSender::open()?;
    let listener =
        TcpListener::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    eprintln!("firewall-check reflect: listening on {listen}");
    let shared = Arc::new(Mutex::new(Shared::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let shared = Arc::clone(&shared);
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut cap = cap;
            let mut buf = vec![0u8; 65536];
            while !stop.load(Ordering::Relaxed) {
                let n = match cap.read(&mut buf) {
                    Ok(n) => n,
                    Err(_) => continue,
                };
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
    };
    let result = (|| -> Result<(), Failure> {
        for conn in listener.incoming() {
            let conn = conn.map_err(|e| format!("accept: {e}"))?;
            let peer = conn.peer_addr().ok();
            if let Err(e) = session(conn, &shared, &raw, &key) {
                eprintln!("firewall-check reflect: session with {peer:?}: {e}");
            }
            if let Ok(mut g) = shared.lock() {
                *g = Shared::default();
            }
            if args.once {
                break;
            }
        }
        Ok(())
    })();
    stop.store(true, Ordering::Relaxed);
    let _ = reader.join();
    result.map(|()| Outcome::Clean)
}

fn session(
    conn: TcpStream,
    shared: &Mutex<Shared>,
    raw: &RawSender,
    key: &str,
) -> Result<(), String> {
    conn.set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(|e| e.to_string())?;
    let peer = conn.peer_addr().map_err(|e| e.to_string())?.ip();
    let mut state = Session { peer, sent: 0 };
    let mut authorized = false;
    let mut out = conn.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        let n = (&mut reader)
            .take(MAX_LINE)
            .read_line(&mut line)
            .map_err(|e| format!("reading a request: {e}"))?;
        if n == 0 {
            return Ok(());
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(req) if !authorized => {
                let presented = req["key"].as_str().unwrap_or("");
                if req["op"] == "hello" && same_key(presented.as_bytes(), key.as_bytes()) {
                    authorized = true;
                    json!({"ok": true, "version": 1})
                } else {
                    let s = json!({"ok": false, "error": format!("refused: the first request must be hello with the reflector's key (probe --reflector-key, or {KEY_ENV})")}).to_string() + "\n";
                    let _ = out.write_all(s.as_bytes());
                    return Err("refused a control connection without the key".into());
                }
            }
            Ok(req) => {
                if req["op"] == "bye" {
                    return Ok(());
                }
                handle(&req, shared, raw, &mut state)
                    .unwrap_or_else(|e| json!({"ok": false, "error": e}))
            }
            Err(e) if !authorized => {
                let s = json!({"ok": false, "error": format!("not JSON: {e}")}).to_string() + "\n";
                let _ = out.write_all(s.as_bytes());
                return Err("refused a control connection without the key".into());
            }
            Err(e) => json!({"ok": false, "error": format!("not JSON: {e}")}),
        };
        let mut s = reply.to_string();
        s.push('\n');
        out.write_all(s.as_bytes())
            .map_err(|e| format!("writing a reply: {e}"))?;
    }
}

fn num(v: &Value, what: &str) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| format!("{what}: a number is needed"))
}

/// An optional 32-bit number of a request (`None` when absent).
fn optional_u32(req: &Value, what: &str) -> Result<Option<u32>, String> {
    req.get(what)
        .map(|v| u32::try_from(num(v, what)?).map_err(|_| format!("{what}: 32 bits")))
        .transpose()
}

/// Whether a packet kept for no watched port (a SYN-ACK to a translated
/// address, a router's quote of a copy sent there) acknowledges `ack`.
fn acks(c: &Captured, ack: Option<u32>) -> bool {
    let Some(a) = ack else { return false };
    let tcp = match parse_ip_answer(&c.ip) {
        Some(Answer::Tcp(s)) => s,
        Some(Answer::Icmp(e)) => e.quote,
        None => return false,
    };
    tcp.ack() == Some(a) && tcp.flags().is_some_and(|f| f.contains(Flags::ACK))
}

/// The data of a crafted segment: one byte for `send_data`, else the
/// request's `payload` (hex, at most [`MAX_SYNACK_PAYLOAD`] bytes), else none.
fn synack_payload(req: &Value, data: bool) -> Result<Vec<u8>, String> {
    if data {
        return Ok(vec![b'R']);
    }
    match req.get("payload") {
        None => Ok(vec![]),
        Some(v) => {
            let p = v.as_str().and_then(unhex).ok_or("payload: hex needed")?;
            if p.len() > MAX_SYNACK_PAYLOAD {
                return Err(format!(
                    "payload: {} bytes, at most {MAX_SYNACK_PAYLOAD}",
                    p.len()
                ));
            }
            Ok(p)
        }
    }
}

fn handle(
    req: &Value,
    shared: &Mutex<Shared>,
    raw: &RawSender,
    state: &mut Session,
) -> Result<Value, String> {
    let port16 = |v: &Value, what: &str| -> Result<u16, String> {
        u16::try_from(num(v, what)?).map_err(|_| format!("{what}: not a port"))
    };
    match req["op"].as_str().unwrap_or("") {
        "hello" => Ok(json!({"ok": true, "version": 1})),
        "watch" => {
            let client: IpAddr = req["client"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .ok_or("watch: client address needed")?;
            let ports = (
                port16(&req["ports"][0], "ports")?,
                port16(&req["ports"][1], "ports")?,
            );
            let server_port = port16(&req["server_port"], "server_port")?;
            let mut g = shared.lock().map_err(|_| "lock")?;
            g.packets.clear();
            g.watch = Some(Watch {
                client,
                ports,
                server_port,
            });
            Ok(json!({"ok": true}))
        }
        "report_seq" => {
            let seq = u32::try_from(num(&req["seq"], "seq")?).map_err(|_| "seq: 32 bits")?;
            let g = shared.lock().map_err(|_| "lock")?;
            let packets: Vec<Value> = g
                .packets
                .iter()
                .filter(|c| c.dir == "in" || c.dir == "syn")
                .filter(|c| Seen::from_ip(&c.ip).and_then(|s| s.seq()) == Some(seq))
                .map(|c| json!({"dir": c.dir, "ip": hex(&c.ip)}))
                .collect();
            Ok(json!({"ok": true, "packets": packets}))
        }
        "report" => {
            let port = port16(&req["port"], "port")?;
            let ack = optional_u32(req, "ack")?;
            let g = shared.lock().map_err(|_| "lock")?;
            let packets: Vec<Value> = g
                .packets
                .iter()
                .filter(|c| c.client_port == port || (c.client_port == 0 && acks(c, ack)))
                .map(|c| json!({"dir": c.dir, "ip": hex(&c.ip)}))
                .collect();
            Ok(json!({"ok": true, "packets": packets}))
        }
        op @ ("send_synack" | "send_data") => {
            let data = op == "send_data";
            let port = port16(&req["port"], "port")?;
            let ident =
                u16::try_from(num(&req["ident"], "ident")?).map_err(|_| "ident: 16 bits")?;
            let ttls: Vec<u8> = req["ttls"]
                .as_array()
                .ok_or("ttls: a list is needed")?
                .iter()
                .map(|t| {
                    t.as_u64()
                        .and_then(|t| u8::try_from(t).ok())
                        .filter(|t| *t > 0)
                })
                .collect::<Option<_>>()
                .ok_or("ttls: 1..255")?;
            if ttls.len() > MAX_SENT_PER_REQUEST {
                return Err(format!("at most {MAX_SENT_PER_REQUEST} copies per request"));
            }
            let payload = synack_payload(req, data)?;
            // The server's SYN-ACK to the client's port, or, with `ack`,
            // the one acknowledging that number wherever it went (a NAT's
            // translated address and port, a SYN proxy's handshake with the
            // server).
            let ack = optional_u32(req, "ack")?;
            // The capture thread may not have read the SYN-ACK yet (its
            // socket is read while this request is served): wait up to 1 s.
            let find = || -> Option<Seen> {
                let g = shared.lock().ok()?;
                g.packets
                    .iter()
                    .rev()
                    .filter(|c| {
                        (c.dir == "out" && c.client_port == port)
                            || (c.dir == "synack" && ack.is_some())
                    })
                    .filter_map(|c| Seen::from_ip(&c.ip))
                    .find(|s| {
                        s.flags()
                            .is_some_and(|f| f.contains(Flags::SYN | Flags::ACK))
                            && ack.is_none_or(|a| s.ack() == Some(a))
                    })
            };
            let until = std::time::Instant::now() + Duration::from_secs(1);
            let original = loop {
                if let Some(o) = find() {
                    break o;
                }
                if std::time::Instant::now() >= until {
                    return Err(format!(
                        "no SYN-ACK from the server to port {port} captured"
                    ));
                }
                thread::sleep(Duration::from_millis(10));
            };
            let (src, dst) = (original.src, original.dst);
            state.allow(dst, ttls.len())?;
            let mut flags = Flags::SYN | Flags::ACK;
            match req.get("extra_flags") {
                Some(f) => flags |= Flags::from_bits_truncate(num(f, "extra_flags")? as u16),
                None => {
                    flags |=
                        original.flags().unwrap_or(flags) & (Flags::ECE | Flags::CWR | Flags::AE)
                }
            }
            if data {
                flags = Flags::PSH | Flags::ACK;
            }
            let options = match req.get("options").and_then(Value::as_str) {
                Some(h) => unhex(h).ok_or("options: hex needed")?,
                None if data => vec![],
                None => original.options().unwrap_or(&[]).to_vec(),
            };
            // A data byte: the server's first, or `offset` bytes past it.
            let offset = match req.get("offset") {
                Some(o) => u32::try_from(num(o, "offset")?).map_err(|_| "offset: 32 bits")?,
                None => 0,
            };
            let isn = original.seq().unwrap_or(0);
            let tos = match req.get("tos") {
                Some(t) => u8::try_from(num(t, "tos")?).map_err(|_| "tos: 8 bits")?,
                None => original.tos,
            };
            let seg = Segment {
                sport: original.sport().unwrap_or(0),
                dport: original.dport().unwrap_or(port),
                seq: if data {
                    isn.wrapping_add(1).wrapping_add(offset)
                } else {
                    isn
                },
                ack: original.ack().unwrap_or(0),
                flags,
                window: original.window().unwrap_or(0),
                options,
                payload,
            };
            let mut full = Vec::new();
            for ttl in ttls {
                let id = if ttl >= 64 {
                    ident
                } else {
                    ident | u16::from(ttl)
                };
                let p = build_ip(src, dst, tos, ttl, id, &seg)?;
                raw.send(dst, &p)?;
                if ttl >= 64 {
                    full = p;
                }
                thread::sleep(Duration::from_millis(2));
            }
            Ok(json!({"ok": true, "sent": hex(&full)}))
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

/// The prober's side of the control connection.
pub struct Control {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Control {
    /// Connects and says hello with the reflector's `key`.
    pub fn connect(addr: SocketAddr, key: &str) -> Result<Control, String> {
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .map_err(|e| format!("cannot reach the reflector at {addr}: {e}"))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        let writer = s.try_clone().map_err(|e| e.to_string())?;
        let mut c = Control {
            reader: BufReader::new(s),
            writer,
        };
        let r = c.call(&json!({"op": "hello", "version": 1, "key": key}))?;
        if r["version"] != 1 {
            return Err(format!("reflector speaks version {}, not 1", r["version"]));
        }
        Ok(c)
    }

    /// One request, its answer (an error when `ok` is false).
    pub fn call(&mut self, req: &Value) -> Result<Value, String> {
        let mut s = req.to_string();
        s.push('\n');
        self.writer
            .write_all(s.as_bytes())
            .map_err(|e| format!("reflector: {e}"))?;
        let mut line = String::new();
        (&mut self.reader)
            .take(16 << 20)
            .read_line(&mut line)
            .map_err(|e| format!("reflector: {e}"))?;
        let v: Value =
            serde_json::from_str(&line).map_err(|e| format!("reflector answered non-JSON: {e}"))?;
        if v["ok"] == true {
            Ok(v)
        } else {
            Err(format!("reflector: {}", v["error"]))
        }
    }

    /// The packets captured for client port `port`: (dir, IP bytes); with
    /// `ack`, also those sent to a translated address or port (a NAT) that
    /// acknowledge it: the server's SYN-ACK and the routers' quotes of the
    /// reflector's copies.
    pub fn report(
        &mut self,
        port: u16,
        ack: Option<u32>,
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let mut req = json!({"op": "report", "port": port});
        if let Some(a) = ack {
            req["ack"] = json!(a);
        }
        let r = self.call(&req)?;
        Ok(r["packets"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| {
                        Some((p["dir"].as_str()?.to_string(), unhex(p["ip"].as_str()?)?))
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The server's SYN-ACK acknowledging `ack`, as the reflector captured
    /// it: to client port `port`, or to a NAT's translated address and port.
    pub fn server_synack(&mut self, port: u16, ack: u32) -> Result<Option<Seen>, String> {
        Ok(self
            .report(port, Some(ack))?
            .into_iter()
            .filter(|(d, _)| d == "out" || d == "synack")
            .filter_map(|(_, ip)| Seen::from_ip(&ip))
            .find(|s| {
                s.flags()
                    .is_some_and(|f| f.contains(Flags::SYN | Flags::ACK))
                    && s.ack() == Some(ack)
            }))
    }

    /// Says goodbye (the reflector ends the session).
    pub fn bye(mut self) {
        let _ = self.writer.write_all(b"{\"op\":\"bye\"}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::wire::{build_ipv4, PROTO_ICMP};

    #[test]
    fn keys_compare_whole() {
        assert!(same_key(b"lab-key-0123", b"lab-key-0123"));
        assert!(!same_key(b"lab-key-0123", b"lab-key-0124"));
        assert!(!same_key(b"lab-key-0123", b"lab-key-012"));
        assert!(!same_key(b"", b"lab-key-0123"));
        assert!(same_key(b"", b""));
        assert_eq!(random_key().unwrap().len(), 32);
        assert_ne!(random_key().unwrap(), random_key().unwrap());
    }

    #[test]
    fn a_session_sends_only_to_its_peer_and_within_its_budget() {
        use std::net::{Ipv4Addr, Ipv6Addr};
        let peer = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 2));
        let mut s = Session { peer, sent: 0 };
        assert!(s.allow(peer, 4).is_ok());
        let other = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 3));
        let e = s.allow(other, 1).unwrap_err();
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
        let e = s.allow(peer, 1).unwrap_err();
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
    fn synack_payload_is_bounded_hex() {
        assert_eq!(synack_payload(&json!({}), false).unwrap(), Vec::<u8>::new());
        assert_eq!(
            synack_payload(&json!({"payload": "ab"}), true).unwrap(),
            b"R"
        );
        assert_eq!(
            synack_payload(&json!({"payload": "0001ff"}), false).unwrap(),
            [0, 1, 0xff]
        );
        let most = "00".repeat(MAX_SYNACK_PAYLOAD);
        assert_eq!(
            synack_payload(&json!({ "payload": most }), false)
                .unwrap()
                .len(),
            MAX_SYNACK_PAYLOAD
        );
        let e = synack_payload(&json!({ "payload": format!("{most}00") }), false).unwrap_err();
        assert!(e.contains("at most 512"), "{e}");
        for junk in [json!("0g"), json!("abc"), json!(7)] {
            let e = synack_payload(&json!({ "payload": junk }), false).unwrap_err();
            assert!(e.contains("hex needed"), "{e}");
        }
    }

    #[test]
    fn hex_round_trips_and_rejects_junk() {
        let b = [0u8, 1, 0xab, 0xff];
        assert_eq!(hex(&b), "0001abff");
        assert_eq!(unhex("0001abff").unwrap(), b);
        assert_eq!(unhex("0g"), None);
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("é0"), None);
    }

    #[test]
    fn watch_classifies_both_directions_and_icmp_quotes() {
        use std::net::Ipv4Addr;
        let c = Ipv4Addr::new(198, 18, 41, 2);
        let s = Ipv4Addr::new(198, 18, 44, 2);
        let w = Watch {
            client: IpAddr::V4(c),
            ports: (40000, 40010),
            server_port: 5201,
        };
        let seg = |sport, dport| Segment {
            sport,
            dport,
            seq: 1,
            ack: 0,
            flags: Flags::SYN,
            window: 1000,
            options: vec![],
            payload: vec![1, 2, 3],
        };
        let syn = build_ipv4(c, s, 0, 60, 1, &seg(40003, 5201)).unwrap();
        assert_eq!(classify(&w, &syn), Some(("in", 40003)));
        let synack = build_ipv4(s, c, 0, 64, 1, &seg(5201, 40003)).unwrap();
        assert_eq!(classify(&w, &synack), Some(("out", 40003)));
        let other = build_ipv4(c, s, 0, 60, 1, &seg(50000, 5201)).unwrap();
        // Another SYN is kept as "syn" (a translated probe is found by its
        // sequence number); other segments of other connections are not.
        assert_eq!(classify(&w, &other), Some(("syn", 0)));
        let mut data = seg(50000, 5201);
        data.flags = Flags::ACK;
        let data = build_ipv4(c, s, 0, 60, 1, &data).unwrap();
        assert_eq!(classify(&w, &data), None);
        // trim keeps a TCP packet's first 200 bytes (its headers).
        assert_eq!(trim(&syn), syn);
        let mut big = seg(40003, 5201);
        big.payload = vec![7; 1000];
        let big = build_ipv4(c, s, 0, 60, 1, &big).unwrap();
        assert_eq!(trim(&big), &big[..200]);
        assert_eq!(Seen::from_ip(&trim(&big)).unwrap().options(), Some(&[][..]));
        // A router's time exceeded to the server quoting the SYN-ACK.
        let r = Ipv4Addr::new(198, 18, 43, 1);
        let mut icmp = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, PROTO_ICMP, 0, 0];
        icmp.extend_from_slice(&r.octets());
        icmp.extend_from_slice(&s.octets());
        icmp.extend_from_slice(&[11, 0, 0, 0, 0, 0, 0, 0]);
        icmp.extend_from_slice(&synack);
        let total = icmp.len() as u16;
        icmp[2..4].copy_from_slice(&total.to_be_bytes());
        assert_eq!(classify(&w, &icmp), Some(("icmp", 40003)));
    }
}
