//! `firewall-check dump`: its command line, and the run that ties the
//! capture (a file, a pipe, or with `-i` a live interface: [`super::live`])
//! and the segments' text or JSON ([`crate::output::dump`]) together.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::live::LiveArgs;
use crate::output::dump::{dump, dump_records, DumpError, DumpFormat};
use crate::{Failure, Outcome};

/// Command-line arguments of `firewall-check dump`.
#[derive(Debug, Clone, clap::Args)]
pub struct DumpArgs {
    /// The capture file (pcap or pcapng); `-` reads standard input.
    #[arg(required_unless_present = "interface", conflicts_with = "interface")]
    pub capture: Option<PathBuf>,
    /// One JSON object per segment instead of text.
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
    let (result, name) = match (&args.capture, &args.live.interface) {
        (Some(path), _) => {
            let input = crate::open_capture(path)?;
            (
                dump(input, &mut out, &mut diag, format).map(|_| ()),
                path.display().to_string(),
            )
        }
        (None, Some(interface)) => {
            let stop = Arc::new(AtomicBool::new(false));
            let on_signal = Arc::clone(&stop);
            // Ctrl-C ends the capture as --count would (a handler may be
            // in place already: then the default ends the process).
            let _ = ctrlc::set_handler(move || on_signal.store(true, Ordering::Relaxed));
            let mut source = args.live.open(interface, stop)?;
            let result = dump_records(&mut source, &mut out, &mut diag, format).map(|_| ());
            source.finish()?;
            (result, interface.clone())
        }
        (None, None) => return Err(Failure::Usage("a capture file or -i IFACE".into())),
    };
    match result {
        Ok(()) => Ok(Outcome::Clean),
        Err(DumpError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(e) => Err(format!("{name}: {e}").into()),
    }
}
