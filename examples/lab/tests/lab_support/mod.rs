//! Running `examples/lab/lab.sh` from an integration test: the one place
//! that decides whether the lab can run here (skip with a message, or, under
//! `TCP_PERF_LAB_REQUIRED=1` as `.ci/run` sets it, fail), runs one case at a
//! time per test binary, and returns the directory with its captures.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// One lab case at a time: the cases share the machine's CPUs and timing matters.
static LAB: Mutex<()> = Mutex::new(());

/// `examples/lab/NAME`, one of the lab scripts.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// `examples/lab/lab.sh`.
pub fn lab_script() -> PathBuf {
    script("lab.sh")
}

/// Whether the lab script `name` can run here (`NAME --check`), asked once per
/// script and test binary.
pub fn check(name: &str) -> Result<(), String> {
    static CHECKED: Mutex<Vec<(String, Result<(), String>)>> = Mutex::new(Vec::new());
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = checked.iter().find(|(n, _)| n == name) {
        return r.clone();
    }
    let r = Command::new("bash")
        .arg(script(name))
        .arg("--check")
        .output()
        .map_err(|e| format!("cannot run bash: {e}"))
        .and_then(|out| {
            if out.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
            }
        });
    checked.push((name.to_string(), r.clone()));
    r
}

/// Whether the lab script `name` can run here. When it cannot, says why and
/// skips (`false`), or, under `TCP_PERF_LAB_REQUIRED=1`, fails the test:
/// there a skip would hide a lab that did not run. `what` names the test for
/// the message.
pub fn ready(name: &str, what: &str) -> bool {
    match check(name) {
        Ok(()) => true,
        Err(why) => {
            if std::env::var("TCP_PERF_LAB_REQUIRED").as_deref() == Ok("1") {
                panic!("TCP_PERF_LAB_REQUIRED=1 but {name} cannot run ({what}): {why}");
            }
            eprintln!("skipping {what}: {name} cannot run here: {why}");
            false
        }
    }
}

/// Runs `lab.sh CASE DIR ARGS...` (at most 120 s) in a fresh directory named
/// after `tag` and the case; `None` when the lab cannot run here and that is
/// allowed.
pub fn run_lab_case(tag: &str, case: &str, args: &[&str]) -> Option<PathBuf> {
    if !ready("lab.sh", &format!("lab case {case}")) {
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

/// `firewall-check analyze --json ARGS CAPTURE`, which must exit 0 (nothing
/// found) or 3 (findings); its JSON document.
pub fn analyze_json(args: &[&str], capture: &std::path::Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_lab-firewall-check"))
        .args(["analyze", "--json"])
        .args(args)
        .arg(capture)
        .output()
        .expect("run firewall-check");
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "analyze failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}
