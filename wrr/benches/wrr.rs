//! Enqueue + dequeue cost per packet of `wrr::Scheduler` against a plain
//! reference DRR (a `VecDeque` per queue and a `VecDeque` of active queues,
//! no limits, no counters, no saturation tracking), measured in the same run.
//!
//! Workload: every queue is prefilled with 4 packets; then each step offers
//! one packet (queue and length from a fixed pseudo-random table) and takes
//! one packet out, so the backlog stays constant while queues keep joining
//! and leaving the round. Weights cycle 1, 2, 3, 4; lengths are 64..=1500
//! bytes, MTU 1500. Byte mode is DRR, packet mode classic WRR.
//!
//! Both sides go through the same `Sched` trait, whose methods are
//! `#[inline(always)]`, so each is compiled into the same timing loop; an
//! out-of-line call on one side only would measure the call, not the
//! scheduler.
//!
//! Besides criterion's own report, a summary is printed with ns/packet,
//! Mpackets/s, the ratio to the reference and the 64-queue / 4-queue ratio
//! (medians of repeated runs). Goals: ratio to the reference <= 1.0, and
//! 64 queues within 1.2x of 4 queues.

use criterion::{black_box, Criterion, Throughput};
use std::time::Instant;
use wrr::{Config, Fairness, Saturation, Scheduler};

#[path = "../tests/support/reference_drr.rs"]
mod reference_drr;
use reference_drr::ReferenceDrr;

const CAP: usize = 128;
const PREFILL: usize = 4;
const TABLE: usize = 4096;
const MTU: u32 = 1500;

/// Deterministic arrivals: (queue, length).
fn arrivals(n: usize) -> Vec<(usize, u32)> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..TABLE)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let q = (x % n as u64) as usize;
            let len = 64 + ((x >> 32) % u64::from(MTU - 63)) as u32;
            (q, len)
        })
        .collect()
}

fn weights<const N: usize>() -> [u32; N] {
    core::array::from_fn(|i| (i % 4) as u32 + 1)
}

/// The reference: a textbook DRR with std collections, shared with the
/// differential test that proves both send packets in the same order.
type Reference = ReferenceDrr<u32>;

fn reference(weights: &[u32], bytes: bool) -> Reference {
    let unit = if bytes { u64::from(MTU) } else { 1 };
    ReferenceDrr::new(weights, unit, bytes, CAP)
}

trait Sched {
    /// Offers a packet; false if refused.
    fn put(&mut self, q: usize, len: u32) -> bool;
    fn take(&mut self) -> Option<(usize, u32)>;
}

impl Sched for Reference {
    #[inline(always)]
    fn put(&mut self, q: usize, len: u32) -> bool {
        self.enqueue(q, len);
        true
    }
    #[inline(always)]
    fn take(&mut self) -> Option<(usize, u32)> {
        self.dequeue()
    }
}

impl<const N: usize> Sched for Scheduler<u32, N, CAP> {
    #[inline(always)]
    fn put(&mut self, q: usize, len: u32) -> bool {
        self.enqueue(q, len).is_ok()
    }
    #[inline(always)]
    fn take(&mut self) -> Option<(usize, u32)> {
        self.dequeue_indexed()
    }
}

fn ours<const N: usize>(bytes: bool) -> Box<Scheduler<u32, N, CAP>> {
    let fairness = if bytes {
        Fairness::Bytes { mtu: MTU }
    } else {
        Fairness::Packets
    };
    let config = Config::new(weights::<N>(), fairness, Saturation::WorkConserving);
    Box::new(Scheduler::new(config).unwrap())
}

fn prefill<S: Sched>(s: &mut S, n: usize, table: &[(usize, u32)]) {
    for i in 0..n * PREFILL {
        assert!(s.put(i % n, table[i % TABLE].1));
    }
}

/// `steps` enqueue+dequeue pairs; returns a checksum so nothing is optimized away.
#[inline]
fn steps<S: Sched>(s: &mut S, table: &[(usize, u32)], start: usize, steps: usize) -> u64 {
    let mut sum = 0u64;
    for i in start..start + steps {
        let (q, len) = table[i % TABLE];
        if !s.put(q, len) {
            sum = sum.wrapping_add(1 << 40);
        }
        if let Some((q, len)) = s.take() {
            sum = sum.wrapping_add(q as u64 ^ u64::from(len));
        }
    }
    sum
}

/// Both implementations must send the same packets in the same order.
fn check_same_order<const N: usize>(bytes: bool) {
    let table = arrivals(N);
    let mut a = ours::<N>(bytes);
    let mut b = reference(&weights::<N>(), bytes);
    prefill(&mut *a, N, &table);
    prefill(&mut b, N, &table);
    for i in 0..20_000 {
        let (q, len) = table[i % TABLE];
        assert!(a.put(q, len));
        assert!(b.put(q, len));
        assert_eq!(a.take(), b.take(), "step {i}, {N} queues, bytes {bytes}");
    }
}

/// A workload ready to time: a scheduler after prefill and warm-up.
struct Timed<S> {
    s: S,
    table: Vec<(usize, u32)>,
    at: usize,
}

impl<S: Sched> Timed<S> {
    fn new(mut s: S, n: usize, warm: usize) -> Self {
        let table = arrivals(n);
        prefill(&mut s, n, &table);
        black_box(steps(&mut s, &table, 0, warm));
        Timed { s, table, at: warm }
    }

    /// ns per packet for `count` packets.
    fn time(&mut self, count: usize) -> f64 {
        let t = Instant::now();
        black_box(steps(&mut self.s, &self.table, self.at, count));
        self.at += count;
        t.elapsed().as_nanos() as f64 / count as f64
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `a` and `b` alternately, `runs` times each: the medians of each and
/// the median of the per-pair ratios `a / b` (robust against load from other
/// processes, which hits both sides of a pair alike).
fn paired<A: Sched, B: Sched>(
    a: &mut Timed<A>,
    b: &mut Timed<B>,
    runs: usize,
    per_run: usize,
) -> (f64, f64, f64) {
    let mut ta = Vec::with_capacity(runs);
    let mut tb = Vec::with_capacity(runs);
    let mut ratio = Vec::with_capacity(runs);
    for _ in 0..runs {
        let x = a.time(per_run);
        let y = b.time(per_run);
        ta.push(x);
        tb.push(y);
        ratio.push(x / y);
    }
    (median(ta), median(tb), median(ratio))
}

fn criterion_group<const N: usize>(c: &mut Criterion) {
    for bytes in [true, false] {
        let mode = if bytes { "bytes" } else { "packets" };
        let mut g = c.benchmark_group(format!("{N}q-{mode}"));
        g.throughput(Throughput::Elements(1024));
        let table = arrivals(N);
        let mut a = ours::<N>(bytes);
        prefill(&mut *a, N, &table);
        let mut i = 0;
        g.bench_function("wrr", |bch| {
            bch.iter(|| {
                i += 1024;
                black_box(steps(&mut *a, &table, i, 1024))
            })
        });
        let mut b = reference(&weights::<N>(), bytes);
        prefill(&mut b, N, &table);
        let mut i = 0;
        g.bench_function("reference", |bch| {
            bch.iter(|| {
                i += 1024;
                black_box(steps(&mut b, &table, i, 1024))
            })
        });
        g.finish();
    }
}

/// `WRR_BENCH_PROFILE=<wrr|ref>:<4|64>:<bytes|packets>:<count>` runs only
/// that workload, for instruction counting under a profiler.
fn profile(spec: &str) {
    let parts: Vec<&str> = spec.split(':').collect();
    let [which, n, mode, count] = parts[..] else {
        panic!("WRR_BENCH_PROFILE=wrr|ref:4|64:bytes|packets:COUNT")
    };
    let bytes = mode == "bytes";
    let count: usize = count.parse().unwrap();
    let sum = match (which, n) {
        ("wrr", "4") => run_once(ours::<4>(bytes), 4, count),
        ("wrr", "64") => run_once(ours::<64>(bytes), 64, count),
        ("ref", "4") => run_once(reference(&weights::<4>(), bytes), 4, count),
        ("ref", "64") => run_once(reference(&weights::<64>(), bytes), 64, count),
        _ => panic!("unknown workload {spec}"),
    };
    println!("{spec}: checksum {sum}");
}

fn run_once<S: Sched>(mut s: S, n: usize, count: usize) -> u64 {
    let table = arrivals(n);
    prefill(&mut s, n, &table);
    steps(&mut s, &table, 0, count)
}

fn main() {
    if let Ok(spec) = std::env::var("WRR_BENCH_PROFILE") {
        profile(&spec);
        return;
    }
    check_same_order::<4>(true);
    check_same_order::<4>(false);
    check_same_order::<64>(true);
    check_same_order::<64>(false);

    let quick = std::env::args().any(|a| a == "--test" || a == "--quick");
    let mut c = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2))
        .configure_from_args();
    criterion_group::<4>(&mut c);
    criterion_group::<64>(&mut c);
    c.final_summary();

    let (runs, per_run) = if quick { (3, 10_000) } else { (51, 200_000) };
    let warm = per_run / 4;
    println!();
    println!(
        "summary: enqueue+dequeue per packet; medians of {runs} alternating runs of {per_run} packets"
    );
    println!(
        "{:<8} {:>6} {:>11} {:>9} {:>11} {:>9} {:>8}",
        "mode", "queues", "wrr ns/pkt", "wrr Mpps", "ref ns/pkt", "ref Mpps", "wrr/ref"
    );
    let mut scale = Vec::new();
    for bytes in [true, false] {
        let mode = if bytes { "bytes" } else { "packets" };
        let mut o4 = Timed::new(ours::<4>(bytes), 4, warm);
        let mut r4 = Timed::new(reference(&weights::<4>(), bytes), 4, warm);
        let mut o64 = Timed::new(ours::<64>(bytes), 64, warm);
        let mut r64 = Timed::new(reference(&weights::<64>(), bytes), 64, warm);
        for (n, (o, r, ratio)) in [
            (4, paired(&mut o4, &mut r4, runs, per_run)),
            (64, paired(&mut o64, &mut r64, runs, per_run)),
        ] {
            println!(
                "{:<8} {:>6} {:>11.2} {:>9.1} {:>11.2} {:>9.1} {:>8.2}",
                mode,
                n,
                o,
                1e3 / o,
                r,
                1e3 / r,
                ratio
            );
        }
        let (_, _, ratio) = paired(&mut o64, &mut o4, runs, per_run);
        scale.push((mode, ratio));
    }
    for (mode, ratio) in scale {
        println!("{mode}: wrr 64 queues / 4 queues = {ratio:.2} (goal <= 1.2)");
    }
}

// `Box<Scheduler>` forwards to the scheduler.
impl<S: Sched + ?Sized> Sched for Box<S> {
    #[inline(always)]
    fn put(&mut self, q: usize, len: u32) -> bool {
        (**self).put(q, len)
    }
    #[inline(always)]
    fn take(&mut self) -> Option<(usize, u32)> {
        (**self).take()
    }
}
