//! Scenario files: the presets are the files of `examples/scenarios/`, every file parses,
//! and bad files are refused with the line and the field.

use std::collections::BTreeSet;
use std::path::Path;

use qbss::presets::PRESETS;
use qbss::scenario::{Scenario, StreamKind};

const GOOD: &str = r#"name = "t"
duration_s = 5

[link]
name = "test link"
rate = "10Mbit/s"

[scheduler]
saturation = "work-conserving"
queue = [
  { name = "be", weight = 98 },
  { name = "qbss", weight = 1 },
  { name = "premium", weight = 0 },
  { name = "network-control", weight = 1 },
]

[[stream]]
name = "qbss"
rate = "20Mbit/s"
precedence = 1
"#;

#[test]
fn presets_and_files_are_the_same_set_and_bytes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("examples/scenarios exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("utf-8 name")
                .to_string();
            let text = std::fs::read_to_string(&path).expect("readable file");
            let preset = PRESETS.iter().find(|p| p.name == stem);
            let preset = preset.unwrap_or_else(|| panic!("{} has no preset", path.display()));
            assert_eq!(preset.toml, text, "preset {stem} differs from its file");
            files.insert(stem);
        }
    }
    let presets: BTreeSet<String> = PRESETS.iter().map(|p| p.name.to_string()).collect();
    assert_eq!(files, presets);
    for name in [
        "transpac",
        "transpac-10mbit-be",
        "vc-10mbit",
        "vc-10mbit-forced",
        "premium-weight-0",
        "queue0-swap",
        "transpac-tcp",
    ] {
        assert!(presets.contains(name), "issue 6 asks for preset {name}");
    }
}

#[test]
fn every_preset_parses_and_is_named_after_its_file() {
    for p in PRESETS {
        let sc = Scenario::from_toml(p.toml).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(sc.name, p.name);
        assert!(!sc.description.is_empty());
    }
}

#[test]
fn the_story_markings_and_defaults() {
    let sc = Scenario::from_toml(GOOD).unwrap();
    let s = &sc.streams[0];
    // Precedence 001 is the TOS byte 0x20 (DSCP CS1) of the QBSS story.
    assert_eq!(s.ds, 0x20);
    assert_eq!(
        s.kind,
        StreamKind::Udp {
            rate_bps: 20_000_000
        }
    );
    // Streams run from 0 to 30 s unless stated otherwise; 1500-byte packets.
    assert_eq!(
        (s.start_ns, s.stop_ns, s.packet_bytes),
        (0, 30_000_000_000, 1500)
    );
    // Default classifier: the Juniper precedence map.
    assert_eq!(sc.classifier.queue(0x20), 1);
    assert_eq!(sc.classifier.queue(0x00), 0);
    let tos = GOOD.replace("precedence = 1", "tos = 0x20");
    assert_eq!(Scenario::from_toml(&tos).unwrap().streams[0].ds, 0x20);
    let dscp = GOOD.replace("precedence = 1", "dscp = \"cs1\"");
    assert_eq!(Scenario::from_toml(&dscp).unwrap().streams[0].ds, 0x20);
    let name = GOOD.replace("precedence = 1", "precedence = \"priority\"");
    assert_eq!(Scenario::from_toml(&name).unwrap().streams[0].ds, 0x20);
}

/// 1-based line of the first line of `src` containing `needle`.
fn line(src: &str, needle: &str) -> usize {
    1 + src
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in scenario"))
}

fn error(src: &str) -> (usize, String, String) {
    let e = Scenario::from_toml(src).expect_err("must be refused");
    (e.line, e.field, e.message)
}

#[test]
fn a_bad_rate_names_its_line_and_field() {
    let src = GOOD.replace("\"20Mbit/s\"", "\"20 furlongs\"");
    let (l, field, msg) = error(&src);
    assert_eq!(
        (l, field.as_str()),
        (line(&src, "furlongs"), "stream[1].rate")
    );
    assert!(msg.contains("20 furlongs"), "{msg}");
}

#[test]
fn a_rate_without_a_unit_names_its_line_and_field() {
    // Issue 12: "a scenario rate without a unit in qbss-model is an error naming the line".
    for bare in ["\"20\"", "\"20.5\"", "\" 20 \""] {
        let src = GOOD.replace("\"20Mbit/s\"", bare);
        let (l, field, msg) = error(&src);
        assert_eq!((l, field.as_str()), (line(&src, bare), "stream[1].rate"));
        assert!(msg.contains("no unit"), "{msg}");
    }
    let src = GOOD.replace("rate = \"10Mbit/s\"", "rate = \"10000000\"");
    let (l, field, msg) = error(&src);
    assert_eq!((l, field.as_str()), (line(&src, "10000000"), "link.rate"));
    assert!(msg.contains("no unit"), "{msg}");
    // A number where a string belongs is a type error on its line.
    let src = GOOD.replace("\"20Mbit/s\"", "20");
    let (l, field, _) = error(&src);
    assert_eq!(
        (l, field.as_str()),
        (line(&src, "rate = 20"), "stream[1].rate")
    );
}

#[test]
fn an_unknown_field_names_its_line() {
    let src = GOOD.replace("precedence = 1", "precedense = 1");
    let (l, field, msg) = error(&src);
    assert_eq!(l, line(&src, "precedense"));
    assert_eq!(field, "stream[1].precedense");
    assert!(msg.contains("unknown field"), "{msg}");
}

#[test]
fn a_wrong_type_names_its_line_and_field() {
    let (l, field, _) = error(&GOOD.replace("duration_s = 5", "duration_s = \"five\""));
    assert_eq!((l, field.as_str()), (2, "duration_s"));
}

#[test]
fn a_missing_field_is_named() {
    let (_, field, msg) = error(&GOOD.replace("rate = \"10Mbit/s\"\n", ""));
    assert!(field.starts_with("link"), "{field}");
    assert!(msg.contains("rate"), "{msg}");
}

#[test]
fn semantic_errors_name_line_and_field() {
    let stop = GOOD.replace("precedence = 1", "precedence = 1\nstart_s = 4\nstop_s = 2");
    assert_eq!(
        error(&stop),
        (
            line(&stop, "stop_s"),
            "stream[1].stop_s".into(),
            "the stream must stop after it starts".into()
        )
    );
    let prec = GOOD.replace("precedence = 1", "precedence = 9");
    let (l, field, _) = error(&prec);
    assert_eq!(
        (l, field.as_str()),
        (line(&prec, "precedence = 9"), "stream[1].precedence")
    );
    let weight = GOOD.replace("weight = 98", "weight = -3");
    assert_eq!(error(&weight).0, line(&weight, "weight = -3"));
    assert_eq!(error(&weight).1, "scheduler.queue[1].weight");
    let two = GOOD.replace("precedence = 1", "precedence = 1\ndscp = \"ef\"");
    assert!(error(&two).2.contains("one of dscp, precedence or tos"));
    // The default classifier needs 4 queues (network control is queue 3).
    let three = GOOD.replace("  { name = \"network-control\", weight = 1 },\n", "");
    let (_, field, msg) = error(&three);
    assert_eq!(field, "scheduler.queue");
    assert!(msg.contains("queue 3"), "{msg}");
    let sat = GOOD.replace("\"work-conserving\"", "\"when-saturated\"");
    assert_eq!(error(&sat).1, "scheduler.saturation");
    let link = GOOD.replace("rate = \"10Mbit/s\"", "type = \"oc4\"");
    let (l, field, msg) = error(&link);
    assert_eq!((l, field.as_str()), (line(&link, "oc4"), "link.type"));
    assert!(msg.contains("oc3-atm"), "the known links are listed: {msg}");
    let sat = GOOD.replace("\"work-conserving\"", "\"sometimes\"");
    assert_eq!(
        (error(&sat).0, error(&sat).1.as_str()),
        (line(&sat, "sometimes"), "scheduler.saturation")
    );
}

#[test]
fn toml_syntax_errors_name_the_line() {
    let src = GOOD.replace("name = \"qbss\"\nrate", "name = \"qbss\nrate");
    let (l, _, _) = error(&src);
    assert_eq!(l, line(&src, "[[stream]]") + 1);
}

#[test]
fn absurd_sizes_are_refused_not_simulated() {
    let big = GOOD
        .replace("\"20Mbit/s\"", "\"10Tbit/s\"")
        .replace("packet_bytes = 1500", "")
        .replace("duration_s = 5", "duration_s = 3600");
    let big = big.replace(
        "precedence = 1",
        "precedence = 1\npacket_bytes = 64\nstop_s = 3600",
    );
    assert!(error(&big).2.contains("would offer more than"));
    assert_eq!(
        error(&GOOD.replace("duration_s = 5", "duration_s = 0")).1,
        "duration_s"
    );
}

#[test]
fn every_syntax_error_has_a_message() {
    // Found by the qbss_scenario fuzz target: the TOML parser reports a lone
    // carriage return with an empty message.
    let e = Scenario::from_toml("\r").unwrap_err();
    assert_eq!(e.line, 1);
    assert_eq!(e.message, "invalid TOML syntax");
}

#[test]
fn tcp_congestion_control_defaults_to_cubic_and_only_tcp_takes_it() {
    use qbss::tcp::Cc;
    let tcp = GOOD.replace("rate = \"20Mbit/s\"", "kind = \"tcp\"\nrtt_ms = 20");
    let cc = |src: &str| match Scenario::from_toml(src).unwrap().streams[0].kind {
        StreamKind::Tcp { cc, .. } => cc,
        _ => panic!("tcp"),
    };
    assert_eq!(cc(&tcp), Cc::Cubic);
    assert_eq!(
        cc(&tcp.replace("rtt_ms = 20", "rtt_ms = 20\ncc = \"reno\"")),
        Cc::Reno
    );
    let bad = tcp.replace("rtt_ms = 20", "rtt_ms = 20\ncc = \"vegas\"");
    let (l, field, msg) = error(&bad);
    assert_eq!((l, field.as_str()), (line(&bad, "vegas"), "stream[1].cc"));
    assert!(msg.contains("cubic, reno"), "{msg}");
    let udp = GOOD.replace("precedence = 1", "precedence = 1\ncc = \"reno\"");
    assert_eq!(error(&udp).1, "stream[1].cc");
}
