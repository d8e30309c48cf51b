//! `firewall-check compare --json` and `dump --json` against their
//! documented schemas (`docs/json-schema/compare.json`, `dump.json`,
//! described field by field in `docs/json.md`): the shipped captures, in
//! both orders and with frames removed (capture loss, drops), validate; every
//! field the schemas allow is described in the doc; and the schemas are
//! closed, so a field the tool writes but the doc does not describe fails.

mod schema_support;

use std::collections::BTreeSet;
use std::process::Command;

use firewall_check::analysis::compare::{compare_readers, Options};
use schema_support::{assert_valid, root, schema, section, undocumented};
use serde_json::Value;

fn data(name: &str) -> Vec<u8> {
    std::fs::read(root().join("examples/data").join(name)).unwrap()
}

fn compare_json(a: &[u8], b: &[u8]) -> Value {
    let r = compare_readers(a, "a.pcap", b, "b.pcap", &Options::default()).expect("compare");
    serde_json::to_value(&r).unwrap()
}

/// `file` (classic pcap) without every `step`-th record from record 4 on.
fn thinned(file: &[u8], step: usize) -> Vec<u8> {
    let mut out = file[..24].to_vec();
    let mut off = 24;
    let mut i = 0;
    while off + 16 <= file.len() {
        let incl = u32::from_le_bytes(file[off + 8..off + 12].try_into().unwrap()) as usize;
        if i < 4 || i % step != 0 {
            out.extend_from_slice(&file[off..off + 16 + incl]);
        }
        off += 16 + incl;
        i += 1;
    }
    out
}

#[test]
fn compare_output_validates() {
    let s = schema("compare.json");
    let pairs = [
        ("campus-inside.pcap", "campus-outside.pcap"),
        ("nat-inside.pcap", "nat-outside.pcap"),
        ("synproxy-inside.pcap", "synproxy-outside.pcap"),
        ("clean6-inside.pcap", "clean6-outside.pcap"),
        ("campus-inside.pcap", "nat-outside.pcap"),
        // Across a VXLAN tunnel's encapsulation point: the tunnel kinds.
        ("encap/vxlan-inside.pcap", "encap/vxlan-underlay.pcap"),
    ];
    let mut kinds = BTreeSet::new();
    for (a, b) in pairs {
        let (a, b) = (data(a), data(b));
        for (x, y) in [
            (a.clone(), b.clone()),
            (b.clone(), a.clone()),
            (a.clone(), thinned(&b, 7)),
            (thinned(&a, 5), b.clone()),
            (a.clone(), b[..b.len() / 2].to_vec()),
        ] {
            let doc = compare_json(&x, &y);
            assert_eq!(doc["schema_version"], 2);
            assert_valid(&s, &doc, "compare");
            for f in doc["findings"].as_array().unwrap() {
                kinds.insert(f["kind"].as_str().unwrap().to_string());
            }
        }
    }
    // The values of many kinds were exercised, not only an empty list.
    for k in [
        "nat",
        "wscale_stripped",
        "wscale_changed",
        "handshake_proxied",
        "seq_rewritten",
        "timestamps_stripped",
        "capture_loss",
    ] {
        assert!(kinds.contains(k), "{k} not exercised: {kinds:?}");
    }
}

#[test]
fn dump_output_validates() {
    let s = schema("dump.json");
    let bin = env!("CARGO_BIN_EXE_firewall-check");
    let mut lines = 0;
    let mut tunneled = 0;
    let mut summaries = 0;
    let files = std::fs::read_dir(root().join("examples/data"))
        .unwrap()
        .chain(std::fs::read_dir(root().join("examples/corpus/encap")).unwrap());
    for entry in files {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("pcap") {
            continue;
        }
        let out = Command::new(bin)
            .args(["dump", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let v: Value = serde_json::from_str(line).expect("one JSON object per line");
            assert_valid(&s, &v, &format!("{}: {line}", path.display()));
            lines += 1;
            tunneled += usize::from(v.get("tunnels").is_some());
            summaries += usize::from(v.get("summary").is_some());
        }
    }
    assert!(lines > 400, "only {lines} lines checked");
    // The encapsulation captures: tunnels of every kind, and summaries.
    assert!(tunneled > 250, "only {tunneled} segments in tunnels");
    assert!(summaries >= 20, "only {summaries} summaries");
}

/// The live captures' end: `dump -i --json`'s last line (dump.json's
/// `end_line`) and `compare -i -i --json`'s `live` array validate, and the
/// schemas refuse a wrong one.
#[test]
fn live_end_lines_validate() {
    use capture::CaptureLoss;
    use firewall_check::cli::live::LiveEnd;
    use firewall_check::output::compare::report_json_live;

    let end = LiveEnd {
        interface: "eth0".into(),
        frames: 7,
        reason: "count",
        loss: Some(CaptureLoss {
            received: 9,
            kernel_drops: 2,
            interface_drops: 1,
        }),
    };
    let dump = schema("dump.json");
    let end_schema = serde_json::json!({
        "$schema": dump["$schema"],
        "$defs": dump["$defs"],
        "$ref": "#/$defs/end_line",
    });
    let line: Value = serde_json::from_str(&end.end_line(None, None, None)).unwrap();
    assert_valid(&end_schema, &line, "dump's end line");
    assert_eq!(line["capture_loss"]["kernel_drops"], 2);
    // A line of dump --json, and not a segment line.
    assert_valid(&dump, &line, "dump's end line as a line of dump --json");
    let segment = serde_json::json!({
        "$schema": dump["$schema"],
        "$defs": dump["$defs"],
        "$ref": "#/$defs/segment",
    });
    assert!(!jsonschema::validator_for(&segment).unwrap().is_valid(&line));
    let mut bad = line.clone();
    bad["capture_loss"]["lost"] = Value::from(1);
    assert!(!jsonschema::validator_for(&end_schema)
        .unwrap()
        .is_valid(&bad));

    let r = compare_readers(
        &data("campus-inside.pcap")[..],
        "eth0",
        &data("campus-outside.pcap")[..],
        "eth1",
        &Options::default(),
    )
    .expect("compare");
    let other = LiveEnd {
        interface: "eth1".into(),
        loss: None,
        ..end.clone()
    };
    let text = report_json_live(&r, &[end.json(), other.json()]).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_valid(&schema("compare.json"), &doc, "compare with live");
    assert_eq!(doc["live"][0]["interface"], "eth0");
    assert!(doc["live"][1]["capture_loss"].is_null());
    assert!(doc["live"][0].get("type").is_none());
}

/// `dump -i --json` of traffic in tunnels: no `summary` line of its own;
/// its end line carries the counts, the object of a file dump's `summary`
/// line, and validates as a line of dump --json.
#[test]
fn a_live_dump_puts_its_counts_in_the_end_line() {
    use firewall_check::cli::live::LiveEnd;
    use firewall_check::output::dump::{dump_source, DumpFormat, Dumper, Summary};
    use firewall_check::output::tunnel::json_summary;

    let bytes = std::fs::read(root().join("examples/corpus/encap/vxlan-in-gre.pcap")).unwrap();
    let lines = |summary: Summary| {
        let mut reader = capture::CaptureReader::new(&bytes[..]).unwrap();
        let (mut out, mut diag) = (Vec::new(), Vec::new());
        let mut dumper = Dumper::new(DumpFormat::Json);
        dump_source(&mut reader, &mut out, &mut diag, &mut dumper, summary).expect("dump");
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (lines, dumper)
    };
    let (file, _) = lines(Summary::Line);
    let file_summary = &file.last().unwrap()["summary"];
    assert!(
        file_summary["encapsulations"]["gre"].as_u64() > Some(0),
        "{file_summary}"
    );
    let (live, dumper) = lines(Summary::Caller);
    assert_eq!(
        live.len() + 1,
        file.len(),
        "the live dump has no summary line"
    );
    assert!(live.iter().all(|l| l.get("summary").is_none()));
    let end = LiveEnd {
        interface: "eth0".into(),
        frames: dumper.stats.frames,
        reason: "count",
        loss: None,
    };
    let counts = json_summary(dumper.stats.frames, &dumper.stats.tally);
    let line: Value = serde_json::from_str(&end.end_line(None, None, counts)).unwrap();
    assert_eq!(&line["summary"], file_summary);
    assert_valid(
        &schema("dump.json"),
        &line,
        "a live dump's end line with counts",
    );
}

/// Property names anywhere in a schema.
fn assert_documented(schema_name: &str, heading: &str) {
    let doc = std::fs::read_to_string(root().join("docs/json.md")).expect("docs/json.md");
    let section = section(&doc, heading).unwrap_or_else(|| panic!("docs/json.md has no {heading}"));
    let missing = undocumented(&schema(schema_name), section, true);
    assert!(
        missing.is_empty(),
        "undocumented in docs/json.md ({heading}): {missing:?}"
    );
}

#[test]
fn every_schema_field_is_documented() {
    assert_documented("compare.json", "## `firewall-check compare --json`");
    assert_documented("dump.json", "## `firewall-check dump --json`");
}

#[test]
fn every_finding_kind_is_in_the_schema_and_the_doc() {
    let s = schema("compare.json");
    let allowed: BTreeSet<&str> = s["$defs"]["finding"]["properties"]["kind"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let doc = std::fs::read_to_string(root().join("docs/json.md")).unwrap();
    // The kinds compare can report (the probing-only ones are in probe's schema).
    for k in firewall_check::finding::Kind::COMPARE {
        assert!(allowed.contains(k.as_str()), "{k} missing from the schema");
        assert!(
            doc.contains(&format!("| `{k}`")) || doc.contains(&format!(", `{k}`")),
            "{k} missing from docs/json.md"
        );
    }
    assert_eq!(allowed.len(), firewall_check::finding::Kind::COMPARE.len());
}

#[test]
fn the_schemas_reject_undocumented_fields() {
    let mut doc = compare_json(&data("campus-inside.pcap"), &data("campus-outside.pcap"));
    assert_valid(&schema("compare.json"), &doc, "campus");
    doc["findings"][0]["surprise"] = Value::from(1);
    let validator = jsonschema::validator_for(&schema("compare.json")).unwrap();
    assert!(!validator.is_valid(&doc));
    let mut doc = compare_json(&data("campus-inside.pcap"), &data("campus-outside.pcap"));
    doc["findings"][0]["before"] = serde_json::json!({"shift": 10, "unit": "x"});
    assert!(
        !validator.is_valid(&doc),
        "a value shape the doc does not give"
    );
}
