//! The `qbss-model` command line.

use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;

use super::presets::{scenario_source, PRESETS};
use super::scenario::Scenario;
use super::{plot, report, sim};

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
    /// Scenario file (TOML; see examples/scenarios/).
    #[arg(conflicts_with = "preset")]
    pub scenario: Option<PathBuf>,
    /// Run a built-in scenario (see --list-presets).
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
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
    /// Divide every rate (link, VC, streams) by F, as the lab does to fit a small
    /// machine; the JSON report records "scale".
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Report, tabulate and plot the figures of FILE (a measured.json from
    /// examples/lab/qbss-lab.sh, run with the same --scale) instead of simulating.
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
}

/// Runs the tool; returns the exit status ([`EXIT_STATUS`]: 0 done, 1 runtime error,
/// 2 usage error). A closed standard output ends the report quietly with status 0.
pub fn main_with(args: Args, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    if args.list_presets {
        for p in PRESETS {
            let desc = Scenario::from_toml(p.toml)
                .map(|s| first_sentence(&s.description))
                .unwrap_or_default();
            let _ = writeln!(stdout, "{:<20} {desc}", p.name);
        }
        return 0;
    }
    let (origin, text) = match scenario_source(args.preset.as_deref(), args.scenario.as_deref()) {
        Ok(Some(source)) => source,
        Ok(None) => {
            let _ = writeln!(
                stderr,
                "qbss-model: give a scenario file or --preset NAME (--list-presets lists them)"
            );
            return 2;
        }
        Err(e) => {
            let _ = writeln!(stderr, "qbss-model: {e}");
            return e.exit_status();
        }
    };
    if args.show {
        let _ = stdout.write_all(text.as_bytes());
        return 0;
    }
    let sc = match Scenario::from_toml(&text) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(stderr, "qbss-model: {origin}: {e}");
            return 1;
        }
    };
    let sc = match args.scale.map(|f| sc.scaled(f)).transpose() {
        Ok(scaled) => scaled.unwrap_or(sc),
        Err(e) => {
            let _ = writeln!(stderr, "qbss-model: --scale: {e}");
            return 2;
        }
    };
    let res = if let Some(path) = &args.measured {
        let parsed = fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
            .and_then(|v| report::from_measured(&sc, &v));
        match parsed {
            Ok(r) => r,
            Err(e) => {
                let _ = writeln!(stderr, "qbss-model: {}: {e}", path.display());
                return 1;
            }
        }
    } else {
        let t0 = Instant::now();
        let res = match sim::run(&sc) {
            Ok(r) => r,
            Err(e) => {
                let _ = writeln!(stderr, "qbss-model: {origin}: {e}");
                return 1;
            }
        };
        let secs = t0.elapsed().as_secs_f64().max(1e-9);
        let _ = writeln!(
            stderr,
            "qbss-model: simulated {} s: {} packets, {} events in {:.3} s ({:.1} M packets/s, {:.1} M events/s)",
            sc.duration_s,
            res.packets,
            res.events,
            secs,
            res.packets as f64 / secs / 1e6,
            res.events as f64 / secs / 1e6,
        );
        res
    };
    let mut status = 0;
    let written = if args.json {
        let mut json = report::to_json(&sc, &res);
        json.scale = args.scale;
        serde_json::to_writer_pretty(&mut *stdout, &json)
            .map_err(io::Error::from)
            .and_then(|_| writeln!(stdout))
    } else {
        report::write_text(stdout, &sc, &res)
    };
    match written.and_then(|_| stdout.flush()) {
        // The reader went away (`| head`): not an error, as for `cat`.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            let _ = writeln!(stderr, "qbss-model: writing the report: {e}");
            status = 1;
        }
        Ok(()) => {}
    }
    if let Some(path) = &args.csv {
        let mut buf = Vec::new();
        let r = report::write_csv(&mut buf, &sc, &res).and_then(|_| fs::write(path, buf));
        if let Err(e) = r {
            let _ = writeln!(stderr, "qbss-model: {}: {e}", path.display());
            status = 1;
        }
    }
    if let Some(path) = &args.svg {
        let r = plot::svg(&sc, &res).and_then(|s| fs::write(path, s).map_err(|e| e.to_string()));
        if let Err(e) = r {
            let _ = writeln!(stderr, "qbss-model: {}: {e}", path.display());
            status = 1;
        }
    }
    status
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
    let args = Args::parse();
    let status = main_with(
        args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(status)
}
