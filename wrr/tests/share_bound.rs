//! The fairness bound of the `scheduler` module documentation, checked on
//! long runs where every queue stays backlogged:
//!
//! for queues `i`, `j` of one tier, continuously backlogged over an interval,
//! `|S_i / Q_i - S_j / Q_j| < 3 + M / Q_i + M / Q_j`, i.e. in integers
//! `|S_i Q_j - S_j Q_i| < 3 Q_i Q_j + M (Q_i + Q_j)`,
//! where `S` is the service in cost units (bytes or packets), `Q` the quantum
//! (`weight x mtu` or `weight`) and `M` the largest cost (`mtu` or 1).
//!
//! The bound is checked on every prefix of the run and on windows starting
//! every 200 dequeues. A scheduler that ignored the weights, or let a queue
//! keep credit across turns, would break it within a few hundred packets.

use proptest::prelude::*;
use wrr::{Class, Config, Fairness, QueueConfig, Saturation, Scheduler};

const N: usize = 4;
const CAP: usize = 8;
const DEQUEUES: usize = 2000;

/// Runs `DEQUEUES` dequeues keeping every queue full, returns the cumulative
/// service of each queue after each dequeue.
fn run(config: Config<N>, sizes: &[u16]) -> Vec<[u64; N]> {
    let mut s: Scheduler<u16, N, CAP> = Scheduler::new(config).unwrap();
    let byte_mode = matches!(config.fairness, Fairness::Bytes { .. });
    let mut k = 0;
    let mut next_len = || {
        k += 1;
        sizes[k % sizes.len()]
    };
    let mut fill = |s: &mut Scheduler<u16, N, CAP>| {
        for q in 0..N {
            while s.queue_len(q) < CAP {
                s.enqueue(q, next_len()).unwrap();
            }
        }
    };
    let mut served = [0u64; N];
    let mut history = Vec::with_capacity(DEQUEUES + 1);
    history.push(served);
    for _ in 0..DEQUEUES {
        fill(&mut s);
        let (q, len) = s.dequeue_indexed().unwrap();
        served[q] += if byte_mode { u64::from(len) } else { 1 };
        history.push(served);
    }
    history
}

fn check_bound(history: &[[u64; N]], quanta: [u64; N], m: u64) -> Result<(), TestCaseError> {
    let total_quanta: u64 = quanta.iter().sum();
    for start in (0..history.len()).step_by(200) {
        for end in start + 1..history.len() {
            let s: Vec<i128> = (0..N)
                .map(|q| i128::from(history[end][q] - history[start][q]))
                .collect();
            for i in 0..N {
                for j in i + 1..N {
                    let (qi, qj) = (i128::from(quanta[i]), i128::from(quanta[j]));
                    let lhs = (s[i] * qj - s[j] * qi).abs();
                    let rhs = 3 * qi * qj + i128::from(m) * (qi + qj);
                    prop_assert!(
                        lhs < rhs,
                        "queues {} and {} over dequeues {}..{}: served {:?}, quanta {:?}",
                        i,
                        j,
                        start,
                        end,
                        s,
                        quanta
                    );
                }
            }
        }
    }
    // Long-run share: over the whole run each queue's share of the service
    // is within a few quanta of its weight share.
    let last = history[history.len() - 1];
    let total: u64 = last.iter().sum();
    for q in 0..N {
        let fair = total as f64 * quanta[q] as f64 / total_quanta as f64;
        let dev = (last[q] as f64 - fair).abs();
        prop_assert!(
            dev < 5.0 * quanta[q] as f64,
            "queue {} served {} against a share of {}",
            q,
            last[q],
            fair
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Deficit round robin (bytes), weighted tier and scavenger tier alike.
    #[test]
    fn share_bound_bytes(
        weights in proptest::array::uniform4(1u32..=12),
        mtu in 64u32..=1500,
        sizes in proptest::collection::vec(any::<u16>(), 1..40),
        scavenger in any::<bool>(),
    ) {
        let sizes: Vec<u16> = sizes.iter().map(|&s| (u32::from(s) % mtu + 1) as u16).collect();
        let class = |w| if scavenger { Class::Scavenger(w) } else { Class::Weighted(w) };
        let config = Config {
            queues: weights.map(|w| QueueConfig { class: class(w), ..QueueConfig::weighted(w) }),
            fairness: Fairness::Bytes { mtu },
            saturation: Saturation::WorkConserving,
        };
        let history = run(config, &sizes);
        check_bound(&history, weights.map(|w| u64::from(w) * u64::from(mtu)), u64::from(mtu))?;
    }

    /// Classic WRR (packets), whatever the packet sizes.
    #[test]
    fn share_bound_packets(
        weights in proptest::array::uniform4(1u32..=12),
        sizes in proptest::collection::vec(any::<u16>(), 1..40),
    ) {
        let config = Config::new(weights, Fairness::Packets, Saturation::Forced);
        let history = run(config, &sizes);
        check_bound(&history, weights.map(u64::from), 1)?;
    }
}

/// The QBSS profile with best effort and QBSS backlogged: QBSS gets 1/99 of
/// the bytes (weights 98 and 1; queue 3 idle), within the bound.
#[test]
fn qbss_share_is_one_in_ninety_nine() {
    let config = Config::new(
        [98, 1, 0, 1],
        Fairness::Bytes { mtu: 1500 },
        Saturation::Forced,
    );
    let mut s: Scheduler<u16, N, CAP> = Scheduler::new(config).unwrap();
    let mut served = [0u64; N];
    for _ in 0..99 * 100 {
        for q in [0, 1] {
            while s.queue_len(q) < CAP {
                s.enqueue(q, 1500).unwrap();
            }
        }
        let (q, len) = s.dequeue_indexed().unwrap();
        served[q] += u64::from(len);
    }
    // 9900 packets of 1500 B in 100 full rounds of 98 + 1.
    assert_eq!(served, [98 * 100 * 1500, 100 * 1500, 0, 0]);
}
