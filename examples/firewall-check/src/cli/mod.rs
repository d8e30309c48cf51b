//! The command line of `firewall-check`: find what a middlebox does to TCP,
//! from packet captures and by probing.
//!
//! Subcommands (each one's arguments and run in `cli::<name>`; `probe`
//! and `reflect` beside their analysis):
//! - `dump CAPTURE [--json]`: every TCP segment, options included.
//! - `analyze CAPTURE [--json] [--rtt T] [--target-rate R] [--assume-wscale S]`:
//!   per connection, the negotiation, the window ceiling and the verdict.
//! - `compare CAPTURE_A CAPTURE_B [--json] [--rtt T]`: captures from the two
//!   sides of a middlebox, and every field it changed.
//! - `dump`, `analyze` and `compare` read live traffic with `-i IFACE`
//!   (twice for `compare`) instead of files: [`live`].
//! - `probe TARGET:PORT [--reflector HOST:PORT] [--json]`: active hop-by-hop
//!   tests of the path; `reflect [--listen ADDR:PORT]` is its far end.
//! - `series CAPTURE [--connection N] [--csv FILE] [--svg FILE]`: each
//!   connection's sequence, ACK and window edges, flight, throughput and
//!   limit over time (CSV), or one connection's plot (SVG).
//! - `rewrite CAPTURE OUT [--tcpmss N | --clamp-mss-to-pmtu MTU]
//!   [--strip-options LIST]`: netfilter's TCPMSS and TCPOPTSTRIP applied to
//!   a capture, written as pcap.
//!
//! Exit status: see [`EXIT_STATUS`].

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod analyze;
pub mod compare;
pub mod dump;
pub mod live;
pub mod rewrite;
pub mod series;

use crate::analysis::probe;
use crate::{Failure, Outcome};

/// The exit statuses, as `--help` prints them.
pub const EXIT_STATUS: &str = "\
Exit status:
  0  done, nothing found
  1  runtime error (a capture that cannot be read to its end, I/O); what was
     read is still reported
  2  usage error
  3  done with findings: compare found tampering; analyze found a broken
     negotiation, a SYN Linux drops or a window-limited transfer; probe found
     a hop that changes or drops its probes

A capture argument of `-` reads standard input. A closed standard output
(`| head`) ends the tool quietly with status 0.";

#[derive(Parser)]
#[command(
    name = "firewall-check",
    version,
    about = "Find what a middlebox does to TCP, from packet captures",
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print every TCP segment of a capture (tcpdump-like text, or JSON lines).
    #[command(
        after_help = EXIT_STATUS,
        override_usage = "firewall-check dump [OPTIONS] <CAPTURE>\n       firewall-check dump [OPTIONS] -i <IFACE> [-f <BPF>] [--count <N>] [--duration <T>] [-w <FILE>]"
    )]
    Dump(dump::DumpArgs),
    /// Per connection: negotiation, window ceiling, achieved throughput, verdict.
    #[command(
        after_help = EXIT_STATUS,
        override_usage = "firewall-check analyze [OPTIONS] <CAPTURE>\n       firewall-check analyze [OPTIONS] -i <IFACE> [-f <BPF>] [--count <N>] [--duration <T>] [-w <FILE>]"
    )]
    Analyze(analyze::AnalyzeArgs),
    /// Two captures from the two sides of a middlebox: what it changed, what it costs.
    #[command(
        after_help = EXIT_STATUS,
        override_usage = "firewall-check compare [OPTIONS] <CAPTURE_A> <CAPTURE_B>\n       firewall-check compare [OPTIONS] -i <IFACE_A> -i <IFACE_B> [-f <BPF>] [--count <N>] [--duration <T>] [-w <FILE_A> -w <FILE_B>]"
    )]
    Compare(compare::CompareArgs),
    /// Apply netfilter's TCPMSS / TCPOPTSTRIP to a capture, byte for byte as the kernel would.
    #[command(after_help = EXIT_STATUS)]
    Rewrite(rewrite::RewriteArgs),
    /// Test the path to a TCP server actively, hop by hop: what each hop changes or drops.
    #[command(after_help = EXIT_STATUS)]
    Probe(probe::ProbeArgs),
    /// The far end of `probe --reflector`: capture the probes, send crafted SYN-ACKs back.
    #[command(after_help = EXIT_STATUS)]
    Reflect(probe::reflect::ReflectArgs),
    /// Over time, per connection and direction: sequence, ACK and window edges, flight, throughput, limit (CSV), or a plot (SVG).
    #[command(after_help = EXIT_STATUS)]
    Series(series::SeriesArgs),
}

/// Why `--rtt` was refused (`analyze`, `series`).
#[derive(Debug, thiserror::Error)]
pub enum RttError {
    /// Not a duration.
    #[error(transparent)]
    Parse(#[from] bdp::ParseError),
    /// A duration of zero.
    #[error("the RTT must be above zero")]
    Zero,
}

/// `--rtt` of `analyze` and `series`: a duration above zero (e.g. `10ms`).
pub fn parse_rtt(s: &str) -> Result<std::time::Duration, RttError> {
    let d = bdp::parse_duration(s)?;
    if d.is_zero() {
        return Err(RttError::Zero);
    }
    Ok(d)
}

/// `--max-connections 0`: a tracker must hold at least one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("--max-connections must be at least 1")]
pub struct NoConnections;

/// Runs `firewall-check` with the process's arguments; the binary's whole `main`.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors; clap exits 2 on usage errors.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result: Result<Outcome, Failure> = match cli.command {
        Command::Dump(args) => dump::run(&args),
        Command::Analyze(args) => analyze::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Rewrite(args) => rewrite::run(&args),
        Command::Probe(args) => probe::run(&args),
        Command::Reflect(args) => probe::reflect::run(&args),
        Command::Series(args) => series::run(&args),
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Findings) => ExitCode::from(3),
        Err(f) => {
            eprintln!("firewall-check: {f}");
            ExitCode::from(f.exit_status())
        }
    }
}
