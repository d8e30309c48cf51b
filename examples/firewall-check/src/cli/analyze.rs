//! `firewall-check analyze`: its command line, and the run that ties the
//! capture, the analysis and the output together.

use std::io;
use std::time::Duration;

use bdp::BitsPerSecond;
use tcp_options::kind::MAX_WINDOW_SCALE;

use super::live::{interrupted, LiveArgs, LiveSource};
use crate::analysis::analyze::{
    analyze, analyze_source, AnalyzeError, AnalyzeFormat, Settings, SCHEMA_VERSION,
};
use crate::conn::tracker::DEFAULT_CAPACITY;
use crate::output::analyze::JSON_BLOCK;
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
    #[arg(long, value_parser = parse_rtt)]
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

fn parse_rtt(s: &str) -> Result<Duration, String> {
    let d = bdp::parse_duration(s).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("the RTT must be above zero".to_string());
    }
    Ok(d)
}

fn parse_rate(s: &str) -> Result<BitsPerSecond, String> {
    s.parse::<BitsPerSecond>().map_err(|e| e.to_string())
}

/// Runs `analyze` for the command line; the error is the message to print.
pub fn run(args: &AnalyzeArgs) -> Result<Outcome, Failure> {
    if args.max_connections == 0 {
        return Err(Failure::Usage(
            "--max-connections must be at least 1".to_string(),
        ));
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
    let (result, name) = match &args.capture {
        Some(path) if !args.live.is_live() => {
            args.live.check_file()?;
            let input = crate::open_capture(path)?;
            let result = analyze(input, &mut out, format, &settings);
            (result, path.display().to_string())
        }
        _ => {
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
            let mut result = analyze_source(&mut source, &mut out, format, &live);
            let name = source.interface().to_string();
            let end = source.finish(result.is_err())?;
            if let Ok(summary) = &result {
                if let Err(e) = write_end(&mut out, &end, summary.connections, args.json) {
                    result = Err(AnalyzeError::Write(e));
                }
            }
            (result, name)
        }
    };
    match result {
        Ok(summary) if summary.findings > 0 => Ok(Outcome::Findings),
        Ok(_) => Ok(Outcome::Clean),
        Err(AnalyzeError::Write(e)) if crate::is_broken_pipe(&e) => Ok(Outcome::Clean),
        Err(e) => Err(format!("{name}: {e}").into()),
    }
}

/// The last line of a live analysis: how the capture ended and what it
/// lost (`{"type": "end", ...}` in JSON lines).
fn write_end<W: io::Write>(
    out: &mut W,
    end: &super::live::LiveEnd,
    connections: usize,
    json: bool,
) -> io::Result<()> {
    if json {
        writeln!(
            out,
            "{}",
            end.end_line(Some(SCHEMA_VERSION), Some(connections))
        )?;
    } else {
        writeln!(out, "{}", end.text())?;
    }
    out.flush()
}
