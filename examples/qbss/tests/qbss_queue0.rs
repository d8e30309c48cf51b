//! The queue-0 anomaly (docs/qbss-queue0.md): the candidate mechanisms of
//! `examples/scenarios/queue0/`, each run on the deployed profile and on both readings
//! of the swap. The story observed QBSS pushed to about 1% in the deployed profile and
//! an even split after the swap; these tests pin what each mechanism predicts, so the
//! document's table is the model's output.

use std::path::Path;

use qbss::report::link_goodput;
use qbss::scenario::Scenario;
use qbss::sim;

/// QBSS's and best effort's mean shares of the link while both run (12-25 s).
fn shares(name: &str) -> (f64, f64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/queue0")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let sc = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let res = sim::run(&sc).unwrap();
    let g = link_goodput(&sc) as f64;
    let share = |k: usize| res.intervals.total(k, 12, 25).bytes as f64 * 8.0 / 13.0 / g;
    (share(0), share(1))
}

fn near(x: f64, want: f64) -> bool {
    (x - want).abs() <= 0.01
}

#[test]
fn a_plain_wrr_never_splits_evenly() {
    let (q, b) = shares("q0-original-plain");
    assert!(near(q, 0.01) && near(b, 0.99), "{q} {b}");
    let (q, b) = shares("q0-swap-keep-plain");
    assert!(near(q, 0.99) && near(b, 0.01), "{q} {b}");
    // Weights following the traffic: QBSS yields, the engineers' surprise is unexplained.
    let (q, b) = shares("q0-swap-follow-plain");
    assert!(near(q, 0.01) && near(b, 0.99), "{q} {b}");
}

#[test]
fn saturation_judged_on_queue_0_changes_nothing() {
    for (c, want_q) in [
        ("original", 0.01),
        ("swap-keep", 0.99),
        ("swap-follow", 0.01),
    ] {
        let (q, _) = shares(&format!("q0-{c}-sat-q0"));
        assert!(near(q, want_q), "{c}: {q}");
    }
}

#[test]
fn queue_0_outside_the_wrr_splits_evenly_everywhere() {
    // It reproduces the swap's 50/50 under both readings, and predicts 50/50 for the
    // deployed profile too, where QBSS was observed at 1%: ruled out.
    for c in ["original", "swap-keep", "swap-follow"] {
        let (q, b) = shares(&format!("q0-{c}-q0-outside"));
        assert!(near(q, 0.5) && near(b, 0.5), "{c}: {q} {b}");
    }
}

#[test]
fn a_fifo_ahead_of_the_scheduler_ignores_classes() {
    // Class-blind: the split is the same whatever the queues and weights, set by the
    // arrivals alone, so the deployed profile could not have pushed QBSS to 1%.
    let (q0, b0) = shares("q0-original-ingress-fifo");
    assert!(q0 > 0.1 && b0 > 0.1, "{q0} {b0}");
    for c in ["swap-keep", "swap-follow"] {
        let (q, b) = shares(&format!("q0-{c}-ingress-fifo"));
        assert!(near(q, q0) && near(b, b0), "{c}: {q} {b} vs {q0} {b0}");
    }
}
