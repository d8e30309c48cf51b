//! `firewall-check analyze --json` against its documented schema
//! (`docs/json-schema/analyze.json`, described field by field in
//! `docs/json.md`): every shipped capture and a few generated ones validate,
//! and every field the schema allows is described in the doc.

mod dump_support;
mod schema_support;

use std::collections::BTreeSet;

use dump_support::*;
use firewall_check::analysis::analyze::{AnalyzeFormat, Settings};
use schema_support::{root, section, undocumented};
use serde_json::Value;

fn schema() -> Value {
    schema_support::schema("analyze.json")
}

fn assert_valid(doc: &Value, what: &str) {
    schema_support::assert_valid(&schema(), doc, what);
}

#[test]
fn shipped_captures_validate() {
    let dir = root().join("examples/data");
    let mut n = 0;
    let mut bases = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("pcap") {
            continue;
        }
        let full = std::fs::read(&path).unwrap();
        // Cut after the handshake (its first three records): the inferred
        // shifts are reported instead.
        let mut cut = full[..24].to_vec();
        let (mut pos, mut i) = (24, 0);
        while pos + 16 <= full.len() {
            let incl = u32::from_le_bytes(full[pos + 8..pos + 12].try_into().unwrap()) as usize;
            let end = (pos + 16 + incl).min(full.len());
            if i >= 3 {
                cut.extend_from_slice(&full[pos..end]);
            }
            (pos, i) = (end, i + 1);
        }
        for (bytes, settings) in [&full, &cut].into_iter().flat_map(|b| {
            [
                Settings::default(),
                Settings {
                    rtt: Some(std::time::Duration::from_millis(10)),
                    assume_wscale: Some(7),
                    ..Settings::default()
                },
            ]
            .map(|s| (b, s))
        }) {
            let doc = analyze_json(bytes, &settings);
            assert_eq!(doc["schema_version"], 2);
            assert_valid(&doc, &path.display().to_string());
            for c in doc["connections"].as_array().unwrap() {
                for who in ["client", "server"] {
                    if let Some(b) = c["negotiated"]["wscale_inferred"][who]["basis"].as_str() {
                        bases.insert(b.to_string());
                    }
                }
            }
            n += 1;
        }
    }
    assert!(n >= 8, "only {n} captures checked");
    // The inferred shifts' fields were validated, on both bases the
    // samples give.
    assert!(
        bases.contains("bounds") && bases.contains("linux_growth"),
        "{bases:?}"
    );
}

#[test]
fn generated_corner_cases_validate() {
    let c = Seg::new([198, 18, 0, 1], 40000, [198, 19, 0, 1], 80);
    let s = Seg::new([198, 19, 0, 1], 80, [198, 18, 0, 1], 40000);
    let t0 = 1_700_000_000_000_000_000u64;
    // A SYN every Linux build drops (MD5 then TCP-AO), an AccECN handshake,
    // a shift of 15, and a connection evicted then continued.
    let mut md5_ao = vec![19, 18];
    md5_ao.extend([0u8; 16]);
    md5_ao.extend([29, 6, 1, 1, 0xaa, 0xbb]);
    let pkts = vec![
        Pkt::new(
            t0,
            c.clone()
                .seq(1)
                .flags(SYN | 0x40 | 0x80)
                .opts(&md5_ao)
                .ipv4(),
        ),
        Pkt::new(
            t0 + 1_000_000,
            s.clone()
                .seq(9)
                .ack(2)
                .flags(SYN | ACK | 0x80)
                .opts(&[3, 3, 15, 1])
                .ipv4(),
        ),
        Pkt::new(
            t0 + 2_000_000,
            Seg::new([198, 18, 0, 2], 41000, [198, 19, 0, 1], 80)
                .seq(5)
                .flags(SYN)
                .ipv4(),
        ),
        Pkt::new(
            t0 + 3_000_000,
            c.seq(2).ack(10).flags(ACK).payload(100).ipv4(),
        ),
    ];
    let settings = Settings {
        capacity: 1,
        ..Settings::default()
    };
    let doc = analyze_json(&pcap(101, true, &pkts), &settings);
    assert_valid(&doc, "generated");
    let conns = doc["connections"].as_array().unwrap();
    assert!(conns[0]["negotiated"]["linux_drops"]
        .as_array()
        .is_some_and(|d| !d.is_empty()));
    assert!(conns.iter().any(|c| c["evicted"] == true));
    assert!(conns.iter().any(|c| c["continues"].is_u64()));
}

/// Property names anywhere in a schema.
#[test]
fn every_schema_field_is_documented() {
    let doc = std::fs::read_to_string(root().join("docs/json.md")).expect("docs/json.md");
    let section = section(&doc, "## `firewall-check analyze --json`")
        .expect("docs/json.md has the analyze section");
    let missing = undocumented(&schema(), section, false);
    assert!(
        missing.is_empty(),
        "undocumented in docs/json.md: {missing:?}"
    );
}

/// A field the tool writes but the schema does not allow fails validation
/// (the schema is closed: `additionalProperties: false` everywhere).
#[test]
fn the_schema_rejects_undocumented_fields() {
    let bytes = std::fs::read(root().join("examples/data/clean6-inside.pcap")).unwrap();
    let mut doc = analyze_json(&bytes, &Settings::default());
    doc["connections"][0]["negotiated"]["surprise"] = Value::from(1);
    let validator = jsonschema::validator_for(&schema()).unwrap();
    assert!(!validator.is_valid(&doc));
}

/// The schema of one line of `analyze -i --json`: analyze.json's `line`.
fn line_schema() -> Value {
    let s = schema();
    serde_json::json!({
        "$schema": s["$schema"],
        "$defs": s["$defs"],
        "$ref": "#/$defs/line",
    })
}

/// `analyze -i --json`'s JSON lines: each connection line validates and
/// holds exactly the document's report of that connection; the end line
/// validates, with and without libpcap's counts; the lines are closed.
#[test]
fn json_lines_validate() {
    use capture::CaptureLoss;
    use firewall_check::analysis::analyze::analyze_source;
    use firewall_check::cli::live::LiveEnd;

    let line = jsonschema::validator_for(&line_schema()).expect("a valid JSON Schema");
    let bytes = std::fs::read(root().join("examples/data/nat-inside.pcap")).unwrap();
    let mut reader = capture::CaptureReader::new(&bytes[..]).unwrap();
    let mut out = Vec::new();
    let summary = analyze_source(
        &mut reader,
        &mut out,
        AnalyzeFormat::JsonLines,
        &Settings::default(),
    )
    .expect("analyze");
    let doc = analyze_json(&bytes, &Settings::default());
    let reports = doc["connections"].as_array().unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty());
    assert_eq!(lines.len(), summary.connections);
    assert_eq!(lines.len(), reports.len());
    for (l, r) in lines.iter().zip(reports) {
        let errors: Vec<String> = line.iter_errors(l).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(l["type"], "connection");
        assert_eq!(&l["connection"], r);
        // A file's connections end closed (the capture holds their FINs).
        assert_eq!(l["open"], false);
    }
    let end = LiveEnd {
        interface: "eth0".into(),
        frames: 10,
        reason: "duration",
        loss: Some(CaptureLoss {
            received: 12,
            kernel_drops: 2,
            interface_drops: 0,
        }),
    };
    for e in [
        end.clone(),
        LiveEnd {
            loss: None,
            reason: "interrupted",
            ..end
        },
    ] {
        let v: Value = serde_json::from_str(&e.end_line(Some(2), Some(lines.len()), None)).unwrap();
        let errors: Vec<String> = line.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{v}: {errors:?}");
        assert_eq!(v["type"], "end");
    }
    let mut bad = lines[0].clone();
    bad["surprise"] = Value::from(1);
    assert!(!line.is_valid(&bad));
    let mut bad = serde_json::from_str::<Value>(&end_line_text()).unwrap();
    bad["reason"] = Value::from("bored");
    assert!(!line.is_valid(&bad));
}

fn end_line_text() -> String {
    firewall_check::cli::live::LiveEnd {
        interface: "lo".into(),
        frames: 0,
        reason: "count",
        loss: None,
    }
    .end_line(Some(2), Some(0), None)
}

/// `analyze -i --json` of traffic in tunnels: the end line carries the
/// capture's counts (`summary`), the same object as the document's, and
/// validates; a capture without tunnels has none.
#[test]
fn the_end_line_carries_the_counts_of_a_capture_with_tunnels() {
    use firewall_check::analysis::analyze::analyze_source;
    use firewall_check::cli::live::LiveEnd;
    use firewall_check::output::tunnel::json_summary;

    let line = jsonschema::validator_for(&line_schema()).expect("a valid JSON Schema");
    for (name, tunnels) in [
        ("examples/corpus/encap/vxlan-in-gre.pcap", true),
        ("examples/data/nat-inside.pcap", false),
    ] {
        let bytes = std::fs::read(root().join(name)).unwrap();
        let mut reader = capture::CaptureReader::new(&bytes[..]).unwrap();
        let summary = analyze_source(
            &mut reader,
            &mut Vec::new(),
            AnalyzeFormat::JsonLines,
            &Settings::default(),
        )
        .expect("analyze");
        let end = LiveEnd {
            interface: "eth0".into(),
            frames: summary.frames,
            reason: "count",
            loss: None,
        };
        let counts = json_summary(summary.frames, &summary.tally);
        let v: Value =
            serde_json::from_str(&end.end_line(Some(2), Some(summary.connections), counts))
                .unwrap();
        let errors: Vec<String> = line.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {v}: {errors:?}");
        let doc = analyze_json(&bytes, &Settings::default());
        assert_eq!(v.get("summary"), doc.get("summary"), "{name}");
        assert_eq!(v.get("summary").is_some(), tunnels, "{name}: {v}");
        if tunnels {
            assert!(
                v["summary"]["encapsulations"]["vxlan"].as_u64() > Some(0),
                "{v}"
            );
        }
    }
}
