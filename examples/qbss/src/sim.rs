//! The discrete-event engine.
//!
//! ```text
//!  sources ──> [VC policer] ──> classifier ──> wrr scheduler ──> server ──> receivers
//!  (UDP CBR,    token bucket,    dscp table     (wrr crate:       link goodput,   per-second
//!   TCP)        drops excess     DS -> queue     limits, weights,  or the shaped   counters;
//!     ^                                          saturation)       VC's rate       TCP ACKs
//!     └─────────────── ACKs after the stream's RTT ─────────────────────────────────┘
//! ```
//!
//! Time is integer nanoseconds; events run earliest first and, at the same nanosecond,
//! in the order they were scheduled (see [`super::event`]), so a scenario always gives
//! the same result. Nothing is allocated per packet: packets are 12-byte `Copy` values
//! stored in the scheduler's fixed queues, the event heap holds a few events per
//! stream, and each TCP stream keeps its in-flight ACKs in one ring that grows to its
//! window once. The queue backlog of each interval is sampled at the interval's end.

use std::collections::VecDeque;

use super::event::{EventKind, EventQueue};
use super::link::wire_bytes;
use super::packet::Packet;
use super::scenario::{Scenario, StreamKind};
use super::sched::{build_port, Port, SaturationSpec, MAX_QUEUES};
use super::source::CbrSource;
use super::stats::{Backlog, Intervals};
use super::tcp::{Ack, TcpFlow};
use super::time::{Nanos, Pacer, NS_PER_S};
use super::vc::Policer;

/// A TCP stream's sender-side plumbing around its [`TcpFlow`].
#[derive(Debug)]
struct TcpSource {
    flow: TcpFlow,
    rtt: Nanos,
    nic: Pacer,
    nic_free: Nanos,
    send_pending: bool,
    acks: VecDeque<(Nanos, Ack)>,
    timer_at: Option<Nanos>,
}

#[derive(Debug)]
enum Source {
    Cbr(CbrSource),
    Tcp(Box<TcpSource>),
}

/// Per-stream totals over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamTotals {
    /// Packets the source sent (retransmissions included).
    pub sent: u64,
    /// Packets dropped by the VC policer.
    pub policed: u64,
    /// Packets the scheduler refused (tail drop, weight 0, capacity).
    pub refused: u64,
    /// TCP retransmissions.
    pub retransmits: u64,
    /// TCP retransmission timeouts.
    pub timeouts: u64,
}

/// Everything a run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// Per-second counters.
    pub intervals: Intervals,
    /// Per-stream totals.
    pub totals: Vec<StreamTotals>,
    /// The scheduler's counters per queue at the end.
    pub queue_stats: Vec<wrr::QueueStats>,
    /// Events processed.
    pub events: u64,
    /// Packets the sources sent.
    pub packets: u64,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The `wrr` crate refused the scheduler configuration.
    #[error("scheduler configuration: {0}")]
    Config(#[from] wrr::ConfigError),
    /// The engine's thread could not be started.
    #[error("starting the simulation thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Stack of the engine's thread: the `wrr` scheduler holds every queue slot inline
/// (about half a megabyte) and is built by value before it is boxed, which an
/// unoptimised build copies several times; a thread of its own keeps that off the
/// caller's stack, whatever its size.
const ENGINE_STACK: usize = 64 << 20;

/// Runs `scenario` to its end.
pub fn run(scenario: &Scenario) -> Result<RunResult, SimError> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("qbss-sim".into())
            .stack_size(ENGINE_STACK)
            .spawn_scoped(scope, || {
                Engine::new(scenario).map_err(SimError::from)?.run()
            })?;
        match handle.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

struct Engine<'a> {
    sc: &'a Scenario,
    events: EventQueue,
    port: Box<Port>,
    /// Wire bytes of each stream's packets (one size per stream).
    wire: Vec<u64>,
    server: Pacer,
    in_service: Option<Packet>,
    policer: Option<Policer>,
    sources: Vec<Source>,
    stats: Intervals,
    totals: Vec<StreamTotals>,
    interval: usize,
    next_boundary: Nanos,
    /// `saturation_queue`: (queue, threshold in its unit, counts bytes, WRR on now).
    sat_watch: Option<(usize, u64, bool, bool)>,
    /// `queue0_outside_wrr`: queue 0's own FIFO, its limit, and whose turn it is.
    q0: Option<(VecDeque<Packet>, usize, bool)>,
    q0_stats: wrr::QueueStats,
    /// `ingress_fifo_packets`: the class-blind FIFO ahead of the scheduler and its limit.
    ingress: Option<(VecDeque<Packet>, usize)>,
}

/// The scenario's sources, each with its first event in `events` (none for a
/// stream that starts at or after the end).
fn sources(sc: &Scenario, events: &mut EventQueue) -> Vec<Source> {
    let end = sc.duration_ns();
    let mut sources = Vec::with_capacity(sc.streams.len());
    for (i, s) in sc.streams.iter().enumerate() {
        let id = i as u16;
        match s.kind {
            StreamKind::Udp { rate_bps } => {
                sources.push(Source::Cbr(CbrSource::new(
                    rate_bps,
                    s.packet_bytes,
                    s.ds,
                    s.stop_ns,
                )));
                if s.start_ns < end {
                    events.schedule(s.start_ns, EventKind::Emit(id));
                }
            }
            StreamKind::Tcp {
                rtt_ns,
                window_packets,
                access_bps,
                cc,
            } => {
                sources.push(Source::Tcp(Box::new(TcpSource {
                    flow: TcpFlow::new(s.packet_bytes, s.ds, window_packets, s.stop_ns, cc),
                    rtt: rtt_ns,
                    nic: Pacer::new(access_bps),
                    nic_free: 0,
                    send_pending: s.start_ns < end,
                    acks: VecDeque::new(),
                    timer_at: None,
                })));
                if s.start_ns < end {
                    events.schedule(s.start_ns, EventKind::TcpSend(id));
                }
            }
        }
    }
    sources
}

/// Arrival order: "when saturated" with a threshold no backlog reaches.
const NEVER_SATURATED: SaturationSpec = SaturationSpec::WhenSaturatedPackets(u64::MAX);

impl<'a> Engine<'a> {
    fn new(sc: &'a Scenario) -> Result<Self, wrr::ConfigError> {
        let hyp = sc.scheduler.hypotheses;
        let sat_watch = hyp.saturation_queue.map(|q| match sc.scheduler.saturation {
            SaturationSpec::WhenSaturatedBytes(n) => (q, n, true, false),
            SaturationSpec::WhenSaturatedPackets(n) => (q, n, false, false),
            _ => (q, u64::MAX, false, false),
        });
        let port = if sat_watch.is_some() {
            // WRR is switched on and off by the engine (`check_saturation`).
            let mut spec = sc.scheduler.clone();
            spec.saturation = NEVER_SATURATED;
            build_port(&spec)?
        } else {
            build_port(&sc.scheduler)?
        };
        let mut events = EventQueue::new();
        let sources = sources(sc, &mut events);
        let n = sc.duration_s as usize;
        Ok(Engine {
            sc,
            events,
            port,
            wire: sc
                .streams
                .iter()
                .map(|s| wire_bytes(sc.link.framing, s.packet_bytes))
                .collect(),
            server: Pacer::new(sc.server_bps()),
            in_service: None,
            policer: sc.vc.and_then(|vc| vc.policer()),
            sources,
            stats: Intervals::new(n, sc.streams.len(), sc.scheduler.queues.len()),
            totals: vec![StreamTotals::default(); sc.streams.len()],
            interval: 0,
            next_boundary: NS_PER_S,
            sat_watch,
            q0: hyp.queue0_outside_wrr.then(|| {
                let limit = sc.scheduler.queues.first().map_or(0, |q| q.limit_packets);
                (VecDeque::with_capacity(limit), limit, false)
            }),
            q0_stats: wrr::QueueStats::default(),
            ingress: hyp
                .ingress_fifo_packets
                .map(|n| (VecDeque::with_capacity(n.min(1 << 16)), n)),
        })
    }

    /// `saturation_queue`: WRR on while the watched queue's backlog is at or above the
    /// threshold, arrival order below it.
    fn check_saturation(&mut self) {
        let Some((q, thr, bytes, on)) = self.sat_watch else {
            return;
        };
        let backlog = if bytes {
            self.port.queue_bytes(q)
        } else {
            self.port.queue_len(q) as u64
        };
        let want = backlog >= thr;
        if want != on {
            let sat = if want {
                SaturationSpec::Forced
            } else {
                NEVER_SATURATED
            };
            // The same queues and limits: reconfiguring cannot fail where building did.
            if self
                .port
                .reconfigure(self.sc.scheduler.config_with(sat))
                .is_ok()
            {
                self.sat_watch = Some((q, thr, bytes, want));
            }
        }
    }

    /// Enqueues a classified packet (queue 0 to its own FIFO when it is outside the WRR).
    fn enqueue(&mut self, p: Packet) -> bool {
        if p.queue == 0 {
            if let Some((f, limit, _)) = &mut self.q0 {
                if f.len() >= *limit {
                    self.q0_stats.dropped_packets += 1;
                    return false;
                }
                f.push_back(p);
                self.q0_stats.enqueued_packets += 1;
                self.q0_stats.peak_backlog_packets =
                    self.q0_stats.peak_backlog_packets.max(f.len() as u64);
                return true;
            }
        }
        let ok = self.port.enqueue(usize::from(p.queue), p).is_ok();
        self.check_saturation();
        ok
    }

    /// The next packet for the link.
    fn dequeue(&mut self) -> Option<Packet> {
        // The scheduler is fed from the ingress FIFO only when it holds nothing.
        if self.ingress.is_some()
            && self.q0.as_ref().is_none_or(|q| q.0.is_empty())
            && self.port_empty()
        {
            if let Some(mut p) = self.ingress.as_mut().and_then(|(f, _)| f.pop_front()) {
                p.queue = self.sc.classifier.queue(p.ds);
                if !self.enqueue(p) {
                    self.count_refused(p);
                }
            }
        }
        let p = match &mut self.q0 {
            Some((f, _, turn)) => {
                let from_q0 = if *turn { f.pop_front() } else { None };
                *turn = !*turn;
                match from_q0 {
                    Some(p) => Some(p),
                    None => self
                        .port
                        .dequeue()
                        .or_else(|| self.q0.as_mut()?.0.pop_front()),
                }
            }
            None => self.port.dequeue(),
        };
        if let Some(p) = &p {
            if p.queue == 0 && self.q0.is_some() {
                self.q0_stats.dequeued_packets += 1;
            }
        }
        self.check_saturation();
        p
    }

    fn port_empty(&self) -> bool {
        (0..self.sc.scheduler.queues.len()).all(|q| self.port.queue_len(q) == 0)
    }

    fn count_refused(&mut self, p: Packet) {
        let s = usize::from(p.stream);
        self.totals[s].refused += 1;
        self.stats.cell_mut(self.interval, s).drops += 1;
    }

    fn sample_backlog(&mut self) {
        for q in 0..self.sc.scheduler.queues.len().min(MAX_QUEUES) {
            let (packets, bytes) = match (&self.q0, q) {
                (Some((f, _, _)), 0) => (
                    f.len() as u64,
                    f.iter().map(|p| u64::from(p.len)).sum::<u64>(),
                ),
                _ => (self.port.queue_len(q) as u64, self.port.queue_bytes(q)),
            };
            *self.stats.backlog_mut(self.interval, q) = Backlog { packets, bytes };
        }
    }

    fn run(mut self) -> Result<RunResult, SimError> {
        let end = self.sc.duration_ns();
        let last = self.stats.len().saturating_sub(1);
        while let Some(ev) = self.events.pop_before(end) {
            let now = ev.time;
            while now >= self.next_boundary && self.interval < last {
                self.sample_backlog();
                self.interval += 1;
                self.next_boundary += NS_PER_S;
            }
            match ev.kind {
                EventKind::Emit(s) => self.on_emit(now, s),
                EventKind::ServerDone => self.on_server_done(now),
                EventKind::TcpSend(s) => self.on_tcp_send(now, s),
                EventKind::Ack(s) => self.on_ack(now, s),
                EventKind::Timer(s) => self.on_timer(now, s),
            }
        }
        while self.interval < last {
            self.sample_backlog();
            self.interval += 1;
        }
        self.sample_backlog();
        for (t, src) in self.totals.iter_mut().zip(&self.sources) {
            if let Source::Tcp(tcp) = src {
                t.retransmits = tcp.flow.retransmits;
                t.timeouts = tcp.flow.timeouts;
            }
        }
        let queue_stats = (0..self.sc.scheduler.queues.len())
            .map(|q| match (q, self.q0.is_some()) {
                (0, true) => self.q0_stats,
                _ => self.port.stats(q).unwrap_or_default(),
            })
            .collect();
        let packets = self.totals.iter().map(|t| t.sent).sum();
        Ok(RunResult {
            intervals: self.stats,
            totals: self.totals,
            queue_stats,
            events: self.events.processed(),
            packets,
        })
    }

    /// A packet leaves its source at `now`.
    #[inline]
    fn offer(&mut self, now: Nanos, mut p: Packet) {
        let s = usize::from(p.stream);
        self.totals[s].sent += 1;
        if let Some(pol) = &mut self.policer {
            if !pol.conform(now, self.wire[s]) {
                self.totals[s].policed += 1;
                self.stats.cell_mut(self.interval, s).drops += 1;
                return;
            }
        }
        if let Some((f, limit)) = &mut self.ingress {
            if f.len() >= *limit {
                self.totals[s].refused += 1;
                self.stats.cell_mut(self.interval, s).drops += 1;
                return;
            }
            f.push_back(p);
        } else {
            p.queue = self.sc.classifier.queue(p.ds);
            if !self.enqueue(p) {
                self.totals[s].refused += 1;
                self.stats.cell_mut(self.interval, s).drops += 1;
                return;
            }
        }
        if self.in_service.is_none() {
            self.start_service(now);
        }
    }

    #[inline]
    fn start_service(&mut self, now: Nanos) {
        if let Some(p) = self.dequeue() {
            let gap = self.server.gap(self.wire[usize::from(p.stream)] * 8);
            self.in_service = Some(p);
            self.events.schedule_server(now + gap);
        }
    }

    fn on_server_done(&mut self, now: Nanos) {
        if let Some(p) = self.in_service.take() {
            self.deliver(now, p);
        }
        self.start_service(now);
    }

    #[inline]
    fn deliver(&mut self, now: Nanos, p: Packet) {
        let s = usize::from(p.stream);
        // A TCP receiver counts data as its application gets it: in order, so a
        // packet above a hole is counted when the retransmission fills the hole.
        let delivered = match &mut self.sources[s] {
            Source::Cbr(_) => 1,
            Source::Tcp(tcp) => {
                let before = tcp.flow.rcv_nxt();
                let (_, ack) = tcp.flow.receive(p.seq, p.ts_us);
                let at = now + tcp.rtt;
                if tcp.acks.is_empty() {
                    self.events.schedule(at, EventKind::Ack(p.stream));
                }
                tcp.acks.push_back((at, ack));
                u64::from(tcp.flow.rcv_nxt() - before)
            }
        };
        if delivered > 0 {
            let c = self.stats.cell_mut(self.interval, s);
            c.bytes += delivered * u64::from(p.len);
            c.packets += delivered;
        }
    }

    fn on_emit(&mut self, now: Nanos, s: u16) {
        let Source::Cbr(src) = &mut self.sources[usize::from(s)] else {
            return;
        };
        let (p, next) = src.emit(now, s);
        if let Some(t) = next {
            self.events.schedule(t, EventKind::Emit(s));
        }
        self.offer(now, p);
    }

    fn on_tcp_send(&mut self, now: Nanos, s: u16) {
        let Source::Tcp(tcp) = &mut self.sources[usize::from(s)] else {
            return;
        };
        tcp.send_pending = false;
        if !tcp.flow.can_send(now) {
            self.tcp_kick(now, s);
            return;
        }
        let p = tcp.flow.send(now, s);
        tcp.nic_free = now + tcp.nic.gap(p.bits());
        self.offer(now, p);
        self.tcp_kick(now, s);
    }

    fn on_ack(&mut self, now: Nanos, s: u16) {
        let Source::Tcp(tcp) = &mut self.sources[usize::from(s)] else {
            return;
        };
        while let Some(&(t, ack)) = tcp.acks.front() {
            if t > now {
                self.events.schedule(t, EventKind::Ack(s));
                break;
            }
            tcp.acks.pop_front();
            tcp.flow.on_ack(now, ack);
        }
        self.tcp_kick(now, s);
    }

    fn on_timer(&mut self, now: Nanos, s: u16) {
        let Source::Tcp(tcp) = &mut self.sources[usize::from(s)] else {
            return;
        };
        if tcp.timer_at == Some(now) {
            tcp.timer_at = None;
        }
        tcp.flow.on_timer(now);
        self.tcp_kick(now, s);
    }

    /// Schedules what a TCP stream needs next: its next send and its timer.
    fn tcp_kick(&mut self, now: Nanos, s: u16) {
        let Source::Tcp(tcp) = &mut self.sources[usize::from(s)] else {
            return;
        };
        if !tcp.send_pending && tcp.flow.can_send(now) {
            tcp.send_pending = true;
            self.events
                .schedule(now.max(tcp.nic_free), EventKind::TcpSend(s));
        }
        if let Some(d) = tcp.flow.rto_deadline {
            let d = d.max(now);
            if tcp.timer_at.is_none_or(|t| t > d) {
                tcp.timer_at = Some(d);
                self.events.schedule(d, EventKind::Timer(s));
            }
        }
    }
}
