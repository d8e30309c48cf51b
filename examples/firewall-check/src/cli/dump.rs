//! `firewall-check dump`: its command line, and the run that ties the
//! capture and the segments' text or JSON ([`crate::output::dump`])
//! together.

use std::io;
use std::path::PathBuf;

use crate::output::dump::{dump, DumpError, DumpFormat};
use crate::{Failure, Outcome};

/// Command-line arguments of `firewall-check dump`.
#[derive(Debug, Clone, clap::Args)]
pub struct DumpArgs {
    /// The capture file (pcap or pcapng); `-` reads standard input.
    pub capture: PathBuf,
    /// One JSON object per segment instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Bytes of output gathered before they are written.
const OUT_BUFFER: usize = 1 << 16;

/// Runs `dump` for the command line: output on stdout, warnings on stderr.
/// The error is the message to print; output already produced is kept.
pub fn run(args: &DumpArgs) -> Result<Outcome, Failure> {
    let input = crate::open_capture(&args.capture)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(OUT_BUFFER, stdout.lock());
    let stderr = io::stderr();
    let mut diag = stderr.lock();
    let format = if args.json {
        DumpFormat::Json
    } else {
        DumpFormat::Text
    };
    match dump(input, &mut out, &mut diag, format) {
        Ok(_) => Ok(Outcome::Clean),
        Err(DumpError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(e) => Err(format!("{}: {e}", args.capture.display()).into()),
    }
}
