//! `qbss-model` checked against real packets: each preset runs, scaled,
//! through `qbss-router` in `qbss-lab.sh` (real UDP sockets, real Linux TCP
//! with the stream's congestion control, the router's classifier, WRR
//! scheduler, VC and paced link between two TUN devices), and the measured
//! per-second figures must agree with the model's run of the same scaled
//! scenario (issue 16):
//!
//! * UDP presets: each stream's throughput within 5% of the link rate in
//!   every steady second (no stream starting or stopping in it or the
//!   second before): QBSS squeezed to its WRR share while best effort runs
//!   and reclaiming the link after (`transpac`), WRR applied only when the
//!   port is saturated (`vc-10mbit`), forced (`vc-10mbit-forced`), a
//!   policer that cannot protect best effort (`vc-10mbit-policed`), weight
//!   0 served never (`premium-weight-0`), the queues swapped
//!   (`queue0-swap`), a 10 Gbit/s port (`tengig`);
//! * TCP presets: each stream's throughput averaged over 5-s windows within
//!   10% of the link rate, and the time scavenger TCP takes to reclaim 90%
//!   of the link after best effort leaves within 25% of the measured one
//!   (NewReno and CUBIC).
//!
//! A disagreement fails naming the stream and the second (or window).
//!
//! **Scale.** The OC-3 presets run at `--scale 10` (the OC-3's 132 Mbit/s
//! of goodput becomes 13.2 Mbit/s, about 1,100 packets/s) and `tengig` at
//! `--scale 1000` (10 Gbit/s becomes 9.75 Mbit/s): rates a debug-built
//! router and Python senders hold steadily on a shared 2-core machine, where
//! the unscaled 11,000 to 800,000 packets/s would measure the machine
//! rather than the scheduler. Times, sizes and queue limits are the
//! presets' own: every preset runs its whole length. At scale 10 a TCP
//! stream's bandwidth-delay product is 165 packets, below the presets'
//! 512-packet queues, so both congestion controls reclaim the link within
//! about two seconds; the model says the same of the scaled scenario. For
//! the VC presets the 5% bound is, as the issue states it, relative to the
//! link rate (13.2 Mbit/s at scale 10), about 13 times the VC's rate:
//! loose there.
//!
//! **Time.** Background rows: each preset is a few percent of a core (the
//! ten take about 40 s of CPU in all), so all ten run at once, each in its
//! own three namespaces, beside the other labs: the suite's wall time is
//! the longest preset, about 65 s. Measured worst disagreement over ten
//! presets run at once, also while `cargo build` loads both cores: 2% of
//! the link (UDP, per second), 6% (TCP CUBIC, 5-s windows).

use lab::{Ctx, Req, Share};
use serde_json::Value;

/// One row: a preset and its scale.
pub struct Case {
    preset: &'static str,
    scale: f64,
    share: Share,
    needs: &'static [Req],
}

const BASE: Case = Case {
    preset: "",
    scale: 10.0,
    share: Share::Background,
    needs: lab::prereq::QBSS_LAB,
};

lab::rows! {
    lab = crate::LABS;
    run = run_case;
    type = Case;
    transpac => Case { preset: "transpac", ..BASE },
    transpac_10mbit_be => Case { preset: "transpac-10mbit-be", ..BASE },
    vc_10mbit => Case { preset: "vc-10mbit", ..BASE },
    vc_10mbit_forced => Case { preset: "vc-10mbit-forced", ..BASE },
    vc_10mbit_policed => Case { preset: "vc-10mbit-policed", ..BASE },
    premium_weight_0 => Case { preset: "premium-weight-0", ..BASE },
    queue0_swap => Case { preset: "queue0-swap", ..BASE },
    transpac_tcp_reno => Case { preset: "transpac-tcp", ..BASE },
    transpac_tcp_cubic => Case { preset: "transpac-tcp-cubic", ..BASE },
    tengig => Case { preset: "tengig", scale: 1000.0, ..BASE },
}

/// Every preset has a row (runs without root).
#[test]
fn every_preset_has_a_row() {
    let mut presets: Vec<&str> = qbss::presets::PRESETS.iter().map(|p| p.name).collect();
    let mut cases: Vec<&str> = CASES.iter().map(|c| c.1.preset).collect();
    presets.sort_unstable();
    cases.sort_unstable();
    assert_eq!(presets, cases);
}

fn run_case(ctx: &Ctx, c: &Case) {
    let run = ctx.qbss_lab(c.preset, c.scale);
    let (model, measured) = (&run.model, &run.measured);
    let timing = sender_schedule(&run);
    check_shape(c.preset, c.scale, model, measured);
    let tcp = model["streams"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["kind"] == "tcp");
    let bad = if tcp {
        compare_tcp(c.preset, model, measured)
    } else {
        compare_udp(c.preset, model, measured, &moved_by_senders(&run, model))
    };
    assert!(
        bad.is_empty(),
        "{}: the lab disagrees with qbss-model:\n{}\n({timing})",
        c.preset,
        bad.join("\n")
    );
}

/// How late the lab's senders were against the scenario's schedule, and
/// when the set-up steps ended against the epoch (second 0).
fn sender_schedule(run: &lab::QbssRun) -> String {
    let read = |f: &str| std::fs::read_to_string(run.dir.join(f)).unwrap_or_default();
    let send: Value = serde_json::from_str(&read("send.json")).unwrap_or(Value::Null);
    let log = read("setup.log");
    let epoch: f64 = log
        .lines()
        .find_map(|l| {
            l.split_once(" epoch ")
                .and_then(|(_, e)| e.trim().parse().ok())
        })
        .unwrap_or(0.0);
    let steps: Vec<String> = log
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(t, what)| {
            Some(format!(
                "{what} at {:+.3} s",
                t.parse::<f64>().ok()? - epoch
            ))
        })
        .collect();
    let timing = format!(
        "set-up against second 0: {}; senders against their schedule: {send}",
        steps.join(", ")
    );
    lab::note!("{timing}");
    timing
}

/// measured.json has qbss-model --json's shape, with "scale".
fn check_shape(preset: &str, scale: f64, model: &Value, measured: &Value) {
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(model), keys(measured), "{preset}: top-level keys");
    assert_eq!(measured["scale"].as_f64(), Some(scale), "{preset}: scale");
    assert_eq!(model["link"], measured["link"], "{preset}: link");
    let (mi, ri) = (
        model["intervals"].as_array().unwrap(),
        measured["intervals"].as_array().unwrap(),
    );
    assert_eq!(mi.len(), ri.len(), "{preset}: intervals");
    for (a, b) in model["streams"]
        .as_array()
        .unwrap()
        .iter()
        .zip(measured["streams"].as_array().unwrap())
    {
        assert_eq!(keys(a), keys(b), "{preset}: stream keys");
        assert_eq!(a["name"], b["name"]);
    }
    for (a, b) in mi.iter().zip(ri) {
        assert_eq!(keys(a), keys(b), "{preset}: interval keys");
        for (x, y) in a["streams"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["streams"].as_array().unwrap())
        {
            assert_eq!(keys(x), keys(y), "{preset}: interval stream keys");
        }
    }
}

fn link_bps(v: &Value) -> f64 {
    v["link"]["bits_per_second"].as_f64().expect("link rate")
}

fn bps(v: &Value, second: usize, stream: usize) -> f64 {
    v["intervals"][second]["streams"][stream]["bits_per_second"]
        .as_f64()
        .expect("bits_per_second")
}

fn stream_names(v: &Value) -> Vec<String> {
    v["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

/// Seconds in which no stream starts or stops, nor did in the second before.
fn steady_seconds(model: &Value) -> Vec<usize> {
    let n = model["intervals"].as_array().unwrap().len();
    let mut edges: Vec<f64> = vec![0.0];
    for s in model["streams"].as_array().unwrap() {
        edges.push(s["start_s"].as_f64().unwrap());
        edges.push(s["stop_s"].as_f64().unwrap());
    }
    (0..n)
        .filter(|&i| {
            let (lo, hi) = (i as f64 - 1.0, i as f64 + 1.0);
            i + 1 < n && !edges.iter().any(|&e| e >= lo && e < hi)
        })
        .collect()
}

/// Per second of the epoch, the bits the UDP senders sent in another
/// second than their schedule put them (`send.json`'s
/// `scheduled_per_second` and `sent_per_second`, each stream's packets
/// times its packet size): what a stall of the sender moved, which the
/// model, fed the schedule, cannot know. A CI run's sender, at real-time
/// priority on a loaded virtual machine, stopped for 80 ms at the end of
/// second 2: 54 of the QBSS stream's 667 packets a second came in second
/// 3, 6.6% of the link out of one second and into the next.
fn moved_by_senders(run: &lab::QbssRun, model: &Value) -> Vec<f64> {
    let text = std::fs::read_to_string(run.dir.join("send.json")).expect("send.json");
    let send: Value = serde_json::from_str(&text).expect("send.json is JSON");
    let n = model["intervals"].as_array().unwrap().len();
    let mut moved = vec![0.0; n];
    for (k, st) in model["streams"].as_array().unwrap().iter().enumerate() {
        let Some(s) = send.get(k.to_string()) else {
            continue;
        };
        let counts = |key: &str| -> Vec<u64> {
            s[key].as_array().map_or_else(Vec::new, |a| {
                a.iter().map(|c| c.as_u64().expect("a count")).collect()
            })
        };
        let (scheduled, sent) = (counts("scheduled_per_second"), counts("sent_per_second"));
        let bits = 8.0 * st["packet_bytes"].as_f64().expect("packet_bytes");
        for (i, (a, b)) in scheduled.iter().zip(&sent).enumerate().take(n) {
            moved[i] += a.abs_diff(*b) as f64 * bits;
        }
    }
    moved
}

/// UDP: every stream within 5% of the link rate in every steady second,
/// plus what the senders moved into or out of that second (`moved`,
/// [`moved_by_senders`]: zero for senders that kept their schedule); the
/// disagreements.
fn compare_udp(preset: &str, model: &Value, measured: &Value, moved: &[f64]) -> Vec<String> {
    let link = link_bps(model);
    let names = stream_names(model);
    let mut bad = Vec::new();
    let mut worst = 0.0f64;
    for i in steady_seconds(model) {
        let moved = moved.get(i).copied().unwrap_or(0.0);
        for (k, name) in names.iter().enumerate() {
            let (m, r) = (bps(model, i, k), bps(measured, i, k));
            worst = worst.max((m - r).abs() / link);
            if (m - r).abs() > 0.05 * link + moved {
                bad.push(format!(
                    "stream {name}, second {i}-{}: model {:.0} bit/s, measured {:.0} bit/s ({:+.1}% of the link; the senders moved {:.1}% of it)",
                    i + 1,
                    m,
                    r,
                    100.0 * (r - m) / link,
                    100.0 * moved / link
                ));
            }
        }
    }
    let stalls: Vec<String> = moved
        .iter()
        .enumerate()
        .filter(|(_, &b)| b > 0.0)
        .map(|(i, b)| format!("{i}: {:.1}%", 100.0 * b / link))
        .collect();
    lab::note!(
        "{preset}: worst steady second {:.2}% of the link (bound 5%, plus what the senders moved, per second of the link: [{}])",
        100.0 * worst,
        stalls.join(", ")
    );
    bad
}

/// Seconds after `from` until stream `k` first carries 90% of the link in a second.
fn reclaim_s(v: &Value, k: usize, from: usize) -> Option<f64> {
    let link = link_bps(v);
    let n = v["intervals"].as_array().unwrap().len();
    (from..n)
        .find(|&i| bps(v, i, k) >= 0.9 * link)
        .map(|i| (i + 1 - from) as f64)
}

/// TCP: 5-s averages within 10% of the link rate; QBSS's reclaim time
/// within 25%; the disagreements.
fn compare_tcp(preset: &str, model: &Value, measured: &Value) -> Vec<String> {
    let link = link_bps(model);
    let names = stream_names(model);
    let n = model["intervals"].as_array().unwrap().len();
    let mut bad = Vec::new();
    let mut worst = 0.0f64;
    for w in (0..n).step_by(5).filter(|w| w + 5 <= n) {
        for (k, name) in names.iter().enumerate() {
            let avg = |v: &Value| (w..w + 5).map(|i| bps(v, i, k)).sum::<f64>() / 5.0;
            let (m, r) = (avg(model), avg(measured));
            worst = worst.max((m - r).abs() / link);
            if (m - r).abs() > 0.10 * link {
                bad.push(format!(
                    "stream {name}, seconds {w}-{}: model {:.0} bit/s, measured {:.0} bit/s on average ({:+.1}% of the link)",
                    w + 5,
                    m,
                    r,
                    100.0 * (r - m) / link
                ));
            }
        }
    }
    // Best effort leaves at its stop time; QBSS is the scavenger stream.
    let streams = model["streams"].as_array().unwrap();
    let be = names
        .iter()
        .position(|s| s.starts_with("be"))
        .expect("a be stream");
    let q = names
        .iter()
        .position(|s| s.starts_with("qbss"))
        .expect("a qbss stream");
    let leave = streams[be]["stop_s"].as_f64().unwrap() as usize;
    let (m, r) = (reclaim_s(model, q, leave), reclaim_s(measured, q, leave));
    lab::note!(
        "{preset}: worst 5-s window {:.2}% of the link (bound 10%); reclaim after best effort leaves: model {m:?} s, measured {r:?} s",
        100.0 * worst
    );
    match (m, r) {
        (Some(m), Some(r)) if (m - r).abs() <= 0.25 * r => {}
        (m, r) => bad.push(format!(
            "stream {}, reclaiming 90% of the link after second {leave}: model {m:?} s, measured {r:?} s",
            names[q]
        )),
    }
    bad
}
