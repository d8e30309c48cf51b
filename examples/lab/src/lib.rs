//! The network labs' harness: real Linux endpoints and middleboxes in
//! network namespaces, checking the tools against the kernel (root).
//!
//! One harness for every lab of the crate's tests (`tests/labs/`):
//!
//! - **Case tables.** A lab is a row of a table: a case (the lab script's
//!   case and arguments, what the tools must find, the checks to run on the
//!   result), how it may share the machine ([`Share`]) and what it needs
//!   ([`Req`]). [`rows!`] writes the table, the [`Row`]s and one
//!   `#[test] #[ignore]` per row from one list: a new lab is a new row.
//! - **Ignored by default.** `cargo test --workspace` lists each lab as
//!   ignored (it needs root); `cargo test -p lab -- --ignored` runs them.
//! - **Loud when it cannot run.** Before a row runs, its [`Req`]s are
//!   checked for real ([`prereq`]: root, programs, namespaces, each
//!   iptables target the scripts use, nftables, `tbf`, TUN, congestion
//!   controls); a missing one fails the row, naming what is missing and
//!   how to skip it. The only skip is by name: `LAB_SKIP=qbss,probe`, or
//!   `LAB_SKIP=firewall::campus` ([`select`]).
//! - **Scheduling.** The first row asked for starts every selected row;
//!   [`Share::Exclusive`] rows (those that measure time) run alone,
//!   [`Share::Shared`] ones `LAB_JOBS` at a time, [`Share::Background`] ones
//!   (light, long, tolerant) beside anything; the machine lock ([`lock`])
//!   keeps two lab processes apart the same way ([`sched`]).
//! - **Scripts and cleanup.** A lab script runs with its own namespace
//!   prefix, a deadline, its output in files; whatever happens, namespaces
//!   it leaves are deleted (and one left after a successful run fails the
//!   row); a lab process that starts sweeps what dead ones left ([`run`]).
//!   Each script's results come typed: [`CaseRun`] (the two captures, each
//!   sender's [`TcpInfo`]), [`QbssRun`] (model and measured figures).
//! - **The tools** are the crate's `lab-*` binaries, the tools' own
//!   `main`s ([`Tools`], [`bins!`]).
//!
//! A test crate of this package uses it so:
//!
//! ```text
//! // tests/labs/main.rs
//! mod firewall;
//! static LABS: lab::Lab = lab::Lab::new(lab::bins!(), &[firewall::ROWS]);
//!
//! // tests/labs/firewall.rs
//! pub struct Case { case: &'static str, share: lab::Share, needs: &'static [lab::Req] }
//! fn run_case(ctx: &lab::Ctx, c: &Case) {
//!     let run = ctx.lab_sh(c.case, &[]);
//!     let (doc, _) = run.tools().compare(&run.inside(), &run.outside());
//!     lab::note!("{}", doc["findings"]);
//! }
//! lab::rows! {
//!     run = run_case;
//!     type = Case;
//!     clean4 => Case { case: "clean4", share: lab::Share::Shared, needs: lab::prereq::LAB_SH },
//! }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod lock;
pub mod nfsend;
pub mod prereq;
pub mod quote8;
pub mod run;
pub mod sched;
pub mod scripts;
pub mod select;
pub mod tools;

pub use prereq::Req;
pub use run::{Netns, Script};
pub use sched::{Ctx, Lab, Row, Share};
pub use scripts::{CaseRun, QbssRun};
pub use tools::{Bins, TcpInfo, Tools};

/// For test crates that know a lab only by its script (`probe_lab.rs`, via
/// `tests/lab_support`): whether the lab `script` can run for the test
/// `what`. `false` when `LAB_SKIP` skips it (said past the test capture:
/// suite `suite`, or the running test's name); panics naming what is
/// missing when it cannot run; `true` otherwise.
pub fn ready(suite: &str, script: &str, what: &str) -> bool {
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main").unwrap_or(what);
    let name = format!("{suite}::{test}");
    if let Some(entry) = select::Skips::from_env().skips(suite, &name) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "lab {name}: skipped (LAB_SKIP has {entry})"
        );
        return false;
    }
    if let Err(missing) = prereq::check(prereq::for_script(script)) {
        panic!(
            "{what} ({script}) cannot run here; it needs:\n  - {}\nRun the labs as root with these (`cargo test -p lab -- --ignored`), or skip it by name: LAB_SKIP={suite}.",
            missing
        );
    }
    true
}
