//! The `qbss-router` command line.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use clap::Parser;

use super::super::presets::scenario_source;
use super::super::scenario::Scenario;
use super::{run, Setup};

/// The exit statuses, as `--help` shows them.
pub const EXIT_STATUS: &str = "Exit status:
  0  done: forwarded until the scenario's end
  1  runtime error: unreadable or invalid scenario, a device that cannot be opened,
     a failed read or write
  2  usage error: bad options, an unknown preset, a bad --scale";

/// Forward real packets between two TUN devices through a scenario's classifier, WRR
/// scheduler, VC and paced link (the qbss-model scenario in a real dataplane).
#[derive(Debug, Parser)]
#[command(
    name = "qbss-router",
    version,
    about = "Forward real packets between two TUN devices through a QBSS scenario's classifier, WRR scheduler, VC and paced link",
    after_help = EXIT_STATUS
)]
pub struct Args {
    /// Scenario file (TOML, as qbss-model reads).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    pub scenario: Option<PathBuf>,
    /// A built-in scenario instead of a file.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// TUN device to create on the senders' side (the lab moves it to their namespace).
    #[arg(long, value_name = "IF")]
    pub left: String,
    /// TUN device to create on the receivers' side.
    #[arg(long, value_name = "IF")]
    pub right: String,
    /// Divide every rate of the scenario by F (as qbss-model --scale).
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Write the per-second, per-stream and per-queue figures as JSON to FILE at the end.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Stream k of the scenario (from 0) is the traffic to port PORT_BASE + k.
    #[arg(long, value_name = "PORT", default_value_t = 5201)]
    pub port_base: u16,
    /// Unix time (seconds) of the scenario's second 0; default: when the devices are open.
    #[arg(long, value_name = "UNIX_S")]
    pub epoch: Option<f64>,
    /// Seconds to go on forwarding after the scenario's end.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub grace: f64,
}

/// Runs the router; returns the exit status ([`EXIT_STATUS`]).
pub fn main_with(args: Args, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let (origin, text) = match scenario_source(args.preset.as_deref(), args.scenario.as_deref()) {
        Ok(Some(source)) => source,
        Ok(None) => {
            let _ = writeln!(stderr, "qbss-router: give --scenario FILE or --preset NAME");
            return 2;
        }
        Err(e) => {
            let _ = writeln!(stderr, "qbss-router: {e}");
            return e.exit_status();
        }
    };
    let sc = match Scenario::from_toml(&text) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(stderr, "qbss-router: {origin}: {e}");
            return 1;
        }
    };
    if sc.scheduler.hypotheses != super::super::sched::Hypotheses::default() {
        let _ = writeln!(
            stderr,
            "qbss-router: {origin}: the queue-0 hypothesis switches (saturation_queue, \
             queue0_outside_wrr, ingress_fifo_packets) are modelled by qbss-model only"
        );
        return 1;
    }
    let scale = args.scale.unwrap_or(1.0);
    let sc = match sc.scaled(scale) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(stderr, "qbss-router: --scale: {e}");
            return 2;
        }
    };
    let setup = Setup {
        scenario: sc,
        scale,
        left: args.left,
        right: args.right,
        port_base: args.port_base,
        epoch_unix_s: args.epoch,
        grace_s: args.grace,
    };
    let stats = match run(&setup, stdout) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(stderr, "qbss-router: {e}");
            return 1;
        }
    };
    for q in &stats.queues {
        let _ = writeln!(
            stdout,
            "[  Q] queue {}: sent {} packets, refused {}, policed {}, peak backlog {}",
            q.name,
            q.dequeued_packets,
            q.refused_packets,
            q.policed_packets,
            q.peak_backlog_packets
        );
    }
    let _ = writeln!(
        stdout,
        "[  D] {} packets matched no stream; {} refused by a device on write",
        stats.other_packets, stats.device_write_drops
    );
    if let Some(path) = &args.stats_json {
        let r = serde_json::to_string_pretty(&stats)
            .map_err(std::io::Error::from)
            .and_then(|s| fs::write(path, s + "\n"));
        if let Err(e) = r {
            let _ = writeln!(stderr, "qbss-router: {}: {e}", path.display());
            return 1;
        }
    }
    0
}

/// Runs `qbss-router` with the process's arguments and exits with its status;
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
