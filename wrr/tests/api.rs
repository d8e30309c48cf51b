//! Small deterministic checks of each documented rule and error.

use std::cell::Cell;
use wrr::{
    Class, Config, ConfigError, Fairness, Limit, PacketLen, Phase, QueueConfig, RefuseReason,
    Saturation, Scheduler, Threshold,
};

fn drain<const N: usize, const CAP: usize>(s: &mut Scheduler<u32, N, CAP>) -> Vec<(usize, u32)> {
    let mut v = Vec::new();
    while let Some(x) = s.dequeue_indexed() {
        v.push(x);
    }
    v
}

#[test]
fn config_errors_say_what_is_wrong() {
    let c = Config::new([1, 1], Fairness::Bytes { mtu: 0 }, Saturation::Forced);
    assert_eq!(
        Scheduler::<u32, 2, 4>::new(c).unwrap_err(),
        ConfigError::ZeroMtu
    );

    let t = Threshold::packets(2).with_low(3);
    let c = Config::new([1, 1], Fairness::Packets, Saturation::WhenSaturated(t));
    assert_eq!(
        Scheduler::<u32, 2, 4>::new(c).unwrap_err(),
        ConfigError::LowAboveHigh { low: 3, high: 2 }
    );

    let mut c = Config::new([1, 1, 1], Fairness::Packets, Saturation::Forced);
    c.queues[0].class = Class::Priority;
    c.queues[2].class = Class::Priority;
    let e = Scheduler::<u32, 3, 4>::new(c).unwrap_err();
    assert_eq!(
        e,
        ConfigError::SecondPriority {
            first: 0,
            second: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "queues 0 and 2 are both strict priority; at most one may be"
    );

    let mut s =
        Scheduler::<u32, 3, 4>::new(Config::new([1; 3], Fairness::Packets, Saturation::Forced))
            .unwrap();
    assert_eq!(
        s.set_class(3, Class::Weighted(1)),
        Err(ConfigError::NoSuchQueue {
            queue: 3,
            queues: 3
        })
    );
}

#[test]
fn refusals_hand_the_packet_back_with_the_reason() {
    let mut c = Config::new(
        [1, 0, 1, 1],
        Fairness::Bytes { mtu: 1500 },
        Saturation::Forced,
    );
    c.queues[2].limit = Limit::packets(1);
    c.queues[3].limit = Limit::bytes(2000);
    let mut s: Scheduler<u32, 4, 2> = Scheduler::new(c).unwrap();
    let reason = |r: Result<(), wrr::Refused<u32>>| r.unwrap_err().reason;

    assert_eq!(reason(s.enqueue(9, 100)), RefuseReason::NoSuchQueue);
    assert_eq!(reason(s.enqueue(1, 100)), RefuseReason::NotServed);
    assert_eq!(
        reason(s.enqueue(0, 1501)),
        RefuseReason::ExceedsMtu {
            len: 1501,
            mtu: 1500
        }
    );
    s.enqueue(0, 1500).unwrap();
    s.enqueue(0, 1500).unwrap();
    assert_eq!(reason(s.enqueue(0, 1)), RefuseReason::Full { capacity: 2 });
    s.enqueue(2, 10).unwrap();
    assert_eq!(
        reason(s.enqueue(2, 10)),
        RefuseReason::PacketLimit { limit: 1 }
    );
    s.enqueue(3, 1500).unwrap();
    assert_eq!(
        reason(s.enqueue(3, 501)),
        RefuseReason::ByteLimit {
            len: 501,
            backlog: 1500,
            limit: 2000
        }
    );
    s.enqueue(3, 500).unwrap();

    let r = s.enqueue(1, 77).unwrap_err();
    assert_eq!((r.packet, r.queue), (77, 1));
    assert_eq!(r.into_packet(), 77);

    assert_eq!(s.stats(1).unwrap().dropped_packets, 2);
    assert_eq!(s.stats(1).unwrap().dropped_bytes, 177);
    assert_eq!(s.unknown_queue_stats().dropped_packets, 1);
    let t = s.totals();
    assert_eq!(t.dropped_packets, 7);
    assert_eq!(t.enqueued_packets, 5);
    assert_eq!((t.backlog_packets, t.backlog_bytes), (5, 5010));
}

#[test]
fn zero_capacity_refuses_everything() {
    let c = Config::new([1, 1], Fairness::Packets, Saturation::WorkConserving);
    let mut s: Scheduler<u32, 2, 0> = Scheduler::new(c).unwrap();
    assert_eq!(
        s.enqueue(0, 1).unwrap_err().reason,
        RefuseReason::Full { capacity: 0 }
    );
    assert_eq!(s.dequeue(), None);
}

#[test]
fn priority_first_scavenger_last() {
    let mut c = Config::new([1, 1, 1], Fairness::Packets, Saturation::Forced);
    c.queues[0].class = Class::Scavenger(1);
    c.queues[2].class = Class::Priority;
    let mut s: Scheduler<u32, 3, 8> = Scheduler::new(c).unwrap();
    for q in [0, 1, 2, 0, 1, 2] {
        s.enqueue(q, 100).unwrap();
    }
    let order: Vec<usize> = drain(&mut s).into_iter().map(|(q, _)| q).collect();
    assert_eq!(order, [2, 2, 1, 1, 0, 0]);
}

#[test]
fn when_saturated_hysteresis() {
    // WRR from 4 queued packets until fewer than 2 remain.
    let t = Threshold::packets(4).with_low(2);
    let c = Config::new([1, 3], Fairness::Packets, Saturation::WhenSaturated(t));
    let mut s: Scheduler<u32, 2, 8> = Scheduler::new(c).unwrap();
    assert_eq!(s.phase(), Phase::Fifo);
    for q in [0, 0, 0] {
        s.enqueue(q, 1).unwrap();
    }
    assert_eq!(s.phase(), Phase::Fifo);
    s.enqueue(1, 2).unwrap();
    assert_eq!(s.phase(), Phase::Wrr);
    s.enqueue(1, 3).unwrap();
    // Backlog 5: WRR. Queue 0 joined first and sends 1 (weight 1), then
    // queue 1 its 2 and 3 (weight 3); the backlog is then 2, still WRR.
    assert_eq!(s.dequeue_indexed(), Some((0, 1)));
    assert_eq!(s.dequeue_indexed(), Some((1, 2)));
    assert_eq!(s.phase(), Phase::Wrr);
    assert_eq!(s.dequeue_indexed(), Some((1, 3)));
    // Backlog 2 is not below the low mark: still WRR.
    assert_eq!(s.phase(), Phase::Wrr);
    assert_eq!(s.dequeue_indexed(), Some((0, 1)));
    // Backlog 1 < 2: arrival order again.
    assert_eq!(s.phase(), Phase::Fifo);
    s.enqueue(1, 9).unwrap();
    assert_eq!(drain(&mut s), [(0, 1), (1, 9)]);
}

#[test]
fn switching_to_when_saturated_interleaves_the_queued_packets() {
    // Arrival order is not recorded outside `WhenSaturated`: packets queued
    // at the switch are taken one per queue in turn, by queue index, each
    // queue staying FIFO; later arrivals follow in arrival order.
    let c = Config::new([5, 1, 1], Fairness::Packets, Saturation::WorkConserving);
    let mut s: Scheduler<u32, 3, 8> = Scheduler::new(c).unwrap();
    let arrivals = [(2, 1), (0, 2), (1, 3), (0, 4), (2, 5), (1, 6), (0, 8)];
    for (q, p) in arrivals {
        s.enqueue(q, p).unwrap();
    }
    let mut c2 = *s.config();
    c2.saturation = Saturation::WhenSaturated(Threshold::packets(100));
    s.reconfigure(c2).unwrap();
    assert_eq!(s.phase(), Phase::Fifo);
    s.enqueue(1, 7).unwrap();
    s.enqueue(0, 9).unwrap();
    assert_eq!(
        drain(&mut s),
        [
            (0, 2),
            (1, 3),
            (2, 1),
            (0, 4),
            (1, 6),
            (2, 5),
            (0, 8),
            (1, 7),
            (0, 9)
        ]
    );
}

#[test]
fn weight_set_to_zero_drains_leftovers_and_refuses_arrivals() {
    let c = Config::new([1, 1], Fairness::Bytes { mtu: 100 }, Saturation::Forced);
    let mut s: Scheduler<u32, 2, 8> = Scheduler::new(c).unwrap();
    for _ in 0..3 {
        s.enqueue(0, 100).unwrap();
        s.enqueue(1, 100).unwrap();
    }
    s.set_class(1, Class::Weighted(0)).unwrap();
    assert_eq!(
        s.enqueue(1, 100).unwrap_err().reason,
        RefuseReason::NotServed
    );
    let out = drain(&mut s);
    assert_eq!(out.len(), 6);
    assert_eq!(out.iter().filter(|(q, _)| *q == 1).count(), 3);
}

#[test]
fn lowered_limit_keeps_packets_and_refuses_until_under() {
    let c = Config::new([1], Fairness::Packets, Saturation::Forced);
    let mut s: Scheduler<u32, 1, 8> = Scheduler::new(c).unwrap();
    for p in 0..4 {
        s.enqueue(0, p).unwrap();
    }
    s.set_limit(0, Limit::packets(2)).unwrap();
    assert_eq!(s.queue_len(0), 4);
    assert!(s.enqueue(0, 9).is_err());
    s.dequeue();
    s.dequeue();
    assert!(s.enqueue(0, 9).is_err());
    s.dequeue();
    s.enqueue(0, 9).unwrap();
    assert_eq!(drain(&mut s), [(0, 3), (0, 9)]);
}

#[test]
fn counters_and_clear() {
    let c = Config::new([1, 1], Fairness::Bytes { mtu: 1500 }, Saturation::Forced);
    let mut s: Scheduler<u32, 2, 8> = Scheduler::new(c).unwrap();
    s.enqueue(0, 1000).unwrap();
    s.enqueue(0, 500).unwrap();
    s.enqueue(1, 40).unwrap();
    assert_eq!(s.drop_head(0), Some(1000));
    // Queue 0 joined the round first.
    assert_eq!(s.dequeue_indexed(), Some((0, 500)));
    let st = s.stats(0).unwrap();
    assert_eq!(
        (
            st.enqueued_packets,
            st.enqueued_bytes,
            st.dropped_packets,
            st.dropped_bytes
        ),
        (2, 1500, 1, 1000)
    );
    assert_eq!((st.dequeued_packets, st.dequeued_bytes), (1, 500));
    assert_eq!((st.backlog_packets, st.backlog_bytes), (0, 0));
    assert_eq!((st.peak_backlog_packets, st.peak_backlog_bytes), (2, 1500));
    assert_eq!(s.totals().peak_backlog_bytes, 1540);
    s.clear_stats();
    let st = s.stats(1).unwrap();
    assert_eq!(st.enqueued_packets, 0);
    assert_eq!((st.backlog_packets, st.peak_backlog_bytes), (1, 40));
    assert_eq!(s.totals().peak_backlog_bytes, 40);
    assert_eq!(s.len(), 1);
    assert_eq!(s.backlog_bytes(), 40);
    assert_eq!(s.peek_queue(1), Some(&40));
    assert_eq!(s.queue_bytes(1), 40);
    assert_eq!(s.dequeue_indexed(), Some((1, 40)));
    assert!(s.is_empty());
}

#[test]
fn slices_and_references_are_packets() {
    let frames: [[u8; 64]; 3] = [[0; 64]; 3];
    let c = Config::new([1], Fairness::Bytes { mtu: 64 }, Saturation::Forced);
    let mut s: Scheduler<&[u8; 64], 1, 4> = Scheduler::new(c).unwrap();
    for f in &frames {
        s.enqueue(0, f).unwrap();
    }
    assert_eq!(s.backlog_bytes(), 192);
    assert!(s.dequeue().is_some());
    let _ = QueueConfig::weighted(1);
}

/// A broken `PacketLen`: every call returns a length 2^20 times the last.
#[derive(Debug)]
struct Growing(Cell<u64>);

impl PacketLen for Growing {
    fn packet_len(&self) -> usize {
        let len = self.0.get();
        self.0.set(len.saturating_mul(1 << 20));
        usize::try_from(len).unwrap_or(usize::MAX)
    }
}

#[test]
fn a_length_that_changes_while_queued_cannot_hang_or_panic() {
    // Charged min(len, MTU), a packet whose length grows to 2^60 still costs
    // one quantum; the byte backlog saturates at 0 and resets when empty.
    let c = Config::new([1, 3], Fairness::Bytes { mtu: 1500 }, Saturation::Forced);
    let mut s: Scheduler<Growing, 2, 8> = Scheduler::new(c).unwrap();
    for i in 0..8u64 {
        s.enqueue((i % 2) as usize, Growing(Cell::new(100 + i)))
            .unwrap();
    }
    // The first send charges queue 0 one MTU from its one quantum; queue 1
    // was never granted more than its joining quantum (3 x 1500).
    assert!(s.dequeue().is_some());
    assert_eq!((s.deficit(0), s.deficit(1)), (0, 4500));
    let mut sent = 1;
    while s.dequeue().is_some() {
        sent += 1;
        assert!(sent <= 8);
    }
    assert_eq!(sent, 8);
    assert!(s.is_empty());
    assert_eq!(
        (s.backlog_bytes(), s.queue_bytes(0), s.queue_bytes(1)),
        (0, 0, 0)
    );
    let t = s.totals();
    assert_eq!((t.enqueued_packets, t.dequeued_packets), (8, 8));
}

#[test]
fn lowering_the_mtu_charges_queued_packets_the_new_mtu() {
    let c = Config::new([1, 1], Fairness::Bytes { mtu: 1500 }, Saturation::Forced);
    let mut s: Scheduler<u32, 2, 8> = Scheduler::new(c).unwrap();
    for _ in 0..3 {
        s.enqueue(0, 1500).unwrap();
        s.enqueue(1, 1500).unwrap();
    }
    let mut c2 = *s.config();
    c2.fairness = Fairness::Bytes { mtu: 100 };
    s.reconfigure(c2).unwrap();
    // Deficits restart at one quantum of the new MTU (100), and each
    // leftover is charged 100: queue 0 sends at once (charged its full 1500
    // bytes, both would have needed 15 grants first).
    assert_eq!(s.dequeue_indexed(), Some((0, 1500)));
    assert_eq!((s.deficit(0), s.deficit(1)), (0, 100));
    let order: Vec<usize> = core::iter::from_fn(|| s.dequeue_indexed().map(|(q, _)| q)).collect();
    assert_eq!(order, [1, 0, 1, 0, 1]);
    // New arrivals over the new MTU are refused.
    assert!(matches!(
        s.enqueue(0, 101).unwrap_err().reason,
        RefuseReason::ExceedsMtu { len: 101, mtu: 100 }
    ));
}

/// A 64-queue scheduler (about 140 KiB) built at compile time: `new` is a
/// `const fn`, so the value is in the static's storage, not on a stack.
static PORT: std::sync::Mutex<Scheduler<u32, 64, 128>> = std::sync::Mutex::new(
    match Scheduler::new(Config::new(
        [1; 64],
        Fairness::Bytes { mtu: 1500 },
        Saturation::WorkConserving,
    )) {
        Ok(s) => s,
        Err(_) => panic!("invalid configuration"),
    },
);

#[test]
fn a_scheduler_in_a_static() {
    let mut port = PORT.lock().unwrap();
    for q in 0..64 {
        port.enqueue(q, 100 + q as u32).unwrap();
    }
    let order: Vec<usize> =
        core::iter::from_fn(|| port.dequeue_indexed().map(|(q, _)| q)).collect();
    assert_eq!(order, (0..64).collect::<Vec<_>>());
    // Built in const context, it is the same scheduler `new` gives at run time.
    let c = *port.config();
    let fresh: Scheduler<u32, 64, 128> = Scheduler::new(c).unwrap();
    assert_eq!(port.phase(), fresh.phase());
    assert_eq!(port.totals().dequeued_packets, 64);
    assert!(matches!(
        Scheduler::<u32, 64, 128>::new(Config::new(
            [1; 64],
            Fairness::Bytes { mtu: 0 },
            Saturation::Forced
        )),
        Err(ConfigError::ZeroMtu)
    ));
}

#[test]
fn memory_is_as_documented() {
    // 200 bytes per queue (header, counters, configuration) plus
    // size_of::<Option<P>>() + 8 per slot, and up to 192 bytes of globals
    // and padding to 64; the table in the module documentation.
    fn per_queue<P>(cap: usize) -> usize {
        200 + cap * (core::mem::size_of::<Option<P>>() + 8)
    }
    let cases = [
        (
            core::mem::size_of::<Scheduler<u32, 4, 64>>(),
            4 * per_queue::<u32>(64),
            5_056,
        ),
        (
            core::mem::size_of::<Scheduler<u32, 8, 2048>>(),
            8 * per_queue::<u32>(2048),
            263_872,
        ),
        (
            core::mem::size_of::<Scheduler<u32, 64, 128>>(),
            64 * per_queue::<u32>(128),
            144_000,
        ),
    ];
    for (size, queues, table) in cases {
        assert_eq!(size, table);
        assert_eq!(size % 64, 0);
        assert!(
            (queues..queues + 192).contains(&size),
            "{size} bytes, queues {queues}"
        );
    }
}

#[test]
fn sojourn_times_of_timed_packets() {
    use wrr::{Departure, Timed};
    let c = Config::new([2, 1], Fairness::Packets, Saturation::WorkConserving)
        .with_limit_all(Limit::packets(3));
    let mut s: Scheduler<Timed<u32>, 2, 4> = Scheduler::new(c).unwrap();
    for (i, t) in [10u64, 20, 30].into_iter().enumerate() {
        s.enqueue_at(0, i as u32, t).unwrap();
        s.enqueue_at(1, 100 + i as u32, t + 1).unwrap();
    }
    // Refused packets come back without their stamp.
    let r = s.enqueue_at(0, 9, 40).unwrap_err();
    assert_eq!(
        (r.packet, r.reason),
        (9, RefuseReason::PacketLimit { limit: 3 })
    );
    assert_eq!(s.head_sojourn(1, 50), Some(39));
    assert_eq!(s.head_sojourn(2, 50), None);
    // An AQM drops queue 1's head because it waited too long.
    assert_eq!(
        s.drop_head(1),
        Some(Timed {
            packet: 100,
            enqueued_at: 11
        })
    );
    // Weights 2:1 in packets: 0, 0, 1, 0, 1.
    let out: Vec<Departure<u32>> = core::iter::from_fn(|| s.dequeue_at(100)).collect();
    let expected = [
        (0, 0, 90),
        (0, 1, 80),
        (1, 101, 79),
        (0, 2, 70),
        (1, 102, 69),
    ];
    assert_eq!(out.len(), expected.len());
    for (d, (queue, packet, sojourn)) in out.iter().zip(expected) {
        assert_eq!((d.queue, d.packet, d.sojourn), (queue, packet, sojourn));
    }
    // A clock that goes backwards gives 0, never a wrap.
    s.enqueue_at(0, 7, 500).unwrap();
    assert_eq!(s.dequeue_at(400).map(|d| d.sojourn), Some(0));
}
