//! Differential test: with only weighted queues, no limits and WRR on every
//! packet, the scheduler sends exactly what a textbook deficit round robin
//! built from `VecDeque`s sends (the same reference the benchmark runs):
//! a queue joins the tail of the round with one quantum, serves while its
//! deficit covers the head packet, otherwise gets a quantum and passes the
//! turn, and forgets its deficit when it empties.

use proptest::prelude::*;
use std::collections::VecDeque;
use wrr::{Config, Fairness, Saturation, Scheduler};

const N: usize = 5;
const CAP: usize = 16;

struct Reference {
    queues: Vec<VecDeque<u16>>,
    deficit: Vec<u64>,
    quantum: Vec<u64>,
    active: VecDeque<usize>,
    bytes: bool,
}

impl Reference {
    fn enqueue(&mut self, q: usize, len: u16) {
        if self.queues[q].is_empty() {
            self.active.push_back(q);
            self.deficit[q] = self.quantum[q];
        }
        self.queues[q].push_back(len);
    }

    fn dequeue(&mut self) -> Option<(usize, u16)> {
        loop {
            let q = *self.active.front()?;
            let len = *self.queues[q].front()?;
            let cost = if self.bytes { u64::from(len) } else { 1 };
            if self.deficit[q] >= cost {
                self.deficit[q] -= cost;
                self.queues[q].pop_front();
                if self.queues[q].is_empty() {
                    self.active.pop_front();
                    self.deficit[q] = 0;
                }
                return Some((q, len));
            }
            self.deficit[q] += self.quantum[q];
            self.active.rotate_left(1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn same_order_as_textbook_drr(
        weights in proptest::array::uniform5(1u32..=6),
        mtu in 1u16..=1500,
        packets_mode in any::<bool>(),
        ops in proptest::collection::vec((0usize..N, any::<u16>(), 0u8..3), 0..400),
    ) {
        let fairness = if packets_mode { Fairness::Packets } else { Fairness::Bytes { mtu: u32::from(mtu) } };
        let unit = if packets_mode { 1 } else { u64::from(mtu) };
        let mut s: Scheduler<u16, N, CAP> =
            Scheduler::new(Config::new(weights, fairness, Saturation::WorkConserving)).unwrap();
        let mut r = Reference {
            queues: vec![VecDeque::new(); N],
            deficit: vec![0; N],
            quantum: weights.iter().map(|&w| u64::from(w) * unit).collect(),
            active: VecDeque::new(),
            bytes: !packets_mode,
        };
        for (q, len, deqs) in ops {
            let len = len % (mtu + 1);
            if s.enqueue(q, len).is_ok() {
                r.enqueue(q, len);
            } else {
                prop_assert_eq!(r.queues[q].len(), CAP, "refused below capacity");
            }
            for _ in 0..deqs {
                prop_assert_eq!(s.dequeue_indexed(), r.dequeue());
            }
        }
        loop {
            let (a, b) = (s.dequeue_indexed(), r.dequeue());
            prop_assert_eq!(a, b);
            if a.is_none() {
                break;
            }
        }
    }
}
