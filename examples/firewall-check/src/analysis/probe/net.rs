//! The sockets of the prober and the reflector, and the netfilter rule that
//! keeps the kernel from resetting the probes' connections.
//!
//! - Sending: one `SOCK_RAW`/`IPPROTO_RAW` socket (the IP header is ours:
//!   TTL, DS byte, identification), marked with `SO_MARK` so that the RST
//!   rule lets the prober's own RSTs through.
//! - Receiving: raw `IPPROTO_TCP` and `IPPROTO_ICMP` sockets (the kernel hands
//!   them a copy of every TCP segment and ICMP message for this host), each
//!   read by a thread into one channel.
//! - RST suppression: the target's SYN-ACKs reach ports no socket owns, so
//!   the kernel would answer each with a RST, which closes the middleboxes'
//!   state and the server's. For the run only, an nftables table of its own
//!   (`inet firewall_check_probe_<pid>`) drops outgoing RSTs from the
//!   probes' source ports to the target that do not carry the prober's
//!   mark. The table is deleted on exit, on an error and on Ctrl-C.

use std::io::Read;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use super::error::NetError;

/// The `SO_MARK` of the prober's own packets (the RST rule lets them pass).
pub const PROBE_MARK: u32 = 0x7463_7066;

/// The local address the kernel would use towards `target` (a connected UDP
/// socket; nothing is sent).
pub fn source_for(target: SocketAddr) -> Result<IpAddr, NetError> {
    let any: IpAddr = if target.is_ipv4() {
        std::net::Ipv4Addr::UNSPECIFIED.into()
    } else {
        std::net::Ipv6Addr::UNSPECIFIED.into()
    };
    let s = UdpSocket::bind(SocketAddr::new(any, 0)).map_err(NetError::Udp)?;
    s.connect(target)
        .map_err(|source| NetError::NoRoute { target, source })?;
    s.local_addr()
        .map(|a| a.ip())
        .map_err(|source| NetError::NoSource { target, source })
}

fn raw_error(e: std::io::Error) -> NetError {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        NetError::NoPermission(e)
    } else {
        NetError::RawSocket(e)
    }
}

fn option(option: &'static str) -> impl Fn(std::io::Error) -> NetError {
    move |source| NetError::SocketOption { option, source }
}

/// A packet read from a raw socket, with the time it was read.
#[derive(Debug, Clone)]
pub struct Received {
    /// When it was read.
    pub at: Instant,
    /// The IP packet, header included.
    pub bytes: Vec<u8>,
}

/// Raw sockets: one to send (the IP header is ours), readers feeding one
/// channel. IPv4 reads raw TCP and ICMP sockets; IPv6 raw sockets do not
/// hand over the IPv6 header (traffic class, hop limit, flow label), so
/// IPv6 reads an `AF_PACKET` socket for IPv6 frames (Ethernet links).
pub struct RawIp {
    send: Socket,
    rx: Receiver<Received>,
    stop: Arc<AtomicBool>,
    readers: Vec<thread::JoinHandle<()>>,
}

impl RawIp {
    /// Opens the IPv6 sockets; fails with a clear message without CAP_NET_RAW.
    pub fn open_v6() -> Result<RawIp, NetError> {
        let send =
            Socket::new(Domain::IPV6, Type::RAW, Some(Protocol::from(255))).map_err(raw_error)?;
        send.set_header_included_v6(true)
            .map_err(option("IPV6_HDRINCL"))?;
        send.set_mark(PROBE_MARK).map_err(NetError::Mark)?;
        let eth_p_ipv6 = i32::from(0x86ddu16.to_be());
        let cap = Socket::new(Domain::PACKET, Type::RAW, Some(Protocol::from(eth_p_ipv6)))
            .map_err(raw_error)?;
        cap.set_read_timeout(Some(Duration::from_millis(50)))
            .map_err(option("packet socket timeout"))?;
        let _ = cap.set_recv_buffer_size(4 << 20);
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let reader = {
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut cap = cap;
                let mut buf = vec![0u8; 65536];
                while !stop.load(Ordering::Relaxed) {
                    let n = match cap.read(&mut buf) {
                        Ok(n) => n,
                        Err(e) if is_timeout(&e) => continue,
                        Err(_) => return,
                    };
                    let at = Instant::now();
                    let Ok(l) = capture::link::decode_link(1, &buf[..n]) else {
                        continue;
                    };
                    if l.network != capture::link::Network::Ipv6 {
                        continue;
                    }
                    let r = Received {
                        at,
                        bytes: buf[l.offset..n].to_vec(),
                    };
                    if tx.send(r).is_err() {
                        return;
                    }
                }
            })
        };
        Ok(RawIp {
            send,
            rx,
            stop,
            readers: vec![reader],
        })
    }

    /// Opens the IPv4 sockets; fails with a clear message without CAP_NET_RAW.
    pub fn open() -> Result<RawIp, NetError> {
        let send =
            Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::from(255))).map_err(raw_error)?;
        send.set_mark(PROBE_MARK).map_err(NetError::Mark)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let mut readers = Vec::new();
        for proto in [Protocol::TCP, Protocol::ICMPV4] {
            let s = Socket::new(Domain::IPV4, Type::RAW, Some(proto)).map_err(raw_error)?;
            s.set_read_timeout(Some(Duration::from_millis(50)))
                .map_err(option("raw socket timeout"))?;
            let _ = s.set_recv_buffer_size(1 << 20);
            let tx = tx.clone();
            let stop = Arc::clone(&stop);
            readers.push(thread::spawn(move || {
                let mut s = s;
                let mut buf = vec![0u8; 65536];
                while !stop.load(Ordering::Relaxed) {
                    match s.read(&mut buf) {
                        Ok(n) => {
                            let r = Received {
                                at: Instant::now(),
                                bytes: buf[..n].to_vec(),
                            };
                            if tx.send(r).is_err() {
                                return;
                            }
                        }
                        Err(e) if is_timeout(&e) => {}
                        Err(_) => return,
                    }
                }
            }));
        }
        Ok(RawIp {
            send,
            rx,
            stop,
            readers,
        })
    }

    /// Sockets that neither probe nor read (an unprivileged UDP socket,
    /// no readers): for unit tests of the evaluation, which sends nothing.
    #[cfg(test)]
    pub fn inert() -> RawIp {
        let send = Socket::new(Domain::IPV4, Type::DGRAM, None).expect("a UDP socket");
        let (_tx, rx) = mpsc::channel();
        RawIp {
            send,
            rx,
            stop: Arc::new(AtomicBool::new(false)),
            readers: Vec::new(),
        }
    }

    /// Sends one IP packet (its own header) to `dst`.
    pub fn send(&self, dst: IpAddr, packet: &[u8]) -> Result<(), NetError> {
        let addr = SockAddr::from(SocketAddr::new(dst, 0));
        self.send
            .send_to(packet, &addr)
            .map(|_| ())
            .map_err(|source| NetError::Send { dst, source })
    }

    /// The next packet read before `deadline`, if any.
    pub fn recv_until(&self, deadline: Instant) -> Option<Received> {
        let now = Instant::now();
        if now >= deadline {
            return self.rx.try_recv().ok();
        }
        self.rx.recv_timeout(deadline - now).ok()
    }
}

impl Drop for RawIp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
    }
}

/// Raw sockets that only send (the reflector's): IPv4 and, when the host
/// has it, IPv6, both marked.
pub struct RawSender {
    v4: Socket,
    v6: Option<Socket>,
}

impl RawSender {
    /// Opens the sockets; fails with a clear message without CAP_NET_RAW.
    pub fn open() -> Result<RawSender, NetError> {
        let v4 =
            Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::from(255))).map_err(raw_error)?;
        v4.set_mark(PROBE_MARK).map_err(NetError::Mark)?;
        let v6 = Socket::new(Domain::IPV6, Type::RAW, Some(Protocol::from(255)))
            .ok()
            .filter(|s| s.set_header_included_v6(true).is_ok() && s.set_mark(PROBE_MARK).is_ok());
        Ok(RawSender { v4, v6 })
    }

    /// Sends one IP packet (its own header) to `dst`.
    pub fn send(&self, dst: IpAddr, packet: &[u8]) -> Result<(), NetError> {
        let sock = match dst {
            IpAddr::V4(_) => &self.v4,
            IpAddr::V6(_) => self.v6.as_ref().ok_or(NetError::NoIpv6)?,
        };
        let addr = SockAddr::from(SocketAddr::new(dst, 0));
        sock.send_to(packet, &addr)
            .map(|_| ())
            .map_err(|source| NetError::Send { dst, source })
    }
}

/// The run's nftables table, deleted when dropped (and by the Ctrl-C
/// handler installed with [`RstGuard::install_ctrlc`]).
pub struct RstGuard {
    table: String,
}

/// Tables to delete on Ctrl-C (one per guard alive).
static CTRLC_TABLES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn nft(script: &str) -> Result<(), NetError> {
    use std::io::Write;
    let mut child = Command::new("nft")
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(NetError::NftSpawn)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(script.as_bytes())
            .map_err(NetError::NftIo)?;
    }
    let out = child.wait_with_output().map_err(NetError::NftIo)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(NetError::Nft(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }
}

impl RstGuard {
    /// Drops the kernel's RSTs from `ports` (inclusive range) on this host
    /// to `peer`, except packets marked [`PROBE_MARK`].
    pub fn new(peer: IpAddr, ports: (u16, u16)) -> Result<RstGuard, NetError> {
        let table = format!("firewall_check_probe_{}", std::process::id());
        let fam = if peer.is_ipv4() { "ip" } else { "ip6" };
        let script = format!(
            "table inet {table} {{\n chain out {{\n  type filter hook output priority -300; policy accept;\n  meta mark != {PROBE_MARK:#x} {fam} daddr {peer} tcp sport {}-{} tcp flags & rst == rst drop\n }}\n}}\n",
            ports.0, ports.1
        );
        // Created and registered under the lock the Ctrl-C handler takes:
        // an interrupt while nft runs waits for the table to exist, then
        // deletes it.
        let mut tables = CTRLC_TABLES.lock().unwrap_or_else(|e| e.into_inner());
        nft(&script)?;
        tables.push(table.clone());
        Ok(RstGuard { table })
    }

    /// The table's name (for the report).
    pub fn table(&self) -> &str {
        &self.table
    }

    /// On Ctrl-C (SIGINT/SIGTERM), delete every live table and exit with
    /// status 130. Call once per process.
    pub fn install_ctrlc() -> Result<(), NetError> {
        ctrlc::set_handler(|| {
            if let Ok(tables) = CTRLC_TABLES.lock() {
                for t in tables.iter() {
                    let _ = nft(&format!("delete table inet {t}\n"));
                }
            }
            eprintln!("firewall-check: interrupted; RST suppression removed");
            std::process::exit(130);
        })
        .map_err(NetError::CtrlC)
    }
}

impl Drop for RstGuard {
    fn drop(&mut self) {
        let _ = nft(&format!("delete table inet {}\n", self.table));
        if let Ok(mut t) = CTRLC_TABLES.lock() {
            t.retain(|x| x != &self.table);
        }
    }
}

/// A socket read that ended without a packet (its timeout, a signal): the
/// reader threads read again.
fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}
