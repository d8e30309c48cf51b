//! The network lab for `firewall-check compare`: real Linux endpoints, real
//! netfilter rules on the middlebox, both sides captured by tcpdump
//! (`examples/lab/lab.sh`); then `compare` must name exactly what the rules
//! did, with the structured values of `--json` schema 2 (`docs/json.md`),
//! and must tell a gap in a capture (`capture_loss`) from a middlebox drop.
//!
//! Needs root, iproute2, iptables, tcpdump and python3. Without them each
//! test says why and passes as skipped, unless `TCP_PERF_LAB_REQUIRED=1`
//! (set by `.ci/run`), where a skip is a failure. Cases run one at a time.

mod lab_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

const C2S: &str = "client_to_server";
const S2C: &str = "server_to_client";

/// A lab case's output directory, removed when dropped.
struct Captures {
    dir: PathBuf,
}

impl Captures {
    fn inside(&self) -> PathBuf {
        self.dir.join("inside.pcap")
    }
    fn outside(&self) -> PathBuf {
        self.dir.join("outside.pcap")
    }
}

impl Drop for Captures {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs a lab case; `None` when the lab cannot run here (and that is allowed).
fn run_lab(case: &str, extra: &[&str]) -> Option<Captures> {
    lab_support::run_lab_case("lab-compare", case, extra).map(|dir| Captures { dir })
}

/// `firewall-check compare --json A B`: the document and the exit status.
fn compare(a: &Path, b: &Path) -> (Value, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_lab-firewall-check"))
        .args(["compare", "--json"])
        .arg(a)
        .arg(b)
        .output()
        .expect("run firewall-check");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 3,
        "compare failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert_eq!(doc["schema_version"], 2);
    (doc, code)
}

/// Compares in both orders, requires the same verdicts and one connection.
fn compare_both(a: &Path, b: &Path, what: &str) -> (Value, i32) {
    let (ab, code) = compare(a, b);
    let (ba, code_ba) = compare(b, a);
    assert_eq!(ab["findings"], ba["findings"], "order matters in {what}");
    assert_eq!(
        ab["connections"], ba["connections"],
        "order matters in {what}"
    );
    assert_eq!(code, code_ba);
    assert_eq!(
        ab["connections"].as_array().map(Vec::len),
        Some(1),
        "{what}: {ab}"
    );
    (ab, code)
}

fn kinds(doc: &Value) -> BTreeSet<(String, String)> {
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

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(k, d)| (k.to_string(), d.to_string()))
        .collect()
}

fn finding<'a>(doc: &'a Value, kind: &str, dir: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .and_then(|v| {
            v.iter()
                .find(|f| f["kind"] == kind && f["direction"] == dir)
        })
        .unwrap_or_else(|| panic!("no {kind} {dir} in {}", doc["findings"]))
}

fn check_dnat(caps: &Captures, public: Value, real: Value) {
    let (doc, code) = compare_both(&caps.inside(), &caps.outside(), "dnat");
    // Only the client's packets were rewritten on the forward path; the
    // replies are that translation undone, not a second finding.
    assert_eq!(kinds(&doc), set(&[("nat", C2S)]), "{}", doc["findings"]);
    assert_eq!(code, 3);
    let f = finding(&doc, "nat", C2S);
    assert_eq!(f["before"], json!({ "dst": public }), "{f}");
    assert_eq!(f["after"], json!({ "dst": real }), "{f}");
    assert!(f["replies_translated"].as_u64().unwrap() > 50, "{f}");
    assert!(f["count"].as_u64().unwrap() > 50, "{f}");
    let c = &doc["connections"][0];
    assert_eq!(
        c["client_side"]["client"], c["server_side"]["client"],
        "{c}"
    );
    assert_ne!(
        c["client_side"]["server"], c["server_side"]["server"],
        "{c}"
    );
    assert_eq!(c["sides_by"], "ttl");
}

#[test]
fn lab_destination_nat_is_reported_on_the_forward_path() {
    let Some(caps) = run_lab("dnat4", &[]) else {
        return;
    };
    check_dnat(
        &caps,
        json!({"addr": "198.19.0.80", "port": 80}),
        json!({"addr": "198.18.2.2", "port": 5201}),
    );
}

#[test]
fn lab_destination_nat_ipv6() {
    let Some(caps) = run_lab("dnat6", &[]) else {
        return;
    };
    check_dnat(
        &caps,
        json!({"addr": "2001:db8:ffff::80", "port": 80}),
        json!({"addr": "2001:db8:2::2", "port": 5201}),
    );
}

/// The records of a classic pcap file as tcpdump writes them (host byte
/// order, checked by the magic), each with its 16-byte record header.
fn pcap_records(file: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let magic = u32::from_le_bytes(file[..4].try_into().unwrap());
    assert!(
        magic == 0xa1b2_c3d4 || magic == 0xa1b2_3c4d,
        "a little-endian classic pcap: {magic:#x}"
    );
    let mut out = Vec::new();
    let mut off = 24;
    while off + 16 <= file.len() {
        let incl = u32::from_le_bytes(file[off + 8..off + 12].try_into().unwrap()) as usize;
        out.push(file[off..off + 16 + incl].to_vec());
        off += 16 + incl;
    }
    (file[..24].to_vec(), out)
}

/// Source address and TCP payload length of an Ethernet + IPv4 record.
fn v4_src_and_payload(record: &[u8]) -> ([u8; 4], usize) {
    let ip = &record[16 + 14..];
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let doff = usize::from(ip[ihl + 12] >> 4) * 4;
    (ip[12..16].try_into().unwrap(), total - ihl - doff)
}

const CLIENT: [u8; 4] = [198, 18, 1, 2];
const SERVER: [u8; 4] = [198, 18, 2, 2];

/// Rewrites `src` keeping the records `keep` accepts (given their index
/// and record); returns how many were removed.
fn rewrite(src: &Path, dst: &Path, keep: impl Fn(usize, &[u8]) -> bool) -> usize {
    let (header, records) = pcap_records(&std::fs::read(src).unwrap());
    let mut out = header;
    let mut removed = 0;
    for (i, r) in records.iter().enumerate() {
        if keep(i, r) {
            out.extend_from_slice(r);
        } else {
            removed += 1;
        }
    }
    std::fs::write(dst, out).unwrap();
    removed
}

#[test]
fn lab_frames_deleted_from_one_capture_are_capture_loss() {
    let Some(caps) = run_lab("clean4", &[]) else {
        return;
    };
    let (inside, outside) = (caps.inside(), caps.outside());
    // Every 15th client data segment gone from the server's capture, every
    // 20th server data segment gone from the client's: the receivers'
    // ACKs on those same wires cover the bytes, so the captures missed them.
    let nth = |every: usize, from: [u8; 4]| {
        move |_: usize, r: &[u8]| {
            let (src, len) = v4_src_and_payload(r);
            // Sequence numbers of data segments are unique in a clean run:
            // use the record's TCP sequence number to pick every n-th.
            let ip = &r[16 + 14..];
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            let seq = u32::from_be_bytes(ip[ihl + 4..ihl + 8].try_into().unwrap());
            !(src == from && len > 0 && (seq / 1448) % every as u32 == 7)
        }
    };
    let lossy_out = caps.dir.join("outside-lossy.pcap");
    let lossy_in = caps.dir.join("inside-lossy.pcap");
    let lost_c2s = rewrite(&outside, &lossy_out, nth(15, CLIENT));
    let lost_s2c = rewrite(&inside, &lossy_in, nth(20, SERVER));
    assert!(lost_c2s >= 3 && lost_s2c >= 3, "{lost_c2s} {lost_s2c}");
    let (doc, code) = compare_both(&lossy_in, &lossy_out, "capture loss");
    assert_eq!(
        kinds(&doc),
        set(&[("capture_loss", C2S), ("capture_loss", S2C)]),
        "{}",
        doc["findings"]
    );
    // Capture loss is not tampering: nothing else found, exit status 0.
    assert_eq!(code, 0);
    for (dir, missing, n) in [
        (C2S, "server_side", lost_c2s),
        (S2C, "client_side", lost_s2c),
    ] {
        let f = finding(&doc, "capture_loss", dir);
        assert_eq!(f["missing_from"], missing, "{f}");
        assert_eq!(f["count"].as_u64(), Some(n as u64), "{f}");
        assert_eq!(f["outside_span"], 0, "{f}");
        assert!(f["before"].is_object() != f["after"].is_object(), "{f}");
        assert!(
            f["before"]["payload_bytes"].as_u64().unwrap_or(0) > 0
                || f["after"]["payload_bytes"].as_u64().unwrap_or(0) > 0,
            "{f}"
        );
    }
    // A server-side capture that started late and stopped early: the frames
    // outside its span are capture loss too, never dropped or injected.
    let (_, records) = pcap_records(&std::fs::read(&outside).unwrap());
    let n = records.len();
    let short_out = caps.dir.join("outside-short.pcap");
    rewrite(&outside, &short_out, |i, _| i >= 40 && i + 40 < n);
    let (doc, code) = compare_both(&inside, &short_out, "short capture");
    let k = kinds(&doc);
    assert!(
        k.iter().all(|(kind, _)| kind == "capture_loss"),
        "{}",
        doc["findings"]
    );
    assert_eq!(code, 0);
    let spanned: u64 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["missing_from"], "server_side", "{f}");
            f["outside_span"].as_u64().unwrap()
        })
        .sum();
    assert!(spanned >= 40, "{}", doc["findings"]);
}

#[test]
fn lab_real_drops_are_packet_dropped_not_capture_loss() {
    let Some(caps) = run_lab("drop4", &[]) else {
        return;
    };
    let (doc, code) = compare_both(&caps.inside(), &caps.outside(), "drop4");
    assert_eq!(code, 3);
    let k = kinds(&doc);
    assert!(
        k.iter().all(|(kind, _)| kind == "packet_dropped"),
        "only drops: {}",
        doc["findings"]
    );
    let dropped: u64 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert!(f["before"]["payload_bytes"].as_u64().unwrap() > 0, "{f}");
            assert!(f["after"].is_null(), "{f}");
            f["count"].as_u64().unwrap()
        })
        .sum();
    // Every 25th of the roughly 210 data segments.
    assert!(
        (5..=12).contains(&dropped),
        "{dropped}: {}",
        doc["findings"]
    );
    // One side at a time, analyze sees the holes the drops leave in the
    // data (on the side after the middlebox) filled by the senders'
    // retransmissions before the receiver acknowledges past them: the
    // network's loss, not the capture's (compare, above, found no
    // capture_loss: neither capture lost records).
    let mut retransmissions = 0;
    for (side, path) in [("inside", caps.inside()), ("outside", caps.outside())] {
        let out = Command::new(env!("CARGO_BIN_EXE_lab-firewall-check"))
            .args(["analyze", "--json"])
            .arg(&path)
            .output()
            .expect("run firewall-check");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
        let dirs = &doc["connections"][0]["directions"];
        for d in [C2S, S2C] {
            assert_eq!(
                dirs[d]["capture_missed_bytes"], 0,
                "{side} {d}: {}",
                dirs[d]
            );
            retransmissions += dirs[d]["retransmissions"].as_u64().unwrap();
        }
    }
    assert!(retransmissions > 0, "the drops were retransmitted");
}

/// The compare expectations of the lab's other cases, in schema 2's
/// structured values (`examples/tests/lab.rs` checks the rest of each case).
#[test]
fn lab_structured_values_of_the_classic_cases() {
    let Some(caps) = run_lab("wscale-synack4", &[]) else {
        return;
    };
    let (doc, _) = compare_both(&caps.inside(), &caps.outside(), "wscale-synack4");
    assert_eq!(kinds(&doc), set(&[("wscale_stripped", S2C)]));
    let f = finding(&doc, "wscale_stripped", S2C);
    assert!(
        f["before"]["shift"].as_u64().is_some_and(|s| s <= 14),
        "{f}"
    );
    assert!(f["after"].is_null(), "{f}");
    drop(caps);

    let caps = run_lab("mss4", &[]).expect("lab available");
    let (doc, _) = compare_both(&caps.inside(), &caps.outside(), "mss4");
    assert_eq!(
        kinds(&doc),
        set(&[("mss_clamped", C2S), ("mss_clamped", S2C)])
    );
    for d in [C2S, S2C] {
        let f = finding(&doc, "mss_clamped", d);
        assert_eq!(f["before"], json!({"mss_bytes": 1460}), "{f}");
        assert_eq!(f["after"], json!({"mss_bytes": 1200}), "{f}");
    }
    drop(caps);

    let caps = run_lab("dscp-remark4", &[]).expect("lab available");
    let (doc, _) = compare_both(&caps.inside(), &caps.outside(), "dscp-remark4");
    let f = finding(&doc, "dscp_changed", C2S);
    assert_eq!(f["before"], json!({"dscp": 10, "name": "AF11"}), "{f}");
    assert_eq!(f["after"], json!({"dscp": 8, "name": "CS1"}), "{f}");
    drop(caps);

    let caps = run_lab("ecn-bleach4", &[]).expect("lab available");
    let (doc, _) = compare_both(&caps.inside(), &caps.outside(), "ecn-bleach4");
    assert_eq!(
        kinds(&doc),
        set(&[("ecn_changed", C2S), ("ecn_changed", S2C)])
    );
    for d in [C2S, S2C] {
        let f = finding(&doc, "ecn_changed", d);
        assert_eq!(f["before"], json!({"ecn": 2, "name": "ECT(0)"}), "{f}");
        assert_eq!(f["after"], json!({"ecn": 0, "name": "Not-ECT"}), "{f}");
    }
    drop(caps);

    let caps = run_lab("nat4", &[]).expect("lab available");
    let (doc, _) = compare_both(&caps.inside(), &caps.outside(), "nat4");
    assert_eq!(
        kinds(&doc),
        set(&[("nat", C2S), ("timestamps_stripped", C2S)]),
        "{}",
        doc["findings"]
    );
    let f = finding(&doc, "nat", C2S);
    assert_eq!(
        f["before"],
        json!({"src": {"addr": "198.18.1.2", "port": 33000}, "dst": {"addr": "198.19.0.80", "port": 80}})
    );
    assert_eq!(
        f["after"]["dst"],
        json!({"addr": "198.18.2.2", "port": 5201})
    );
    assert_eq!(f["after"]["src"]["addr"], "198.18.2.1");
    let port = f["after"]["src"]["port"].as_u64().unwrap();
    assert!((40_000..=40_999).contains(&port), "{f}");
    let ts = finding(&doc, "timestamps_stripped", C2S);
    assert!(ts["before"]["tsval_ticks"].is_u64(), "{ts}");
    assert!(ts["after"].is_null(), "{ts}");
    drop(caps);

    let caps = run_lab("synproxy4", &[]).expect("lab available");
    let (doc, _) = compare_both(&caps.inside(), &caps.outside(), "synproxy4");
    let k = kinds(&doc);
    assert!(
        k.contains(&("handshake_proxied".into(), S2C.into())),
        "{k:?}"
    );
    assert!(
        !k.iter().any(|(kind, _)| kind == "packet_dropped"
            || kind == "packet_injected"
            || kind == "capture_loss"),
        "{k:?}"
    );
    let ws = finding(&doc, "wscale_changed", S2C);
    assert_eq!(ws["after"], json!({"shift": 7}), "{ws}");
    let hp = finding(&doc, "handshake_proxied", S2C);
    assert_eq!(hp["before"]["from"], "server", "{hp}");
    assert_eq!(hp["after"]["from"], "middlebox", "{hp}");
    assert_eq!(hp["after"]["shift"], 7, "{hp}");
    assert_eq!(hp["after"]["mss_bytes"], 1460, "{hp}");
}
