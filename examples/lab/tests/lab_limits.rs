//! What limited each transfer, checked against the sender's own kernel.
//!
//! For each case `examples/lab/lab.sh` runs a real Linux transfer through a
//! ~10 ms path and records the sender's `TCP_INFO` chrono counters when its
//! data is acknowledged (`server.tcpinfo.json` for the download,
//! `client.tcpinfo.json` for the upload). `firewall-check analyze` on the
//! capture of either side must then agree with the kernel:
//!
//! - `limit.kind` is the kernel's dominant limit: `receive_window` where
//!   `tcpi_rwnd_limited` dominates `tcpi_busy_time`, `sender` where
//!   `tcpi_sndbuf_limited` does; where neither does, `network`, or `sender`
//!   when the application left the sender idle most of the transfer (the
//!   kernel does not count idle time at all);
//! - `limit.receive_window_fraction` is within 0.15 of
//!   `tcpi_rwnd_limited / tcpi_busy_time`.
//!
//! Needs root, iproute2, iptables, nft, tc, tcpdump and python3; skips with a
//! message unless `TCP_PERF_LAB_REQUIRED=1` (set by `.ci/run`).

mod lab_support;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn run_lab(case: &str, extra: &[&str]) -> Option<PathBuf> {
    let mut args = vec!["--delay-ms", "10"];
    args.extend_from_slice(extra);
    lab_support::run_lab_case("limits", case, &args)
}

fn analyze(capture: &Path) -> Value {
    lab_support::analyze_json(&[], capture)
}

/// The kernel's shares of the busy time: (rwnd, sndbuf, neither).
fn kernel(dir: &Path, sender: &str) -> (f64, f64, f64) {
    let text = std::fs::read_to_string(dir.join(format!("{sender}.tcpinfo.json")))
        .expect("the sender's TCP_INFO");
    let v: Value = serde_json::from_str(&text).unwrap();
    let busy = v["busy_us"].as_f64().unwrap();
    assert!(busy > 0.0, "{v}");
    let rwnd = v["rwnd_limited_us"].as_f64().unwrap() / busy;
    let snd = v["sndbuf_limited_us"].as_f64().unwrap() / busy;
    (rwnd, snd, (1.0 - rwnd - snd).max(0.0))
}

/// Checks both captures' `limit` of `direction` against the kernel of `sender`.
fn check(case: &str, dir: &Path, direction: &str, sender: &str, sides: &[&str]) {
    for side in sides {
        check_capture(
            case,
            dir,
            direction,
            sender,
            &dir.join(format!("{side}.pcap")),
        );
    }
}

/// Checks one capture's `limit` of `direction` against the kernel of `sender`.
fn check_capture(case: &str, dir: &Path, direction: &str, sender: &str, capture: &Path) {
    let (k_rwnd, k_snd, k_neither) = kernel(dir, sender);
    let side = capture.file_name().unwrap().to_string_lossy();
    {
        let v = analyze(capture);
        let conns = v["connections"].as_array().unwrap();
        assert_eq!(conns.len(), 1, "{case} {side}: {v}");
        let d = &conns[0]["directions"][direction];
        let l = &d["limit"];
        let kind = l["kind"].as_str().unwrap();
        let what = format!(
            "{case}, {side} capture, {direction}: kernel rwnd {k_rwnd:.2} sndbuf {k_snd:.2} neither {k_neither:.2}; analyze {l}"
        );
        let expected: &[&str] = if k_rwnd >= k_snd && k_rwnd >= k_neither {
            &["receive_window"]
        } else if k_snd >= k_neither || l["idle_fraction"].as_f64().unwrap_or(0.0) > 0.5 {
            // The send buffer, or an application that left the sender idle.
            &["sender"]
        } else {
            &["network"]
        };
        assert!(expected.contains(&kind), "{what}");
        // A window the capture does not show is claimed only where the
        // kernel counted the receive window.
        if l["receive_window_evidence"]["kind"] == "flight_plateau" {
            assert!(k_rwnd >= 0.5, "{what}");
        }
        let rw = l["receive_window_fraction"].as_f64().expect(&what);
        assert!((rw - k_rwnd).abs() <= 0.15, "{what}");
        // No claim contradicts the capture: window-limited only within the ceiling.
        if d["window_limited"] == true {
            assert!(
                d["throughput_bps"].as_u64().unwrap() <= d["ceiling_bps"].as_u64().unwrap(),
                "{what}"
            );
        }
    }
}

/// The shifts of the client's window fields as the two kernels hold them
/// (`TCP_INFO`'s `tcpi_snd_wscale`/`tcpi_rcv_wscale`, recorded by xfer.py):
/// (the client means, the server reads).
fn client_shifts(dir: &Path) -> (u64, u64) {
    let info = |who: &str| -> Value {
        let text = std::fs::read_to_string(dir.join(format!("{who}.tcpinfo.json")))
            .expect("TCP_INFO of both ends");
        serde_json::from_str(&text).unwrap()
    };
    (
        info("client")["rcv_wscale"].as_u64().unwrap(),
        info("server")["snd_wscale"].as_u64().unwrap(),
    )
}

/// Cut after the handshake, each capture of a bulk download (at least 1 MB
/// over a 10 ms path: 50 round trips of busy time and more, the kernel
/// says) must infer the shift the server's kernel read the client's
/// window fields with, as one value: its window growth, or the server's
/// data stopping at the edge of that shift, names it. Where the two kernels
/// disagree (the client means one shift, the server reads another) there
/// is no one shift to infer: each capture must then show the mismatch
/// ([`check_inferred_mismatch`]).
fn check_inferred_single(case: &str, dir: &Path, sides: &[&str]) {
    let (meant, read) = client_shifts(dir);
    if meant != read {
        eprintln!(
            "{case}: the client means shift {meant} and the server reads {read} (TCP_INFO): the ends disagree, no one shift to infer"
        );
        return check_inferred_mismatch(case, dir, sides, read);
    }
    for side in sides {
        let cut = cut_after_handshake(dir, side);
        let v = analyze(&cut);
        let n = &v["connections"][0]["negotiated"];
        let inf = &n["wscale_inferred"]["client"];
        let what = format!(
            "{case}, {side} capture cut after the handshake: the server's kernel read the client's fields with shift {read}; inferred {inf}"
        );
        eprintln!("{what}");
        assert_eq!(
            (inf["min"].as_u64(), inf["max"].as_u64()),
            (Some(read), Some(read)),
            "{what}"
        );
        let (bmin, bmax) = (
            inf["bounds"]["min"].as_u64().expect(&what),
            inf["bounds"]["max"].as_u64().expect(&what),
        );
        assert!((bmin..=bmax).contains(&read), "{what}");
        assert_eq!(n["wscale_mismatch"], false, "{what}");
        // The download's limit, with the shift the capture pinned and the
        // RTT of its timestamps: held to the kernel as the whole capture is.
        let l = &v["connections"][0]["directions"]["server_to_client"]["limit"];
        assert_eq!(l["inferred_shift"].as_u64(), Some(read), "{what}: {l}");
        check_capture(case, dir, "server_to_client", "server", &cut);
    }
}

/// `SIDE.pcap` of `dir` without its first three records (the handshake):
/// `SIDE.cut.pcap`.
fn cut_after_handshake(dir: &Path, side: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{side}.pcap"));
    let cut = dir.join(format!("{side}.cut.pcap"));
    std::fs::write(
        &cut,
        capture::writer::without_records(&std::fs::read(&path).unwrap(), |i| i < 3).unwrap(),
    )
    .unwrap();
    cut
}

/// Cut after the handshake, a capture of a transfer whose ends disagree
/// about scaling (the client means `0`, the server reads `read`, as
/// `TCP_INFO` says) must say so from either side (`wscale_mismatch`, from
/// the client's fields capped at 65,535 while the server's data goes past
/// them), and each interval must hold the shift the peer reads with: the
/// server reads the client's fields with `read`, the client reads the
/// server's with its own `tcpi_snd_wscale`.
fn check_inferred_mismatch(case: &str, dir: &Path, sides: &[&str], read: u64) {
    let text = std::fs::read_to_string(dir.join("client.tcpinfo.json")).unwrap();
    let client_reads = serde_json::from_str::<Value>(&text).unwrap()["snd_wscale"]
        .as_u64()
        .unwrap();
    for side in sides {
        let v = analyze(&cut_after_handshake(dir, side));
        let n = &v["connections"][0]["negotiated"];
        let what = format!(
            "{case}, {side} capture cut after the handshake: the server reads the client's fields with shift {read}, the client the server's with {client_reads}; negotiated {n}"
        );
        eprintln!("{what}");
        assert_eq!(n["wscale_mismatch"], true, "{what}");
        assert_eq!(
            n["wscale_mismatch_evidence"]["kind"], "unscaled_cap",
            "{what}"
        );
        let inf = &n["wscale_inferred"];
        let holds = |i: &Value, shift: u64| {
            i.is_null()
                || (i["min"].as_u64().unwrap()..=i["max"].as_u64().unwrap()).contains(&shift)
        };
        assert!(!inf["client"].is_null(), "{what}");
        assert!(holds(&inf["client"], read), "{what}");
        assert!(holds(&inf["server"], client_reads), "{what}");
    }
}

const BULK: &[&str] = &["--bytes", "2000000"];
const BOTH: &[&str] = &["inside", "outside"];

#[test]
fn lab_limit_receive_buffer_too_small() {
    let Some(dir) = run_lab("rcvbuf-small4", BULK) else {
        return;
    };
    check("rcvbuf-small4", &dir, "server_to_client", "server", BOTH);
    check_inferred_single("rcvbuf-small4", &dir, BOTH);
    // What to change: the receiver's buffer (bdp's Linux model).
    let v = analyze(&dir.join("outside.pcap"));
    let advice = &v["connections"][0]["directions"]["server_to_client"]["advice"];
    assert!(
        advice
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["setting"] == "net.ipv4.tcp_rmem max"
                && a["host"] == "receiver"
                && a["value"].as_u64().unwrap() > 1_000_000),
        "{advice}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The window field rewritten between the client and the server: the
/// server's capture shows the small window the server reads. The client's
/// capture shows the client's own, larger fields; there the rewrite shows
/// as the server's flight stopping at one value, to the byte, far below the
/// advertised window (the plateau, `limits.rs`): both sides are held to the
/// kernel, and the client's side names the window the server read.
#[test]
fn lab_limit_window_field_rewritten() {
    let Some(dir) = run_lab("window-rewrite4", BULK) else {
        return;
    };
    check("window-rewrite4", &dir, "server_to_client", "server", BOTH);
    // The middlebox writes 20 into the field; the server reads it with the
    // client's shift, 10: a window of 20,480 bytes.
    let read = 20u64 << 10;
    let v = analyze(&dir.join("inside.pcap"));
    let l = &v["connections"][0]["directions"]["server_to_client"]["limit"];
    assert_eq!(
        l["receive_window_evidence"]["kind"], "flight_plateau",
        "{l}"
    );
    assert_eq!(l["receive_window_evidence"]["confidence"], "medium", "{l}");
    let w = l["window_read_inferred_bytes"]
        .as_u64()
        .expect("inferred window");
    assert!(w <= read && read < w + 1448, "{l}");
    // The server's side sees the rewritten fields themselves.
    let v = analyze(&dir.join("outside.pcap"));
    let l = &v["connections"][0]["directions"]["server_to_client"]["limit"];
    assert_eq!(
        l["receive_window_evidence"]["kind"], "advertised_window",
        "{l}"
    );
    // The client's side sees the client's own growing fields (growth names
    // the shift); the server's side sees only the rewritten field, 20,
    // never changing, and the server's data stopping at its edge read with
    // shift 10 (the sender edge names it).
    check_inferred_single("window-rewrite4", &dir, BOTH);
    let cut = dir.join("outside.cut.pcap");
    let inf = &analyze(&cut)["connections"][0]["negotiated"]["wscale_inferred"]["client"];
    assert_eq!(inf["basis"], "sender_edge", "{inf}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn lab_limit_rate_bottleneck() {
    let Some(dir) = run_lab("tbf4", BULK) else {
        return;
    };
    check("tbf4", &dir, "server_to_client", "server", BOTH);
    check_inferred_single("tbf4", &dir, BOTH);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn lab_limit_send_buffer_too_small() {
    let Some(dir) = run_lab("sndbuf-small4", BULK) else {
        return;
    };
    check("sndbuf-small4", &dir, "server_to_client", "server", BOTH);
    check_inferred_single("sndbuf-small4", &dir, BOTH);
    let v = analyze(&dir.join("inside.pcap"));
    let advice = &v["connections"][0]["directions"]["server_to_client"]["advice"];
    assert!(
        advice
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["setting"] == "net.ipv4.tcp_wmem max" && a["host"] == "sender"),
        "{advice}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn lab_limit_slow_application() {
    let Some(dir) = run_lab("slow-app4", &["--bytes", "1000000"]) else {
        return;
    };
    check("slow-app4", &dir, "server_to_client", "server", BOTH);
    check_inferred_single("slow-app4", &dir, BOTH);
    let _ = std::fs::remove_dir_all(dir);
}

/// Window scaling stripped from the SYN-ACK: the download is not limited by
/// the window (the server reads the client's fields scaled, the client
/// accepts more than it advertises), the upload is, almost entirely.
#[test]
fn lab_limit_window_scale_stripped_download_and_upload() {
    let Some(dir) = run_lab(
        "wscale-synack4",
        &["--bytes", "2000000", "--up-bytes", "16000"],
    ) else {
        return;
    };
    check("wscale-synack4", &dir, "server_to_client", "server", BOTH);
    check("wscale-synack4", &dir, "client_to_server", "client", BOTH);
    // The client means 0, the server reads 10: the mismatch, from both sides.
    check_inferred_single("wscale-synack4", &dir, BOTH);
    for side in BOTH {
        let v = analyze(&dir.join(format!("{side}.pcap")));
        let down = &v["connections"][0]["directions"]["server_to_client"];
        // Data beyond the client's unscaled window, and the client took it.
        assert!(
            down["beyond_window_bytes"].as_u64().unwrap() > 100_000,
            "{side}: {down}"
        );
        assert_eq!(down["beyond_window_accepted"], true, "{side}: {down}");
        assert_eq!(down["window_limited"], false, "{side}: {down}");
        let up = &v["connections"][0]["directions"]["client_to_server"];
        assert_eq!(up["window_limited"], true, "{side}: {up}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
