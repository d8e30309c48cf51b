//! The machine lock: labs that measure time take it exclusively, labs that
//! only check what a rule did take it shared, so two test processes (two
//! `cargo test` runs, or another lab suite that adopts the harness) never
//! run a timing lab beside anything else of theirs. An advisory `flock` on
//! `/run/lock/tcp-perf-lab.lock` (the temporary directory where `/run/lock`
//! is not writable), released when the guard is dropped or the process
//! ends.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;

/// The lock file.
pub fn path() -> PathBuf {
    let run = PathBuf::from("/run/lock");
    let dir = if run.is_dir()
        && OpenOptions::new()
            .create(true)
            .append(true)
            .open(run.join("tcp-perf-lab.lock"))
            .is_ok()
    {
        run
    } else {
        std::env::temp_dir()
    };
    dir.join("tcp-perf-lab.lock")
}

/// A held machine lock.
#[derive(Debug)]
pub struct MachineLock {
    _file: File,
}

impl MachineLock {
    fn open_at(p: &std::path::Path) -> File {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .unwrap_or_else(|e| panic!("the lab lock {}: {e}", p.display()))
    }

    /// Alone on the machine (among lab processes): waits for every holder.
    pub fn exclusive() -> MachineLock {
        let f = Self::open_at(&path());
        f.lock().expect("flock the lab lock");
        MachineLock { _file: f }
    }

    /// Beside other shared holders; waits while someone holds it exclusively.
    pub fn shared() -> MachineLock {
        Self::shared_at(&path())
    }

    fn shared_at(p: &std::path::Path) -> MachineLock {
        let f = Self::open_at(p);
        f.lock_shared().expect("flock the lab lock");
        MachineLock { _file: f }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_holders_coexist_and_exclusive_waits() {
        let p = std::env::temp_dir().join(format!("tcp-perf-lab-lock-test-{}", std::process::id()));
        let a = MachineLock::shared_at(&p);
        let b = MachineLock::shared_at(&p);
        let f = MachineLock::open_at(&p);
        assert!(f.try_lock().is_err(), "exclusive while shared are held");
        drop((a, b));
        assert!(f.try_lock().is_ok());
        let _ = std::fs::remove_file(p);
    }
}
