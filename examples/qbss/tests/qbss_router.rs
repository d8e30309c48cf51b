//! The `qbss-router` command line, where it can be checked without root: what it
//! refuses before it opens a device. Forwarding itself is checked in the lab
//! (`qbss_lab.rs`).

use clap::Parser;
use qbss::router::cli::{main_with, Args};

fn run(args: &[&str]) -> (i32, String) {
    let args = Args::parse_from(std::iter::once("qbss-router").chain(args.iter().copied()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = main_with(args, &mut out, &mut err);
    (status, String::from_utf8(err).expect("utf-8 stderr"))
}

#[test]
fn refusals_exit_with_the_documented_status() {
    let devs = ["--left", "qL", "--right", "qR"];
    let with = |extra: &[&str]| {
        let mut v: Vec<&str> = extra.to_vec();
        v.extend_from_slice(&devs);
        run(&v)
    };
    let (status, err) = with(&["--preset", "nope"]);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("no preset \"nope\""), "{err}");
    let (status, err) = with(&["--preset", "transpac", "--scale", "0"]);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("--scale"), "{err}");
    let (status, err) = with(&["--scenario", "/nonexistent/x.toml"]);
    assert_eq!(status, 1, "{err}");
    // A hypothesis switch is a model-only mechanism: refused, not silently ignored.
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/queue0/q0-swap-follow-q0-outside.toml"
    );
    let (status, err) = with(&["--scenario", file]);
    assert_eq!(status, 1, "{err}");
    assert!(err.contains("queue0_outside_wrr"), "{err}");
}

#[test]
fn help_documents_the_exit_statuses() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_qbss-router"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for want in ["Exit status:", "--stats-json", "--scale", "TUN"] {
        assert!(help.contains(want), "{want:?} missing:\n{help}");
    }
}
