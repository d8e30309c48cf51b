//! Rows, the scheduler that runs them, and what a row sees ([`Ctx`]).
//!
//! Each lab is a [`Row`]: a name (its test's), how it may share the machine
//! ([`Share`]), what it needs ([`Req`]), and the function that runs it. A
//! test crate lists its rows in one [`Lab`] and has one `#[test]` per row
//! (the [`rows!`](crate::rows) macro writes both from a case table), each
//! of which only asks the lab for its row's outcome.
//!
//! The first row asked for starts every row the command line selects (its
//! test filters, less `LAB_SKIP`), so the rows run as the scheduler sees
//! fit, not as libtest's threads happen to: [`Share::Exclusive`] rows first,
//! one at a time with nothing beside them; then [`Share::Background`] rows
//! all at once, and [`Share::Shared`] rows `LAB_JOBS` (default 4) at a
//! time beside them. A row asked for that was not started ahead (a filter
//! this module did not understand) is queued then: an exclusive one waits
//! for the running rows to end and holds back the ones queued after it.
//!
//! A row runs in a thread of its own, in a fresh directory under
//! `$TMPDIR/tcp-perf-lab-<pid>/`, removed when it passes (kept when it
//! fails, or with `LAB_KEEP=1`, and said where: a later lab process's sweep
//! leaves a directory with a failure in it alone). Its notes ([`note!`](crate::note))
//! and its panic (message and place) are handed to its test, which prints
//! the notes and fails with the message: each test's output is its own row's.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, Once, OnceLock};
use std::time::{Duration, Instant};

use crate::lock::MachineLock;
use crate::prereq::{self, Req};
use crate::select::{suite, test_name, Skips, TestFilter};
use crate::tools::{Bins, Tools};

/// How a row may share the machine with other rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// It measures time (throughput, RTT, the kernel's chrono counters):
    /// no other row runs beside it, in this process or (through the machine
    /// lock) in another lab process.
    Exclusive,
    /// It checks what a rule or a tool did, whatever the timing: beside
    /// other shared and background rows, `LAB_JOBS` at a time.
    Shared,
    /// Long-lived, timed by its own clock and tolerant of load (the QBSS
    /// presets: their traffic at real-time priority, checked to 5% of the
    /// link per second): all at once, beside shared rows, never beside an
    /// exclusive one.
    Background,
}

impl Share {
    fn index(self) -> usize {
        match self {
            Share::Exclusive => 0,
            Share::Shared => 1,
            Share::Background => 2,
        }
    }
}

/// One lab: a row of a case table.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// `module_path!()` and the test function's name (the test crate's name
    /// first, which [`Row::name`] leaves out).
    pub path: &'static str,
    /// How it may share the machine.
    pub share: Share,
    /// What it needs; checked before it runs.
    pub needs: &'static [Req],
    /// Runs it (panics to fail).
    pub run: fn(&Ctx),
}

impl Row {
    /// Its test's name as libtest prints it: `SUITE::CASE`.
    pub fn name(&self) -> &'static str {
        test_name(self.path)
    }
}

/// What a row sees: its name, its directory, the tools.
#[derive(Debug)]
pub struct Ctx {
    row: &'static Row,
    dir: PathBuf,
    tools: Tools,
}

impl Ctx {
    /// The row's name.
    pub fn name(&self) -> &'static str {
        self.row.name()
    }

    /// The row's directory (fresh, removed after it passes).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tools under test.
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// A new directory `TAG` (`TAG-2`, ... when taken) in the row's.
    pub fn fresh_dir(&self, tag: &str) -> PathBuf {
        for n in 1.. {
            let d = if n == 1 {
                self.dir.join(tag)
            } else {
                self.dir.join(format!("{tag}-{n}"))
            };
            if std::fs::create_dir(&d).is_ok() {
                return d;
            }
            assert!(
                self.dir.is_dir(),
                "{}: row directory gone",
                self.dir.display()
            );
        }
        unreachable!()
    }
}

thread_local! {
    static IN_ROW: Cell<bool> = const { Cell::new(false) };
    static NOTES: RefCell<String> = const { RefCell::new(String::new()) };
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Adds a line to the running row's notes (printed by its test), or prints
/// it outside a row. [`note!`](crate::note) formats and calls this.
pub fn add_note(line: String) {
    if IN_ROW.with(Cell::get) {
        NOTES.with(|n| {
            let mut n = n.borrow_mut();
            n.push_str(&line);
            n.push('\n');
        });
    } else {
        eprintln!("{line}");
    }
}

/// A line for the running row's notes: what it measured, what it ran.
#[macro_export]
macro_rules! note {
    ($($t:tt)*) => {
        $crate::sched::add_note(format!($($t)*))
    };
}

/// Prints straight to the process's standard error, past libtest's capture:
/// for what must be seen (a skipped lab).
fn visible(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Panics in row threads are recorded (place, message, backtrace when
/// asked for) for the row's test instead of printed from the wrong thread.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_ROW.with(Cell::get) {
                return prev(info);
            }
            let place = info.location().map_or_else(String::new, |l| {
                format!(" at {}:{}:{}", l.file(), l.line(), l.column())
            });
            let payload = info.payload();
            let msg = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)");
            let bt = std::backtrace::Backtrace::capture();
            let bt = if bt.status() == std::backtrace::BacktraceStatus::Captured {
                format!("\n{bt}")
            } else {
                String::new()
            };
            PANIC.with(|p| *p.borrow_mut() = Some(format!("panicked{place}:\n{msg}{bt}")));
        }));
    });
}

enum Status {
    Idle,
    Queued,
    Running,
    Done(Outcome),
}

#[derive(Clone)]
struct Outcome {
    failure: Option<String>,
    notes: String,
}

struct State {
    pending: VecDeque<usize>,
    status: Vec<Status>,
    running: [usize; 3],
}

struct Inner {
    rows: Vec<&'static Row>,
    state: Mutex<State>,
    done: Condvar,
    root: PathBuf,
    skips: Skips,
    jobs: usize,
    keep: bool,
}

/// The rows of a test crate and their scheduler. One `static` per test
/// crate; its tests call [`Lab::run`].
pub struct Lab {
    bins: Bins,
    tables: &'static [&'static [Row]],
    inner: OnceLock<Inner>,
}

impl Lab {
    /// The lab of `tables` (each a [`rows!`](crate::rows) table), running
    /// the tools of `bins` ([`bins!`](crate::bins)).
    pub const fn new(bins: Bins, tables: &'static [&'static [Row]]) -> Lab {
        Lab {
            bins,
            tables,
            inner: OnceLock::new(),
        }
    }

    /// Every row.
    pub fn rows(&self) -> impl Iterator<Item = &'static Row> + '_ {
        self.tables.iter().flat_map(|t| t.iter())
    }

    fn inner(&'static self) -> &'static Inner {
        self.inner.get_or_init(|| {
            install_panic_hook();
            crate::run::sweep_stale();
            let rows: Vec<&'static Row> = self.rows().collect();
            let skips = Skips::from_env();
            let mut state = State {
                pending: VecDeque::new(),
                status: rows.iter().map(|_| Status::Idle).collect(),
                running: [0; 3],
            };
            // Start what the command line selects: the rows that measure
            // time first, alone; then the long-lived ones with the rest.
            if let Some(filter) = TestFilter::from_args(std::env::args().skip(1)) {
                for share in [Share::Exclusive, Share::Background, Share::Shared] {
                    for (i, r) in rows.iter().enumerate() {
                        if r.share == share
                            && filter.selects(r.name())
                            && skips.skips(suite(r.name()), r.name()).is_none()
                        {
                            state.status[i] = Status::Queued;
                            state.pending.push_back(i);
                        }
                    }
                }
            }
            let jobs = std::env::var("LAB_JOBS")
                .ok()
                .and_then(|j| j.parse().ok())
                .filter(|&j| j > 0)
                .unwrap_or(4);
            Inner {
                rows,
                state: Mutex::new(state),
                done: Condvar::new(),
                root: std::env::temp_dir().join(format!("tcp-perf-lab-{}", std::process::id())),
                skips,
                jobs,
                keep: std::env::var("LAB_KEEP").is_ok_and(|v| !v.is_empty() && v != "0"),
            }
        })
    }

    /// Runs the row `name` (`SUITE::CASE`), or waits for it if it was
    /// started ahead; prints its notes and fails as it failed. A row
    /// skipped by `LAB_SKIP` passes at once, saying so past the capture.
    pub fn run(&'static self, name: &str) {
        let inner = self.inner();
        let idx = inner
            .rows
            .iter()
            .position(|r| r.name() == name)
            .unwrap_or_else(|| panic!("no lab row {name}"));
        if let Some(entry) = inner.skips.skips(suite(name), name) {
            visible(&format!("lab {name}: skipped (LAB_SKIP has {entry})"));
            return;
        }
        let mut st = lock(&inner.state);
        if matches!(st.status[idx], Status::Idle) {
            st.status[idx] = Status::Queued;
            st.pending.push_back(idx);
        }
        self.dispatch(inner, &mut st);
        let outcome = loop {
            if let Status::Done(o) = &st.status[idx] {
                break o.clone();
            }
            st = inner.done.wait(st).unwrap_or_else(|e| e.into_inner());
        };
        drop(st);
        eprint!("{}", outcome.notes);
        if let Some(f) = outcome.failure {
            panic!("{f}");
        }
    }

    /// Starts the pending rows the rules allow now.
    fn dispatch(&'static self, inner: &'static Inner, st: &mut State) {
        // An exclusive row waiting holds back every row queued after it.
        let mut barrier = false;
        let mut i = 0;
        while i < st.pending.len() {
            let idx = st.pending[i];
            let share = inner.rows[idx].share;
            let start = !barrier && may_start(share, st.running, inner.jobs);
            if share == Share::Exclusive {
                barrier = true;
            }
            if !start {
                i += 1;
                continue;
            }
            st.pending.remove(i);
            st.status[idx] = Status::Running;
            st.running[share.index()] += 1;
            let row = inner.rows[idx];
            std::thread::Builder::new()
                .name(format!("lab {}", row.name()))
                .spawn(move || {
                    // execute catches the row's panics; one of its own must
                    // still end the wait of the row's test.
                    let outcome = catch_unwind(AssertUnwindSafe(|| self.execute(inner, row)))
                        .unwrap_or_else(|_| Outcome {
                            failure: Some(format!("lab {}: the harness panicked", row.name())),
                            notes: String::new(),
                        });
                    let mut st = lock(&inner.state);
                    st.status[idx] = Status::Done(outcome);
                    st.running[share.index()] -= 1;
                    self.dispatch(inner, &mut st);
                    inner.done.notify_all();
                })
                .expect("start a lab thread");
        }
    }

    /// Runs one row in this thread: requirements, machine lock, directory,
    /// the row, its outcome.
    fn execute(&'static self, inner: &Inner, row: &'static Row) -> Outcome {
        IN_ROW.with(|f| f.set(true));
        NOTES.with(|n| n.borrow_mut().clear());
        PANIC.with(|p| p.borrow_mut().take());
        let name = row.name();
        let dir = inner.root.join(name.replace("::", "."));
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| {
            if let Err(missing) = prereq::check(row.needs) {
                panic!(
                    "lab {name} cannot run here; it needs:\n  - {}\nRun the labs as root with these (`cargo test -p lab -- --ignored`), or skip this lab by name: LAB_SKIP={name} (or its suite: LAB_SKIP={}).",
                    missing,
                    suite(name)
                );
            }
            let asked = Instant::now();
            let _lock = match row.share {
                Share::Exclusive => Some(MachineLock::exclusive()),
                Share::Shared => Some(MachineLock::shared()),
                Share::Background => None,
            };
            if asked.elapsed() > Duration::from_secs(1) {
                crate::note!(
                    "waited {:.1} s for the machine lock ({}): another lab process",
                    asked.elapsed().as_secs_f64(),
                    crate::lock::path().display()
                );
            }
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("the row's directory");
            let ctx = Ctx {
                row,
                dir: dir.clone(),
                tools: Tools::new(self.bins),
            };
            (row.run)(&ctx);
        }));
        let secs = start.elapsed().as_secs_f64();
        let failure = result.err().map(|payload| {
            let text = PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| {
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "(no message)".into())
            });
            let files = if dir.exists() {
                format!("\n(its files are kept in {})", dir.display())
            } else {
                String::new()
            };
            format!("lab {name} failed after {secs:.1} s: {text}{files}")
        });
        if failure.is_some() || inner.keep {
            let _ = std::fs::write(
                inner.root.join(crate::run::KEPT),
                "kept: a lab failed here, or LAB_KEEP was set; remove by hand\n",
            );
            if failure.is_none() {
                crate::note!("its files are kept in {} (LAB_KEEP)", dir.display());
            }
        } else {
            let _ = std::fs::remove_dir_all(&dir);
            let _ = std::fs::remove_dir(&inner.root);
        }
        let notes = NOTES.with(|n| std::mem::take(&mut *n.borrow_mut()));
        IN_ROW.with(|f| f.set(false));
        Outcome {
            notes: format!(
                "lab {name} ({:?}): {} in {secs:.1} s\n{notes}",
                row.share,
                if failure.is_some() { "FAILED" } else { "ok" }
            ),
            failure,
        }
    }
}

/// Whether a row of `share` may start beside the rows running
/// (`[exclusive, shared, background]`), `jobs` shared at most.
fn may_start(share: Share, running: [usize; 3], jobs: usize) -> bool {
    let [ex, sh, bg] = running;
    ex == 0
        && match share {
            Share::Exclusive => sh == 0 && bg == 0,
            Share::Shared => sh < jobs,
            Share::Background => true,
        }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The rows of one case table and their tests.
///
/// ```text
/// lab::rows! {
///     lab = crate::LABS;         // the test crate's `static LABS: lab::Lab`
///     run = run_case;            // fn(&lab::Ctx, &CaseType)
///     type = CaseType;           // has `share: Share` and `needs: &[Req]`
///     /// A row's doc.
///     clean4 => CaseType { case: "clean4", ..BASE },
///     ...
/// }
/// ```
///
/// writes `pub const CASES: &[(&str, CaseType)]` (the table, by test name),
/// `pub const ROWS: &[lab::Row]` (for the crate's [`Lab`]), and one
/// `#[test] #[ignore]` function per row calling `LABS.run(...)`, where
/// `LABS` is the test crate's `static` [`Lab`] listing every module's
/// `ROWS`.
#[macro_export]
macro_rules! rows {
    (
        lab = $lab:path;
        run = $runner:path;
        type = $ty:ty;
        $( $(#[$m:meta])* $name:ident => $case:expr, )*
    ) => {
        /// The case table: each row's test name and its case.
        pub const CASES: &[(&str, $ty)] = &[ $( (stringify!($name), $case), )* ];

        /// The rows of this table, for the test crate's `LABS`.
        pub const ROWS: &[$crate::Row] = &[ $(
            $crate::Row {
                path: concat!(module_path!(), "::", stringify!($name)),
                share: { const C: $ty = $case; C.share },
                needs: { const C: $ty = $case; C.needs },
                run: |ctx| {
                    const C: $ty = $case;
                    $runner(ctx, &C)
                },
            },
        )* ];

        $(
            $(#[$m])*
            #[test]
            #[ignore = "network lab (root): cargo test -p lab -- --ignored"]
            fn $name() {
                $lab.run($crate::select::test_name(concat!(
                    module_path!(),
                    "::",
                    stringify!($name)
                )));
            }
        )*
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exclusive_row_runs_alone() {
        use Share::*;
        assert!(may_start(Exclusive, [0, 0, 0], 4));
        assert!(!may_start(Exclusive, [0, 1, 0], 4));
        assert!(!may_start(Exclusive, [0, 0, 1], 4));
        assert!(!may_start(Exclusive, [1, 0, 0], 4));
        for other in [Shared, Background] {
            assert!(!may_start(other, [1, 0, 0], 4));
        }
    }

    #[test]
    fn shared_rows_are_limited_background_rows_are_not() {
        use Share::*;
        assert!(may_start(Shared, [0, 3, 10], 4));
        assert!(!may_start(Shared, [0, 4, 0], 4));
        assert!(may_start(Background, [0, 4, 10], 4));
    }
}
