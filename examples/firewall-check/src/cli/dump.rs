//! `firewall-check dump`: its command line, and the run that ties the
//! capture and the segments' text or JSON ([`crate::output::dump`])
//! together.

use std::io::{self, Write};
use std::path::PathBuf;

use super::live::{interrupted, LiveArgs, LiveFailure, LiveSource};
use crate::output::dump::{dump, dump_source, DumpError, DumpFormat, Dumper, Summary};
use crate::output::tunnel;
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

/// Why `dump` failed, by stage.
#[derive(Debug, thiserror::Error)]
pub enum DumpFailure {
    /// The capture cannot be opened.
    #[error(transparent)]
    Open(#[from] crate::OpenError),
    /// The capture could not be read to its end, or the output could not
    /// be written (what was read is written).
    #[error("{}: {source}", path.display())]
    Dump {
        /// The capture.
        path: PathBuf,
        /// Why.
        #[source]
        source: DumpError,
    },
    /// The live capture (`-i`) could not run as asked.
    #[error(transparent)]
    Live(#[from] LiveFailure),
    /// The live capture could not be read to its end, or the output could
    /// not be written (what was read is written).
    #[error("{interface}: {source}")]
    DumpLive {
        /// The interface.
        interface: String,
        /// Why.
        #[source]
        source: DumpError,
    },
}

impl DumpFailure {
    /// True for a command line that asks for something impossible.
    pub fn is_usage(&self) -> bool {
        matches!(self, DumpFailure::Live(e) if e.is_usage())
    }
}

/// Runs `dump` for the command line: output on stdout, warnings on stderr.
/// The error says what failed and where; output already produced is kept.
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
    let path = match &args.capture {
        Some(path) if !args.live.is_live() => path,
        _ => return Ok(run_live(args, &mut out, &mut diag, format)?),
    };
    args.live.check_file().map_err(DumpFailure::from)?;
    let input = crate::open_capture(path).map_err(DumpFailure::from)?;
    match dump(input, &mut out, &mut diag, format) {
        Ok(_) => Ok(Outcome::Clean),
        Err(DumpError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(source) => Err(DumpFailure::Dump {
            path: path.clone(),
            source,
        }
        .into()),
    }
}

/// `dump -i`: the live capture, then how it ended and what it lost: a JSON
/// line last, or on standard error beside the text (as tcpdump does).
fn run_live<W: Write, D: Write>(
    args: &DumpArgs,
    out: &mut W,
    diag: &mut D,
    format: DumpFormat,
) -> Result<Outcome, DumpFailure> {
    args.live.check(1)?;
    let mut source = LiveSource::open(&args.live, 0, interrupted())?;
    // In JSON the counts go into the end line, not a line of their own.
    let mut dumper = Dumper::new(format);
    let mut result = dump_source(&mut source, out, diag, &mut dumper, Summary::Caller);
    let interface = source.interface().to_string();
    let end = source.finish(result.is_err())?;
    let written = if args.json {
        let counts = tunnel::json_summary(dumper.stats.frames, &dumper.stats.tally);
        writeln!(out, "{}", end.end_line(None, None, counts)).and_then(|()| out.flush())
    } else {
        writeln!(diag, "{}", end.text())
    };
    if let (Ok(()), Err(e)) = (&result, written) {
        result = Err(DumpError::Write(e));
    }
    match result {
        Ok(()) => Ok(Outcome::Clean),
        Err(DumpError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(source) => Err(DumpFailure::DumpLive { interface, source }),
    }
}
