//! The `qbss-router` command line: its own options (the devices, the ports, the
//! clock) around the ones it shares with `qbss-model` ([`crate::options`]), with
//! its own wording of their help and the file as `--scenario FILE`; and the run:
//! load the scenario, refuse what only the model can do, scale it, forward.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use clap::Parser;

use super::{run, Setup};
use crate::options::{ScaleArgs, ScenarioArgs};
use crate::scenario::Scenario;
use crate::sched::Hypotheses;

/// The tool's name, as its messages start.
const TOOL: &str = "qbss-router";

/// What it says when no scenario is named.
const NO_SCENARIO: &str = "give --scenario FILE or --preset NAME";

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
    after_help = EXIT_STATUS,
    mut_arg("scenario", |a| a
        .long("scenario")
        .value_name("FILE")
        .display_order(0)
        .help("Scenario file (TOML, as qbss-model reads)")),
    mut_arg("preset", |a| a.help("A built-in scenario instead of a file")),
    mut_arg("scale", |a| a.help("Divide every rate of the scenario by F (as qbss-model --scale)")),
)]
pub struct Args {
    /// The scenario: `--scenario FILE` or `--preset`. (As an option, the file
    /// comes first in `--help`: the others are shown from 1 on.)
    #[command(flatten, next_display_order = 1)]
    pub source: ScenarioArgs,
    /// TUN device to create on the senders' side (the lab moves it to their namespace).
    #[arg(long, value_name = "IF")]
    pub left: String,
    /// TUN device to create on the receivers' side.
    #[arg(long, value_name = "IF")]
    pub right: String,
    /// `--scale`: every rate divided by it.
    #[command(flatten)]
    pub scale: ScaleArgs,
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

/// Why the router does not forward a valid scenario.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsupported {
    /// A queue-0 hypothesis switch is on: a mechanism only the model has.
    #[error(
        "the queue-0 hypothesis switches (saturation_queue, queue0_outside_wrr, \
         ingress_fifo_packets) are modelled by qbss-model only"
    )]
    Hypotheses(Hypotheses),
}

/// What the router can forward of `sc`: everything but the model-only mechanisms.
pub fn check_supported(sc: &Scenario) -> Result<(), Unsupported> {
    let h = sc.scheduler.hypotheses;
    if h == Hypotheses::default() {
        Ok(())
    } else {
        Err(Unsupported::Hypotheses(h))
    }
}

/// Runs the router; returns the exit status ([`EXIT_STATUS`]).
pub fn main_with(args: Args, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let text = match args.source.read(NO_SCENARIO) {
        Ok(t) => t,
        Err(e) => return e.report(TOOL, stderr),
    };
    let sc = match text.parse() {
        Ok(sc) => sc,
        Err(e) => return e.report(TOOL, stderr),
    };
    if let Err(e) = check_supported(&sc) {
        let _ = writeln!(stderr, "{TOOL}: {}: {e}", text.origin);
        return 1;
    }
    let sc = match args.scale.apply(sc) {
        Ok(sc) => sc,
        Err(e) => return e.report(TOOL, stderr),
    };
    let setup = Setup {
        scenario: sc,
        scale: args.scale.factor(),
        left: args.left,
        right: args.right,
        port_base: args.port_base,
        epoch_unix_s: args.epoch,
        grace_s: args.grace,
    };
    let stats = match run(&setup, stdout) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(stderr, "{TOOL}: {e}");
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
            let _ = writeln!(stderr, "{TOOL}: {}: {e}", path.display());
            return 1;
        }
    }
    0
}

/// Runs `qbss-router` with the process's arguments and exits with its status;
/// the binary's whole `main`.
pub fn main() -> ! {
    crate::options::run_main(main_with)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_scenario_options_are_flags_here() {
        let args = Args::try_parse_from([
            "qbss-router",
            "--scenario",
            "s.toml",
            "--left",
            "a",
            "--right",
            "b",
            "--scale",
            "4",
        ])
        .unwrap();
        assert_eq!(args.source.scenario, Some(PathBuf::from("s.toml")));
        assert_eq!((args.source.preset, args.scale.scale), (None, Some(4.0)));
        // The file is not an argument of its own, as it is for qbss-model.
        let bare = Args::try_parse_from(["qbss-router", "s.toml", "--left", "a", "--right", "b"]);
        assert!(bare.is_err());
        let both = Args::try_parse_from([
            "qbss-router",
            "--scenario",
            "s.toml",
            "--preset",
            "transpac",
            "--left",
            "a",
            "--right",
            "b",
        ]);
        assert_eq!(
            both.unwrap_err().kind(),
            clap::error::ErrorKind::ArgumentConflict
        );
    }

    #[test]
    fn only_the_model_only_mechanisms_are_unsupported() {
        for p in crate::presets::PRESETS {
            let sc = Scenario::from_toml(p.toml).unwrap();
            assert_eq!(check_supported(&sc), Ok(()), "{}", p.name);
        }
        let mut sc = Scenario::from_toml(crate::presets::PRESETS[0].toml).unwrap();
        sc.scheduler.hypotheses.queue0_outside_wrr = true;
        let e = check_supported(&sc).unwrap_err();
        assert!(e.to_string().contains("queue0_outside_wrr"), "{e}");
    }
}
