//! `bdp-calc`: the TCP window calculator. See `examples::bdp_calc`.

use clap::Parser;
use examples::bdp_calc::{run, Args};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // clap prints its own usage errors and exits with status 2.
    let args = Args::parse();
    match run(&args) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            if writeln!(stdout, "{}", out.trim_end()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bdp-calc: error: {e}");
            ExitCode::from(2)
        }
    }
}
