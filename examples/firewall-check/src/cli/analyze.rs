//! `firewall-check analyze`: its command line, and the run that ties the
//! capture, the analysis and the output together.

use std::io::{self, Write};
use std::time::Duration;

use bdp::BitsPerSecond;
use tcp_options::kind::MAX_WINDOW_SCALE;

use super::live::{interrupted, LiveArgs, LiveEnd, LiveFailure, LiveSource};
use crate::analysis::analyze::{
    analyze, analyze_source, AnalyzeError, AnalyzeFormat, AnalyzeSummary, Settings, SCHEMA_VERSION,
};
use crate::conn::tracker::DEFAULT_CAPACITY;
use crate::output::analyze::JSON_BLOCK;
use crate::output::tunnel;
use crate::{Failure, Outcome};

/// Command-line arguments of `firewall-check analyze`.
#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeArgs {
    /// The capture file (pcap or pcapng); `-` reads standard input.
    #[arg(required_unless_present = "interface", conflicts_with = "interface")]
    pub capture: Option<std::path::PathBuf>,
    /// `{"connections": [...]}` instead of text; with -i, JSON lines: one
    /// per connection as it is reported, then one `end` line.
    #[arg(long)]
    pub json: bool,
    /// Live capture instead of a file.
    #[command(flatten)]
    pub live: LiveArgs,
    /// Use this RTT (e.g. `10ms`) instead of measuring it.
    #[arg(long, value_parser = super::parse_rtt)]
    pub rtt: Option<Duration>,
    /// The rate the verdict computes the needed window for (e.g. `1Gbps`).
    #[arg(long, value_parser = parse_rate, default_value = "1Gbit/s")]
    pub target_rate: BitsPerSecond,
    /// For connections whose handshake is not in the capture, read window fields with this shift (0-14).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=i64::from(MAX_WINDOW_SCALE)))]
    pub assume_wscale: Option<u8>,
    /// Most connections held open at once (closed ones are evicted first).
    #[arg(long, default_value_t = DEFAULT_CAPACITY)]
    pub max_connections: usize,
}

fn parse_rate(s: &str) -> Result<BitsPerSecond, bdp::ParseError> {
    s.parse::<BitsPerSecond>()
}

/// Why `analyze` failed, by stage.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeFailure {
    /// The arguments: `--max-connections 0` (a usage error).
    #[error(transparent)]
    NoConnections(#[from] super::NoConnections),
    /// The capture cannot be opened.
    #[error(transparent)]
    Open(#[from] crate::OpenError),
    /// The capture could not be read to its end, or the report could not
    /// be written (what was read is reported).
    #[error("{}: {source}", path.display())]
    Analyze {
        /// The capture.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: AnalyzeError,
    },
    /// The live capture (`-i`) could not run as asked.
    #[error(transparent)]
    Live(#[from] LiveFailure),
    /// The live capture could not be read to its end, or the report could
    /// not be written (what was read is reported).
    #[error("{interface}: {source}")]
    AnalyzeLive {
        /// The interface.
        interface: String,
        /// Why.
        #[source]
        source: AnalyzeError,
    },
}

impl AnalyzeFailure {
    /// True for a command line that asks for something impossible.
    pub fn is_usage(&self) -> bool {
        match self {
            AnalyzeFailure::NoConnections(_) => true,
            AnalyzeFailure::Live(e) => e.is_usage(),
            _ => false,
        }
    }
}

/// Runs `analyze` for the command line; the error says what failed and where.
pub fn run(args: &AnalyzeArgs) -> Result<Outcome, Failure> {
    if args.max_connections == 0 {
        return Err(AnalyzeFailure::from(super::NoConnections).into());
    }
    let settings = Settings {
        rtt: args.rtt,
        target_rate: args.target_rate,
        assume_wscale: args.assume_wscale,
        capacity: args.max_connections,
        ..Settings::default()
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(JSON_BLOCK, stdout.lock());
    let format = if args.json {
        AnalyzeFormat::Json
    } else {
        AnalyzeFormat::Text
    };
    let path = match &args.capture {
        Some(path) if !args.live.is_live() => path,
        _ => return Ok(run_live(args, &mut out, settings)?),
    };
    args.live.check_file().map_err(AnalyzeFailure::from)?;
    let input = crate::open_capture(path).map_err(AnalyzeFailure::from)?;
    match analyze(input, &mut out, format, &settings) {
        Ok(summary) => {
            warn_unopened(&summary);
            Ok(outcome(summary))
        }
        Err(AnalyzeError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(source) => Err(AnalyzeFailure::Analyze {
            path: path.clone(),
            source,
        }
        .into()),
    }
}

fn outcome(summary: AnalyzeSummary) -> Outcome {
    if summary.findings > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

/// `analyze -i`: reports as connections close (JSON lines with `--json`),
/// the open ones at the end, then how the capture ended and what it lost.
fn run_live<W: io::Write>(
    args: &AnalyzeArgs,
    out: &mut W,
    settings: Settings,
) -> Result<Outcome, AnalyzeFailure> {
    args.live.check(1)?;
    let mut source = LiveSource::open(&args.live, 0, interrupted())?;
    let live = Settings {
        live: true,
        ..settings
    };
    let format = if args.json {
        AnalyzeFormat::JsonLines
    } else {
        AnalyzeFormat::Text
    };
    let mut result = analyze_source(&mut source, out, format, &live);
    let interface = source.interface().to_string();
    let end = source.finish(result.is_err())?;
    if let Ok(summary) = &result {
        if let Err(e) = write_end(out, &end, summary, args.json) {
            result = Err(AnalyzeError::Write(e));
        }
    }
    match result {
        Ok(summary) => {
            warn_unopened(&summary);
            Ok(outcome(summary))
        }
        Err(AnalyzeError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(source) => Err(AnalyzeFailure::AnalyzeLive { interface, source }),
    }
}

/// The last line of a live analysis: how the capture ended and what it
/// lost (`{"type": "end", ...}` in JSON lines, with the capture's
/// `summary` when a segment was carried in a tunnel or a frame could not
/// be opened; text has it in its `capture:` line before).
fn write_end<W: io::Write>(
    out: &mut W,
    end: &LiveEnd,
    summary: &AnalyzeSummary,
    json: bool,
) -> io::Result<()> {
    if json {
        let counts = tunnel::json_summary(summary.frames, &summary.tally);
        writeln!(
            out,
            "{}",
            end.end_line(Some(SCHEMA_VERSION), Some(summary.connections), counts)
        )?;
    } else {
        writeln!(out, "{}", end.text())?;
    }
    out.flush()
}

/// One line on standard error when the capture held records that could not
/// be opened (an unsupported link type or encapsulation, a cut or malformed
/// header): their TCP, if any, is in no report.
fn warn_unopened(summary: &AnalyzeSummary) {
    let mut line = b"warning: ".to_vec();
    if let Ok(true) = tunnel::write_text_warning(&mut line, summary.frames, &summary.tally) {
        line.push(b'\n');
        let _ = io::stderr().write_all(&line);
    }
}
