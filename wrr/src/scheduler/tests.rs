//! Unit tests that need the scheduler's insides: the number of queues a
//! dequeue examines (the O(1) promise), counted by a test-only field.

use super::*;
use crate::config::{QueueConfig, Threshold};

type S = Scheduler<u32, 8, 32>;

/// A small deterministic generator (xorshift) for the random walks.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Dequeues once and returns how many queues the DRR step examined.
fn examined_by_dequeue(s: &mut S) -> (Option<(usize, u32)>, u32) {
    s.examined = 0;
    let out = s.dequeue_indexed();
    (out, s.examined)
}

/// Dequeues everything, checking each dequeue examined at most two queues.
fn drain_checked(s: &mut S, what: &str) {
    let mut left = s.len();
    while left > 0 {
        let (out, examined) = examined_by_dequeue(s);
        assert!(out.is_some(), "{what}: a backlogged scheduler sent nothing");
        assert!(
            examined <= 2,
            "{what}: a dequeue examined {examined} queues"
        );
        left -= 1;
    }
    assert!(s.is_empty());
}

fn bytes(mtu: u32) -> Fairness {
    Fairness::Bytes { mtu }
}

fn config(classes: [Class; 8], fairness: Fairness, saturation: Saturation) -> Config<8> {
    Config {
        queues: classes.map(|class| QueueConfig {
            class,
            limit: Limit::NONE,
        }),
        fairness,
        saturation,
    }
}

const W: fn(u32) -> Class = Class::Weighted;

/// Backlogs every queue with mixed sizes and sends a few packets, so
/// that heads sit mid-turn with partial deficits.
fn loaded(c: Config<8>) -> S {
    let mut s = S::new(c).unwrap();
    for round in 0..20u32 {
        for q in 0..8 {
            let len = [1500, 64, 700, 1499, 1][(round as usize + q) % 5];
            let _ = s.enqueue(q, len);
        }
    }
    for _ in 0..13 {
        let (_, examined) = examined_by_dequeue(&mut s);
        assert!(examined <= 2);
    }
    s
}

#[test]
fn every_kind_of_reconfiguration_keeps_dequeue_at_two_queues() {
    let base = config(
        [W(1), W(2), W(3), W(1), W(5), W(1), W(2), W(1)],
        bytes(1500),
        Saturation::WorkConserving,
    );
    let mut kinds: [(&str, Config<8>); 13] = [("", base); 13];
    kinds[0] = (
        "new weights",
        config(
            [W(7), W(1), W(1), W(9), W(1), W(3), W(1), W(2)],
            bytes(1500),
            Saturation::WorkConserving,
        ),
    );
    kinds[1] = (
        "MTU raised",
        config(
            base.queues.map(|q| q.class),
            bytes(9000),
            Saturation::WorkConserving,
        ),
    );
    kinds[2] = (
        "MTU lowered",
        config(
            base.queues.map(|q| q.class),
            bytes(100),
            Saturation::WorkConserving,
        ),
    );
    kinds[3] = (
        "bytes to packets",
        config(
            base.queues.map(|q| q.class),
            Fairness::Packets,
            Saturation::WorkConserving,
        ),
    );
    kinds[4] = (
        "to scavenger",
        config(
            [
                W(1),
                Class::Scavenger(2),
                W(3),
                Class::Scavenger(1),
                W(5),
                W(1),
                Class::Scavenger(4),
                W(1),
            ],
            bytes(1500),
            Saturation::WorkConserving,
        ),
    );
    kinds[5] = (
        "to priority",
        config(
            [W(1), W(2), Class::Priority, W(1), W(5), W(1), W(2), W(1)],
            bytes(1500),
            Saturation::WorkConserving,
        ),
    );
    kinds[6] = (
        "weights to 0",
        config(
            [W(0), W(2), W(0), W(1), W(0), W(1), W(0), W(1)],
            bytes(1500),
            Saturation::WorkConserving,
        ),
    );
    kinds[7] = (
        "forced",
        config(
            base.queues.map(|q| q.class),
            bytes(1500),
            Saturation::Forced,
        ),
    );
    kinds[8] = (
        "when saturated, above",
        config(
            base.queues.map(|q| q.class),
            bytes(1500),
            Saturation::WhenSaturated(Threshold::packets(1)),
        ),
    );
    kinds[9] = (
        "when saturated, below",
        config(
            base.queues.map(|q| q.class),
            bytes(1500),
            Saturation::WhenSaturated(Threshold::packets(1000).with_low(10)),
        ),
    );
    kinds[10] = ("limits", base.with_limit_all(Limit::new(3, 2000)));
    kinds[11] = (
        "all scavenger, packets",
        config(
            [Class::Scavenger(1); 8],
            Fairness::Packets,
            Saturation::WorkConserving,
        ),
    );
    kinds[12] = ("unchanged", base);
    for (what, to) in kinds {
        let mut s = loaded(base);
        s.reconfigure(to).unwrap();
        drain_checked(&mut s, what);
        // And from the new configuration back to the base one.
        let mut s = loaded(to);
        s.reconfigure(base).unwrap();
        drain_checked(&mut s, what);
    }
}

#[test]
fn packets_to_bytes_and_scavenger_to_weighted() {
    let from = config(
        [
            Class::Scavenger(1),
            Class::Scavenger(3),
            Class::Priority,
            W(1),
            W(1),
            W(1),
            W(1),
            W(1),
        ],
        Fairness::Packets,
        Saturation::WorkConserving,
    );
    let to = config(
        [W(1), W(3), W(2), W(1), W(1), W(1), W(1), W(1)],
        bytes(1500),
        Saturation::WorkConserving,
    );
    let mut s = loaded(from);
    s.reconfigure(to).unwrap();
    drain_checked(
        &mut s,
        "packets to bytes, scavenger and priority to weighted",
    );
}

#[test]
fn random_reconfigurations_between_operations() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut s = S::new(config([W(1); 8], bytes(1500), Saturation::WorkConserving)).unwrap();
    let mut mtu = 1500u32;
    for step in 0..20_000 {
        match rng.below(10) {
            0 => {
                let mut classes = [W(1); 8];
                let priority = rng.below(16) as usize;
                for (i, c) in classes.iter_mut().enumerate() {
                    let w = rng.below(5) as u32;
                    *c = if i == priority {
                        Class::Priority
                    } else if rng.below(3) == 0 {
                        Class::Scavenger(w)
                    } else {
                        W(w)
                    };
                }
                let fairness = if rng.below(3) == 0 {
                    Fairness::Packets
                } else {
                    mtu = [64, 1500, 9000, 100][rng.below(4) as usize];
                    bytes(mtu)
                };
                let saturation = match rng.below(3) {
                    0 => Saturation::WorkConserving,
                    1 => Saturation::Forced,
                    _ => Saturation::WhenSaturated(Threshold::packets(rng.below(40))),
                };
                s.reconfigure(config(classes, fairness, saturation))
                    .unwrap();
            }
            1..=5 => {
                let q = rng.below(8) as usize;
                let _ = s.enqueue(q, 1 + rng.below(u64::from(mtu)) as u32);
            }
            6 => {
                let _ = s.drop_head(rng.below(8) as usize);
            }
            _ => {
                let had = !s.is_empty();
                let peeked = s.peek().map(|(q, &p)| (q, p));
                let (out, examined) = examined_by_dequeue(&mut s);
                assert_eq!(out, peeked, "step {step}: peek() and dequeue disagree");
                assert_eq!(out.is_some(), had, "step {step}");
                assert!(
                    examined <= 2,
                    "step {step}: a dequeue examined {examined} queues"
                );
            }
        }
    }
}
