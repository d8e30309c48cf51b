//! `firewall-check analyze`: its command line, and the run that ties the
//! capture, the analysis and the output together.

use std::io::{self, Write};
use std::time::Duration;

use bdp::BitsPerSecond;
use tcp_options::kind::MAX_WINDOW_SCALE;

use crate::analysis::analyze::{analyze, AnalyzeError, AnalyzeFormat, AnalyzeSummary, Settings};
use crate::conn::tracker::DEFAULT_CAPACITY;
use crate::output::analyze::JSON_BLOCK;
use crate::output::tunnel;
use crate::{Failure, Outcome};

/// Command-line arguments of `firewall-check analyze`.
#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeArgs {
    /// The capture file (pcap or pcapng); `-` reads standard input.
    pub capture: std::path::PathBuf,
    /// `{"connections": [...]}` instead of text.
    #[arg(long)]
    pub json: bool,
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
}

/// Runs `analyze` for the command line; the error says what failed and where.
pub fn run(args: &AnalyzeArgs) -> Result<Outcome, Failure> {
    if args.max_connections == 0 {
        return Err(AnalyzeFailure::from(super::NoConnections).into());
    }
    let input = crate::open_capture(&args.capture).map_err(AnalyzeFailure::from)?;
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
    match analyze(input, &mut out, format, &settings) {
        Ok(summary) => {
            warn_unopened(&summary);
            Ok(if summary.findings > 0 {
                Outcome::Findings
            } else {
                Outcome::Clean
            })
        }
        Err(AnalyzeError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(source) => Err(AnalyzeFailure::Analyze {
            path: args.capture.clone(),
            source,
        }
        .into()),
    }
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
