//! `firewall-check compare` on captures whose connections are carried in
//! tunnels (`examples/corpus/encap/`): both captures are read through
//! their layers, the same inner connection is matched across two different
//! tunnels (GRE on one side, VXLAN on the other), each side says what
//! carried it, each capture's counts are in the report, and the document
//! validates against `docs/json-schema/compare.json`; a plain capture's
//! objects have neither `summary` nor `tunnels`.

use std::path::PathBuf;

use firewall_check::analysis::compare::{compare_readers, Options};
use firewall_check::output::compare::render_text;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn assert_valid(doc: &Value) {
    let text = std::fs::read_to_string(root().join("docs/json-schema/compare.json"))
        .expect("the compare schema");
    let schema: Value = serde_json::from_str(&text).expect("JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The innermost layer's kind of one direction of a side.
fn inner_kind(side: &Value, dir: &str) -> String {
    let layers = side["tunnels"][dir].as_array().expect("layers");
    layers[layers.len() - 1]["kind"]
        .as_str()
        .expect("kind")
        .to_string()
}

#[test]
fn the_same_inner_connection_is_matched_across_two_tunnels() {
    let gre = read("examples/corpus/encap/gre.pcap");
    let vxlan = read("examples/corpus/encap/vxlan.pcap");
    let report = compare_readers(
        &gre[..],
        "gre.pcap",
        &vxlan[..],
        "vxlan.pcap",
        &Options::default(),
    )
    .expect("compare");
    let doc = serde_json::to_value(&report).expect("JSON");
    assert_valid(&doc);
    // Each capture's counts: every segment in its tunnel.
    for (k, kind, n) in [(0, "gre", 36), (1, "vxlan", 24)] {
        let s = &doc["captures"][k]["summary"];
        assert_eq!(s["segments"], n, "{s}");
        assert_eq!(s["plain"], 0, "{s}");
        assert_eq!(s["encapsulations"][kind], n, "{s}");
        assert_eq!(s["unopened"], 0, "{s}");
    }
    // The connection from 198.19.1.1:40000 to port 80 is in GRE key 256 on
    // one side and VXLAN VNI 4242 on the other: one matched connection.
    let conns = doc["connections"].as_array().expect("connections");
    let c = conns
        .iter()
        .find(|c| c["client"] == "198.19.1.1:40000")
        .expect("the connection from port 40000 is matched");
    assert_eq!(c["client_side"]["capture"], "gre.pcap");
    for dir in ["client_to_server", "server_to_client"] {
        assert_eq!(inner_kind(&c["client_side"], dir), "gre");
        assert_eq!(inner_kind(&c["server_side"], dir), "vxlan");
    }
    assert_eq!(
        c["client_side"]["tunnels"]["client_to_server"][0]["key"],
        256
    );
    assert_eq!(
        c["server_side"]["tunnels"]["client_to_server"][0]["vni"],
        4242
    );
    // Both ways, the same inner packets: nothing changed on the way.
    assert!(
        doc["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .all(|f| f["connection"] != c["id"]),
        "{:#}",
        doc["findings"]
    );

    let text = render_text(&report);
    assert!(
        text.contains("capture: gre.pcap: 36 frames, 36 TCP segments (0 plain, 36 in GRE)\n"),
        "{text}"
    );
    assert!(
        text.contains("    tunnel client->server: GRE 198.18.0.1 > 198.18.0.2 key 256\n"),
        "{text}"
    );
    assert!(
        text.contains("    tunnel client->server: VXLAN 198.18.0.1 > 198.18.0.2 vni 4242\n"),
        "{text}"
    );
}

#[test]
fn frames_not_opened_are_counted_per_capture() {
    let skips = read("examples/corpus/encap/skips.pcap");
    let plain = read("examples/data/clean6-inside.pcap");
    let report = compare_readers(
        &skips[..],
        "skips.pcap",
        &plain[..],
        "plain.pcap",
        &Options::default(),
    )
    .expect("compare");
    let doc = serde_json::to_value(&report).expect("JSON");
    assert_valid(&doc);
    assert_eq!(doc["captures"][0]["summary"]["unopened"], 5);
    assert_eq!(doc["captures"][0]["summary"]["frames"], 9);
    // A plain capture's object is as before.
    assert!(doc["captures"][1].get("summary").is_none());
    let text = render_text(&report);
    assert!(
        text.contains("warning: skips.pcap: 5 of 9 frames could not be opened (4 encapsulation unsupported, 1 truncated)"),
        "{text}"
    );
    assert!(!text.contains("capture: plain.pcap"), "{text}");
}

#[test]
fn plain_captures_have_no_tunnels() {
    let a = read("examples/data/clean6-inside.pcap");
    let b = read("examples/data/clean6-outside.pcap");
    let report = compare_readers(&a[..], "a", &b[..], "b", &Options::default()).expect("compare");
    let doc = serde_json::to_value(&report).expect("JSON");
    let conns = doc["connections"].as_array().expect("connections");
    assert!(!conns.is_empty());
    for c in conns {
        assert!(c["client_side"].get("tunnels").is_none());
        assert!(c["server_side"].get("tunnels").is_none());
    }
    assert!(doc["captures"][0].get("summary").is_none());
}
