//! The `qbss-model` command line: its own options around the ones it shares with
//! `qbss-router` ([`crate::options`]), and what it does with them: list the
//! presets, show a scenario's text, or load it, simulate it (or read a lab run's
//! figures), and write the report, the CSV table and the plot.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;

use crate::options::{ScaleArgs, ScenarioArgs};
use crate::presets::PRESETS;
use crate::scenario::Scenario;
use crate::sim::RunResult;
use crate::{measured, plot, report, sim};

/// The tool's name, as its messages start.
const TOOL: &str = "qbss-model";

/// What it says when no scenario is named.
const NO_SCENARIO: &str = "give a scenario file or --preset NAME (--list-presets lists them)";

/// The exit statuses, as `--help` shows them.
pub const EXIT_STATUS: &str = "Exit status:
  0  done (also when standard output is closed early, as by `| head`)
  1  runtime error: a scenario file that cannot be read or is not a valid scenario,
     a failed run, an output that cannot be written
  2  usage error: bad options, an unknown preset, no scenario given";

/// Simulate a link with a DS-field classifier and a WRR profile (the TransPAC QBSS test bench).
#[derive(Debug, Parser)]
#[command(
    name = "qbss-model",
    version,
    about = "Simulate a scavenger-service (QBSS) deployment: a DS-field classifier and a weighted-round-robin profile on a link, packet by packet",
    after_help = EXIT_STATUS
)]
pub struct Args {
    /// The scenario: a file, or `--preset`.
    #[command(flatten)]
    pub source: ScenarioArgs,
    /// List the built-in scenarios and exit.
    #[arg(long)]
    pub list_presets: bool,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Also write the per-second figures as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also plot throughput against time as SVG to FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Print the scenario's TOML text and exit.
    #[arg(long)]
    pub show: bool,
    /// `--scale`: every rate divided by it.
    #[command(flatten)]
    pub scale: ScaleArgs,
    /// Report, tabulate and plot the figures of FILE (a measured.json from
    /// examples/lab/qbss-lab.sh, run with the same --scale) instead of simulating.
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
}

/// Runs the tool; returns the exit status ([`EXIT_STATUS`]: 0 done, 1 runtime error,
/// 2 usage error). A closed standard output ends the report quietly with status 0.
pub fn main_with(args: Args, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    if args.list_presets {
        list_presets(stdout);
        return 0;
    }
    let text = match args.source.read(NO_SCENARIO) {
        Ok(t) => t,
        Err(e) => return e.report(TOOL, stderr),
    };
    if args.show {
        let _ = stdout.write_all(text.text.as_bytes());
        return 0;
    }
    let sc = match text.parse().and_then(|sc| args.scale.apply(sc)) {
        Ok(sc) => sc,
        Err(e) => return e.report(TOOL, stderr),
    };
    let res = match figures(&args, &sc, &text.origin, stderr) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(stderr, "{TOOL}: {e}");
            return 1;
        }
    };
    let mut status = write_report(&args, &sc, &res, stdout, stderr);
    if let Some(path) = &args.csv {
        let mut buf = Vec::new();
        let written = report::write_csv(&mut buf, &sc, &res).and_then(|_| fs::write(path, buf));
        status = status.max(file_status(path, written, stderr));
    }
    if let Some(path) = &args.svg {
        let written = plot::svg(&sc, &res)
            .map_err(FileError::from)
            .and_then(|s| Ok(fs::write(path, s)?));
        status = status.max(file_status(path, written, stderr));
    }
    status
}

/// Why there are no figures to report.
#[derive(Debug, thiserror::Error)]
enum FiguresError {
    /// `--measured FILE` could not be read as a run of the scenario.
    #[error("{}: {error}", path.display())]
    Measured {
        /// The file.
        path: PathBuf,
        /// Why.
        error: measured::MeasuredError,
    },
    /// The simulation of the scenario from `origin` failed.
    #[error("{origin}: {error}")]
    Simulation {
        /// Where the scenario came from.
        origin: String,
        /// Why.
        error: sim::SimError,
    },
}

/// Why the plot could not be written to its file.
#[derive(Debug, thiserror::Error)]
enum FileError {
    /// It could not be drawn.
    #[error("{0}")]
    Plot(#[from] plot::PlotError),
    /// It could not be written.
    #[error("{0}")]
    Write(#[from] io::Error),
}

/// The figures to report: the file of `--measured`, or a simulation of `sc`
/// (from `origin`).
fn figures(
    args: &Args,
    sc: &Scenario,
    origin: &str,
    stderr: &mut dyn Write,
) -> Result<RunResult, FiguresError> {
    match &args.measured {
        Some(path) => measured::read(sc, path).map_err(|error| FiguresError::Measured {
            path: path.clone(),
            error,
        }),
        None => simulate(sc, stderr).map_err(|error| FiguresError::Simulation {
            origin: origin.to_string(),
            error,
        }),
    }
}

/// `--list-presets`: each preset's name and the first sentence of its description.
fn list_presets(stdout: &mut dyn Write) {
    for p in PRESETS {
        let desc = Scenario::from_toml(p.toml)
            .map(|s| first_sentence(&s.description))
            .unwrap_or_default();
        let _ = writeln!(stdout, "{:<20} {desc}", p.name);
    }
}

/// Runs the simulation, and says on `stderr` how long it took.
fn simulate(sc: &Scenario, stderr: &mut dyn Write) -> Result<RunResult, sim::SimError> {
    let t0 = Instant::now();
    let res = sim::run(sc)?;
    let secs = t0.elapsed().as_secs_f64().max(1e-9);
    let _ = writeln!(
        stderr,
        "{TOOL}: simulated {} s: {} packets, {} events in {:.3} s ({:.1} M packets/s, {:.1} M events/s)",
        sc.duration_s,
        res.packets,
        res.events,
        secs,
        res.packets as f64 / secs / 1e6,
        res.events as f64 / secs / 1e6,
    );
    Ok(res)
}

/// Writes the text report or the JSON object to `stdout`; returns the exit status.
fn write_report(
    args: &Args,
    sc: &Scenario,
    res: &RunResult,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let written = if args.json {
        let mut json = report::to_json(sc, res);
        json.scale = args.scale.scale;
        serde_json::to_writer_pretty(&mut *stdout, &json)
            .map_err(io::Error::from)
            .and_then(|_| writeln!(stdout))
    } else {
        report::write_text(stdout, sc, res)
    };
    match written.and_then(|_| stdout.flush()) {
        // The reader went away (`| head`): not an error, as for `cat`.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            let _ = writeln!(stderr, "{TOOL}: writing the report: {e}");
            1
        }
        Ok(()) => 0,
    }
}

/// The exit status of writing the file at `path`, the error said on `stderr`.
fn file_status<E: std::fmt::Display>(
    path: &Path,
    written: Result<(), E>,
    stderr: &mut dyn Write,
) -> i32 {
    match written {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(stderr, "{TOOL}: {}: {e}", path.display());
            1
        }
    }
}

/// The description's first sentence, on one line.
fn first_sentence(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.find(". ") {
        Some(i) => flat[..=i].to_string(),
        None => flat,
    }
}

/// Runs `qbss-model` with the process's arguments and exits with its status;
/// the binary's whole `main`.
pub fn main() -> ! {
    crate::options::run_main(main_with)
}
