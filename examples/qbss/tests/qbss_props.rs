//! Property: on a saturated link the long-run shares of backlogged streams follow the
//! weights of their queues, and a run never depends on anything but its scenario.

use proptest::prelude::*;
use qbss::scenario::Scenario;
use qbss::sim;

/// A scenario with one UDP stream per queue, each offering twice the link, packets of
/// the given sizes, marked by DSCP through a DSCP classifier (stream i -> queue i).
fn scenario(weights: &[u32], sizes: &[u32], saturation: &str, packets_fair: bool) -> String {
    let n = weights.len();
    let mut table = vec![0u8; 64];
    for (i, slot) in table.iter_mut().enumerate().take(n) {
        *slot = i as u8; // DSCP i -> queue i
    }
    let queues: Vec<String> = weights
        .iter()
        .map(|w| format!("{{ weight = {w}, limit_packets = 64 }}"))
        .collect();
    let mut s = format!(
        "name = \"prop\"\nduration_s = 4\n[link]\nrate = \"20Mbit/s\"\n[classifier]\nby = \"dscp\"\nqueues = {table:?}\n[scheduler]\nfairness = \"{}\"\nsaturation = \"{saturation}\"\nthreshold_packets = 8\nqueue = [{}]\n",
        if packets_fair { "packets" } else { "bytes" },
        queues.join(", ")
    );
    for (i, size) in sizes.iter().enumerate() {
        s += &format!("[[stream]]\nname = \"s{i}\"\nrate = \"40Mbit/s\"\npacket_bytes = {size}\ndscp = {i}\nstop_s = 4\n");
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn backlogged_shares_follow_the_weights(
        weights in prop::collection::vec(1u32..=20, 2..=4),
        sizes_seed in prop::collection::vec(100u32..=1500, 4),
        mode in 0usize..3,
        packets_fair in any::<bool>(),
    ) {
        let sizes = &sizes_seed[..weights.len()];
        let saturation = ["work-conserving", "forced", "when-saturated"][mode];
        let sc = Scenario::from_toml(&scenario(&weights, sizes, saturation, packets_fair)).unwrap();
        let res = sim::run(&sc).unwrap();
        // Skip the first second (queues filling), measure 1-4 s.
        let got: Vec<f64> = (0..weights.len())
            .map(|k| {
                let t = res.intervals.total(k, 1, 4);
                if packets_fair { t.packets as f64 } else { t.bytes as f64 }
            })
            .collect();
        let total: f64 = got.iter().sum();
        let wsum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        // The link is saturated: everything it carried went to these streams.
        prop_assert!(total > 0.0);
        for (k, &w) in weights.iter().enumerate() {
            let want = f64::from(w) / wsum;
            let share = got[k] / total;
            // DRR/WRR keeps each queue within one quantum (weight x MTU bytes, or
            // weight packets) of its share per round; over 3 s of a 20 Mbit/s link
            // (thousands of rounds' worth of packets) that is well inside 2 points.
            prop_assert!((share - want).abs() < 0.02, "queue {}: share {:.4}, weight share {:.4} ({:?}, {:?})", k, share, want, weights, sizes);
        }
    }
}
