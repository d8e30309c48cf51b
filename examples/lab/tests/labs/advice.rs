//! The advice `analyze` gives ("what to change", computed by `bdp`'s Linux
//! buffer model) applied to a real Linux 6.x receiver, and checked against
//! what that kernel then does.
//!
//! Each row runs a download through the lab's ~20 ms path twice:
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
//! download below it. Exclusive rows: they measure throughput.

use std::path::Path;

use lab::{CaseRun, Ctx, Req, Share};
use serde_json::Value;

/// The rate the advice is asked for.
const TARGET: &str = "40mbit";
const TARGET_BPS: f64 = 40e6;

/// One row: the case, how its first run is too small, and the setting.
pub struct Case {
    case: &'static str,
    /// lab.sh arguments that make the receiver's buffer too small.
    small: &'static [&'static str],
    /// The advice's setting (`setting` of an `advice` entry for the receiver).
    setting: &'static str,
    /// The lab.sh option that applies it.
    option: &'static str,
    /// Checks the advised value.
    value: fn(u64),
    share: Share,
    needs: &'static [Req],
}

impl Case {
    /// lab.sh's case.
    pub fn case(&self) -> &'static str {
        self.case
    }
}

lab::rows! {
    lab = crate::LABS;
    run = too_small_then_advised;
    type = Case;
    /// An autotuned receiver capped by `net.ipv4.tcp_rmem` max: the advice's
    /// `tcp_rmem` max lifts it (the window is the share of the buffer
    /// `tcp_win_from_space()` gives, the scaling ratio on Linux 6.6 and
    /// later).
    tcp_rmem_max => Case {
        case: "clean4",
        small: &["--client-rmem-max", "65536"],
        setting: "net.ipv4.tcp_rmem max",
        option: "--client-rmem-max",
        value: rmem_value,
        share: Share::Exclusive,
        needs: lab::prereq::LAB_SH,
    },
    /// An application that sets `SO_RCVBUF` (no autotuning; the kernel
    /// doubles the request and advertises its share of that): the advice's
    /// request, given to `SO_RCVBUF`, lifts it. Requests are capped at
    /// `net.core.rmem_max`, which is not per namespace: the lab does not
    /// change it, and the advised request must fit under this machine's.
    so_rcvbuf => Case {
        case: "rcvbuf-small4",
        small: &[],
        setting: "net.core.rmem_max",
        option: "--client-rcvbuf",
        value: rcvbuf_value,
        share: Share::Exclusive,
        needs: lab::prereq::LAB_SH,
    },
}

/// 40 Mbit/s at ~20 ms needs ~100 KB of window: twice that as buffer.
fn rmem_value(value: u64) {
    assert!((150_000..2_000_000).contains(&value), "{value}");
}

fn rcvbuf_value(value: u64) {
    let rmem_max: u64 = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(212_992);
    assert!(
        (50_000..=rmem_max).contains(&value),
        "{value} (rmem_max {rmem_max})"
    );
}

/// Runs `case` at 20 ms with `bytes` and `extra`.
fn run(ctx: &Ctx, case: &str, bytes: &str, extra: &[&str]) -> CaseRun {
    // The server's send buffer holds the whole download: only the
    // receiver's window may hold it back (transfer.rs, FULL_SNDBUF).
    let mut args = vec![
        "--delay-ms",
        "20",
        "--bytes",
        bytes,
        "--up-bytes",
        "1000",
        "--server-sndbuf",
        "4194304",
    ];
    args.extend_from_slice(extra);
    ctx.lab_sh(case, &args)
}

/// `analyze --json --target-rate TARGET` of one capture: the download direction.
fn download(run: &CaseRun, capture: &Path) -> Value {
    let v = run.tools().analyze(&["--target-rate", TARGET], capture);
    let conns = v["connections"].as_array().expect("connections");
    assert_eq!(conns.len(), 1, "{v}");
    conns[0]["directions"]["server_to_client"].clone()
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

/// Run 1 (too small, 2 MB: a hundred round trips at the small window) then
/// run 2 (as advised, 6 MB: long enough for receive autotuning to grow the
/// window to its cap).
fn too_small_then_advised(ctx: &Ctx, c: &Case) {
    let small = run(ctx, c.case, "2000000", c.small);
    let rwnd = small.tcpinfo("server").rwnd_share();
    assert!(
        rwnd > 0.5,
        "{} {:?}: the kernel must count the download receive-window-limited, got {rwnd:.2}",
        c.case,
        c.small
    );
    let d = download(&small, &small.outside());
    assert_eq!(d["limit"]["kind"], "receive_window", "{d}");
    let before = d["throughput_bps"].as_f64().expect("throughput");
    assert!(before < 0.6 * TARGET_BPS, "{} {:?}: {d}", c.case, c.small);
    let value = advised(&d, c.setting);
    (c.value)(value);

    let value_arg = value.to_string();
    let advised_run = run(ctx, c.case, "6000000", &[c.option, &value_arg]);
    let after_rwnd = advised_run.tcpinfo("server").rwnd_share();
    for side in ["outside", "inside"] {
        let d = download(&advised_run, &advised_run.capture(side));
        let after = d["throughput_bps"].as_f64().expect("throughput");
        lab::note!(
            "{}, {} = {value}: {side} capture {after:.0} bit/s",
            c.case,
            c.setting
        );
        assert!(
            after >= 0.9 * TARGET_BPS,
            "{} with {} = {value} (as advised): {side} capture shows {after:.0} bit/s, \
             below the target {TARGET_BPS} (before: {before:.0}); kernel rwnd share {after_rwnd:.2}: {d}",
            c.case,
            c.setting
        );
    }
    lab::note!(
        "{}: {} {value} advised; before {before:.0} bit/s (kernel rwnd share {rwnd:.2}), after: kernel rwnd share {after_rwnd:.2}",
        c.case,
        c.setting
    );
}
