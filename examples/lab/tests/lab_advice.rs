//! The advice `analyze` gives ("what to change", computed by `bdp`'s Linux
//! buffer model) applied to a real Linux 6.x receiver, and checked against
//! what that kernel then does.
//!
//! Each test runs a download through the lab's ~20 ms path twice:
//!
//! 1. with the receiver's buffer too small for `TARGET` at that RTT: the
//!    server's own kernel must count the transfer receive-window-limited
//!    (`tcpi_rwnd_limited` most of `tcpi_busy_time`), and `analyze
//!    --target-rate TARGET` of the capture must say so and advise a buffer;
//! 2. with exactly the buffer the advice names, set the way the advice says
//!    (the autotuning cap `net.ipv4.tcp_rmem` max in the receiver's
//!    namespace; or the application's `SO_RCVBUF` request): the download
//!    must then reach the target rate, as the capture measures it. A model
//!    that overstated the share of the buffer the kernel advertises as window
//!    (`tcp_win_from_space()`, the scaling ratio on 6.6 and later) would
//!    advise too little and fail here.
//!
//! The path (veth pairs and the lab's NFQUEUE delayer) carries well over
//! `TARGET`, so once the window is large enough nothing else holds the
//! download below it.
//!
//! Needs root, iproute2, iptables, tcpdump and python3; skips with a message
//! unless `TCP_PERF_LAB_REQUIRED=1` (set by `.ci/run`).

mod lab_support;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The rate the advice is asked for.
const TARGET: &str = "40mbit";
const TARGET_BPS: f64 = 40e6;
/// Long enough for receive autotuning to grow the window to its cap.
const BYTES: &str = "6000000";

fn run(tag: &str, case: &str, extra: &[&str]) -> Option<PathBuf> {
    let mut args = vec!["--delay-ms", "20", "--bytes", BYTES, "--up-bytes", "1000"];
    args.extend_from_slice(extra);
    lab_support::run_lab_case(tag, case, &args)
}

/// `analyze --json --target-rate TARGET` of one capture: the download direction.
fn download(capture: &Path) -> Value {
    let v = lab_support::analyze_json(&["--target-rate", TARGET], capture);
    let conns = v["connections"].as_array().expect("connections");
    assert_eq!(conns.len(), 1, "{v}");
    conns[0]["directions"]["server_to_client"].clone()
}

/// The server's (the download's sender's) share of busy time it counted
/// limited by the receive window.
fn kernel_rwnd_share(dir: &Path) -> f64 {
    let text = std::fs::read_to_string(dir.join("server.tcpinfo.json")).expect("TCP_INFO");
    let v: Value = serde_json::from_str(&text).unwrap();
    let busy = v["busy_us"].as_f64().unwrap();
    assert!(busy > 0.0, "{v}");
    v["rwnd_limited_us"].as_f64().unwrap() / busy
}

/// The value advised for `setting` on the receiver.
fn advised(d: &Value, setting: &str) -> u64 {
    d["advice"]
        .as_array()
        .expect("advice")
        .iter()
        .find(|a| a["setting"] == setting && a["host"] == "receiver")
        .and_then(|a| a["value"].as_u64())
        .unwrap_or_else(|| panic!("no advice for {setting}: {d}"))
}

/// Run 1 (too small) then run 2 (as advised): returns the advised value.
fn too_small_then_advised(
    tag: &str,
    case: &str,
    small: &[&str],
    setting: &str,
    option: &str,
) -> Option<u64> {
    let dir = run(&format!("{tag}-small"), case, small)?;
    let rwnd = kernel_rwnd_share(&dir);
    assert!(
        rwnd > 0.5,
        "{case} {small:?}: the kernel must count the download receive-window-limited, got {rwnd:.2}"
    );
    let d = download(&dir.join("outside.pcap"));
    assert_eq!(d["limit"]["kind"], "receive_window", "{d}");
    let before = d["throughput_bps"].as_f64().expect("throughput");
    assert!(before < 0.6 * TARGET_BPS, "{case} {small:?}: {d}");
    let value = advised(&d, setting);
    let _ = std::fs::remove_dir_all(&dir);

    let value_arg = value.to_string();
    let dir = run(&format!("{tag}-advised"), case, &[option, &value_arg])?;
    for side in ["outside", "inside"] {
        let d = download(&dir.join(format!("{side}.pcap")));
        let after = d["throughput_bps"].as_f64().expect("throughput");
        eprintln!("{case}, {setting} = {value}: {side} capture {after:.0} bit/s");
        assert!(
            after >= 0.9 * TARGET_BPS,
            "{case} with {setting} = {value} (as advised): {side} capture shows {after:.0} bit/s, \
             below the target {TARGET_BPS} (before: {before:.0}); kernel rwnd share {:.2}: {d}",
            kernel_rwnd_share(&dir)
        );
    }
    eprintln!(
        "{case}: {setting} {value} advised; before {before:.0} bit/s (kernel rwnd share {rwnd:.2}), after: kernel rwnd share {:.2}",
        kernel_rwnd_share(&dir)
    );
    let _ = std::fs::remove_dir_all(&dir);
    Some(value)
}

/// An autotuned receiver capped by `net.ipv4.tcp_rmem` max: the advice's
/// `tcp_rmem` max lifts it (the window is the share of the buffer
/// `tcp_win_from_space()` gives, the scaling ratio on Linux 6.6 and later).
#[test]
fn lab_advice_tcp_rmem_max_reaches_the_target() {
    let Some(value) = too_small_then_advised(
        "advice-rmem",
        "clean4",
        &["--client-rmem-max", "65536"],
        "net.ipv4.tcp_rmem max",
        "--client-rmem-max",
    ) else {
        return;
    };
    // 40 Mbit/s at ~20 ms needs ~100 KB of window: twice that as buffer.
    assert!((150_000..2_000_000).contains(&value), "{value}");
}

/// An application that sets `SO_RCVBUF` (no autotuning; the kernel doubles
/// the request and advertises its share of that): the advice's request,
/// given to `SO_RCVBUF`, lifts it. Requests are capped at
/// `net.core.rmem_max`, which is not per namespace: the lab does not change
/// it, and the advised request must fit under this machine's.
#[test]
fn lab_advice_so_rcvbuf_reaches_the_target() {
    let rmem_max: u64 = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(212_992);
    let Some(value) = too_small_then_advised(
        "advice-rcvbuf",
        "rcvbuf-small4",
        &[],
        "net.core.rmem_max",
        "--client-rcvbuf",
    ) else {
        return;
    };
    assert!(
        (50_000..=rmem_max).contains(&value),
        "{value} (rmem_max {rmem_max})"
    );
}
