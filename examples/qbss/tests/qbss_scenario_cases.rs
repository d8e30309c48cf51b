//! Scenario validation, case by case against a snapshot: for each of many
//! edits of a few base scenarios, the scenario it validates to (its `Debug`
//! form) or the error (line, field, message), as written in
//! `tests/data/scenario-cases.txt`. The snapshot was taken before the
//! validation was split into one function per table (issue 28), so it holds
//! the split to the same answers, field for field and message for message.
//!
//! `SNAPSHOT_UPDATE=1 cargo test -p qbss --test qbss_scenario_cases` writes
//! it anew: a change to it is a change of behaviour, to be argued.

use qbss::scenario::Scenario;

/// Everything at once: a link by rate and framing, a VC, a DSCP table,
/// every queue class, a UDP and a TCP stream with every field.
const FULL: &str = r#"name = "full"
description = "Every table and field."
duration_s = 20

[link]
name = "test link"
rate = "100Mbit/s"
framing = "ethernet"

[vc]
kind = "policed"
rate = "50Mbit/s"
burst_bytes = 6000

[classifier]
by = "dscp"
queues = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

[scheduler]
fairness = "bytes"
mtu = 9000
saturation = "when-saturated"
threshold_bytes = 100000
queue = [
  { name = "be", weight = 10, limit_packets = 300, limit_bytes = 400000 },
  { name = "le", class = "scavenger", weight = 1 },
  { name = "cs1", class = "weighted", weight = 0 },
  { name = "ef", class = "priority" },
]

[[stream]]
name = "udp"
kind = "udp"
rate = "20Mbit/s"
packet_bytes = 1200
dscp = "cs1"
start_s = 1.5
stop_s = 15

[[stream]]
name = "tcp"
kind = "tcp"
packet_bytes = 9000
tos = 0xb8
rtt_ms = 12.5
window_packets = 300
access_rate = "1Gbit/s"
cc = "reno"
start_s = 2
stop_s = 25
"#;

/// Defaults everywhere: a link type, no VC, no classifier, few fields.
const SPARSE: &str = r#"name = "sparse"
duration_s = 5

[link]
type = "oc3-atm"

[scheduler]
saturation = "when-saturated"
threshold_packets = 64
queue = [
  { weight = 98 },
  { weight = 1 },
  { weight = 0 },
  { weight = 1 },
]

[[stream]]
name = "qbss"
rate = "20Mbit/s"
precedence = 1

[[stream]]
name = "be"
kind = "tcp"
rtt_ms = 100
"#;

/// `(case name, base, edits)`: each edit replaces the first occurrence of
/// its first text with its second (an edit that finds nothing fails the
/// test, so a case cannot silently test the base).
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const CASES: &[Case] = &[
    ("full", FULL, &[]),
    ("sparse", SPARSE, &[]),
    // Top level.
    ("name-empty", FULL, &[("name = \"full\"", "name = \"  \"")]),
    ("name-long", FULL, &[("name = \"full\"", "name = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"")]),
    ("name-trimmed", FULL, &[("name = \"full\"", "name = \" full \"")]),
    ("description-trimmed", FULL, &[("\"Every table and field.\"", "\"  x  \"")]),
    ("duration-0", FULL, &[("duration_s = 20", "duration_s = 0")]),
    ("duration-3601", FULL, &[("duration_s = 20", "duration_s = 3601")]),
    ("duration-float", FULL, &[("duration_s = 20", "duration_s = 2.5")]),
    ("unknown-top", FULL, &[("duration_s = 20", "duration_s = 20\nspeed = 1")]),
    ("no-link", SPARSE, &[("[link]\ntype = \"oc3-atm\"\n", "")]),
    ("no-scheduler", SPARSE, &[("[scheduler]", "[schedule]")]),
    ("toml-syntax", FULL, &[("kind = \"udp\"", "kind = \"udp")]),
    ("lone-cr", FULL, &[("duration_s = 20", "duration_s = 20\r")]),
    // Link.
    ("link-type-and-rate", SPARSE, &[("type = \"oc3-atm\"", "type = \"oc3-atm\"\nrate = \"1Gbit/s\"")]),
    ("link-neither", FULL, &[("rate = \"100Mbit/s\"\nframing = \"ethernet\"", "name2 = 1")]),
    ("link-neither-known-fields", FULL, &[("rate = \"100Mbit/s\"\nframing = \"ethernet\"", "")]),
    ("link-unknown-type", SPARSE, &[("oc3-atm", "oc4")]),
    ("link-type-with-framing", SPARSE, &[("type = \"oc3-atm\"", "type = \"oc3-atm\"\nframing = \"atm\"")]),
    ("link-type-named", SPARSE, &[("type = \"oc3-atm\"", "type = \"ethernet-10g\"\nname = \"ten\"")]),
    ("link-framing-raw", FULL, &[("framing = \"ethernet\"", "framing = \"raw\"")]),
    ("link-framing-atm", FULL, &[("framing = \"ethernet\"", "framing = \"atm\"")]),
    ("link-framing-none", FULL, &[("framing = \"ethernet\"\n", "")]),
    ("link-framing-bad", FULL, &[("framing = \"ethernet\"", "framing = \"Ethernet\"")]),
    ("link-rate-no-unit", FULL, &[("\"100Mbit/s\"", "\"100\"")]),
    ("link-rate-bad", FULL, &[("\"100Mbit/s\"", "\"100 parsecs\"")]),
    ("link-rate-zero", FULL, &[("\"100Mbit/s\"", "\"0Mbit/s\"")]),
    ("link-rate-huge", FULL, &[("\"100Mbit/s\"", "\"11Tbit/s\"")]),
    ("link-rate-unnamed", FULL, &[("name = \"test link\"\n", "")]),
    // VC.
    ("vc-shaped", FULL, &[("kind = \"policed\"", "kind = \"shaped\"")]),
    ("vc-kind-bad", FULL, &[("kind = \"policed\"", "kind = \"squeezed\"")]),
    ("vc-too-fast", FULL, &[("rate = \"50Mbit/s\"", "rate = \"101Mbit/s\"")]),
    ("vc-rate-bad", FULL, &[("rate = \"50Mbit/s\"", "rate = \"50\"")]),
    ("vc-burst-small", FULL, &[("burst_bytes = 6000", "burst_bytes = 63")]),
    ("vc-burst-default", FULL, &[("burst_bytes = 6000\n", "")]),
    ("vc-burst-default-atm", FULL, &[("burst_bytes = 6000\n", ""), ("framing = \"ethernet\"", "framing = \"atm\"")]),
    ("vc-no-rate", FULL, &[("rate = \"50Mbit/s\"\n", "")]),
    // Classifier.
    ("classifier-by-bad", FULL, &[("by = \"dscp\"", "by = \"tos\"")]),
    ("classifier-short", FULL, &[("queues = [1, 0,", "queues = [")]),
    ("classifier-queue-too-high", FULL, &[("queues = [1,", "queues = [4,")]),
    ("classifier-queue-negative", FULL, &[("queues = [1,", "queues = [-1,")]),
    ("classifier-precedence-table", FULL, &[("by = \"dscp\"", "by = \"precedence\""), ("queues = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]", "queues = [0, 1, 0, 2, 0, 0, 3, 3]")]),
    ("classifier-precedence-default-by", FULL, &[("by = \"dscp\"\n", ""), ("queues = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]", "queues = [0, 1, 0, 2, 0, 0, 3, 3]")]),
    ("classifier-map", FULL, &[("by = \"dscp\"", "by = \"precedence\"\nmap = \"juniper-qbss\""), ("queues = [", "# queues = [")]),
    ("classifier-map-default-by", FULL, &[("by = \"dscp\"", "map = \"juniper-qbss\""), ("queues = [", "# queues = [")]),
    ("classifier-map-by-dscp", FULL, &[("by = \"dscp\"", "by = \"dscp\"\nmap = \"juniper-qbss\""), ("queues = [", "# queues = [")]),
    ("classifier-map-bad", FULL, &[("by = \"dscp\"", "by = \"precedence\"\nmap = \"cisco\""), ("queues = [", "# queues = [")]),
    ("classifier-map-and-queues", FULL, &[("by = \"dscp\"", "map = \"juniper-qbss\"")]),
    ("classifier-empty", FULL, &[("by = \"dscp\"\n", ""), ("queues = [", "# queues = [")]),
    ("classifier-needs-more-queues", SPARSE, &[("  { weight = 1 },\n]", "]")]),
    ("classifier-only-by", FULL, &[("queues = [", "# queues = [")]),
    // Scheduler.
    ("mtu-small", FULL, &[("mtu = 9000", "mtu = 63")]),
    ("mtu-default", FULL, &[("mtu = 9000\n", ""), ("packet_bytes = 9000", "packet_bytes = 1500")]),
    ("fairness-packets", FULL, &[("fairness = \"bytes\"", "fairness = \"packets\"")]),
    ("fairness-bad", FULL, &[("fairness = \"bytes\"", "fairness = \"time\"")]),
    ("saturation-work-conserving", FULL, &[("saturation = \"when-saturated\"", "saturation = \"work-conserving\"")]),
    ("saturation-forced", FULL, &[("saturation = \"when-saturated\"", "saturation = \"forced\"")]),
    ("saturation-bad", FULL, &[("saturation = \"when-saturated\"", "saturation = \"sometimes\"")]),
    ("saturation-default", FULL, &[("saturation = \"when-saturated\"\n", "")]),
    ("saturation-no-threshold", FULL, &[("threshold_bytes = 100000\n", "")]),
    ("saturation-default-no-threshold", FULL, &[("saturation = \"when-saturated\"\n", ""), ("threshold_bytes = 100000\n", "")]),
    ("saturation-both-thresholds", FULL, &[("threshold_bytes = 100000", "threshold_bytes = 100000\nthreshold_packets = 5")]),
    ("saturation-threshold-packets", FULL, &[("threshold_bytes = 100000", "threshold_packets = 5")]),
    ("saturation-threshold-negative", FULL, &[("threshold_bytes = 100000", "threshold_packets = -5")]),
    ("saturation-threshold-bytes-huge", FULL, &[("threshold_bytes = 100000", "threshold_bytes = 2000000000000000")]),
    ("saturation-queue", FULL, &[("threshold_bytes = 100000", "threshold_bytes = 100000\nsaturation_queue = 2")]),
    ("saturation-queue-high", FULL, &[("threshold_bytes = 100000", "threshold_bytes = 100000\nsaturation_queue = 4")]),
    ("saturation-queue-forced", FULL, &[("saturation = \"when-saturated\"", "saturation = \"forced\"\nsaturation_queue = 0")]),
    ("queue0-outside-wrr", FULL, &[("threshold_bytes = 100000", "threshold_bytes = 100000\nqueue0_outside_wrr = true")]),
    ("ingress-fifo", FULL, &[("threshold_bytes = 100000", "threshold_bytes = 100000\ningress_fifo_packets = 512")]),
    ("ingress-fifo-zero", FULL, &[("threshold_bytes = 100000", "threshold_bytes = 100000\ningress_fifo_packets = 0")]),
    ("queues-none", SPARSE, &[("queue = [\n  { weight = 98 },\n  { weight = 1 },\n  { weight = 0 },\n  { weight = 1 },\n]", "queue = []")]),
    ("queues-nine", SPARSE, &[("  { weight = 1 },\n]", "  { weight = 1 },\n  { weight = 1 },\n  { weight = 1 },\n  { weight = 1 },\n  { weight = 1 },\n  { weight = 1 },\n]")]),
    ("queue-class-bad", FULL, &[("class = \"scavenger\"", "class = \"bulk\"")]),
    ("queue-no-weight", FULL, &[("class = \"scavenger\", weight = 1", "class = \"scavenger\"")]),
    ("queue-no-weight-weighted", SPARSE, &[("{ weight = 0 }", "{ name = \"x\" }")]),
    ("queue-priority-weight", FULL, &[("class = \"priority\"", "class = \"priority\", weight = 7")]),
    ("queue-two-priority", FULL, &[("class = \"weighted\", weight = 0", "class = \"priority\"")]),
    ("queue-weight-huge", FULL, &[("weight = 10,", "weight = 1048577,")]),
    ("queue-limit-packets-zero", FULL, &[("limit_packets = 300", "limit_packets = 0")]),
    ("queue-limit-packets-huge", FULL, &[("limit_packets = 300", "limit_packets = 2049")]),
    ("queue-limit-bytes-zero", FULL, &[("limit_bytes = 400000", "limit_bytes = 0")]),
    ("queue-unknown-field", FULL, &[("limit_bytes = 400000", "limit_bytes = 400000, colour = 1")]),
    // Streams.
    ("streams-none", SPARSE, &[("[[stream]]\nname = \"qbss\"\nrate = \"20Mbit/s\"\nprecedence = 1\n\n[[stream]]\nname = \"be\"\nkind = \"tcp\"\nrtt_ms = 100\n", "")]),
    ("stream-name-empty", FULL, &[("name = \"udp\"", "name = \"\"")]),
    ("stream-name-comma", FULL, &[("name = \"udp\"", "name = \"u,dp\"")]),
    ("stream-name-control", FULL, &[("name = \"udp\"", "name = \"u\\tdp\"")]),
    ("stream-name-long", FULL, &[("name = \"udp\"", "name = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"")]),
    ("stream-name-twice", FULL, &[("name = \"tcp\"", "name = \"udp\"")]),
    ("stream-name-twice-trimmed", FULL, &[("name = \"tcp\"", "name = \" udp \"")]),
    ("stream-no-name", FULL, &[("name = \"tcp\"\n", "")]),
    ("stream-kind-bad", FULL, &[("kind = \"udp\"", "kind = \"sctp\"")]),
    ("stream-packet-small", FULL, &[("packet_bytes = 1200", "packet_bytes = 19")]),
    ("stream-packet-big", FULL, &[("packet_bytes = 1200", "packet_bytes = 65536")]),
    ("stream-packet-over-mtu", FULL, &[("packet_bytes = 9000", "packet_bytes = 9001")]),
    ("stream-packet-default-over-mtu", FULL, &[("mtu = 9000", "mtu = 1000"), ("packet_bytes = 1200\n", ""), ("packet_bytes = 9000", "packet_bytes = 1000")]),
    ("stream-packet-over-mtu-packet-fair", FULL, &[("packet_bytes = 9000", "packet_bytes = 9001"), ("fairness = \"bytes\"", "fairness = \"packets\"")]),
    ("stream-dscp-number", FULL, &[("dscp = \"cs1\"", "dscp = 46")]),
    ("stream-dscp-64", FULL, &[("dscp = \"cs1\"", "dscp = 64")]),
    ("stream-dscp-negative", FULL, &[("dscp = \"cs1\"", "dscp = -1")]),
    ("stream-dscp-name-bad", FULL, &[("dscp = \"cs1\"", "dscp = \"cs9\"")]),
    ("stream-dscp-name-le", FULL, &[("dscp = \"cs1\"", "dscp = \"LE\"")]),
    ("stream-dscp-float", FULL, &[("dscp = \"cs1\"", "dscp = 1.5")]),
    ("stream-precedence-number", FULL, &[("dscp = \"cs1\"", "precedence = 5")]),
    ("stream-precedence-8", FULL, &[("dscp = \"cs1\"", "precedence = 8")]),
    ("stream-precedence-name", FULL, &[("dscp = \"cs1\"", "precedence = \"flash\"")]),
    ("stream-precedence-name-bad", FULL, &[("dscp = \"cs1\"", "precedence = \"urgent\"")]),
    ("stream-tos-256", FULL, &[("tos = 0xb8", "tos = 256")]),
    ("stream-two-marks", FULL, &[("tos = 0xb8", "tos = 0xb8\nprecedence = 1")]),
    ("stream-no-mark", FULL, &[("tos = 0xb8\n", "")]),
    ("stream-start-negative", FULL, &[("start_s = 1.5", "start_s = -1")]),
    ("stream-start-after-duration", FULL, &[("start_s = 1.5", "start_s = 21")]),
    ("stream-start-nan", FULL, &[("start_s = 1.5", "start_s = nan")]),
    ("stream-stop-huge", FULL, &[("stop_s = 15", "stop_s = 3601")]),
    ("stream-stop-before-start", FULL, &[("stop_s = 15", "stop_s = 1")]),
    ("stream-stop-default-before-start", FULL, &[("stop_s = 15\n", ""), ("start_s = 1.5", "start_s = 20")]),
    ("stream-stop-default", FULL, &[("stop_s = 15\n", "")]),
    ("stream-start-int", FULL, &[("start_s = 1.5", "start_s = 1")]),
    ("udp-no-rate", FULL, &[("rate = \"20Mbit/s\"\n", "")]),
    ("udp-rate-bad", FULL, &[("rate = \"20Mbit/s\"", "rate = \"20 furlongs\"")]),
    ("udp-rate-no-unit", FULL, &[("rate = \"20Mbit/s\"", "rate = \" 20 \"")]),
    ("udp-rtt", FULL, &[("dscp = \"cs1\"", "dscp = \"cs1\"\nrtt_ms = 5")]),
    ("udp-window", FULL, &[("dscp = \"cs1\"", "dscp = \"cs1\"\nwindow_packets = 5")]),
    ("udp-access", FULL, &[("dscp = \"cs1\"", "dscp = \"cs1\"\naccess_rate = \"1Gbit/s\"")]),
    ("udp-cc", FULL, &[("dscp = \"cs1\"", "dscp = \"cs1\"\ncc = \"reno\"")]),
    ("udp-default-kind", FULL, &[("kind = \"udp\"\n", "")]),
    ("udp-rtt-and-cc", FULL, &[("dscp = \"cs1\"", "dscp = \"cs1\"\ncc = \"reno\"\nrtt_ms = 5")]),
    ("tcp-rate", FULL, &[("rtt_ms = 12.5", "rtt_ms = 12.5\nrate = \"1Mbit/s\"")]),
    ("tcp-no-rtt", FULL, &[("rtt_ms = 12.5\n", "")]),
    ("tcp-rtt-small", FULL, &[("rtt_ms = 12.5", "rtt_ms = 0.0001")]),
    ("tcp-rtt-huge", FULL, &[("rtt_ms = 12.5", "rtt_ms = 10001")]),
    ("tcp-rtt-inf", FULL, &[("rtt_ms = 12.5", "rtt_ms = inf")]),
    ("tcp-rtt-int", FULL, &[("rtt_ms = 12.5", "rtt_ms = 12")]),
    ("tcp-window-small", FULL, &[("window_packets = 300", "window_packets = 1")]),
    ("tcp-window-huge", FULL, &[("window_packets = 300", "window_packets = 1048577")]),
    ("tcp-window-default", FULL, &[("window_packets = 300\n", "")]),
    ("tcp-access-default", FULL, &[("access_rate = \"1Gbit/s\"\n", "")]),
    ("tcp-access-bad", FULL, &[("access_rate = \"1Gbit/s\"", "access_rate = \"1G\"")]),
    ("tcp-cc-default", FULL, &[("cc = \"reno\"\n", "")]),
    ("tcp-cc-bad", FULL, &[("cc = \"reno\"", "cc = \"vegas\"")]),
    ("tcp-rate-and-no-rtt", FULL, &[("rtt_ms = 12.5", "rate = \"1Mbit/s\"")]),
    ("offered-too-much", FULL, &[("duration_s = 20", "duration_s = 3600"), ("rate = \"20Mbit/s\"", "rate = \"10Tbit/s\""), ("stop_s = 15", "stop_s = 3600"), ("packet_bytes = 1200", "packet_bytes = 20"), ("rate = \"100Mbit/s\"", "rate = \"10Tbit/s\""), ("rate = \"50Mbit/s\"", "rate = \"1Tbit/s\"")]),
    ("offered-too-much-second", FULL, &[("duration_s = 20", "duration_s = 3600"), ("rate = \"20Mbit/s\"", "rate = \"1Gbit/s\""), ("stop_s = 15", "stop_s = 3600"), ("packet_bytes = 1200", "packet_bytes = 1000"), ("access_rate = \"1Gbit/s\"", "access_rate = \"10Tbit/s\""), ("stop_s = 25", "stop_s = 3600"), ("packet_bytes = 9000", "packet_bytes = 1000"), ("rate = \"100Mbit/s\"", "rate = \"10Tbit/s\""), ("rate = \"50Mbit/s\"", "rate = \"1Tbit/s\"")]),
    ("stream-unknown-field", FULL, &[("cc = \"reno\"", "cc = \"reno\"\nflavour = 1")]),
    ("stream-wrong-type", FULL, &[("window_packets = 300", "window_packets = \"300\"")]),
    ("stream-array-wrong", FULL, &[("[[stream]]\nname = \"tcp\"", "[stream2]\nname = \"tcp\"")]),
    // Several problems at once: the first in validation order is reported.
    ("first-of-many", FULL, &[("duration_s = 20", "duration_s = 0"), ("kind = \"policed\"", "kind = \"x\""), ("cc = \"reno\"", "cc = \"x\"")]),
    ("first-of-link-vc", FULL, &[("framing = \"ethernet\"", "framing = \"x\""), ("kind = \"policed\"", "kind = \"x\"")]),
    ("first-of-vc-scheduler", FULL, &[("kind = \"policed\"", "kind = \"x\""), ("mtu = 9000", "mtu = 1")]),
    ("first-of-scheduler-classifier", FULL, &[("by = \"dscp\"", "by = \"x\""), ("mtu = 9000", "mtu = 1")]),
    ("first-of-classifier-streams", FULL, &[("by = \"dscp\"", "by = \"x\""), ("name = \"udp\"", "name = \"\"")]),
    ("first-of-stream-fields", FULL, &[("kind = \"udp\"", "kind = \"x\""), ("start_s = 1.5", "start_s = -1"), ("dscp = \"cs1\"", "dscp = 99"), ("packet_bytes = 1200", "packet_bytes = 1")]),
];

/// What `src` validates to, on one line.
fn outcome(src: &str) -> String {
    match Scenario::from_toml(src) {
        Ok(sc) => format!("ok {sc:?}"),
        Err(e) => format!(
            "line {} field {:?} message {:?}",
            e.line, e.field, e.message
        ),
    }
}

fn edited(name: &str, base: &str, edits: &[(&str, &str)]) -> String {
    edits.iter().fold(base.to_string(), |src, (from, to)| {
        assert!(src.contains(from), "{name}: {from:?} not in its base");
        src.replacen(from, to, 1)
    })
}

#[test]
fn every_case_validates_as_the_snapshot_says() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scenario-cases.txt");
    let now: String = CASES
        .iter()
        .map(|(name, base, edits)| format!("{name}: {}\n", outcome(&edited(name, base, edits))))
        .collect();
    if std::env::var("SNAPSHOT_UPDATE").as_deref() == Ok("1") {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).expect("tests/data/scenario-cases.txt");
    for (w, n) in want.lines().zip(now.lines()) {
        assert_eq!(w, n);
    }
    assert_eq!(want.lines().count(), now.lines().count(), "case count");
}
