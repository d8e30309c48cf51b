//! Arbitrary sequences of enqueue / dequeue / head drop / reconfiguration on
//! a `wrr::Scheduler`, checked against a shadow copy of every queue:
//! FIFO within each queue, global arrival order in the `Fifo` phase (packets
//! queued when `WhenSaturated` is switched on: interleaved by queue index),
//! refused packets handed back intact, counters equal to the shadow, and
//! conservation (every packet offered comes out exactly once) after a drain.
//! Packets are `Timed`: every departure's sojourn time is the shadow's clock
//! minus its arrival time. `peek()` must name exactly the packet the next
//! dequeue sends, and a `dequeue_if` that says no must change nothing.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use std::collections::VecDeque;
use wrr::{
    Class, Config, Fairness, Limit, PacketLen, Phase, QueueConfig, Saturation, Scheduler,
    Threshold, Timed,
};

type Sched = Scheduler<Timed<Pkt>, N, CAP>;

const N: usize = 5;
const CAP: usize = 7;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Pkt {
    id: u32,
    len: u16,
}

impl PacketLen for Pkt {
    fn packet_len(&self) -> usize {
        usize::from(self.len)
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum FClass {
    Weighted(u8),
    Scavenger(u8),
    Priority,
    Huge,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
struct FQueue {
    class: FClass,
    packets: Option<u8>,
    bytes: Option<u16>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum FSaturation {
    WorkConserving,
    Forced,
    Packets(u8, u8),
    Bytes(u16, u16),
}

#[derive(Arbitrary, Debug, Clone)]
struct FConfig {
    queues: [FQueue; N],
    mtu: Option<u16>,
    saturation: FSaturation,
}

#[derive(Arbitrary, Debug, Clone)]
enum Op {
    Enqueue(u8, u16),
    Dequeue,
    /// `dequeue_if` whose predicate answers this.
    DequeueIf(bool),
    /// The clock moves on (or back: a sojourn is then 0).
    Tick(i16),
    DropHead(u8),
    SetClass(u8, FClass),
    SetLimit(u8, Option<u8>, Option<u16>),
    Reconfigure(FConfig),
    ClearStats,
}

#[derive(Arbitrary, Debug)]
struct Input {
    config: FConfig,
    ops: Vec<Op>,
}

fn class(c: FClass) -> Class {
    match c {
        FClass::Weighted(w) => Class::Weighted(u32::from(w)),
        FClass::Scavenger(w) => Class::Scavenger(u32::from(w)),
        FClass::Priority => Class::Priority,
        FClass::Huge => Class::Weighted(u32::MAX),
    }
}

fn limit(p: Option<u8>, b: Option<u16>) -> Limit {
    Limit::new(
        p.map_or(usize::MAX, usize::from),
        b.map_or(u64::MAX, u64::from),
    )
}

fn config(f: &FConfig) -> Config<N> {
    Config {
        queues: f.queues.map(|q| QueueConfig {
            class: class(q.class),
            limit: limit(q.packets, q.bytes),
        }),
        fairness: match f.mtu {
            Some(mtu) => Fairness::Bytes {
                mtu: u32::from(mtu),
            },
            None => Fairness::Packets,
        },
        saturation: match f.saturation {
            FSaturation::WorkConserving => Saturation::WorkConserving,
            FSaturation::Forced => Saturation::Forced,
            FSaturation::Packets(h, l) => {
                Saturation::WhenSaturated(Threshold::packets(u64::from(h)).with_low(u64::from(l)))
            }
            FSaturation::Bytes(h, l) => {
                Saturation::WhenSaturated(Threshold::bytes(u64::from(h)).with_low(u64::from(l)))
            }
        },
    }
}

struct Shadow {
    queues: [VecDeque<Timed<Pkt>>; N],
    arrivals: VecDeque<u32>,
    out: Vec<u8>,
}

impl Shadow {
    fn leave(&mut self, q: usize, p: &Timed<Pkt>) {
        assert_eq!(
            self.queues[q].pop_front().as_ref(),
            Some(p),
            "not FIFO in queue {q}"
        );
        let at = self
            .arrivals
            .iter()
            .position(|&id| id == p.packet.id)
            .unwrap();
        self.arrivals.remove(at);
        self.out[p.packet.id as usize] += 1;
    }

    /// Arrival order is recorded only under `WhenSaturated`: switching to it
    /// takes the queued packets one per queue in turn, by queue index.
    fn interleave_arrivals(&mut self) {
        self.arrivals.clear();
        for depth in 0..CAP {
            for q in &self.queues {
                if let Some(p) = q.get(depth) {
                    self.arrivals.push_back(p.packet.id);
                }
            }
        }
    }

    fn check(&self, s: &Sched, now: u64) {
        let total: usize = self.queues.iter().map(VecDeque::len).sum();
        assert_eq!(s.len(), total);
        assert_eq!(s.is_empty(), total == 0);
        let mut bytes = 0;
        for q in 0..N {
            let b: u64 = self.queues[q].iter().map(|p| u64::from(p.packet.len)).sum();
            bytes += b;
            assert_eq!(s.queue_len(q), self.queues[q].len());
            assert_eq!(s.queue_bytes(q), b);
            assert_eq!(s.peek_queue(q), self.queues[q].front());
            assert_eq!(
                s.head_sojourn(q, now),
                self.queues[q].front().map(|t| t.sojourn(now))
            );
            let st = s.stats(q).unwrap();
            assert_eq!(st.backlog_packets, self.queues[q].len() as u64);
            assert_eq!(st.backlog_bytes, b);
            assert!(st.peak_backlog_packets >= st.backlog_packets);
            assert!(st.peak_backlog_bytes >= st.backlog_bytes);
        }
        assert_eq!(s.backlog_bytes(), bytes);
    }
}

fuzz_target!(|input: Input| {
    let cfg = config(&input.config);
    let mut s: Sched = match Scheduler::new(cfg) {
        Ok(s) => s,
        Err(e) => {
            assert!(cfg.validate().is_err(), "refused a valid config: {e}");
            return;
        }
    };
    let mut sh = Shadow {
        queues: Default::default(),
        arrivals: VecDeque::new(),
        out: Vec::new(),
    };
    let mut clock: u64 = 1 << 32;
    for op in input.ops.iter().take(2000) {
        match op {
            Op::Tick(d) => {
                clock = clock.wrapping_add_signed(i64::from(*d));
            }
            Op::DequeueIf(false) => {
                let before = s.peek().map(|(q, p)| (q, p.clone()));
                let len = s.len();
                let mut seen = None;
                assert_eq!(
                    s.dequeue_if(|p| {
                        seen = Some(p.clone());
                        false
                    }),
                    None
                );
                assert_eq!(seen, before.clone().map(|(_, p)| p));
                assert_eq!(s.peek().map(|(q, p)| (q, p.clone())), before);
                assert_eq!(s.len(), len);
            }
            Op::Enqueue(q, len) => {
                let q = usize::from(*q % (N as u8 + 1));
                let p = Pkt {
                    id: sh.out.len() as u32,
                    len: *len,
                };
                sh.out.push(0);
                match s.enqueue_at(q, p.clone(), clock) {
                    Ok(()) => {
                        sh.arrivals.push_back(p.id);
                        sh.queues[q].push_back(Timed::new(p, clock));
                    }
                    Err(r) => {
                        assert_eq!(r.packet, p);
                        assert_eq!(r.queue, q);
                        sh.out[p.id as usize] += 1;
                    }
                }
            }
            Op::Dequeue | Op::DequeueIf(true) => {
                let phase = s.phase();
                let peeked = s.peek().map(|(q, p)| (q, p.clone()));
                let sent = if matches!(op, Op::Dequeue) {
                    s.dequeue_at(clock).map(|d| {
                        let t = sh.queues[d.queue].front().unwrap().enqueued_at;
                        assert_eq!(d.sojourn, clock.saturating_sub(t), "sojourn");
                        (d.queue, Timed::new(d.packet, t))
                    })
                } else {
                    s.dequeue_if(|_| true)
                };
                assert_eq!(sent, peeked, "peek() and dequeue disagree");
                match sent {
                    None => assert!(
                        sh.queues.iter().all(VecDeque::is_empty),
                        "idle with backlog"
                    ),
                    Some((q, p)) => {
                        if phase == Phase::Fifo {
                            assert_eq!(
                                Some(&p.packet.id),
                                sh.arrivals.front(),
                                "Fifo phase out of order"
                            );
                        }
                        sh.leave(q, &p);
                    }
                }
            }
            Op::DropHead(q) => {
                let q = usize::from(*q % (N as u8 + 1));
                match s.drop_head(q) {
                    Some(p) => sh.leave(q, &p),
                    None => assert!(q >= N || sh.queues[q].is_empty()),
                }
            }
            Op::SetClass(q, c) => {
                let _ = s.set_class(usize::from(*q), class(*c));
            }
            Op::SetLimit(q, p, b) => {
                let r = s.set_limit(usize::from(*q), limit(*p, *b));
                assert_eq!(r.is_ok(), usize::from(*q) < N);
            }
            Op::Reconfigure(f) => {
                let c = config(f);
                let was_tracking = matches!(s.config().saturation, Saturation::WhenSaturated(_));
                let r = s.reconfigure(c);
                assert_eq!(r.is_ok(), c.validate().is_ok());
                if r.is_ok() {
                    assert_eq!(s.config(), &c);
                    if !was_tracking && matches!(c.saturation, Saturation::WhenSaturated(_)) {
                        sh.interleave_arrivals();
                    }
                }
            }
            Op::ClearStats => s.clear_stats(),
        }
        sh.check(&s, clock);
    }
    // Drain: everything queued comes out, whatever the classes now are.
    let mut guard = 0;
    while let Some((q, p)) = s.dequeue_indexed() {
        sh.leave(q, &p);
        guard += 1;
        assert!(guard <= N * CAP);
    }
    assert!(sh.queues.iter().all(VecDeque::is_empty));
    assert!(
        sh.out.iter().all(|&n| n == 1),
        "a packet was lost or duplicated"
    );
});
