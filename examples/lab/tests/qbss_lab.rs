//! `qbss-model` checked against real packets: each preset runs, scaled, through
//! `qbss-router` in `examples/lab/qbss-lab.sh` (real UDP sockets, real Linux TCP with
//! the stream's congestion control), and the measured per-second figures must agree
//! with the model's run of the same scaled scenario (issue 16):
//!
//! * UDP presets: each stream's throughput within 5% of the link rate in every steady
//!   second (seconds with no stream starting or stopping in them or the second
//!   before);
//! * TCP presets: each stream's throughput averaged over 5-s windows within 10% of the
//!   link rate, and the time scavenger TCP takes to reclaim 90% of the link after best
//!   effort leaves within 25% of the measured one.
//!
//! A disagreement fails naming the stream and the second (or window).
//!
//! **Scale.** CI runs the OC-3 presets at `--scale 10` (the OC-3's 132 Mbit/s of
//! goodput becomes 13.2 Mbit/s, about 1,100 packets/s) and `tengig` at `--scale 1000`
//! (10 Gbit/s becomes 9.75 Mbit/s): rates a debug-built router and Python senders
//! hold steadily on a shared 2-core machine, where the unscaled 11,000 to 800,000
//! packets/s would measure the machine rather than the scheduler. At scale 10 a TCP
//! stream's bandwidth-delay product is 165 packets, below the presets' 512-packet
//! queues, so both congestion controls reclaim the link within about two seconds;
//! the model says the same of the scaled scenario. The presets run three at a time:
//! about 4.5 minutes of wall time on the 2-core machine, 40 s of user CPU in all.
//! For the VC presets the 5% bound is, as the issue states it, relative to the link
//! rate (13.2 Mbit/s at scale 10), about 13 times the VC's rate: loose there.
//!
//! Needs root, iproute2, python3 and TUN devices. Without them each test says why and
//! passes as skipped, unless `TCP_PERF_LAB_REQUIRED=1` (set by `.ci/run`), where a skip
//! is a failure.

mod lab_support;

use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Labs running at once.
const PARALLEL: usize = 3;
/// Longest one lab run may take (the longest preset is 60 s).
const LAB_TIMEOUT: Duration = Duration::from_secs(150);

static SLOTS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

struct Slot;

impl Slot {
    fn take() -> Slot {
        let (m, cv) = &SLOTS;
        let mut n = m.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= PARALLEL {
            n = cv.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (m, cv) = &SLOTS;
        *m.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        cv.notify_one();
    }
}

/// Runs `preset` at `scale`; returns (model.json, measured.json), or `None` when the
/// lab cannot run here and that is allowed.
fn run_lab(preset: &str, scale: f64) -> Option<(Value, Value)> {
    if !lab_support::ready("qbss-lab.sh", &format!("qbss lab {preset}")) {
        return None;
    }
    let _slot = Slot::take();
    let dir = std::env::temp_dir().join(format!("qbss-lab-{}-{preset}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut child = Command::new("bash")
        .arg(lab_support::script("qbss-lab.sh"))
        .arg(preset)
        .arg(&dir)
        .arg("--scale")
        .arg(scale.to_string())
        .env("QBSS_MODEL", env!("CARGO_BIN_EXE_lab-qbss-model"))
        .env("QBSS_ROUTER", env!("CARGO_BIN_EXE_lab-qbss-router"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start qbss-lab.sh");
    let start = Instant::now();
    while child.try_wait().expect("wait for qbss-lab.sh").is_none() {
        if start.elapsed() > LAB_TIMEOUT {
            let _ = child.kill();
            panic!("qbss-lab.sh {preset} took more than {LAB_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().expect("qbss-lab.sh output");
    assert!(
        out.status.success(),
        "qbss-lab.sh {preset} failed:\n{}\n{}\nrouter: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(dir.join("router.txt")).unwrap_or_default()
    );
    let read = |f: &str| -> Value {
        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{f}: {e}"))
    };
    let (model, measured) = (read("model.json"), read("measured.json"));
    let _ = std::fs::remove_dir_all(&dir);
    Some((model, measured))
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

/// UDP: every stream within 5% of the link rate in every steady second.
fn compare_udp(preset: &str, model: &Value, measured: &Value) {
    let link = link_bps(model);
    let names = stream_names(model);
    let mut bad = Vec::new();
    for i in steady_seconds(model) {
        for (k, name) in names.iter().enumerate() {
            let (m, r) = (bps(model, i, k), bps(measured, i, k));
            if (m - r).abs() > 0.05 * link {
                bad.push(format!(
                    "stream {name}, second {i}-{}: model {:.0} bit/s, measured {:.0} bit/s ({:+.1}% of the link)",
                    i + 1,
                    m,
                    r,
                    100.0 * (r - m) / link
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{preset}: the lab disagrees with qbss-model beyond 5% of the link rate:\n{}",
        bad.join("\n")
    );
}

/// Seconds after `from` until stream `k` first carries 90% of the link in a second.
fn reclaim_s(v: &Value, k: usize, from: usize) -> Option<f64> {
    let link = link_bps(v);
    let n = v["intervals"].as_array().unwrap().len();
    (from..n)
        .find(|&i| bps(v, i, k) >= 0.9 * link)
        .map(|i| (i + 1 - from) as f64)
}

/// TCP: 5-s averages within 10% of the link rate; QBSS's reclaim time within 25%.
fn compare_tcp(preset: &str, model: &Value, measured: &Value) {
    let link = link_bps(model);
    let names = stream_names(model);
    let n = model["intervals"].as_array().unwrap().len();
    let mut bad = Vec::new();
    for w in (0..n).step_by(5).filter(|w| w + 5 <= n) {
        for (k, name) in names.iter().enumerate() {
            let avg = |v: &Value| (w..w + 5).map(|i| bps(v, i, k)).sum::<f64>() / 5.0;
            let (m, r) = (avg(model), avg(measured));
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
    match (reclaim_s(model, q, leave), reclaim_s(measured, q, leave)) {
        (Some(m), Some(r)) if (m - r).abs() <= 0.25 * r => {}
        (m, r) => bad.push(format!(
            "stream {}, reclaiming 90% of the link after second {leave}: model {m:?} s, measured {r:?} s",
            names[q]
        )),
    }
    assert!(
        bad.is_empty(),
        "{preset}: the lab disagrees with qbss-model:\n{}",
        bad.join("\n")
    );
}

fn lab_case(preset: &str, scale: f64) {
    let Some((model, measured)) = run_lab(preset, scale) else {
        return;
    };
    check_shape(preset, scale, &model, &measured);
    let tcp = model["streams"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["kind"] == "tcp");
    if tcp {
        compare_tcp(preset, &model, &measured);
    } else {
        compare_udp(preset, &model, &measured);
    }
}

/// Every preset and the scale CI runs it at.
const CASES: &[(&str, f64)] = &[
    ("transpac", 10.0),
    ("transpac-10mbit-be", 10.0),
    ("vc-10mbit", 10.0),
    ("vc-10mbit-forced", 10.0),
    ("vc-10mbit-policed", 10.0),
    ("premium-weight-0", 10.0),
    ("queue0-swap", 10.0),
    ("transpac-tcp", 10.0),
    ("transpac-tcp-cubic", 10.0),
    ("tengig", 1000.0),
];

fn case(name: &str) {
    let &(preset, scale) = CASES
        .iter()
        .find(|c| c.0 == name)
        .unwrap_or_else(|| panic!("no lab case {name}"));
    lab_case(preset, scale);
}

#[test]
fn every_preset_runs_in_the_lab() {
    let mut presets: Vec<&str> = qbss::presets::PRESETS.iter().map(|p| p.name).collect();
    let mut cases: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    presets.sort_unstable();
    cases.sort_unstable();
    assert_eq!(presets, cases);
}

#[test]
fn transpac() {
    case("transpac");
}

#[test]
fn transpac_10mbit_be() {
    case("transpac-10mbit-be");
}

#[test]
fn vc_10mbit() {
    case("vc-10mbit");
}

#[test]
fn vc_10mbit_policed() {
    case("vc-10mbit-policed");
}

#[test]
fn vc_10mbit_forced() {
    case("vc-10mbit-forced");
}

#[test]
fn premium_weight_0() {
    case("premium-weight-0");
}

#[test]
fn queue0_swap() {
    case("queue0-swap");
}

#[test]
fn transpac_tcp_reno() {
    case("transpac-tcp");
}

#[test]
fn transpac_tcp_cubic() {
    case("transpac-tcp-cubic");
}

#[test]
fn tengig() {
    case("tengig");
}
