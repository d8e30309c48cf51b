//! What several tables use: directions, finding sets, cut captures.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub const C2S: &str = "client_to_server";
pub const S2C: &str = "server_to_client";
/// Both captures of a lab.sh run.
pub const BOTH: &[&str] = &["inside", "outside"];

/// (kind, direction) of every finding of a compare document.
pub fn kinds(doc: &Value) -> BTreeSet<(String, String)> {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap_or("").to_string(),
                f["direction"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

pub fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(k, d)| (k.to_string(), d.to_string()))
        .collect()
}

/// The finding `kind` in `dir`; fails listing the findings when there is none.
pub fn finding<'a>(doc: &'a Value, kind: &str, dir: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .and_then(|v| {
            v.iter()
                .find(|f| f["kind"] == kind && f["direction"] == dir)
        })
        .unwrap_or_else(|| panic!("no {kind} {dir} in {}", doc["findings"]))
}

/// `path` without the records `drop` selects (by index), written next to it
/// as `NAME.cut.pcap` (`NAME.TAG.pcap` with a tag).
pub fn without_records(path: &Path, tag: &str, drop: impl Fn(usize) -> bool) -> PathBuf {
    let stem = path.file_stem().unwrap().to_string_lossy();
    let out = path.with_file_name(format!("{stem}.{tag}.pcap"));
    std::fs::write(
        &out,
        capture::writer::without_records(&std::fs::read(path).unwrap(), drop).unwrap(),
    )
    .unwrap();
    out
}

/// The capture without its first three records (the handshake).
pub fn cut_after_handshake(path: &Path) -> PathBuf {
    without_records(path, "cut", |i| i < 3)
}

/// The kernel's shares of the sender's busy time (`tcpi_busy_time`):
/// (receive window, send buffer, neither), from the `TCP_INFO` of `sender`
/// ("server" for the download, "client" for the upload).
pub fn kernel_shares(run: &lab::CaseRun, sender: &str) -> (f64, f64, f64) {
    let i = run.tcpinfo(sender);
    assert!(i.busy_us > 0, "{i:?}");
    let (rwnd, snd) = (i.rwnd_share(), i.sndbuf_share());
    (rwnd, snd, (1.0 - rwnd - snd).max(0.0))
}

/// The limit the kernel signs, from its shares: `receive_window` where
/// `tcpi_rwnd_limited` dominates the busy time, `sender` where
/// `tcpi_sndbuf_limited` does; where neither does, `network`, or `sender`
/// when the application left the sender idle most of the transfer
/// (`idle`: the capture's `idle_fraction`; the kernel does not count idle
/// time at all).
pub fn kernel_kind((rwnd, snd, neither): (f64, f64, f64), idle: f64) -> &'static str {
    if rwnd >= snd && rwnd >= neither {
        "receive_window"
    } else if snd >= neither || idle > 0.5 {
        // The send buffer, or an application that left the sender idle.
        "sender"
    } else {
        "network"
    }
}
