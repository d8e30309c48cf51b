//! Speed of the `qbss-model` engine.
//!
//! Runs the `transpac` preset (60 s of an OC-3) and the `tengig` preset (60 s of a
//! 10 Gbit/s port, about 55 million packets) and prints simulated packets and events per
//! second, beside an anchor measured in the same run: a bare `BinaryHeap` push + pop of
//! the same number of events with nothing else done. The ratio (engine time per event
//! over anchor time per event) says what the engine (classifier, `wrr` scheduler,
//! counters) costs on top of its event queue, and holds on a busy machine where the
//! wall-clock rates do not; CPU seconds are printed beside the wall clock for the same
//! reason.
//!
//! Goals (issue 6): transpac well under a second, the 10 Gbit/s scenario under 10 s,
//! at least 10 million simulated events per second.
//!
//! `cargo bench -p qbss --bench qbss` (add `-- --quick` to skip `tengig`).

use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Instant;

use qbss::{presets, scenario::Scenario, sim};

/// CPU seconds used by this process so far (user + system), from `/proc/self/stat`
/// (Linux; `None` elsewhere). On a shared machine the wall clock also counts time spent
/// waiting for a core; CPU time does not.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after ')'.
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

fn anchor_ns_per_event(events: u64) -> f64 {
    // Three pending events, as a two-stream UDP scenario keeps (two sources, one server).
    let mut heap = BinaryHeap::new();
    for i in 0..3u64 {
        heap.push(std::cmp::Reverse((i, i)));
    }
    let t0 = Instant::now();
    let mut seq = 3u64;
    for _ in 0..events {
        let std::cmp::Reverse((t, _)) = heap.pop().unwrap_or(std::cmp::Reverse((0, 0)));
        seq += 1;
        heap.push(std::cmp::Reverse((black_box(t + 1000 + (seq & 7)), seq)));
    }
    black_box(&heap);
    t0.elapsed().as_secs_f64() * 1e9 / events as f64
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let names: &[&str] = if quick {
        &["transpac"]
    } else {
        &["transpac", "transpac-tcp", "tengig"]
    };
    println!(
        "{:<14} {:>8} {:>8} {:>12} {:>12} {:>10} {:>11} {:>15} {:>10} {:>8}",
        "preset",
        "wall s",
        "cpu s",
        "packets",
        "events",
        "Mpkt/s",
        "Mevents/s",
        "Mevents/cpu-s",
        "anchor ns",
        "ratio"
    );
    for name in names {
        let Some(p) = presets::find(name) else {
            eprintln!("no preset {name}");
            std::process::exit(1);
        };
        let sc = match Scenario::from_toml(p.toml) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{name}: {e}");
                std::process::exit(1);
            }
        };
        let cpu0 = cpu_seconds();
        let t0 = Instant::now();
        let res = match sim::run(&sc) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{name}: {e}");
                std::process::exit(1);
            }
        };
        let wall = t0.elapsed().as_secs_f64();
        let cpu = match (cpu0, cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        };
        let ns_per_event = wall * 1e9 / res.events as f64;
        let anchor = anchor_ns_per_event(res.events.min(50_000_000));
        println!(
            "{:<14} {:>8.3} {:>8.2} {:>12} {:>12} {:>10.1} {:>11.1} {:>15.1} {:>10.2} {:>7.2}x",
            name,
            wall,
            cpu,
            res.packets,
            res.events,
            res.packets as f64 / wall / 1e6,
            res.events as f64 / wall / 1e6,
            res.events as f64 / cpu / 1e6,
            anchor,
            ns_per_event / anchor
        );
    }
}
