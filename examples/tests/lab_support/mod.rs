//! Running `examples/lab/lab.sh` from an integration test: the one place
//! that decides whether the lab can run here (skip with a message, or, under
//! `TCP_PERF_LAB_REQUIRED=1` as `.ci/run` sets it, fail), runs one case at a
//! time per test binary, and returns the directory with its captures.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// One lab case at a time: the cases share the machine's CPUs and timing matters.
static LAB: Mutex<()> = Mutex::new(());

/// `examples/lab/lab.sh`.
pub fn lab_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("lab")
        .join("lab.sh")
}

/// Whether the lab can run here (`lab.sh --check`), asked once.
pub fn lab_available() -> Result<(), String> {
    static CHECK: OnceLock<Result<(), String>> = OnceLock::new();
    CHECK
        .get_or_init(|| {
            let out = Command::new("bash")
                .arg(lab_script())
                .arg("--check")
                .output()
                .map_err(|e| format!("cannot run bash: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
            }
        })
        .clone()
}

/// Runs `lab.sh CASE DIR ARGS...` (at most 120 s) in a fresh directory named
/// after `tag` and the case; `None` when the lab cannot run here and that is
/// allowed.
pub fn run_lab_case(tag: &str, case: &str, args: &[&str]) -> Option<PathBuf> {
    if let Err(why) = lab_available() {
        if std::env::var("TCP_PERF_LAB_REQUIRED").as_deref() == Ok("1") {
            panic!("TCP_PERF_LAB_REQUIRED=1 but the lab cannot run: {why}");
        }
        eprintln!("skipping lab case {case}: {why}");
        return None;
    }
    let _guard = LAB.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("tcp-perf-{tag}-{}-{case}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new("timeout")
        .arg("120")
        .arg("bash")
        .arg(lab_script())
        .arg(case)
        .arg(&dir)
        .args(args)
        .output()
        .expect("run lab.sh");
    assert!(
        out.status.success(),
        "lab case {case} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Some(dir)
}
