//! What `probe_lab.rs` uses of the lab harness (the `lab` crate), under the
//! names it had: the other labs are rows of `tests/labs/` and use the
//! harness directly.

#![allow(dead_code)]

use std::path::PathBuf;

/// `examples/lab/NAME`, one of the lab scripts.
pub fn script(name: &str) -> PathBuf {
    lab::run::script_path(name)
}

/// Whether the lab script `name` can run for the test `what`: `false`
/// (said past the capture) when `LAB_SKIP` names suite `probe` or this
/// test; a failure naming what is missing when it cannot run.
pub fn ready(name: &str, what: &str) -> bool {
    lab::ready("probe", name, what)
}
