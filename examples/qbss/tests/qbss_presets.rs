//! Each built-in scenario against what the TransPAC engineers observed (DESIGN.md,
//! "The problem we solve", point 3, and issue 6), with the tolerance stated per check.

use qbss::report::link_goodput;
use qbss::scenario::{Scenario, StreamKind};
use qbss::sim::{self, RunResult};
use qbss::tcp::Cc;
use qbss::{link, presets};

fn run(name: &str) -> (Scenario, RunResult) {
    let p = presets::find(name).unwrap_or_else(|| panic!("no preset {name}"));
    let sc = Scenario::from_toml(p.toml).unwrap_or_else(|e| panic!("{name}: {e}"));
    let res = sim::run(&sc).unwrap_or_else(|e| panic!("{name}: {e}"));
    (sc, res)
}

fn stream(sc: &Scenario, name: &str) -> usize {
    sc.streams
        .iter()
        .position(|s| s.name == name)
        .unwrap_or_else(|| panic!("no stream {name}"))
}

/// Received bit/s of `stream` in each interval of `from..to`.
fn rates(res: &RunResult, k: usize, from: usize, to: usize) -> Vec<f64> {
    (from..to)
        .map(|i| res.intervals.cell(i, k).bytes as f64 * 8.0)
        .collect()
}

fn assert_each_within(what: &str, values: &[f64], lo: f64, hi: f64) {
    for (i, v) in values.iter().enumerate() {
        assert!(
            (lo..=hi).contains(v),
            "{what}: interval {i} of the window: {v:.0} bit/s not in {lo:.0}..={hi:.0}"
        );
    }
}

/// VC goodput for 1500-byte packets: the VC rate counts 32 cells (1696 bytes) per packet.
fn vc_goodput(sc: &Scenario) -> f64 {
    let vc = sc.vc.expect("scenario has a VC");
    vc.rate_bps as f64 * 1500.0 / link::wire_bytes(sc.link.framing, 1500) as f64
}

#[test]
fn transpac_qbss_pushed_to_one_percent_then_reclaims_the_pipe() {
    let (sc, res) = run("transpac");
    let g = link_goodput(&sc) as f64;
    // OC-3: 149.76 Mbit/s SONET payload x 1500/1696 (AAL5 cell tax).
    assert_eq!(link_goodput(&sc), 132_452_830);
    let (q, be) = (stream(&sc, "qbss"), stream(&sc, "be"));
    // Alone (0-10 s): QBSS fills the link, within 0.1%.
    assert_each_within("qbss alone", &rates(&res, q, 0, 10), 0.999 * g, 1.001 * g);
    // With best effort (11-40 s, the first second of the change left out): QBSS gets
    // its WRR share 1/(98+1) = 1.01% of the link; accepted 0.8% to 1.2%.
    assert_each_within(
        "qbss squeezed",
        &rates(&res, q, 11, 40),
        0.008 * g,
        0.012 * g,
    );
    // Best effort gets 98/99 of the link, within 0.5%.
    assert_each_within("be", &rates(&res, be, 11, 40), 0.985 * g, 0.995 * g);
    // After best effort stops (41-60 s) QBSS reclaims the pipe, within 0.1%.
    assert_each_within(
        "qbss reclaims",
        &rates(&res, q, 41, 60),
        0.999 * g,
        1.001 * g,
    );
    assert_eq!(res.intervals.total(be, 41, 60).packets, 0);
}

#[test]
fn transpac_10mbit_be_gets_its_10_mbits_and_qbss_the_rest() {
    let (sc, res) = run("transpac-10mbit-be");
    let g = link_goodput(&sc) as f64;
    let (q, be) = (stream(&sc, "qbss"), stream(&sc, "be"));
    // Best effort: its 10 Mbit/s, within 1%, and nothing dropped.
    assert_each_within("be", &rates(&res, be, 11, 40), 9.9e6, 10.1e6);
    assert_eq!(res.intervals.total(be, 0, 60).drops, 0);
    // QBSS keeps the rest of the link, within 1%.
    assert_each_within(
        "qbss",
        &rates(&res, q, 11, 40),
        0.99 * (g - 10e6),
        1.01 * (g - 10e6),
    );
}

#[test]
fn vc_10mbit_default_splits_the_vc() {
    let (sc, res) = run("vc-10mbit");
    let v = vc_goodput(&sc);
    let (q, be) = (stream(&sc, "qbss"), stream(&sc, "be"));
    // Arrival-order service: each gets half of the VC, within 5 points (45% to 55%).
    assert_each_within("qbss", &rates(&res, q, 1, 30), 0.45 * v, 0.55 * v);
    assert_each_within("be", &rates(&res, be, 1, 30), 0.45 * v, 0.55 * v);
    // The VC is full: together within 1% of its goodput.
    let sum: f64 = (1..30)
        .map(|i| (res.intervals.cell(i, q).bytes + res.intervals.cell(i, be).bytes) as f64 * 8.0)
        .sum();
    assert!((sum / 29.0 - v).abs() < 0.01 * v, "{sum}");
}

#[test]
fn vc_10mbit_forced_gives_best_effort_nearly_all() {
    let (sc, res) = run("vc-10mbit-forced");
    let v = vc_goodput(&sc);
    let (q, be) = (stream(&sc, "qbss"), stream(&sc, "be"));
    // WRR on every packet: best effort at least 97% of the VC, QBSS at most 2%.
    assert_each_within("be", &rates(&res, be, 1, 30), 0.97 * v, 1.001 * v);
    assert_each_within("qbss", &rates(&res, q, 1, 30), 0.0, 0.02 * v);
}

#[test]
fn premium_weight_0_gets_nothing_and_every_packet_is_a_drop() {
    let (sc, res) = run("premium-weight-0");
    let g = link_goodput(&sc) as f64;
    let (be, q, pr) = (
        stream(&sc, "be"),
        stream(&sc, "qbss"),
        stream(&sc, "premium"),
    );
    let p = res.intervals.total(pr, 0, 30);
    assert_eq!(p.packets, 0);
    assert_eq!(p.bytes, 0);
    // 10 Mbit/s of 1500-byte packets for 30 s = 25,000 packets, all dropped.
    assert_eq!(res.totals[pr].sent, 25_000);
    assert_eq!(p.drops, 25_000);
    assert_eq!(res.queue_stats[2].dropped_packets, 25_000);
    assert_each_within("be", &rates(&res, be, 1, 30), 0.99 * 50e6, 1.01 * 50e6);
    assert_each_within(
        "qbss",
        &rates(&res, q, 1, 30),
        0.99 * (g - 50e6),
        1.01 * (g - 50e6),
    );
}

#[test]
fn queue0_swap_shows_a_correct_wrr_not_the_anomaly() {
    let (sc, res) = run("queue0-swap");
    let g = link_goodput(&sc) as f64;
    let (q, be) = (stream(&sc, "qbss"), stream(&sc, "be"));
    // QBSS now sits in the weight-98 queue: 98/99 of the link, within 0.5%; best effort
    // gets 1/99, 0.8% to 1.2%. No even split.
    assert_each_within("qbss", &rates(&res, q, 1, 30), 0.985 * g, 0.995 * g);
    assert_each_within("be", &rates(&res, be, 1, 30), 0.008 * g, 0.012 * g);
    assert!(
        sc.description.contains("evenly"),
        "the description must tell the anomaly"
    );
    assert!(sc.description.contains("does not reproduce"));
}

#[test]
fn presets_are_deterministic() {
    for name in ["vc-10mbit", "transpac-tcp"] {
        let (sc, a) = run(name);
        let (_, b) = run(name);
        assert_eq!(a, b, "{name}");
        let ja = serde_json::to_string(&qbss::report::to_json(&sc, &a)).unwrap();
        let jb = serde_json::to_string(&qbss::report::to_json(&sc, &b)).unwrap();
        assert_eq!(ja, jb);
    }
}

#[test]
fn transpac_tcp_scavenger_tcp_yields_then_climbs_back() {
    let (sc, res) = run("transpac-tcp");
    let g = link_goodput(&sc) as f64;
    let (q, be) = (stream(&sc, "qbss-tcp"), stream(&sc, "be-tcp"));
    let mean = |k: usize, from: usize, to: usize| {
        res.intervals.total(k, from, to).bytes as f64 * 8.0 / (to - from) as f64
    };
    // Alone, after slow start (2-10 s), QBSS TCP fills the link, within 0.5%.
    assert_each_within("qbss alone", &rates(&res, q, 2, 10), 0.995 * g, 1.001 * g);
    // While best effort runs (12-40 s): best effort at least 97% of the link on
    // average, QBSS at most its WRR share 1/99 on average (plus 0.2% for rounding).
    // Per second it comes in bursts: a TCP receiver delivers in order, so the window
    // queued behind a lost packet arrives at once when the retransmission, itself
    // queued at QBSS's 1%, fills the hole.
    assert!(mean(be, 12, 40) >= 0.97 * g, "{}", mean(be, 12, 40));
    assert!(mean(q, 12, 40) <= 0.012 * g, "{}", mean(q, 12, 40));
    assert!(mean(q, 12, 40) > 0.0, "QBSS keeps its share");
    // After best effort leaves (41-60 s): QBSS climbs back, to at least a fifth of the
    // link on average, more in the second half than in the first (additive increase).
    assert!(mean(q, 41, 60) >= 0.2 * g, "{}", mean(q, 41, 60));
    assert!(mean(q, 51, 60) > mean(q, 41, 50));
    assert_eq!(res.intervals.total(be, 41, 60).packets, 0);
    // Losses come only from the router's queues, and TCP repaired them all: everything
    // sent was delivered, dropped, or still in flight at the end (at most a window).
    let t = res.totals[q];
    let got = res.intervals.total(q, 0, 60);
    assert!(t.sent >= got.packets + got.drops);
    assert!(
        t.sent - got.packets - got.drops <= 2048 + t.retransmits,
        "{t:?} {got:?}"
    );
}

/// Seconds after `from` until stream `k` first carries at least `share` of the link.
fn reclaim_s(res: &RunResult, k: usize, from: usize, g: f64, share: f64) -> Option<usize> {
    (from..res.intervals.len())
        .find(|&i| res.intervals.cell(i, k).bytes as f64 * 8.0 >= share * g)
        .map(|i| i + 1 - from)
}

#[test]
fn transpac_tcp_cubic_yields_then_reclaims_faster_than_reno() {
    let (sc, cubic) = run("transpac-tcp-cubic");
    let (_, reno) = run("transpac-tcp");
    let g = link_goodput(&sc) as f64;
    let (q, be) = (stream(&sc, "qbss-tcp"), stream(&sc, "be-tcp"));
    for (name, s) in [("qbss-tcp", q), ("be-tcp", be)] {
        match sc.streams[s].kind {
            StreamKind::Tcp { cc, .. } => assert_eq!(cc, Cc::Cubic, "{name}"),
            _ => panic!("{name} is tcp"),
        }
    }
    let mean = |res: &RunResult, k: usize, from: usize, to: usize| {
        res.intervals.total(k, from, to).bytes as f64 * 8.0 / (to - from) as f64
    };
    // Alone it fills the link; while best effort runs it keeps only its WRR share.
    assert_each_within("qbss alone", &rates(&cubic, q, 3, 10), 0.99 * g, 1.001 * g);
    assert!(mean(&cubic, be, 12, 40) >= 0.97 * g);
    assert!(
        mean(&cubic, q, 12, 40) <= 0.012 * g,
        "in-order bursts average to its share"
    );
    // After best effort leaves: CUBIC's convex regrowth carries more than Reno's one
    // packet per round trip, in the last 10 s by at least a third.
    assert!(mean(&cubic, q, 41, 60) > mean(&reno, q, 41, 60));
    assert!(mean(&cubic, q, 50, 60) > 1.33 * mean(&reno, q, 50, 60));
    // Within the 20 s, Reno stays under half of the link; CUBIC passes 70% of it.
    assert_eq!(reclaim_s(&reno, q, 40, g, 0.5), None);
    assert!(reclaim_s(&cubic, q, 40, g, 0.7).is_some());
}

#[test]
fn scale_divides_every_rate_and_keeps_the_story() {
    let sc = Scenario::from_toml(qbss::presets::find("transpac").unwrap().toml).unwrap();
    let small = sc.scaled(10.0).unwrap();
    assert_eq!(small.link.payload_bps, sc.link.payload_bps / 10);
    assert_eq!(link_goodput(&small), link_goodput(&sc) / 10);
    for (a, b) in sc.streams.iter().zip(&small.streams) {
        match (a.kind, b.kind) {
            (StreamKind::Udp { rate_bps: x }, StreamKind::Udp { rate_bps: y }) => {
                assert_eq!(x / 10, y)
            }
            _ => panic!("udp"),
        }
    }
    assert!(sc.scaled(0.5).is_err() && sc.scaled(f64::NAN).is_err() && sc.scaled(1e9).is_err());
    // The same shares per second, a tenth of the bits.
    let res = sim::run(&small).unwrap();
    let g = link_goodput(&small) as f64;
    let q = stream(&small, "qbss");
    assert_each_within("qbss alone", &rates(&res, q, 1, 10), 0.99 * g, 1.01 * g);
    assert_each_within("qbss squeezed", &rates(&res, q, 12, 40), 0.0, 0.012 * g);
}

#[test]
fn vc_10mbit_policed_splits_the_vc_whatever_the_class() {
    let (sc, res) = run("vc-10mbit-policed");
    let (q, be) = (stream(&sc, "qbss"), stream(&sc, "be"));
    let vc = vc_goodput(&sc);
    let (tq, tb) = (
        res.intervals.total(q, 1, 30),
        res.intervals.total(be, 1, 30),
    );
    let (rq, rb) = (tq.bytes as f64 * 8.0 / 29.0, tb.bytes as f64 * 8.0 / 29.0);
    // The policer passes the VC's contract and no more, between the two streams
    // evenly (each 45% to 55% of it), although WRR is forced on every packet.
    assert!(
        (rq + rb) <= 1.01 * vc && (rq + rb) >= 0.97 * vc,
        "{rq} + {rb} vs {vc}"
    );
    for (name, r) in [("qbss", rq), ("be", rb)] {
        assert!(r >= 0.45 * vc && r <= 0.55 * vc, "{name}: {r} of {vc}");
    }
    // Every drop is the policer's: the scheduler refused nothing.
    assert_eq!(res.totals[q].refused + res.totals[be].refused, 0);
    assert!(res.totals[be].policed > 10_000);
}
