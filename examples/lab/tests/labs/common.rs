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
