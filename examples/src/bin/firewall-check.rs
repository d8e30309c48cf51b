//! `firewall-check`: find what a middlebox does to TCP, from packet captures.
//!
//! Subcommands (each implemented in `examples::firewall::<name>`):
//! - `dump CAPTURE [--json]`: every TCP segment, options included.
//! - `analyze CAPTURE [--json] [--rtt T] [--target-rate R] [--assume-wscale S]`:
//!   per connection, the negotiation, the window ceiling and the verdict.
//! - `compare CAPTURE_A CAPTURE_B [--json] [--rtt T]`: captures from the two
//!   sides of a middlebox, and every field it changed.
//!
//! Exit status: 0 on success, 1 when the capture cannot be (fully) read or
//! output fails (what was read is still printed), 2 on a usage error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use examples::firewall::{analyze, compare, dump};

#[derive(Parser)]
#[command(
    name = "firewall-check",
    version,
    about = "Find what a middlebox does to TCP, from packet captures"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print every TCP segment of a capture (tcpdump-like text, or JSON lines).
    Dump(dump::DumpArgs),
    /// Per connection: negotiation, window ceiling, achieved throughput, verdict.
    Analyze(analyze::AnalyzeArgs),
    /// Two captures from the two sides of a middlebox: what it changed, what it costs.
    Compare(compare::CompareArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dump(args) => dump::run(&args),
        Command::Analyze(args) => analyze::run(&args),
        Command::Compare(args) => compare::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("firewall-check: {message}");
            ExitCode::FAILURE
        }
    }
}
