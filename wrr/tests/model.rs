//! Model-based property tests: a plain `Vec`-based model of every rule the
//! scheduler promises (refusal reasons, FIFO per queue, arrival order in the
//! `Fifo` phase, priority and scavenger precedence in the `Wrr` phase,
//! hysteresis, counters and their clearing) checked after every operation of random sequences,
//! and conservation (every packet offered comes out exactly once: dequeued,
//! dropped from the head, or handed back) at the end.

use proptest::prelude::*;
use std::collections::VecDeque;
use wrr::{
    BacklogUnit, Class, Config, ConfigError, Fairness, Limit, PacketLen, Phase, QueueConfig,
    QueueStats, RefuseReason, Saturation, Scheduler, Threshold,
};

const N: usize = 4;
const CAP: usize = 6;

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

#[derive(Clone, Debug)]
enum Op {
    Enqueue(usize, u16),
    Dequeue,
    /// `dequeue_if` whose predicate answers this.
    DequeueIf(bool),
    DropHead(usize),
    SetClass(usize, Class),
    SetLimit(usize, Limit),
    ClearStats,
}

fn class() -> impl Strategy<Value = Class> {
    prop_oneof![
        6 => (0u32..=20).prop_map(Class::Weighted),
        2 => (0u32..=3).prop_map(Class::Scavenger),
        1 => Just(Class::Priority),
    ]
}

fn limit() -> impl Strategy<Value = Limit> {
    (
        prop_oneof![Just(usize::MAX), 0usize..=8],
        prop_oneof![Just(u64::MAX), 0u64..=5000],
    )
        .prop_map(|(p, b)| Limit::new(p, b))
}

fn saturation() -> impl Strategy<Value = Saturation> {
    prop_oneof![
        Just(Saturation::WorkConserving),
        Just(Saturation::Forced),
        (0u64..=12, 0u64..=12).prop_map(|(a, b)| Saturation::WhenSaturated(
            Threshold::packets(a.max(b)).with_low(a.min(b))
        )),
        (0u64..=9000, 0u64..=9000).prop_map(|(a, b)| Saturation::WhenSaturated(
            Threshold::bytes(a.max(b)).with_low(a.min(b))
        )),
    ]
}

fn config() -> impl Strategy<Value = Config<N>> {
    (
        proptest::array::uniform4((class(), limit())),
        prop_oneof![
            (1u32..=1500).prop_map(|mtu| Fairness::Bytes { mtu }),
            Just(Fairness::Packets)
        ],
        saturation(),
    )
        .prop_map(|(qs, fairness, saturation)| {
            let mut seen_priority = false;
            let queues = qs.map(|(mut class, limit)| {
                if class == Class::Priority {
                    if seen_priority {
                        class = Class::Weighted(1);
                    }
                    seen_priority = true;
                }
                QueueConfig { class, limit }
            });
            Config {
                queues,
                fairness,
                saturation,
            }
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0usize..=N, 0u16..=1600).prop_map(|(q, l)| Op::Enqueue(q, l)),
        5 => Just(Op::Dequeue),
        2 => any::<bool>().prop_map(Op::DequeueIf),
        1 => (0usize..=N).prop_map(Op::DropHead),
        1 => (0usize..=N, class()).prop_map(|(q, c)| Op::SetClass(q, c)),
        1 => (0usize..=N, limit()).prop_map(|(q, l)| Op::SetLimit(q, l)),
        1 => Just(Op::ClearStats),
    ]
}

/// The model: what the scheduler must do, written the obvious way.
struct Model {
    config: Config<N>,
    queues: [VecDeque<Pkt>; N],
    arrivals: Vec<u32>,
    stats: [QueueStats; N],
    unknown: QueueStats,
    phase: Phase,
}

impl Model {
    fn new(config: Config<N>) -> Self {
        let mut m = Model {
            config,
            queues: Default::default(),
            arrivals: Vec::new(),
            stats: [QueueStats::default(); N],
            unknown: QueueStats::default(),
            phase: Phase::Fifo,
        };
        m.settle();
        m
    }

    fn backlog(&self, unit: BacklogUnit) -> u64 {
        match unit {
            BacklogUnit::Packets => self.queues.iter().map(|q| q.len() as u64).sum(),
            BacklogUnit::Bytes => self.queues.iter().flatten().map(|p| u64::from(p.len)).sum(),
        }
    }

    fn settle(&mut self) {
        match self.config.saturation {
            Saturation::WhenSaturated(t) => {
                let b = self.backlog(t.unit);
                if b >= t.high {
                    self.phase = Phase::Wrr;
                } else if b < t.low {
                    self.phase = Phase::Fifo;
                }
            }
            _ => self.phase = Phase::Wrr,
        }
    }

    fn refusal(&self, q: usize, len: u16) -> Option<RefuseReason> {
        let len = u64::from(len);
        if q >= N {
            return Some(RefuseReason::NoSuchQueue);
        }
        let qc = self.config.queues[q];
        let bytes: u64 = self.queues[q].iter().map(|p| u64::from(p.len)).sum();
        if matches!(qc.class, Class::Weighted(0) | Class::Scavenger(0)) {
            Some(RefuseReason::NotServed)
        } else if let Fairness::Bytes { mtu } = self.config.fairness {
            if len > u64::from(mtu) {
                return Some(RefuseReason::ExceedsMtu { len, mtu });
            }
            self.limits(q, len, bytes)
        } else {
            self.limits(q, len, bytes)
        }
    }

    fn limits(&self, q: usize, len: u64, bytes: u64) -> Option<RefuseReason> {
        let limit = self.config.queues[q].limit;
        if self.queues[q].len() >= CAP {
            Some(RefuseReason::Full { capacity: CAP })
        } else if self.queues[q].len() >= limit.packets {
            Some(RefuseReason::PacketLimit {
                limit: limit.packets,
            })
        } else if bytes + len > limit.bytes {
            Some(RefuseReason::ByteLimit {
                len,
                backlog: bytes,
                limit: limit.bytes,
            })
        } else {
            None
        }
    }

    fn accept(&mut self, q: usize, p: Pkt) {
        let len = u64::from(p.len);
        self.arrivals.push(p.id);
        self.queues[q].push_back(p);
        let s = &mut self.stats[q];
        s.enqueued_packets += 1;
        s.enqueued_bytes += len;
        s.backlog_packets += 1;
        s.backlog_bytes += len;
        s.peak_backlog_packets = s.peak_backlog_packets.max(s.backlog_packets);
        s.peak_backlog_bytes = s.peak_backlog_bytes.max(s.backlog_bytes);
        if let Saturation::WhenSaturated(t) = self.config.saturation {
            if self.phase == Phase::Fifo && self.backlog(t.unit) >= t.high {
                self.phase = Phase::Wrr;
            }
        }
    }

    fn leave(&mut self, q: usize, dequeued: bool) -> Pkt {
        let p = self.queues[q].pop_front().unwrap();
        let len = u64::from(p.len);
        let at = self.arrivals.iter().position(|&id| id == p.id).unwrap();
        self.arrivals.remove(at);
        let s = &mut self.stats[q];
        s.backlog_packets -= 1;
        s.backlog_bytes -= len;
        if dequeued {
            s.dequeued_packets += 1;
            s.dequeued_bytes += len;
        } else {
            s.dropped_packets += 1;
            s.dropped_bytes += len;
        }
        if let Saturation::WhenSaturated(t) = self.config.saturation {
            if self.phase == Phase::Wrr && self.backlog(t.unit) < t.low {
                self.phase = Phase::Fifo;
            }
        }
        p
    }

    fn class_of(&self, q: usize) -> Class {
        self.config.queues[q].class
    }

    fn nonempty(&self, pred: impl Fn(Class) -> bool) -> bool {
        (0..N).any(|q| !self.queues[q].is_empty() && pred(self.class_of(q)))
    }
}

/// The scheduler under test, its model, and how many times each packet id
/// came out (dequeued, dropped or handed back).
struct Run {
    s: Scheduler<Pkt, N, CAP>,
    m: Model,
    out: Vec<u8>,
    next_id: u32,
}

/// Runs `ops` against the scheduler and the model, checking every step.
fn run(config: Config<N>, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut r = Run {
        s: Scheduler::new(config).unwrap(),
        m: Model::new(config),
        out: Vec::new(),
        next_id: 0,
    };
    for op in ops {
        match *op {
            Op::Enqueue(q, len) => r.enqueue(q, len)?,
            Op::DequeueIf(false) => r.dequeue_refused()?,
            Op::Dequeue | Op::DequeueIf(true) => r.dequeue(matches!(*op, Op::Dequeue))?,
            Op::DropHead(q) => r.drop_head(q)?,
            Op::SetClass(q, class) => r.set_class(q, class)?,
            Op::SetLimit(q, limit) => r.set_limit(q, limit)?,
            Op::ClearStats => r.clear_stats(),
        }
        r.check_state()?;
    }
    r.drain()
}

impl Run {
    fn enqueue(&mut self, q: usize, len: u16) -> Result<(), TestCaseError> {
        let (s, m) = (&mut self.s, &mut self.m);
        let p = Pkt {
            id: self.next_id,
            len,
        };
        self.next_id += 1;
        self.out.push(0);
        let expected = m.refusal(q, len);
        match s.enqueue(q, p.clone()) {
            Ok(()) => {
                prop_assert_eq!(expected, None);
                m.accept(q, p);
            }
            Err(r) => {
                prop_assert_eq!(Some(r.reason), expected);
                prop_assert_eq!(r.queue, q);
                prop_assert_eq!(&r.packet, &p);
                self.out[p.id as usize] += 1;
                let st = if q < N {
                    &mut m.stats[q]
                } else {
                    &mut m.unknown
                };
                st.dropped_packets += 1;
                st.dropped_bytes += u64::from(len);
            }
        }
        Ok(())
    }

    /// Refused by the predicate: nothing changes.
    fn dequeue_refused(&mut self) -> Result<(), TestCaseError> {
        let s = &mut self.s;
        let before = s.peek().map(|(q, p)| (q, p.clone()));
        let len = s.len();
        let mut seen = None;
        let got = s.dequeue_if(|p| {
            seen = Some(p.clone());
            false
        });
        prop_assert_eq!(got, None);
        prop_assert_eq!(seen, before.clone().map(|(_, p)| p));
        prop_assert_eq!(s.peek().map(|(q, p)| (q, p.clone())), before);
        prop_assert_eq!(s.len(), len);
        Ok(())
    }

    /// `dequeue_indexed` (`plain`) or `dequeue_if` answering yes.
    fn dequeue(&mut self, plain: bool) -> Result<(), TestCaseError> {
        let (s, m) = (&mut self.s, &mut self.m);
        let phase = s.phase();
        prop_assert_eq!(phase, m.phase);
        // peek() names exactly the packet the dequeue sends.
        let peeked = s.peek().map(|(q, p)| (q, p.clone()));
        let sent = if plain {
            s.dequeue_indexed()
        } else {
            s.dequeue_if(|_| true)
        };
        prop_assert_eq!(&sent, &peeked, "peek() and dequeue disagree");
        match sent {
            None => prop_assert!(
                m.queues.iter().all(VecDeque::is_empty),
                "idle while packets are queued"
            ),
            Some((q, p)) => {
                prop_assert_eq!(Some(&p), m.queues[q].front(), "not FIFO within queue {}", q);
                if phase == Phase::Fifo {
                    prop_assert_eq!(p.id, m.arrivals[0], "not in arrival order");
                } else {
                    let c = m.class_of(q);
                    if m.nonempty(|c| c == Class::Priority) {
                        prop_assert_eq!(c, Class::Priority);
                    } else if m.nonempty(|c| matches!(c, Class::Weighted(_))) {
                        let weighted = matches!(c, Class::Weighted(_));
                        prop_assert!(weighted, "served {:?} before the weighted tier", c);
                    } else {
                        let scavenger = matches!(c, Class::Scavenger(_));
                        prop_assert!(scavenger, "served {:?}", c);
                    }
                }
                m.leave(q, true);
                self.out[p.id as usize] += 1;
            }
        }
        Ok(())
    }

    fn drop_head(&mut self, q: usize) -> Result<(), TestCaseError> {
        let got = self.s.drop_head(q);
        if q >= N || self.m.queues[q].is_empty() {
            prop_assert_eq!(got, None);
        } else {
            let p = got.unwrap();
            prop_assert_eq!(&self.m.leave(q, false), &p);
            self.out[p.id as usize] += 1;
        }
        Ok(())
    }

    fn set_class(&mut self, q: usize, class: Class) -> Result<(), TestCaseError> {
        let m = &mut self.m;
        let r = self.s.set_class(q, class);
        if q >= N {
            prop_assert_eq!(
                r,
                Err(ConfigError::NoSuchQueue {
                    queue: q,
                    queues: N
                })
            );
        } else if class == Class::Priority
            && (0..N).any(|o| o != q && m.class_of(o) == Class::Priority)
        {
            let second = matches!(r, Err(ConfigError::SecondPriority { .. }));
            prop_assert!(second, "expected SecondPriority, got {:?}", r);
        } else {
            prop_assert_eq!(r, Ok(()));
            m.config.queues[q].class = class;
            m.settle();
        }
        Ok(())
    }

    fn set_limit(&mut self, q: usize, limit: Limit) -> Result<(), TestCaseError> {
        let r = self.s.set_limit(q, limit);
        if q >= N {
            prop_assert!(r.is_err());
        } else {
            prop_assert_eq!(r, Ok(()));
            self.m.config.queues[q].limit = limit;
        }
        Ok(())
    }

    fn clear_stats(&mut self) {
        let m = &mut self.m;
        self.s.clear_stats();
        m.unknown = QueueStats::default();
        for st in &mut m.stats {
            *st = QueueStats {
                backlog_packets: st.backlog_packets,
                backlog_bytes: st.backlog_bytes,
                peak_backlog_packets: st.backlog_packets,
                peak_backlog_bytes: st.backlog_bytes,
                ..QueueStats::default()
            };
        }
    }

    /// State after every operation.
    fn check_state(&self) -> Result<(), TestCaseError> {
        let (s, m) = (&self.s, &self.m);
        prop_assert_eq!(s.phase(), m.phase);
        prop_assert_eq!(s.config(), &m.config);
        prop_assert_eq!(s.len(), m.queues.iter().map(VecDeque::len).sum::<usize>());
        prop_assert_eq!(s.backlog_bytes(), m.backlog(BacklogUnit::Bytes));
        prop_assert_eq!(s.is_empty(), m.queues.iter().all(VecDeque::is_empty));
        for q in 0..N {
            prop_assert_eq!(s.queue_len(q), m.queues[q].len());
            prop_assert_eq!(s.peek_queue(q), m.queues[q].front());
            prop_assert_eq!(s.stats(q), Some(m.stats[q]), "counters of queue {}", q);
        }
        prop_assert_eq!(s.unknown_queue_stats(), m.unknown);
        // Totals are the field-by-field sums (peaks included).
        let mut t = m.unknown;
        for st in &m.stats {
            t.enqueued_packets += st.enqueued_packets;
            t.enqueued_bytes += st.enqueued_bytes;
            t.dequeued_packets += st.dequeued_packets;
            t.dequeued_bytes += st.dequeued_bytes;
            t.dropped_packets += st.dropped_packets;
            t.dropped_bytes += st.dropped_bytes;
            t.backlog_packets += st.backlog_packets;
            t.backlog_bytes += st.backlog_bytes;
            t.peak_backlog_packets += st.peak_backlog_packets;
            t.peak_backlog_bytes += st.peak_backlog_bytes;
        }
        prop_assert_eq!(s.totals(), t);
        Ok(())
    }

    /// Drain: weight-0 leftovers (after a reconfiguration) still come out;
    /// then conservation: every offered packet came back exactly once.
    fn drain(mut self) -> Result<(), TestCaseError> {
        while let Some((q, p)) = self.s.dequeue_indexed() {
            prop_assert_eq!(&self.m.leave(q, true), &p);
            self.out[p.id as usize] += 1;
        }
        prop_assert!(self.m.queues.iter().all(VecDeque::is_empty));
        for (id, n) in self.out.iter().enumerate() {
            prop_assert_eq!(*n, 1, "packet {} came out {} times", id, n);
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Conservation, FIFO within a queue, refusal reasons, counters,
    /// precedence of priority > weighted > scavenger, arrival order in the
    /// `Fifo` phase, hysteresis, and work conservation (a dequeue returns
    /// `None` only when the model holds no packet).
    #[test]
    fn scheduler_matches_model(config in config(), ops in proptest::collection::vec(op(), 0..200)) {
        run(config, &ops)?;
    }

    /// Weight 0 is never served: with no reconfiguration, a weight-0 queue
    /// refuses every arrival and never appears in the output.
    #[test]
    fn weight_zero_never_served(
        weights in proptest::array::uniform4(0u32..=3),
        ops in proptest::collection::vec((0usize..N, 1u16..=1500, any::<bool>()), 0..300),
        packets_mode in any::<bool>(),
    ) {
        let fairness = if packets_mode { Fairness::Packets } else { Fairness::Bytes { mtu: 1500 } };
        let mut s: Scheduler<u16, N, CAP> =
            Scheduler::new(Config::new(weights, fairness, Saturation::WorkConserving)).unwrap();
        for (q, len, deq) in ops {
            let r = s.enqueue(q, len);
            if weights[q] == 0 {
                prop_assert_eq!(r.unwrap_err().reason, RefuseReason::NotServed);
            }
            if deq {
                if let Some((q, _)) = s.dequeue_indexed() {
                    prop_assert!(weights[q] != 0, "weight-0 queue {} served", q);
                }
            }
        }
        while let Some((q, _)) = s.dequeue_indexed() {
            prop_assert!(weights[q] != 0, "weight-0 queue {} served", q);
        }
        for (q, w) in weights.iter().enumerate() {
            if *w == 0 {
                prop_assert_eq!(s.stats(q).unwrap().dequeued_packets, 0);
            }
        }
    }

    /// `WhenSaturated` below its threshold is one FIFO across queues: the
    /// output is exactly the accepted arrivals in order, whatever the
    /// classes and weights.
    #[test]
    fn when_saturated_is_fifo_below_threshold(
        config in config(),
        ops in proptest::collection::vec((0usize..N, 0u16..=1500, any::<bool>()), 0..300),
    ) {
        let mut config = config;
        // Unreachable: at most N x CAP = 24 packets can be queued.
        config.saturation = Saturation::WhenSaturated(Threshold::packets(N as u64 * CAP as u64 + 1));
        let mut s: Scheduler<Pkt, N, CAP> = Scheduler::new(config).unwrap();
        let mut accepted = Vec::new();
        let mut sent = Vec::new();
        for (i, (q, len, deq)) in ops.into_iter().enumerate() {
            if s.enqueue(q, Pkt { id: i as u32, len }).is_ok() {
                accepted.push(i as u32);
            }
            prop_assert_eq!(s.phase(), Phase::Fifo);
            if deq {
                if let Some(p) = s.dequeue() {
                    sent.push(p.id);
                }
            }
        }
        while let Some(p) = s.dequeue() {
            sent.push(p.id);
        }
        prop_assert_eq!(sent, accepted);
    }
}
