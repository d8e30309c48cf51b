//! The `qbss-model` command line and its outputs, run in-process.

use clap::Parser;
use qbss::cli::{main_with, Args};
use qbss::scenario::Scenario;
use qbss::{presets, sim};

fn run(args: &[&str]) -> (i32, String, String) {
    let args = Args::parse_from(std::iter::once("qbss-model").chain(args.iter().copied()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = main_with(args, &mut out, &mut err);
    (
        status,
        String::from_utf8(out).expect("utf-8 stdout"),
        String::from_utf8(err).expect("utf-8 stderr"),
    )
}

#[test]
fn list_presets_names_every_preset() {
    let (status, out, _) = run(&["--list-presets"]);
    assert_eq!(status, 0);
    for p in presets::PRESETS {
        assert!(
            out.lines().any(|l| l.starts_with(p.name)),
            "{} missing",
            p.name
        );
    }
}

#[test]
fn unknown_preset_exits_2_and_a_bad_file_exits_1_with_a_message() {
    // Issue 12: 0 done, 1 runtime error (bad file, I/O), 2 usage error.
    let (status, out, err) = run(&["--preset", "nope"]);
    assert_eq!(status, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("no preset \"nope\"") && err.contains("transpac"),
        "{err}"
    );
    let (status, _, err) = run(&[]);
    assert_eq!(status, 2, "{err}");

    let dir = std::env::temp_dir().join(format!("qbss-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    let text = presets::find("vc-10mbit")
        .unwrap()
        .toml
        .replace("kind = \"shaped\"", "kind = \"squeezed\"");
    std::fs::write(&bad, &text).unwrap();
    let (status, out, err) = run(&[bad.to_str().unwrap()]);
    assert_eq!(status, 1);
    assert!(out.is_empty());
    let line = 1 + text.lines().position(|l| l.contains("squeezed")).unwrap();
    assert!(err.contains(&format!("line {line}: vc.kind:")), "{err}");
    let (status, _, err) = run(&[dir.join("missing.toml").to_str().unwrap()]);
    assert_eq!(status, 1);
    assert!(err.contains("missing.toml"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn help_documents_the_exit_statuses_and_bad_options_exit_2() {
    let bin = env!("CARGO_BIN_EXE_qbss-model");
    let out = std::process::Command::new(bin)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for want in [
        "Exit status:",
        "0  done",
        "1  runtime error",
        "2  usage error",
    ] {
        assert!(help.contains(want), "{want:?} missing from --help:\n{help}");
    }
    let out = std::process::Command::new(bin)
        .arg("--no-such-option")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_closed_stdout_ends_quietly_with_status_0() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_qbss-model"))
        .args(["--preset", "transpac"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the report is written, as `| head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.to_lowercase().contains("broken pipe"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn json_has_the_issue_schema() {
    let (status, out, err) = run(&["--preset", "vc-10mbit-forced", "--json"]);
    assert_eq!(status, 0, "{err}");
    assert!(
        err.contains("packets/s"),
        "the run reports its speed: {err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 4);
    for k in ["scenario", "link", "streams", "intervals"] {
        assert!(keys.contains(&k), "{k}");
    }
    assert_eq!(v["scenario"], "vc-10mbit-forced");
    assert_eq!(v["link"]["name"], "OC-3 ATM");
    assert_eq!(v["link"]["bits_per_second"], 132_452_830);
    let streams = v["streams"].as_array().unwrap();
    assert_eq!(streams[0]["name"], "qbss");
    assert_eq!(streams[0]["dscp"], 8); // CS1
    assert_eq!(streams[0]["queue"], 1);
    assert_eq!(streams[1]["queue"], 0);
    let intervals = v["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 30);
    for (i, iv) in intervals.iter().enumerate() {
        assert_eq!(iv["start_s"], i as u64);
        assert_eq!(iv["end_s"], i as u64 + 1);
        let s = iv["streams"].as_array().unwrap();
        assert_eq!(s.len(), 2);
        let mut k: Vec<&str> = s[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        k.sort_unstable();
        assert_eq!(k, ["bits_per_second", "drops", "name", "packets"]);
    }
}

#[test]
fn text_csv_and_svg_agree_with_the_run() {
    let dir = std::env::temp_dir().join(format!("qbss-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, svg) = (dir.join("o.csv"), dir.join("o.svg"));
    let (status, out, err) = run(&[
        "--preset",
        "premium-weight-0",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{err}");
    let sc = Scenario::from_toml(presets::find("premium-weight-0").unwrap().toml).unwrap();
    let res = sim::run(&sc).unwrap();
    // Text: one line per active stream and second, iperf style.
    let be_lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("[  1] be") && l.contains(" sec "))
        .collect();
    assert_eq!(be_lines.len(), 30);
    assert!(be_lines[5].contains("50.00 Mbits/sec"), "{}", be_lines[5]);
    assert!(
        out.contains("premium sent 25000 packets, received 0"),
        "{out}"
    );
    // CSV: a header and one row per interval and stream, matching the counters.
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 1 + 30 * 3);
    assert!(rows[0].starts_with("start_s,end_s,stream,bits_per_second,packets,drops"));
    let c = res.intervals.cell(7, 2);
    assert_eq!(
        rows[1 + 7 * 3 + 2],
        format!("7,8,premium,0,0,{},2,0,0", c.drops)
    );
    // SVG: a document with the title, the axes and a legend entry per stream.
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg"));
    for needle in [
        "premium-weight-0",
        "time (s)",
        "Mbit/s",
        "be (CS0, queue 0)",
        "premium (CS3, queue 2)",
    ] {
        assert!(plot.contains(needle), "{needle}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_policed_vc_passes_its_rate_and_drops_the_rest() {
    let text = presets::find("vc-10mbit").unwrap().toml.replace(
        "kind = \"shaped\"",
        "kind = \"policed\"\nburst_bytes = 3392",
    );
    let sc = Scenario::from_toml(&text).unwrap();
    let res = sim::run(&sc).unwrap();
    // 20 Mbit/s of 1500-byte packets (1696 bytes in cells) into a 10 Mbit/s policer:
    // 10e6 / (1696 x 8) = 737 packets a second pass, whatever their class.
    for i in 1..30 {
        let passed: u64 = (0..2).map(|k| res.intervals.cell(i, k).packets).sum();
        assert!((735..=739).contains(&passed), "interval {i}: {passed}");
    }
    let policed: u64 = res.totals.iter().map(|t| t.policed).sum();
    assert!(policed > 0);
    assert_eq!(res.totals.iter().map(|t| t.refused).sum::<u64>(), 0);
}

#[test]
fn scale_divides_the_rates_and_is_recorded_in_the_json() {
    let (status, out, err) = run(&["--preset", "vc-10mbit-forced", "--json", "--scale", "10"]);
    assert_eq!(status, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["scale"], 10.0);
    assert_eq!(v["link"]["bits_per_second"], 13_245_283);
    let (status, _, err) = run(&["--preset", "transpac", "--scale", "0.5"]);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("--scale"), "{err}");
}
