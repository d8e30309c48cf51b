//! `qbss-router`: the QBSS test bench's router as a real userspace forwarder between two
//! TUN devices, built from the same crates and scenario files as `qbss-model`.
//!
//! ```text
//!  sender ns          qbss-router (this process)                          receiver ns
//!  [tun LEFT] ──> VC policer ─> dscp classifier ─> wrr queues ─> pacer ──> [tun RIGHT]
//!      ^                                                                       │
//!      └──────────────── reverse path: held for the stream's RTT ──────────────┘
//! ```
//!
//! * **Forward path** (left to right): each IP packet read from the left device is
//!   checked by the VC policer (a policed VC: the token bucket of [`super::vc`], counted
//!   in wire bytes), classified by its DS field with the scenario's `dscp` table,
//!   offered to the scenario's `wrr` scheduler (weights, saturation mode and
//!   threshold, per-queue limits, byte or packet fairness), and sent on the right
//!   device when the paced output server has carried it: each packet occupies the
//!   server for its size on the link's wire (`bdp`'s framing: Ethernet's 38 bytes,
//!   or AAL5 LLC/SNAP padded to whole 53-byte ATM cells, the cell tax) at the link's
//!   payload rate, or at the VC's rate when the VC is shaped. A packet the policer or
//!   the scheduler refuses is counted (per stream and per queue), never lost silently.
//! * **Reverse path** (right to left: the receiver's ACKs): not scheduled, held for
//!   the base RTT of the stream it belongs to and then written to the left device, so
//!   the path has the scenario's round trip without a delay hop of its own.
//! * **Streams** are recognised by port: stream `k` of the scenario (from 0) is the
//!   traffic whose destination port is `port_base + k` (the reverse path: source
//!   port). Other packets, and packets without ports (another protocol, a fragment:
//!   [`ip`] says which), are forwarded through the same classifier and scheduler and
//!   counted only per queue. Packets are read through the crates' representations
//!   ([`ip`]), never by hand.
//!
//! **Why TUN and not `AF_PACKET`.** A TUN device hands the process whole IP packets
//! that the kernel has already segmented and checksummed: a device without offload
//! features gets no GSO super-packets and no partial checksums, so a real TCP sender's
//! packets arrive as they would on a wire of the scenario's MTU. `AF_PACKET` on a veth
//! pair would see 64 KB GSO frames and unfinished checksums unless offloads were
//! switched off with `ethtool` on every device, and it needs ARP or static neighbours
//! on both sides. With TUN, the lab creates both devices here (`--left`, `--right`),
//! moves each into its namespace (a TUN device keeps its file descriptor when it
//! changes namespace), and routes the far side's address through it: no bridge, no
//! forwarding sysctl, no neighbour tables.
//!
//! The clock is the monotonic clock; intervals are counted from `--epoch` (a Unix
//! time shared with the lab's senders) so that second `i` here is second `i` of the
//! senders' schedule and of `qbss-model`'s report.

pub mod cli;
pub mod ip;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::link::wire_bytes;
use super::report::{format_rate, to_json, JsonReport};
use super::scenario::{Scenario, StreamKind};
use super::sched::{MAX_QUEUES, QUEUE_CAPACITY};
use super::sim::{RunResult, StreamTotals};
use super::stats::{Backlog, Intervals};
use super::time::{Nanos, Pacer, NS_PER_S};
use super::vc::Policer;

/// Largest packet the router reads (the TUN devices' MTU is at most this).
pub const MAX_PACKET: usize = 65_535;

/// A queued packet: its buffer in the router's pool, its length and its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    buf: u32,
    len: u32,
    stream: Option<u16>,
}

impl wrr::PacketLen for Slot {
    #[inline]
    fn packet_len(&self) -> usize {
        self.len as usize
    }
}

type Port = wrr::Scheduler<Slot, MAX_QUEUES, QUEUE_CAPACITY>;

/// How a run is set up.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The scenario (already scaled).
    pub scenario: Scenario,
    /// The factor the scenario's rates were divided by (1 when not scaled).
    pub scale: f64,
    /// Name of the device the senders are behind.
    pub left: String,
    /// Name of the device the receivers are behind.
    pub right: String,
    /// Stream `k` is the traffic to port `port_base + k`.
    pub port_base: u16,
    /// Unix time of second 0; `None`: when the devices are open.
    pub epoch_unix_s: Option<f64>,
    /// Seconds to keep forwarding after the scenario's end (in-flight ACKs).
    pub grace_s: f64,
}

/// What the router counted: per-second figures as `qbss-model` reports them, and
/// per-queue counters.
#[derive(Clone, Debug, Serialize)]
pub struct RouterStats {
    /// The report in `qbss-model --json`'s shape (bits, packets, drops per stream and
    /// second, as forwarded by the router).
    #[serde(flatten)]
    pub report: JsonReport,
    /// Per-queue counters.
    pub queues: Vec<QueueReport>,
    /// Packets that matched no stream, forwarded.
    pub other_packets: u64,
    /// Packets a device refused to take (down for a moment, or its queue full):
    /// counted, as every packet the router does not deliver is.
    pub device_write_drops: u64,
}

/// One queue's counters over the run.
#[derive(Clone, Debug, Serialize)]
pub struct QueueReport {
    /// Queue name.
    pub name: String,
    /// Packets sent on the right device.
    pub dequeued_packets: u64,
    /// Packets the scheduler refused (tail drop, weight 0).
    pub refused_packets: u64,
    /// Packets the VC policer dropped before classification, by the queue they would
    /// have gone to.
    pub policed_packets: u64,
    /// Largest backlog seen.
    pub peak_backlog_packets: u64,
}

/// Why the router stopped.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    /// A TUN device could not be opened.
    #[error("opening TUN device {name}: {source}")]
    Open {
        /// The device.
        name: String,
        /// The cause.
        source: tun::Error,
    },
    /// The scheduler refused the scenario's profile.
    #[error("scheduler configuration: {0}")]
    Config(#[from] wrr::ConfigError),
    /// Reading or writing a device failed.
    #[error("{what}: {source}")]
    Io {
        /// Which operation.
        what: String,
        /// The cause.
        source: io::Error,
    },
}

#[derive(Clone, Copy)]
enum Side {
    Left,
    Right,
}

fn open(name: &str) -> Result<Arc<tun::Device>, RouterError> {
    let mut cfg = tun::Configuration::default();
    cfg.tun_name(name).mtu(1500);
    cfg.platform_config(|p| {
        p.ensure_root_privileges(false);
    });
    tun::create(&cfg)
        .map(Arc::new)
        .map_err(|source| RouterError::Open {
            name: name.to_string(),
            source,
        })
}

fn reader(dev: Arc<tun::Device>, side: Side, tx: mpsc::Sender<(Side, Vec<u8>)>) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; MAX_PACKET];
        loop {
            match dev.recv(&mut buf) {
                Ok(n) => {
                    if tx.send((side, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    });
}

struct Router<'a> {
    sc: &'a Scenario,
    setup: &'a Setup,
    left: Arc<tun::Device>,
    right: Arc<tun::Device>,
    port: Box<Port>,
    pool: Vec<Vec<u8>>,
    free: Vec<u32>,
    server: Pacer,
    server_free: Nanos,
    in_service: Option<(Slot, Nanos)>,
    policer: Option<Policer>,
    reverse: BinaryHeap<Reverse<(Nanos, u64, Vec<u8>)>>,
    reverse_seq: u64,
    t0: Instant,
    stats: Intervals,
    totals: Vec<StreamTotals>,
    refused: Vec<u64>,
    policed: Vec<u64>,
    other: u64,
    write_drops: u64,
    printed: usize,
}

/// Opens the devices and forwards until the scenario's end plus the grace time;
/// prints per-second figures to `out`; returns what was counted.
pub fn run(setup: &Setup, out: &mut dyn Write) -> Result<RouterStats, RouterError> {
    let left = open(&setup.left)?;
    let right = open(&setup.right)?;
    let (tx, rx) = mpsc::channel();
    reader(Arc::clone(&left), Side::Left, tx.clone());
    reader(Arc::clone(&right), Side::Right, tx);
    let _ = writeln!(out, "qbss-router: {} and {} open", setup.left, setup.right);
    let _ = out.flush();
    let now_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let now = Instant::now();
    let t0 = match setup.epoch_unix_s {
        Some(e) if e >= now_unix => now + Duration::from_secs_f64(e - now_unix),
        Some(e) => now
            .checked_sub(Duration::from_secs_f64(now_unix - e))
            .unwrap_or(now),
        None => now,
    };
    // The scheduler holds every slot inline: build it on a thread with room for it.
    let sc = &setup.scenario;
    let port = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn_scoped(s, || Port::new(sc.scheduler.config()).map(Box::new))
            .map_err(|source| RouterError::Io {
                what: "starting a thread".into(),
                source,
            })?
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
            .map_err(RouterError::from)
    })?;
    let nq = sc.scheduler.queues.len();
    let mut r = Router {
        sc,
        setup,
        left,
        right,
        port,
        pool: Vec::new(),
        free: Vec::new(),
        server: Pacer::new(sc.server_bps()),
        server_free: 0,
        in_service: None,
        policer: sc.vc.and_then(|vc| vc.policer()),
        reverse: BinaryHeap::new(),
        reverse_seq: 0,
        t0,
        stats: Intervals::new(sc.duration_s as usize, sc.streams.len(), nq),
        totals: vec![StreamTotals::default(); sc.streams.len()],
        refused: vec![0; nq],
        policed: vec![0; nq],
        other: 0,
        write_drops: 0,
        printed: 0,
    };
    r.forward(&rx, out)?;
    Ok(r.finish())
}

impl Router<'_> {
    fn now(&self) -> Nanos {
        Instant::now()
            .checked_duration_since(self.t0)
            .map_or(0, |d| d.as_nanos() as Nanos)
    }

    fn interval(&self, now: Nanos) -> Option<usize> {
        let i = (now / NS_PER_S) as usize;
        (i < self.stats.len()).then_some(i)
    }

    fn stream_of(&self, port: u16) -> Option<u16> {
        let k = port.checked_sub(self.setup.port_base)?;
        (usize::from(k) < self.sc.streams.len()).then_some(k)
    }

    fn forward(
        &mut self,
        rx: &mpsc::Receiver<(Side, Vec<u8>)>,
        out: &mut dyn Write,
    ) -> Result<(), RouterError> {
        let end =
            self.stats.len() as Nanos * NS_PER_S + (self.setup.grace_s.max(0.0) * 1e9) as Nanos;
        loop {
            let now = self.now();
            self.serve(now)?;
            while self
                .reverse
                .peek()
                .is_some_and(|Reverse((t, _, _))| *t <= now)
            {
                if let Some(Reverse((_, _, p))) = self.reverse.pop() {
                    self.write(Side::Left, &p)?;
                }
            }
            self.print_seconds(now, out);
            if now >= end {
                return Ok(());
            }
            let mut next = end.min((now / NS_PER_S + 1) * NS_PER_S);
            if let Some((_, done)) = self.in_service {
                next = next.min(done);
            }
            if let Some(Reverse((t, _, _))) = self.reverse.peek() {
                next = next.min(*t);
            }
            let wait = Duration::from_nanos(next.saturating_sub(now));
            match rx.recv_timeout(wait) {
                Ok(msg) => {
                    self.handle(msg)?;
                    while let Ok(msg) = rx.try_recv() {
                        self.handle(msg)?;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(RouterError::Io {
                        what: "reading the TUN devices".into(),
                        source: io::Error::other("both readers stopped"),
                    })
                }
            }
        }
    }

    fn write(&mut self, side: Side, p: &[u8]) -> Result<(), RouterError> {
        let dev = match side {
            Side::Left => &self.left,
            Side::Right => &self.right,
        };
        match dev.send(p) {
            Ok(_) => Ok(()),
            // The device may be down for a moment while the lab configures it, or its
            // namespace gone at the end: the packet is lost, and counted.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc_codes::EIO) | Some(libc_codes::ENOBUFS)
                ) =>
            {
                self.write_drops += 1;
                Ok(())
            }
            Err(source) => Err(RouterError::Io {
                what: "writing a packet".into(),
                source,
            }),
        }
    }

    fn handle(&mut self, (side, p): (Side, Vec<u8>)) -> Result<(), RouterError> {
        let now = self.now();
        let Some(h) = ip::parse(&p) else {
            return Ok(()); // not IP: a TUN device carries nothing else
        };
        match side {
            Side::Right => {
                let delay = match h
                    .ports
                    .and_then(|ports| self.stream_of(ports.src))
                    .map(|k| self.sc.streams[usize::from(k)].kind)
                {
                    Some(StreamKind::Tcp { rtt_ns, .. }) => rtt_ns,
                    _ => 0,
                };
                if delay == 0 {
                    return self.write(Side::Left, &p);
                }
                self.reverse_seq += 1;
                self.reverse
                    .push(Reverse((now + delay, self.reverse_seq, p)));
                Ok(())
            }
            Side::Left => {
                let stream = h.ports.and_then(|ports| self.stream_of(ports.dst));
                let len = p.len() as u32;
                let q = usize::from(self.sc.classifier.queue(h.ds));
                if let Some(k) = stream {
                    self.totals[usize::from(k)].sent += 1;
                } else {
                    self.other += 1;
                }
                if let Some(pol) = &mut self.policer {
                    if !pol.conform(now, wire_bytes(self.sc.link.framing, len)) {
                        if let Some(c) = self.policed.get_mut(q) {
                            *c += 1;
                        }
                        self.count_drop(now, stream, true);
                        return Ok(());
                    }
                }
                let buf = match self.free.pop() {
                    Some(b) => {
                        self.pool[b as usize] = p;
                        b
                    }
                    None => {
                        self.pool.push(p);
                        (self.pool.len() - 1) as u32
                    }
                };
                let slot = Slot { buf, len, stream };
                if let Err(refused) = self.port.enqueue(q, slot) {
                    self.free.push(refused.packet.buf);
                    if let Some(c) = self.refused.get_mut(q) {
                        *c += 1;
                    }
                    self.count_drop(now, stream, false);
                }
                self.serve(now)
            }
        }
    }

    fn count_drop(&mut self, now: Nanos, stream: Option<u16>, policed: bool) {
        let Some(k) = stream.map(usize::from) else {
            return;
        };
        if policed {
            self.totals[k].policed += 1;
        } else {
            self.totals[k].refused += 1;
        }
        if let Some(i) = self.interval(now) {
            self.stats.cell_mut(i, k).drops += 1;
        }
    }

    /// Completes the packet in service when its time has come and starts the next.
    /// A packet that follows another without a gap starts when the previous one ended,
    /// even if this thread woke late: the server catches up, so the long-run rate is
    /// the link's whatever the scheduling latency. A packet that finds the server idle
    /// starts now.
    fn serve(&mut self, now: Nanos) -> Result<(), RouterError> {
        let mut continued = false;
        loop {
            if let Some((slot, done)) = self.in_service {
                if now < done {
                    return Ok(());
                }
                self.in_service = None;
                self.server_free = done;
                let p = std::mem::take(&mut self.pool[slot.buf as usize]);
                self.write(Side::Right, &p)?;
                self.pool[slot.buf as usize] = p;
                self.free.push(slot.buf);
                continued = true;
                if let (Some(k), Some(i)) = (slot.stream, self.interval(done)) {
                    let c = self.stats.cell_mut(i, usize::from(k));
                    c.bytes += u64::from(slot.len);
                    c.packets += 1;
                }
            }
            let Some(slot) = self.port.dequeue() else {
                return Ok(());
            };
            let start = if continued {
                self.server_free
            } else {
                self.server_free.max(now)
            };
            let bits = wire_bytes(self.sc.link.framing, slot.len) * 8;
            self.in_service = Some((slot, start + self.server.gap(bits)));
        }
    }

    fn print_seconds(&mut self, now: Nanos, out: &mut dyn Write) {
        let done = ((now / NS_PER_S) as usize).min(self.stats.len());
        while self.printed < done {
            let i = self.printed;
            for q in 0..self.sc.scheduler.queues.len() {
                *self.stats.backlog_mut(i, q) = Backlog {
                    packets: self.port.queue_len(q) as u64,
                    bytes: self.port.queue_bytes(q),
                };
            }
            for (k, s) in self.sc.streams.iter().enumerate() {
                let c = self.stats.cell(i, k);
                let _ = writeln!(
                    out,
                    "[{:3}] {:<12} {:>5}.0-{}.0 sec  {:>17}  {:>7} packets  {:>6} drops",
                    k + 1,
                    s.name,
                    i,
                    i + 1,
                    format_rate((c.bytes * 8) as f64),
                    c.packets,
                    c.drops
                );
            }
            let mut line = String::new();
            for q in 0..self.sc.scheduler.queues.len() {
                let st = self.port.stats(q).unwrap_or_default();
                line.push_str(&format!(
                    "  q{q} {} pkts (refused {}, policed {})",
                    st.backlog_packets, self.refused[q], self.policed[q]
                ));
            }
            let _ = writeln!(out, "[  Q] queues {:>6}.0 sec {line}", i + 1);
            let _ = out.flush();
            self.printed += 1;
        }
    }

    fn finish(self) -> RouterStats {
        let queue_stats: Vec<wrr::QueueStats> = (0..self.sc.scheduler.queues.len())
            .map(|q| self.port.stats(q).unwrap_or_default())
            .collect();
        let queues = queue_stats
            .iter()
            .enumerate()
            .map(|(q, st)| QueueReport {
                name: self.sc.scheduler.queues[q].name.clone(),
                dequeued_packets: st.dequeued_packets,
                refused_packets: self.refused[q],
                policed_packets: self.policed[q],
                peak_backlog_packets: st.peak_backlog_packets,
            })
            .collect();
        let packets = self.totals.iter().map(|t| t.sent).sum();
        let res = RunResult {
            intervals: self.stats,
            totals: self.totals,
            queue_stats,
            events: 0,
            packets,
        };
        let mut report = to_json(self.sc, &res);
        report.scale = Some(self.setup.scale);
        RouterStats {
            report,
            queues,
            other_packets: self.other,
            device_write_drops: self.write_drops,
        }
    }
}

/// The two errno values a TUN write returns while its device is down or gone.
mod libc_codes {
    /// `EIO`: the device is down.
    pub const EIO: i32 = 5;
    /// `ENOBUFS`: the device's queue is full.
    pub const ENOBUFS: i32 = 105;
}
