//! Differential test: with only weighted queues, no limits and WRR on every
//! packet, the scheduler sends exactly what a textbook deficit round robin
//! built from `VecDeque`s sends (`support/reference_drr.rs`, the same code
//! the benchmark runs).

use proptest::prelude::*;
#[path = "support/reference_drr.rs"]
mod reference_drr;

use reference_drr::ReferenceDrr;
use wrr::{Config, Fairness, Saturation, Scheduler};

const N: usize = 5;
const CAP: usize = 16;

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
        let mut r = ReferenceDrr::new(&weights, unit, !packets_mode, CAP);
        for (q, len, deqs) in ops {
            let len = len % (mtu + 1);
            if s.enqueue(q, len).is_ok() {
                r.enqueue(q, len);
            } else {
                prop_assert_eq!(r.queue_len(q), CAP, "refused below capacity");
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
