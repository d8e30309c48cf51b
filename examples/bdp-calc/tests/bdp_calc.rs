//! `bdp-calc` end to end: every figure of issue 4 and DESIGN.md, and the refusals.

use serde_json::Value;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bdp-calc"))
        .args(args)
        .output()
        .expect("bdp-calc runs")
}

/// Runs with `--json`, expects success, returns the parsed object.
fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = run(&all);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Runs without `--json`, expects success, returns stdout.
fn text(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Expects exit status 2, nothing on stdout, and `needle` in stderr.
fn refused(args: &[&str], needle: &str) {
    for json in [false, true] {
        let mut all = args.to_vec();
        if json {
            all.push("--json");
        }
        let out = run(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(out.stdout.is_empty(), "{all:?}: partial output");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(needle),
            "{all:?}: stderr {err:?} lacks {needle:?}"
        );
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn campus_firewall_ceiling() {
    // DESIGN.md incident 1 / issue 4: 65535 bytes at 10 ms = 52,428,000 bit/s.
    let v = json(&["--window", "65535", "--rtt", "10ms"]);
    assert_eq!(v["ceiling_bps"], 52_428_000);
    assert_eq!(v["window_scale_shift"], 0);
    assert_eq!(v["inputs"]["window_bytes"], 65_535);
    assert_eq!(v["inputs"]["rtt_seconds"], 0.01);
    assert!(text(&["--window", "65535", "--rtt", "10ms"]).contains("52.428 Mbit/s"));
}

#[test]
fn campus_firewall_needed_window() {
    // DESIGN.md incident 1: 1 Gbit/s at 10 ms needs 1,250,000 bytes, window-scale shift 5.
    let v = json(&["--rate", "1Gbps", "--rtt", "10ms"]);
    assert_eq!(v["bdp_bytes"], 1_250_000);
    assert_eq!(v["window_scale_shift"], 5);
    assert_eq!(v["window_scale_shift_for"], "bdp");
    assert_eq!(v["linux_rcv_wscale"], 5);
    assert_eq!(v["inputs"]["rate_bps"], 1_000_000_000);
    let t = text(&["--rate", "1Gbps", "--rtt", "10ms"]);
    assert!(t.contains("1250000 bytes (1.25 MB, 1.19 MiB)"), "{t}");
    assert!(t.contains("shift 5"), "{t}");
}

#[test]
fn satellite_bdp() {
    // DESIGN.md incident 2: 0.55 s at OC-1 (51.84 Mbit/s) is a ~3.5 MB BDP.
    let v = json(&["--rate", "51.84Mbit/s", "--rtt", "0.55s"]);
    assert_eq!(v["bdp_bytes"], 3_564_000);
    assert_eq!(v["window_scale_shift"], 6);
    assert!(text(&["--rate", "51.84Mbit/s", "--rtt", "550ms"]).contains("3.56 MB"));
}

#[test]
fn satellite_small_windows() {
    // Issue 4: a 4 KB default window gives ~60 kbit/s; a 1 MiB cap ~15 Mbit/s.
    let v = json(&["--window", "4KiB", "--rtt", "0.55s"]);
    assert_eq!(v["ceiling_bps"], 59_578);
    let v = json(&["--window", "1MiB", "--rtt", "0.55s", "--rate", "51.84Mbps"]);
    assert_eq!(v["ceiling_bps"], 15_252_014);
    assert_eq!(v["throughput_bps"], 15_252_014);
    assert_eq!(v["limited_by"], "window");
    let t = text(&["--window", "1MiB", "--rtt", "0.55s"]);
    assert!(t.contains("15.252 Mbit/s"), "{t}");
}

#[test]
fn satellite_image_transfer() {
    // Issue 4: an 8 MiB image through a 1 MiB window at 0.55 s takes 4.4 s.
    let args = [
        "--size",
        "8MiB",
        "--rate",
        "51.84Mbps",
        "--window",
        "1MiB",
        "--rtt",
        "0.55s",
    ];
    let v = json(&args);
    assert!((f(&v["transfer_seconds"]) - 4.4).abs() < 1e-9, "{v}");
    assert_eq!(v["limited_by"], "window");
    assert_eq!(v["inputs"]["size_bytes"], 8 << 20);
    assert!(text(&args).contains("4.400 s"));
    // Window only (no rate) gives the same answer.
    let v = json(&["--size", "8MiB", "--window", "1MiB", "--rtt", "0.55s"]);
    assert!((f(&v["transfer_seconds"]) - 4.4).abs() < 1e-9);
    // Rate only: 8 MiB at 51.84 Mbit/s = 1.2945 s.
    let v = json(&["--size", "8MiB", "--rate", "51.84Mbps"]);
    assert!((f(&v["transfer_seconds"]) - 1.294_538).abs() < 1e-6, "{v}");
    assert_eq!(v["limited_by"], "rate");
}

#[test]
fn rfc6349_t3_bdp() {
    // RFC 6349 section 3.3.1: T3 (44.21 Mbit/s) at 25 ms needs ~138 KB.
    let v = json(&["--rate", "44.21Mbps", "--rtt", "25ms"]);
    assert_eq!(v["bdp_bytes"], 138_157);
    assert!(text(&["--rate", "44.21Mbps", "--rtt", "25ms"]).contains("138.16 KB"));
}

#[test]
fn rfc6349_16kb_window() {
    // RFC 6349 section 3.3.1: 16 KB window, 100 Mbit/s, 5 ms RTT -> 25.6 Mbit/s.
    let v = json(&["--window", "16KB", "--rtt", "5ms", "--rate", "100Mbps"]);
    assert_eq!(v["ceiling_bps"], 25_600_000);
    assert_eq!(v["throughput_bps"], 25_600_000);
    assert_eq!(v["limited_by"], "window");
    assert_eq!(v["bdp_bytes"], 62_500);
}

#[test]
fn rfc6349_ethernet_goodput_as_rate() {
    // RFC 6349 section 4.1.1: Fast Ethernet, 1538 bytes per 1500-byte packet, ~94.9 Mbit/s of TCP.
    let v = json(&["--link", "ethernet-100m", "--rtt", "2ms"]);
    assert_eq!(v["link"]["goodput_bps"], 94_928_478);
    assert_eq!(v["link"]["wire_bytes_per_packet"], 1538);
    assert_eq!(v["inputs"]["rate_source"], "link");
    assert_eq!(v["inputs"]["rate_bps"], 94_928_478);
    assert_eq!(v["bdp_bytes"], 23_733); // 94,928,478 * 0.002 / 8 = 23,732.1, rounded up
                                        // 100 MB ideal transfer time over it: ~8.43 s (RFC 6349 section 4.1.2's definition).
    let v = json(&["--link", "ethernet-100m", "--size", "100MB"]);
    assert!((f(&v["transfer_seconds"]) - 8.427_397).abs() < 1e-6, "{v}");
}

#[test]
fn mathis_and_padhye() {
    // Issue 4 (Mathis et al. 1997): MSS 1460, RTT 100 ms, p = 1% -> about 1.43 Mbit/s.
    for loss in ["1%", "0.01"] {
        let v = json(&["--mss", "1460", "--rtt", "100ms", "--loss", loss]);
        assert!((f(&v["mathis_bps"]) - 1_430_502.0).abs() < 1.0, "{v}");
        assert!(
            (f(&v["mathis_delayed_ack_bps"]) - 1_011_517.7).abs() < 1.0,
            "{v}"
        );
        // RFC 5348 form, b = 1, t_RTO = 4 RTT: 1,312,040.5 bit/s (computed independently).
        assert!((f(&v["padhye_bps"]) - 1_312_040.5).abs() < 1.0, "{v}");
        assert_eq!(v["inputs"]["loss"], 0.01);
        assert_eq!(v["inputs"]["rto_seconds"], 0.4);
    }
    let t = text(&["--mss", "1460", "--rtt", "100ms", "--loss", "1%"]);
    assert!(t.contains("1.431 Mbit/s"), "{t}");
    // b = 2 and an explicit RTO lower the Padhye figure.
    let v = json(&[
        "--mss",
        "1460",
        "--rtt",
        "100ms",
        "--loss",
        "1%",
        "--ack-every",
        "2",
        "--rto",
        "1s",
    ]);
    assert!(f(&v["padhye_bps"]) < 1_000_000.0, "{v}");
    assert_eq!(v["inputs"]["ack_every"], 2);
}

#[test]
fn mss_from_link() {
    // With --link and no --mss, the MSS is the MTU minus the headers: 1500 - 52 = 1448.
    let v = json(&[
        "--link",
        "ethernet-1g",
        "--rtt",
        "100ms",
        "--loss",
        "1%",
        "--timestamps",
    ]);
    assert_eq!(v["inputs"]["mss_bytes"], 1448);
    assert_eq!(v["inputs"]["mss_source"], "link");
    assert_eq!(v["inputs"]["header_bytes"], 52);
}

#[test]
fn window_beyond_rfc7323_is_null_with_explanation() {
    // RFC 7323: 65535 << 14 = 1,073,725,440 bytes is the largest window.
    // 100 Gbit/s at 100 ms needs 1.25 GB.
    let v = json(&["--rate", "100Gbps", "--rtt", "100ms"]);
    assert_eq!(v["bdp_bytes"], 1_250_000_000u64);
    assert!(v["window_scale_shift"].is_null(), "{v}");
    let why = v["window_scale_explanation"].as_str().unwrap();
    assert!(why.contains("1073725440"), "{why}");
    assert!(text(&["--rate", "100Gbps", "--rtt", "100ms"]).contains("none: "));
}

#[test]
fn links_as_rates_and_list() {
    // OC-3c ATM: 155.52 Mbit/s line, 149.76 Mbit/s for cells, 1696 bytes per 1500-byte packet.
    let v = json(&["--link", "oc3-atm", "--rtt", "70ms"]);
    assert_eq!(v["link"]["line_bps"], 155_520_000);
    assert_eq!(v["link"]["payload_bps"], 149_760_000);
    assert_eq!(v["link"]["wire_bytes_per_packet"], 1696);
    assert_eq!(v["link"]["goodput_bps"], 128_920_754);
    // An explicit --rate wins over the link's goodput.
    let v = json(&["--link", "oc3", "--rate", "100Mbps", "--rtt", "10ms"]);
    assert_eq!(v["inputs"]["rate_bps"], 100_000_000);
    assert_eq!(v["inputs"]["rate_source"], "rate");
    // --mtu and --ipv6 change the goodput: 9000-byte jumbo frames on 10 GigE.
    let v = json(&["--link", "ethernet-10g", "--mtu", "9000", "--ipv6"]);
    assert_eq!(v["link"]["goodput_bps"], 10_000_000_000u64 * 8940 / 9038);
    let list = text(&["--list-links"]);
    for name in [
        "ethernet-100m",
        "ethernet-1g",
        "ethernet-10g",
        "oc1",
        "oc3",
        "oc12",
        "oc48",
        "oc192",
        "t1",
        "t3",
    ] {
        assert!(list.lines().any(|l| l.starts_with(name)), "{name} missing");
    }
    let v = json(&["--list-links"]);
    assert!(v["links"].as_array().unwrap().len() >= 10);
}

#[test]
fn bad_values_are_refused() {
    refused(&[], "nothing to compute");
    refused(&["--rate", "10MB/s", "--rtt", "1ms"], "bits per second");
    refused(&["--rate", "fast", "--rtt", "1ms"], "--rate 'fast'");
    refused(&["--rate=-1Gbps", "--rtt", "1ms"], "negative");
    refused(&["--rtt", "10", "--rate", "1G"], "unit");
    refused(
        &["--rtt", "1.5ns", "--rate", "1G"],
        "whole number of nanoseconds",
    );
    refused(&["--window", "64K", "--rtt", "1ms"], "KiB");
    refused(
        &["--window", "1.5", "--rtt", "1ms"],
        "whole number of bytes",
    );
    refused(
        &["--window", "99999999999999999999", "--rtt", "1ms"],
        "too large",
    );
    refused(
        &["--window", "64KiB", "--rtt", "0ms"],
        "round-trip time must be greater than zero",
    );
    refused(
        &["--loss", "150%", "--mss", "1460", "--rtt", "1ms"],
        "(0, 1]",
    );
    refused(&["--loss", "0", "--mss", "1460", "--rtt", "1ms"], "(0, 1]");
    refused(
        &["--loss", "lots", "--mss", "1460", "--rtt", "1ms"],
        "probability",
    );
    refused(&["--link", "oc9000"], "unknown link");
    refused(&["--mss", "0", "--rtt", "1ms", "--loss", "1%"], "MSS");
    refused(
        &["--size", "1MB", "--rate", "0", "--rtt", "1ms"],
        "rate must be greater than zero",
    );
}

#[test]
fn inputs_that_answer_nothing_are_refused() {
    refused(&["--rate", "1Gbps"], "need --rtt");
    refused(&["--window", "1MB"], "need --rtt");
    refused(&["--rtt", "10ms"], "answers nothing");
    refused(&["--size", "1MB"], "--size needs");
    refused(
        &["--size", "1MB", "--window", "1MB"],
        "--window needs --rtt",
    );
    refused(&["--loss", "1%", "--rtt", "10ms"], "--loss needs --mss");
    refused(&["--mss", "1460", "--rtt", "10ms"], "--mss needs --loss");
    refused(
        &["--mtu", "9000", "--rate", "1G", "--rtt", "1ms"],
        "--mtu applies to --link",
    );
    refused(
        &["--rto", "1s", "--rate", "1G", "--rtt", "1ms"],
        "apply to --loss",
    );
}

#[test]
fn clap_usage_errors_exit_2() {
    let out = run(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let out = run(&["--rate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn zero_rtt_is_a_usage_error_wherever_given() {
    refused(&["--rate", "1Gbps", "--rtt", "0ms"], "--rtt '0ms'");
    refused(&["--window", "64KiB", "--rtt", "0s"], "greater than zero");
    refused(
        &["--size", "1MB", "--window", "1MB", "--rtt", "0us"],
        "--rtt '0us'",
    );
    refused(
        &["--mss", "1460", "--loss", "1%", "--rtt", "0ns"],
        "round-trip time must be greater than zero",
    );
    refused(&["--link", "oc3-atm", "--rtt", "0min"], "--rtt '0min'");
    refused(
        &[
            "--mss", "1460", "--loss", "1%", "--rtt", "10ms", "--rto", "0ms",
        ],
        "--rto '0ms'",
    );
}

#[test]
fn window_above_rfc7323_largest_is_clamped_and_said_so() {
    // RFC 7323 section 2.3: the largest window is 65535 << 14 = 1,073,725,440
    // bytes; at 10 ms that is a ceiling of 858.98 Gbit/s, not 8 Tbit/s.
    let v = json(&["--window", "10GB", "--rtt", "10ms"]);
    assert_eq!(v["inputs"]["window_bytes"], 1_073_725_440u64);
    assert_eq!(v["inputs"]["window_clamped_from_bytes"], 10_000_000_000u64);
    assert_eq!(v["ceiling_bps"], 858_980_352_000u64);
    assert_eq!(v["window_scale_shift"], 14);
    let t = text(&["--window", "10GB", "--rtt", "10ms"]);
    assert!(
        t.contains("clamped from 10000000000 bytes") && t.contains("65535 << 14"),
        "{t}"
    );
    assert!(!t.contains("Tbit/s"), "{t}");
    // The transfer time uses the clamped window too.
    let v = json(&["--size", "1GB", "--window", "10GB", "--rtt", "10ms"]);
    assert_eq!(v["throughput_bps"], 858_980_352_000u64);
    // The largest window itself is not clamped.
    let v = json(&["--window", "1073725440", "--rtt", "10ms"]);
    assert!(
        v["inputs"].get("window_clamped_from_bytes").is_none(),
        "{v}"
    );
    assert_eq!(v["ceiling_bps"], 858_980_352_000u64);
}

#[test]
fn help_documents_the_exit_status() {
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    let status = &help[help.find("Exit status").expect("exit status in --help")..];
    for needle in ["0 done", "1 runtime error", "2 usage error"] {
        assert!(status.contains(needle), "{status}");
    }
}

#[test]
fn closed_stdout_ends_quietly_with_status_0() {
    // A real pipe whose reading end is closed before bdp-calc writes: the
    // write fails with EPIPE (Rust ignores SIGPIPE), as under `| head`.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    for args in [
        &["--rate", "1Gbps", "--rtt", "10ms"][..],
        &["--list-links"][..],
        &["--rate", "1Gbps", "--rtt", "10ms", "--json"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_bdp-calc"))
            .args(args)
            .stdout(writer.try_clone().expect("clone pipe"))
            .stderr(std::process::Stdio::piped())
            .output()
            .expect("bdp-calc runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---- Issue 13 section 4: --host linux and slow start ----

fn advice_pairs(v: &Value) -> Vec<(String, u64)> {
    v["linux"]["advice"]
        .as_array()
        .expect("advice is an array")
        .iter()
        .map(|a| {
            (
                a["setting"].as_str().unwrap().to_string(),
                a["value"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn host_linux_campus_settings() {
    // DESIGN.md incident 1: 1 Gbit/s at 10 ms needs 1,250,000 bytes of window;
    // Linux 6.8 advertises 50% of the buffer (the default scaling ratio), so
    // tcp_rmem max must be at least 2,500,000.
    let v = json(&[
        "--rate", "1Gbps", "--rtt", "10ms", "--host", "linux", "--kernel", "6.8",
    ]);
    let l = &v["linux"];
    assert_eq!(l["kernel"], "6.8");
    assert_eq!(l["kernel_source"], "kernel");
    assert_eq!(l["window_bytes"], 1_250_000);
    assert_eq!(l["window_for"], "bdp");
    assert_eq!(l["window_share_rule"], "scaling_ratio");
    assert_eq!(l["scaling_ratio_256"], 128);
    assert_eq!(f(&l["window_share"]), 0.5);
    assert_eq!(l["receive_buffer_bytes"], 2_500_000);
    assert_eq!(l["send_buffer_bytes"], 2_500_000);
    assert_eq!(l["rcv_wscale"], 7);
    assert_eq!(
        l["default_tcp_rmem"],
        serde_json::json!([4096, 131072, 6291456])
    );
    let pairs = advice_pairs(&v);
    let want: Vec<(String, u64)> = [
        ("net.ipv4.tcp_window_scaling", 1),
        ("net.ipv4.tcp_moderate_rcvbuf", 1),
        ("net.ipv4.tcp_rmem max", 2_500_000),
        ("net.core.rmem_max", 2_461_539),
        ("net.ipv4.tcp_wmem max", 2_500_000),
        ("net.core.wmem_max", 1_250_000),
    ]
    .iter()
    .map(|(s, n)| (s.to_string(), *n))
    .collect();
    assert_eq!(pairs, want);
    for a in l["advice"].as_array().unwrap() {
        assert!(!a["why"].as_str().unwrap().is_empty());
        assert!(a["command"].as_str().unwrap().starts_with("sysctl -w "));
        assert!(["receiver", "sender"].contains(&a["side"].as_str().unwrap()));
    }
    let t = text(&[
        "--rate", "1Gbps", "--rtt", "10ms", "--host", "linux", "--kernel", "6.8",
    ]);
    assert!(t.contains("net.ipv4.tcp_rmem max >= 2500000"), "{t}");
    assert!(
        t.contains("sysctl -w net.ipv4.tcp_rmem=\"4096 131072 2500000\""),
        "{t}"
    );
    assert!(
        t.contains("50.0% of the receive buffer is advertised as window"),
        "{t}"
    );
}

#[test]
fn host_linux_satellite_on_5_15() {
    // DESIGN.md incident 2: 0.55 s at OC-1 needs 3,564,000 bytes; with
    // tcp_adv_win_scale = 1 that is a 7,127,999-byte buffer, above the 6 MiB default.
    let v = json(&[
        "--rate",
        "51.84Mbps",
        "--rtt",
        "0.55s",
        "--host",
        "linux",
        "--kernel",
        "5.15.0-91-generic",
    ]);
    let l = &v["linux"];
    assert_eq!(l["kernel"], "5.15");
    assert_eq!(l["window_share_rule"], "tcp_adv_win_scale");
    assert_eq!(l["tcp_adv_win_scale"], 1);
    assert_eq!(l["receive_buffer_bytes"], 7_127_999);
    let rmem = l["advice"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["setting"] == "net.ipv4.tcp_rmem max")
        .unwrap();
    assert_eq!(rmem["value"], 7_127_999);
    assert!(rmem["why"]
        .as_str()
        .unwrap()
        .contains("the default is 6291456 bytes"));
}

#[test]
fn host_linux_defaults_shares_and_windows() {
    // No --kernel: the newest modelled, 6.16, whose 32 MiB tcp_rmem max gives shift 10.
    let v = json(&["--rate", "1Gbps", "--rtt", "10ms", "--host", "linux"]);
    assert_eq!(v["linux"]["kernel"], "6.16");
    assert_eq!(v["linux"]["kernel_source"], "default");
    assert_eq!(v["linux"]["rcv_wscale"], 10);
    // A measured ratio of 0.7 is 179/256: a smaller buffer.
    for r in ["0.7", "70%"] {
        let v = json(&[
            "--rate",
            "1Gbps",
            "--rtt",
            "10ms",
            "--host",
            "linux",
            "--scaling-ratio",
            r,
        ]);
        assert_eq!(v["linux"]["scaling_ratio_256"], 179);
        assert_eq!(v["linux"]["receive_buffer_bytes"], 1_787_710);
    }
    // tcp_adv_win_scale = -2 (a quarter of the buffer) on 3.2.
    let v = json(&[
        "--rate",
        "1Gbps",
        "--rtt",
        "10ms",
        "--host",
        "linux",
        "--kernel",
        "3.2",
        "--adv-win-scale",
        "-2",
    ]);
    assert_eq!(v["linux"]["receive_buffer_bytes"], 5_000_000);
    assert_eq!(f(&v["linux"]["window_share"]), 0.25);
    // Planning for a window instead of a BDP.
    let v = json(&[
        "--window", "4MiB", "--rtt", "50ms", "--host", "linux", "--kernel", "6.10",
    ]);
    assert_eq!(v["linux"]["window_for"], "window");
    assert_eq!(v["linux"]["window_bytes"], 4 << 20);
    assert_eq!(v["linux"]["receive_buffer_bytes"], 8 << 20);
    assert_eq!(v["linux"]["so_rcvbuf_bytes"], 4 << 20);
}

#[test]
fn host_linux_refusals() {
    refused(
        &["--rate", "1Gbps", "--rtt", "10ms", "--kernel", "6.8"],
        "apply to --host linux",
    );
    refused(
        &[
            "--rate",
            "1Gbps",
            "--rtt",
            "10ms",
            "--host",
            "linux",
            "--kernel",
            "6.8",
            "--adv-win-scale",
            "1",
        ],
        "obsolete since Linux 6.6",
    );
    refused(
        &[
            "--rate",
            "1Gbps",
            "--rtt",
            "10ms",
            "--host",
            "linux",
            "--kernel",
            "5.15",
            "--scaling-ratio",
            "0.7",
        ],
        "exists from Linux 6.6",
    );
    refused(
        &[
            "--rate",
            "1Gbps",
            "--rtt",
            "10ms",
            "--host",
            "linux",
            "--scaling-ratio",
            "1.5",
        ],
        "255/256",
    );
    refused(
        &[
            "--rate", "1Gbps", "--rtt", "10ms", "--host", "linux", "--kernel", "six",
        ],
        "MAJOR.MINOR",
    );
    refused(
        &[
            "--rate",
            "1Gbps",
            "--rtt",
            "10ms",
            "--host",
            "linux",
            "--kernel",
            "5.4",
            "--adv-win-scale",
            "40",
        ],
        "-31 to 31",
    );
    refused(
        &["--rtt", "10ms", "--host", "linux"],
        "--host linux needs a window",
    );
    // clap refuses an OS it does not know.
    let out = run(&["--rate", "1Gbps", "--rtt", "10ms", "--host", "bsd"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn slow_start_beside_the_steady_state() {
    // DESIGN.md incident 2's path: 8 MiB at OC-1, 0.55 s. Steady state 1.294 s;
    // slow start from 10 x 1460 bytes takes 8 round trips (4.4 s, 3,723,000
    // bytes) before the window reaches the 3,564,000-byte BDP, then 0.720 s.
    let v = json(&["--size", "8MiB", "--rate", "51.84Mbps", "--rtt", "0.55s"]);
    assert!((f(&v["transfer_seconds"]) - 1.294_538_272).abs() < 1e-9);
    assert_eq!(v["slow_start_rounds"], 8);
    assert_eq!(v["slow_start_bytes"], 3_723_000);
    assert!((f(&v["transfer_seconds_slow_start"]) - (4.4 + 0.720_001_235)).abs() < 1e-9);
    assert_eq!(v["inputs"]["mss_bytes"], 1460);
    assert_eq!(v["inputs"]["mss_source"], "default");
    // A 1 MB transfer is almost all slow start: 3.3 s of 3.31 s.
    let v = json(&["--size", "1MB", "--rate", "51.84Mbps", "--rtt", "0.55s"]);
    assert!((f(&v["transfer_seconds_slow_start"]) - 3.312_376_544).abs() < 1e-9);
    let t = text(&["--size", "1MB", "--rate", "51.84Mbps", "--rtt", "0.55s"]);
    assert!(t.contains("with slow start:"), "{t}");
    assert!(t.contains("6 round trips of slow start from an initial window of 10 x 1460 bytes, 100% of the time"), "{t}");
    // --mss sets the segment: 1448 (timestamps) gives 14,480-byte rounds.
    let v = json(&[
        "--size",
        "1MB",
        "--rate",
        "51.84Mbps",
        "--rtt",
        "0.55s",
        "--mss",
        "1448",
    ]);
    assert_eq!(v["inputs"]["mss_source"], "mss");
    assert_eq!(v["slow_start_bytes"], 14_480 * 63);
    // Without an RTT there is no slow start to model.
    let v = json(&["--size", "1MB", "--rate", "51.84Mbps"]);
    assert!(v.get("transfer_seconds_slow_start").is_none());
    // --mss alone still answers nothing.
    refused(
        &["--mss", "1460", "--rtt", "10ms"],
        "--mss needs --loss and --rtt",
    );
}
