//! The golden-output harness, included by each tool's `tests/golden.rs`.
//!
//! Golden outputs: every command of `examples/golden/cases.txt`, run from
//! the workspace root, must print exactly what `examples/golden/out/` holds
//! (standard output byte for byte; the exit status and standard error in
//! `NAME.err` where the status is not 0 or something went to standard
//! error). They were written before the tools were rebuilt as crates
//! (issue 28), so they prove the rebuild changed no behaviour.
//!
//! Standard error is kept as printed, except for run times (see
//! `without_elapsed`).
//!
//! `GOLDEN_UPDATE=1 cargo test --test golden` writes them anew; a change
//! to them is a change of behaviour, to be argued in the commit.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Case {
    tool: String,
    name: String,
    args: Vec<String>,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(root().join("examples/golden/cases.txt"))
        .expect("examples/golden/cases.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut w = l.split_whitespace().map(str::to_owned);
            let tool = w.next().expect("tool");
            let name = w.next().expect("name");
            Case {
                tool,
                name,
                args: w.collect(),
            }
        })
        .collect()
}

/// What a run printed: standard output, and the `.err` text (exit status
/// and standard error) where there is one.
fn run(bin: &Path, case: &Case) -> (Vec<u8>, Option<Vec<u8>>) {
    let out = Command::new(bin)
        .args(&case.args)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("{}: cannot run {}: {e}", case.name, bin.display()));
    let status = out
        .status
        .code()
        .map_or("signal".to_owned(), |c| c.to_string());
    let stderr = without_elapsed(&String::from_utf8_lossy(&out.stderr));
    let err = (status != "0" || !stderr.is_empty())
        .then(|| format!("exit status {status}\n{stderr}").into_bytes());
    (out.stdout, err)
}

/// Standard error without what depends on the machine: `qbss-model`'s
/// "... events in 0.5 s (2.0 M packets/s ...)" becomes "... events in <elapsed>".
fn without_elapsed(stderr: &str) -> String {
    stderr
        .split_inclusive('\n')
        .map(|l| match l.split_once(" events in ") {
            Some((head, _)) => format!("{head} events in <elapsed>\n"),
            None => l.to_owned(),
        })
        .collect()
}

/// Runs every case of `tool` with `bin` and requires its golden output.
pub fn check_tool(tool: &str, bin: &Path) {
    let cases: Vec<Case> = cases().into_iter().filter(|c| c.tool == tool).collect();
    assert!(!cases.is_empty(), "no golden cases for {tool}");
    let dir = root().join("examples/golden/out").join(tool);
    let update = std::env::var("GOLDEN_UPDATE").as_deref() == Ok("1");
    if update {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let failures: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<&[Case]> = cases.chunks(cases.len().div_ceil(threads)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let dir = &dir;
                s.spawn(move || {
                    let mut failed = Vec::new();
                    for case in chunk {
                        let (stdout, err) = run(bin, case);
                        let out_path = dir.join(format!("{}.out", case.name));
                        let err_path = dir.join(format!("{}.err", case.name));
                        if update {
                            std::fs::write(&out_path, &stdout).unwrap();
                            match &err {
                                Some(e) => std::fs::write(&err_path, e).unwrap(),
                                None => {
                                    let _ = std::fs::remove_file(&err_path);
                                }
                            }
                            continue;
                        }
                        let want_out = std::fs::read(&out_path).unwrap_or_default();
                        let want_err = std::fs::read(&err_path).ok();
                        if want_out != stdout {
                            failed.push(format!(
                                "{}: standard output differs from {}",
                                case.name,
                                out_path.display()
                            ));
                        }
                        if want_err != err {
                            failed.push(format!(
                                "{}: exit status or standard error differs from {} (now: {:?})",
                                case.name,
                                err_path.display(),
                                err.as_deref().map(String::from_utf8_lossy)
                            ));
                        }
                    }
                    failed
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} golden cases of {tool} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
