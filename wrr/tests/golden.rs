//! Golden dequeue traces of small scenarios, compared with the committed
//! files in `tests/golden/`. Set `WRR_BLESS=1` to rewrite them after an
//! intended change (then review the diff by hand).
//!
//! The profile is the Juniper WRR profile of the TransPAC QBSS story
//! (DESIGN.md, "The problem we solve", incident 3): queue 0 best effort
//! weight 98, queue 1 QBSS weight 1, queue 2 premium weight 0, queue 3
//! network control weight 1.

use core::fmt::Write as _;
use wrr::{Config, Fairness, Saturation, Scheduler, Threshold};

const QBSS_WEIGHTS: [u32; 4] = [98, 1, 0, 1];

/// Offers the arrivals in order (with one dequeue after every
/// `dequeue_every` arrivals, if given), then drains the scheduler. The trace
/// has one line per refusal run and per service run: consecutive dequeues
/// from the same queue in the same phase, with their count, bytes and the
/// length of each packet in order.
fn trace(
    title: &str,
    config: Config<4>,
    arrivals: &[(usize, u32)],
    dequeue_every: Option<usize>,
) -> String {
    let mut s: Scheduler<u32, 4, 512> = Scheduler::new(config).unwrap();
    // (label, lengths)
    let mut runs: Vec<(String, Vec<u32>)> = Vec::new();
    let mut log = |label: String, len: u32| match runs.last_mut() {
        Some((last, lens)) if *last == label => lens.push(len),
        _ => runs.push((label, vec![len])),
    };
    let deq = |s: &mut Scheduler<u32, 4, 512>, log: &mut dyn FnMut(String, u32)| {
        let phase = s.phase();
        let (q, len) = s.dequeue_indexed().unwrap();
        log(format!("dequeue q{q} {phase:?}"), len);
    };
    for (i, &(q, len)) in arrivals.iter().enumerate() {
        if let Err(r) = s.enqueue(q, len) {
            log(format!("refuse q{q} ({})", r.reason), len);
        }
        if let Some(k) = dequeue_every {
            if (i + 1) % k == 0 && !s.is_empty() {
                deq(&mut s, &mut log);
            }
        }
    }
    while !s.is_empty() {
        deq(&mut s, &mut log);
    }
    assert!(s.dequeue().is_none());
    let mut out = String::new();
    writeln!(out, "# {title}").unwrap();
    writeln!(
        out,
        "# classes {:?}, {:?}, {:?}",
        config.queues.map(|q| q.class),
        config.fairness,
        config.saturation
    )
    .unwrap();
    for (label, lens) in runs {
        let bytes: u64 = lens.iter().map(|&l| u64::from(l)).sum();
        let lens: Vec<String> = lens.iter().map(u32::to_string).collect();
        writeln!(out, "{label} x{} {bytes}B: {}", lens.len(), lens.join(" ")).unwrap();
    }
    for q in 0..4 {
        let st = s.stats(q).unwrap();
        writeln!(
            out,
            "# q{q}: enqueued {}/{}B dequeued {}/{}B dropped {}/{}B peak {}/{}B",
            st.enqueued_packets,
            st.enqueued_bytes,
            st.dequeued_packets,
            st.dequeued_bytes,
            st.dropped_packets,
            st.dropped_bytes,
            st.peak_backlog_packets,
            st.peak_backlog_bytes
        )
        .unwrap();
    }
    out
}

fn check(name: &str, actual: &str) {
    let path = format!("{}/tests/golden/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("WRR_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run with WRR_BLESS=1 to create it)"));
    assert_eq!(actual, expected, "trace {name} differs from {path}");
}

/// Arrivals: `q0` packets for queue 0, then 10 for queue 1, 5 for queue 2,
/// 3 for queue 3, each queue cycling through its list of sizes.
fn burst(q0: usize, sizes: [&[u32]; 4]) -> Vec<(usize, u32)> {
    let counts = [q0, 10, 5, 3];
    let mut v = Vec::new();
    for q in 0..4 {
        for i in 0..counts[q] {
            v.push((q, sizes[q][i % sizes[q].len()]));
        }
    }
    v
}

/// The trace's event lines (comments left out).
fn events(t: &str) -> Vec<&str> {
    t.lines().filter(|l| !l.starts_with('#')).collect()
}

/// Asserts that an event line starts with `prefix`, showing it if not.
fn assert_starts(line: &str, prefix: &str) {
    assert!(
        line.starts_with(prefix),
        "{line:?} does not start with {prefix:?}"
    );
}

/// The mixed-size burst of both mixed-size scenarios, traced under `fairness`.
fn mixed_sizes_trace(fairness: Fairness) -> String {
    trace(
        "300 packets of 1500/40/576 B to q0, 10 x 1500 B to q1, 5 x 64 B to q2, 40/1500 B to q3",
        Config::new(QBSS_WEIGHTS, fairness, Saturation::Forced),
        &burst(300, [&[1500, 40, 576], &[1500], &[64], &[40, 1500]]),
        None,
    )
}

#[test]
fn qbss_equal_sizes_bytes() {
    let config = Config::new(
        QBSS_WEIGHTS,
        Fairness::Bytes { mtu: 1500 },
        Saturation::Forced,
    );
    let t = trace(
        "200 x 1500 B to q0, 10 to q1, 5 to q2, 3 to q3, then drain",
        config,
        &burst(200, [&[1500]; 4]),
        None,
    );
    // Hand check of the first rounds: 98 best-effort packets, one QBSS, one
    // network control, then best effort again.
    let lines = events(&t);
    assert_eq!(
        lines[0],
        "refuse q2 (queue has weight 0 and is never served) x5 7500B: 1500 1500 1500 1500 1500"
    );
    assert_starts(lines[1], "dequeue q0 Wrr x98 147000B: ");
    assert_starts(lines[2], "dequeue q1 Wrr x1 1500B");
    assert_starts(lines[3], "dequeue q3 Wrr x1 1500B");
    assert_starts(lines[4], "dequeue q0 Wrr x98 147000B: ");
    check("qbss_equal_bytes", &t);
}

#[test]
fn qbss_mixed_sizes_bytes() {
    let t = mixed_sizes_trace(Fairness::Bytes { mtu: 1500 });
    // DRR by hand: q0 starts with 98 x 1500 = 147000 B of deficit; the
    // 1500+40+576 = 2116 B triple fits 69 times (207 packets, 146004 B) and
    // the next 1500 B packet does not fit the 996 B left, which ends the
    // turn. q1 sends one 1500 B packet; q3 sends 40 B, then its 1500 B packet
    // does not fit the 1460 B left. q0 then has 996 + 147000 B, enough for
    // its last 93 packets (65596 B).
    let lines = events(&t);
    assert_starts(lines[1], "dequeue q0 Wrr x207 146004B: ");
    assert_starts(lines[2], "dequeue q1 Wrr x1 1500B");
    assert_eq!(lines[3], "dequeue q3 Wrr x1 40B: 40");
    assert_starts(lines[4], "dequeue q0 Wrr x93 65596B: ");
    check("qbss_mixed_bytes", &t);
}

#[test]
fn qbss_mixed_sizes_packets() {
    let t = mixed_sizes_trace(Fairness::Packets);
    // Classic WRR counts packets: 98 from queue 0 whatever their sizes, then one each.
    let lines = events(&t);
    assert_starts(lines[1], "dequeue q0 Wrr x98 ");
    assert_starts(lines[2], "dequeue q1 Wrr x1 1500B");
    assert_starts(lines[3], "dequeue q3 Wrr x1 40B");
    check("qbss_mixed_packets", &t);
}

#[test]
fn qbss_when_saturated_interleaved() {
    // Arrivals interleave queue 0 and queue 1; one dequeue per two arrivals,
    // so the backlog grows through the 20-packet threshold: arrival order
    // first, WRR after, arrival order again while the last packets drain
    // (low mark 10).
    let config = Config::new(
        QBSS_WEIGHTS,
        Fairness::Bytes { mtu: 1500 },
        Saturation::WhenSaturated(Threshold::packets(20).with_low(10)),
    );
    let arrivals: Vec<(usize, u32)> = (0..120).map(|i| (i % 2, 1500)).collect();
    let t = trace(
        "120 x 1500 B alternating q0/q1, one dequeue per two arrivals, then drain",
        config,
        &arrivals,
        Some(2),
    );
    let lines = events(&t);
    assert_eq!(lines[0], "dequeue q0 Fifo x1 1500B: 1500");
    assert_eq!(lines[1], "dequeue q1 Fifo x1 1500B: 1500");
    check("qbss_when_saturated", &t);
}
