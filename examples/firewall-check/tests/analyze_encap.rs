//! `firewall-check analyze` on the encapsulation captures
//! (`examples/corpus/encap/`, built by its `make_captures.py`):
//!
//! - every connection of a tunnel capture is reported with the layers that
//!   carried it, in both directions, in JSON (valid against
//!   `docs/json-schema/analyze.json`) and in text;
//! - two inner connections that differ only by their tunnel (GRE key 1 and
//!   2, VNI 17 and 18) are two connections, each with its own id;
//! - the document's `summary` counts the segments per encapsulation, and
//!   the frames that could not be opened by reason, with the one-line
//!   warning on standard error;
//! - a plain capture's document has neither `summary` nor `tunnels`.

mod dump_support;

use std::path::PathBuf;
use std::process::Command;

use firewall_check::analysis::analyze::Settings;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn encap(name: &str) -> PathBuf {
    root()
        .join("examples/corpus/encap")
        .join(format!("{name}.pcap"))
}

fn analyze_file(path: &PathBuf) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    dump_support::analyze_json(&bytes, &Settings::default())
}

fn assert_valid(doc: &Value, what: &str) {
    let text = std::fs::read_to_string(root().join("docs/json-schema/analyze.json"))
        .expect("the analyze schema");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// The kinds of one direction's layers.
fn kinds(layers: &Value) -> Vec<String> {
    layers
        .as_array()
        .map(|a| {
            a.iter()
                .map(|l| l["kind"].as_str().expect("kind").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The tunnel captures and the layer kinds their connections are carried in.
const TUNNEL_CAPTURES: [(&str, &[&str]); 23] = [
    ("gre", &["gre"]),
    ("pptp", &["pptp_gre"]),
    ("nvgre", &["nvgre"]),
    ("erspan", &["gre", "erspan"]),
    ("vxlan", &["vxlan"]),
    ("geneve", &["geneve"]),
    ("gtpu", &["gtp_u"]),
    ("l2tp", &["l2tp"]),
    ("ipip", &["ip_in_ip"]),
    ("mpls", &["mpls"]),
    ("pppoe-qinq", &["pppoe"]),
    ("ppp", &["ppp"]),
    ("chdlc", &["c_hdlc"]),
    ("pbb", &["pbb"]),
    ("llc-snap", &["llc_snap"]),
    ("fddi", &["fddi"]),
    ("nflog", &["nflog"]),
    ("vxlan-in-gre", &["gre", "vxlan"]),
    ("mpls-in-gre6", &["gre", "mpls"]),
    ("gtp-in-vxlan-qinq", &["vxlan", "gtp_u"]),
    ("fabricpath", &["fabricpath"]),
    ("vntag", &["vntag"]),
    ("etag", &["etag"]),
];

#[test]
fn tunneled_connections_say_what_carried_them() {
    for (name, want) in TUNNEL_CAPTURES {
        let doc = analyze_file(&encap(name));
        assert_valid(&doc, name);
        let conns = doc["connections"].as_array().expect("connections");
        assert!(!conns.is_empty(), "{name}: no connection");
        let mut segments = 0;
        for c in conns {
            let t = &c["tunnels"];
            assert!(t.is_object(), "{name} {}: no tunnels", c["id"]);
            // Every direction that carried segments names its layers; the
            // ERSPAN captures mirror one direction only in some sessions.
            for (dir, layers) in [
                ("client_to_server", &t["client_to_server"]),
                ("server_to_client", &t["server_to_client"]),
            ] {
                let packets = c["directions"][dir]["packets"].as_u64().expect("packets");
                segments += packets;
                if packets > 0 {
                    let got = kinds(layers);
                    // The innermost layers are the capture's; link-level
                    // layers may sit outside them (QinQ, the outer GRE).
                    assert!(
                        got.ends_with(&want.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
                        "{name} {} {dir}: {got:?}, want {want:?}",
                        c["id"]
                    );
                } else {
                    assert!(layers.is_null(), "{name} {} {dir}: {layers}", c["id"]);
                }
            }
            // The outer endpoints of a layer an IP header carries are
            // swapped between the directions.
            let (a, b) = (&t["client_to_server"][0], &t["server_to_client"][0]);
            if a.get("outer_src").is_some() && b.get("outer_src").is_some() {
                assert_eq!(a["outer_src"], b["outer_dst"], "{name} {}", c["id"]);
                assert_eq!(a["outer_dst"], b["outer_src"], "{name} {}", c["id"]);
            }
            // Per-packet fields are not a connection's.
            for l in [a, b] {
                assert!(
                    l.get("seq").is_none() && l.get("index").is_none(),
                    "{name}: {l}"
                );
            }
        }
        let summary = &doc["summary"];
        assert_eq!(summary["segments"].as_u64(), Some(segments), "{name}");
        assert_eq!(summary["plain"], 0, "{name}");
        assert_eq!(summary["unopened"], 0, "{name}");
        for kind in want {
            assert_eq!(
                summary["encapsulations"][*kind].as_u64(),
                Some(segments),
                "{name}: {summary}"
            );
        }
    }
}

#[test]
fn inner_connections_that_differ_only_by_tunnel_are_kept_apart() {
    // gre.pcap holds the same inner connection to port 22 in GRE key 1 and
    // key 2; vxlan.pcap the one from port 44000 in VNI 17 and 18.
    for (name, field, port_field, port, ids) in [
        ("gre", "key", "server", ":22", [1u64, 2]),
        ("vxlan", "vni", "client", ":44000", [17, 18]),
    ] {
        let doc = analyze_file(&encap(name));
        let same: Vec<&Value> = doc["connections"]
            .as_array()
            .expect("connections")
            .iter()
            .filter(|c| c[port_field].as_str().is_some_and(|s| s.ends_with(port)))
            .collect();
        assert_eq!(same.len(), 2, "{name}: {same:#?}");
        assert_eq!(same[0]["client"], same[1]["client"], "{name}");
        assert_eq!(same[0]["server"], same[1]["server"], "{name}");
        assert_ne!(same[0]["id"], same[1]["id"], "{name}");
        let mut got: Vec<u64> = same
            .iter()
            .map(|c| {
                let l = &c["tunnels"]["client_to_server"];
                l[l.as_array().expect("layers").len() - 1][field]
                    .as_u64()
                    .expect("an id")
            })
            .collect();
        got.sort_unstable();
        assert_eq!(got, ids, "{name}");
        // Each is a whole connection: its handshake in its own tunnel.
        for c in same {
            assert_eq!(c["handshake_seen"], true, "{name} {}", c["id"]);
        }
    }
}

fn run(args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_firewall-check"))
        .args(args)
        .output()
        .expect("firewall-check runs");
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "{args:?}: {:?}",
        out.status
    );
    (
        String::from_utf8(out.stdout).expect("UTF-8"),
        String::from_utf8(out.stderr).expect("UTF-8"),
    )
}

#[test]
fn frames_not_opened_are_counted_and_warned_about_once() {
    let skips = encap("skips");
    let path = skips.to_str().expect("path");
    let (text, err) = run(&["analyze", path]);
    let last = text.lines().last().expect("output");
    assert!(
        last.starts_with("capture: 9 frames, 1 TCP segment (1 plain); 8 frames skipped:"),
        "{last}"
    );
    assert!(last.contains("4 encapsulation unsupported"), "{last}");
    let warn = "warning: 5 of 9 frames could not be opened (4 encapsulation unsupported, 1 truncated): any TCP they carry is not shown\n";
    assert_eq!(err, warn);

    let (json, err) = run(&["analyze", "--json", path]);
    assert_eq!(err, warn);
    let doc: Value = serde_json::from_str(&json).expect("JSON");
    assert_valid(&doc, "skips");
    let s = &doc["summary"];
    assert_eq!(s["frames"], 9);
    assert_eq!(s["unopened"], 5);
    let reasons: Vec<&str> = s["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|k| k["reason"].as_str().expect("reason"))
        .collect();
    assert_eq!(
        reasons
            .iter()
            .filter(|r| **r == "encapsulation_unsupported")
            .count(),
        4,
        "{reasons:?}"
    );
    assert!(reasons.contains(&"truncated") && reasons.contains(&"not_ip"));
}

#[test]
fn tunnels_in_text_name_each_direction() {
    let gtp = encap("gtpu");
    let (text, err) = run(&["analyze", gtp.to_str().expect("path")]);
    assert_eq!(err, "");
    let c2s: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  tunnel client->server: GTP-U "))
        .collect();
    let s2c: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  tunnel server->client: GTP-U "))
        .collect();
    assert!(!c2s.is_empty() && c2s.len() == s2c.len(), "{text}");
    // Each direction has its own TEID.
    assert!(c2s.iter().all(|l| l.contains(" teid ")), "{c2s:?}");
    assert_ne!(c2s[0].rsplit(' ').next(), s2c[0].rsplit(' ').next());
    assert!(text
        .lines()
        .last()
        .expect("output")
        .starts_with("capture: "));
}

#[test]
fn a_plain_capture_has_no_tunnels_and_no_summary() {
    let doc = analyze_file(&root().join("examples/data/clean6-inside.pcap"));
    assert!(doc.get("summary").is_none());
    let conns = doc["connections"].as_array().expect("connections");
    assert!(!conns.is_empty());
    assert!(conns.iter().all(|c| c.get("tunnels").is_none()));
}

#[test]
fn series_numbers_tunneled_connections_as_analyze_does() {
    // series learns from analyze's first pass and tracks in its own: both
    // read through tunnels, so the ids agree (gre.pcap holds two inner
    // connections that differ only by their GRE key).
    let gre = encap("gre");
    let path = gre.to_str().expect("path");
    let doc = analyze_file(&gre);
    let ids: std::collections::BTreeSet<String> = doc["connections"]
        .as_array()
        .expect("connections")
        .iter()
        .map(|c| c["id"].to_string())
        .collect();
    let (csv, err) = run(&["series", path]);
    assert_eq!(err, "");
    let rows: std::collections::BTreeSet<String> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).expect("connection column").to_string())
        .collect();
    assert_eq!(rows, ids);
    assert_eq!(ids.len(), 6);
}

#[test]
fn l2tp_sessions_name_each_direction_and_stay_one_connection() {
    let l2tp = encap("l2tp");
    let (text, err) = run(&["analyze", l2tp.to_str().expect("path")]);
    assert_eq!(err, "");
    // Each direction carries the IDs its recipient assigned (RFC 2661
    // section 3.1), yet both make one connection: two inner connections,
    // two client->server lines.
    let c2s: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  tunnel client->server: L2TP "))
        .collect();
    let s2c: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  tunnel server->client: L2TP "))
        .collect();
    assert_eq!(
        c2s, ["  tunnel client->server: L2TP 198.18.0.1 > 198.18.0.2 tunnel 5 session 7"; 2],
        "{text}"
    );
    assert_eq!(
        s2c, ["  tunnel server->client: L2TP 198.18.0.2 > 198.18.0.1 tunnel 4369 session 8738"; 2],
        "{text}"
    );
}
