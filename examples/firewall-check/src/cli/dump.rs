//! `firewall-check dump`: its command line, and the run that ties the
//! capture and the segments' text or JSON ([`crate::output::dump`])
//! together.

use std::io::{self, Write};
use std::path::PathBuf;

use super::live::{interrupted, LiveArgs, LiveSource};
use crate::output::dump::{dump, dump_source, DumpError, DumpFormat};
use crate::{Failure, Outcome};

/// Command-line arguments of `firewall-check dump`.
#[derive(Debug, Clone, clap::Args)]
pub struct DumpArgs {
    /// The capture file (pcap or pcapng); `-` reads standard input.
    #[arg(required_unless_present = "interface", conflicts_with = "interface")]
    pub capture: Option<PathBuf>,
    /// One JSON object per segment instead of text (with -i, an `end` line
    /// last).
    #[arg(long)]
    pub json: bool,
    /// Live capture instead of a file.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Bytes of output gathered before they are written.
const OUT_BUFFER: usize = 1 << 16;

/// Runs `dump` for the command line: output on stdout, warnings on stderr.
/// The error is the message to print; output already produced is kept.
pub fn run(args: &DumpArgs) -> Result<Outcome, Failure> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(OUT_BUFFER, stdout.lock());
    let stderr = io::stderr();
    let mut diag = stderr.lock();
    let format = if args.json {
        DumpFormat::Json
    } else {
        DumpFormat::Text
    };
    let (result, name) = match &args.capture {
        Some(path) if !args.live.is_live() => {
            args.live.check_file()?;
            let input = crate::open_capture(path)?;
            let result = dump(input, &mut out, &mut diag, format).map(|_| ());
            (result, path.display().to_string())
        }
        _ => {
            args.live.check(1)?;
            let mut source = LiveSource::open(&args.live, 0, interrupted())?;
            let mut result = dump_source(&mut source, &mut out, &mut diag, format).map(|_| ());
            let name = source.interface().to_string();
            let end = source.finish(result.is_err())?;
            // How the capture ended and what it lost: a JSON line last, or
            // on standard error beside the text (as tcpdump does).
            let written = if args.json {
                writeln!(out, "{}", end.end_line(None, None)).and_then(|()| out.flush())
            } else {
                writeln!(diag, "{}", end.text())
            };
            if let (Ok(()), Err(e)) = (&result, written) {
                result = Err(DumpError::Write(e));
            }
            (result, name)
        }
    };
    match result {
        Ok(()) => Ok(Outcome::Clean),
        Err(DumpError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(e) => Err(format!("{name}: {e}").into()),
    }
}
