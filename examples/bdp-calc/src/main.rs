//! `bdp-calc`: the TCP window calculator. See `bdp_calc`.
//!
//! Exit status: 0 done (also when standard output was closed early, as by
//! `| head`: the tool ends quietly, like `cat`); 1 runtime error (writing the
//! output failed otherwise); 2 usage error (clap's own, and every refusal of
//! the inputs).

use bdp_calc::{run, Args};
use clap::Parser;
use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    // clap prints its own usage errors and exits with status 2.
    let args = Args::parse();
    match run(&args) {
        Ok(out) => {
            let mut stdout = io::stdout().lock();
            let written = writeln!(stdout, "{}", out.trim_end()).and_then(|()| stdout.flush());
            match written {
                Ok(()) => ExitCode::SUCCESS,
                // The reader has gone (`| head`): nothing more to say.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("bdp-calc: error: writing the output: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Err(e) => {
            eprintln!("bdp-calc: error: {e}");
            ExitCode::from(2)
        }
    }
}
