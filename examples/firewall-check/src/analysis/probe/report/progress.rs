//! Progress on standard error while the probe runs: one line per phase,
//! the tests done so far and the time since the start
//! (`probe: 24/48 tests, SYN tests done, 2.1 s`). `--quiet` leaves it out.

use std::time::Instant;

/// The run's progress.
#[derive(Debug, Clone)]
pub struct Progress {
    start: Instant,
    enabled: bool,
    done: usize,
    total: usize,
}

impl Progress {
    /// Progress of `total` tests, printed when `enabled`.
    pub fn new(total: usize, enabled: bool) -> Progress {
        Progress {
            start: Instant::now(),
            enabled,
            done: 0,
            total,
        }
    }

    /// A phase of `tests` tests is done.
    pub fn phase(&mut self, what: &str, tests: usize) {
        self.done = (self.done + tests).min(self.total);
        if self.enabled {
            eprintln!(
                "probe: {}/{} tests, {what} done, {:.1} s",
                self.done,
                self.total,
                self.start.elapsed().as_secs_f64()
            );
        }
    }
}
