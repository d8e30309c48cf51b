//! The far end of the forward tests: what the reflector captured at the
//! target.
//!
//! The reflector reads its capture while it serves requests, so a SYN the
//! target answered a moment ago may not be in it yet. The runs are asked
//! for in passes, all of them in each, for up to a second in all (not a
//! second each: behind a SYN proxy no SYN ever reaches the target, and a
//! second per test made a run of 90 tests 90 s longer); a run whose probe
//! the target never answered is asked for once.

use std::time::{Duration, Instant};

use super::super::error::ProbeError;
use super::super::reflect::Control;
use super::super::tests::{FarEnd, TestRun};
use super::Prober;

/// How long the passes go on for runs the target answered.
const CAPTURE_WAIT: Duration = Duration::from_secs(1);

/// Pause between two passes.
const PASS_PAUSE: Duration = Duration::from_millis(20);

impl Prober<'_> {
    /// Adds the reflector's capture of each run's probe at the target (by
    /// its port, else by its sequence number: a NAT's translation).
    pub fn capture_forward(
        &mut self,
        c: &mut Control,
        mut runs: Vec<&mut TestRun>,
    ) -> Result<(), ProbeError> {
        let Some(len) = self.path.len else {
            return Ok(());
        };
        let until = Instant::now() + CAPTURE_WAIT;
        let mut first = true;
        loop {
            for run in runs.iter_mut() {
                let answered = run.answer.is_some();
                if run.at_end.is_some() || !(first || answered) {
                    continue;
                }
                let seen = c.arrived_syn(run.sent.sport(), run.sent.seq(), answered)?;
                run.at_end = seen.map(|seen| FarEnd {
                    ttl: len,
                    address: self.io.dst,
                    seen,
                });
            }
            first = false;
            let waiting = runs
                .iter()
                .any(|r| r.at_end.is_none() && r.answer.is_some());
            if !waiting || Instant::now() >= until {
                return Ok(());
            }
            std::thread::sleep(PASS_PAUSE);
        }
    }
}
