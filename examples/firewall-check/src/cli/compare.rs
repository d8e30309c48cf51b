//! `firewall-check compare`: its command line, and the run that ties the
//! two captures, the comparison and the output together.

use std::io::{self, Write};
use std::path::PathBuf;

use thiserror::Error;

use super::live::{interrupted, LiveArgs, LiveEnd, LiveFailure, LiveSource};
use crate::analysis::compare::{
    compare_paths, compare_readers, CaptureWarning, CompareError, Options, Report,
};
use crate::conn::tracker::DEFAULT_CAPACITY;
use crate::output::compare::{render_text, report_json, report_json_live};
use crate::{Failure, Outcome};

/// Arguments of `firewall-check compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Capture taken on one side of the middlebox (pcap or pcapng; `-` for
    /// standard input).
    #[arg(required_unless_present = "interface", conflicts_with = "interface")]
    pub capture_a: Option<PathBuf>,
    /// Capture taken on the other side, at the same time (either order; `-`
    /// for standard input unless CAPTURE_A is).
    #[arg(required_unless_present = "interface", conflicts_with = "interface")]
    pub capture_b: Option<PathBuf>,
    /// Print the report as JSON (`schema_version` 2, see docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Round-trip time for the impact figures (e.g. `10ms`); measured from
    /// the handshake when absent.
    #[arg(long)]
    pub rtt: Option<String>,
    /// Most connections each capture's tracker holds open at once (the
    /// least recently active one is ended early beyond it).
    #[arg(long, default_value_t = DEFAULT_CAPACITY)]
    pub max_connections: usize,
    /// Two live captures instead of files (`-i A -i B`), read until
    /// --count, --duration or Ctrl-C, then compared.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Why `compare` did not end cleanly, with the message for standard error.
#[derive(Debug, Error)]
pub enum RunError {
    /// `--rtt 0`.
    #[error("--rtt must be above zero")]
    ZeroRtt,
    /// `--rtt` is not a duration.
    #[error("bad --rtt: {0}")]
    BadRtt(bdp::ParseError),
    /// `--max-connections 0`.
    #[error(transparent)]
    NoConnections(#[from] super::NoConnections),
    /// The comparison could not run.
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// The report could not be made JSON.
    #[error("{0}")]
    Json(serde_json::Error),
    /// Standard output refused the report.
    #[error("cannot write the report: {0}")]
    Write(io::Error),
    /// The captures share no connection (the report is written).
    #[error("no TCP connection was found in both captures: were they taken at the same time on the two sides of the same middlebox?")]
    NothingInCommon,
    /// Captures could not be read to their end (the report of what was
    /// read is written): each capture's warnings.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Partial(Vec<PartialCapture>),
    /// The live captures (`-i A -i B`) could not run as asked.
    #[error(transparent)]
    Live(#[from] LiveFailure),
}

/// A capture that was not read whole, and why.
#[derive(Debug, Error)]
#[error("{path}: {warning}")]
pub struct PartialCapture {
    /// The capture, as given.
    pub path: String,
    /// What happened reading it.
    pub warning: CaptureWarning,
}

impl RunError {
    /// True for a command line that asks for something impossible.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            RunError::ZeroRtt
                | RunError::BadRtt(_)
                | RunError::NoConnections(_)
                | RunError::Compare(CompareError::BothStdin)
        ) || matches!(self, RunError::Live(e) if e.is_usage())
    }
}

/// Runs `firewall-check compare`: prints the report on stdout (text or
/// JSON). An error (a file that cannot be read, a bad `--rtt`), a capture
/// that could not be read to its end (the report of what was read is still
/// printed) or two captures with no connection in common give `Err` with the
/// message for stderr. Findings that change the traffic give
/// [`Outcome::Findings`]; capture loss alone does not.
pub fn run(args: &CompareArgs) -> Result<Outcome, Failure> {
    Ok(compare(args)?)
}

/// [`run`] with its typed error.
pub fn compare(args: &CompareArgs) -> Result<Outcome, RunError> {
    let rtt = match args.rtt.as_deref().map(bdp::parse_duration) {
        None => None,
        Some(Ok(d)) if !d.is_zero() => Some(d),
        Some(Ok(_)) => return Err(RunError::ZeroRtt),
        Some(Err(e)) => return Err(RunError::BadRtt(e)),
    };
    if args.max_connections == 0 {
        return Err(super::NoConnections.into());
    }
    let opts = Options {
        rtt,
        max_connections: args.max_connections,
    };
    let (report, live) = match (&args.capture_a, &args.capture_b) {
        (Some(a), Some(b)) if !args.live.is_live() => {
            args.live.check_file()?;
            (compare_paths(a, b, &opts)?, Vec::new())
        }
        _ => capture_and_compare(&args.live, &opts)?,
    };
    let out = match (args.json, live.is_empty()) {
        (true, true) => report_json(&report).map_err(RunError::Json)?,
        (true, false) => {
            let ends: Vec<serde_json::Value> = live.iter().map(LiveEnd::json).collect();
            report_json_live(&report, &ends).map_err(RunError::Json)?
        }
        (false, _) => {
            let mut text = render_text(&report);
            for end in &live {
                text.push_str(&end.text());
                text.push('\n');
            }
            text
        }
    };
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if crate::is_broken_pipe(&e) => return Ok(Outcome::Clean),
        Err(e) => return Err(RunError::Write(e)),
        Ok(()) => {}
    }
    outcome(report)
}

/// `compare -i A -i B`: both interfaces captured at once (a thread each)
/// into pcap files, the `-w` ones or temporary ones, until `--count`,
/// `--duration` or Ctrl-C; then the two files compared as any two captures,
/// named by their interfaces.
fn capture_and_compare(
    live: &LiveArgs,
    opts: &Options,
) -> Result<(Report, Vec<LiveEnd>), RunError> {
    live.check(2)?;
    let mut args = live.clone();
    let temporary = args.write.is_empty();
    if temporary {
        for k in 0..2 {
            let path = std::env::temp_dir()
                .join(format!("firewall-check-{}-{k}.pcap", std::process::id()));
            // Claimed anew: never a file (or link) someone left there.
            std::fs::File::create_new(&path).map_err(|source| {
                LiveFailure::Create(crate::CreateError {
                    path: path.clone(),
                    source,
                })
            })?;
            args.write.push(path);
        }
    }
    let result = capture_both(&args).and_then(|ends| {
        // Named by interface (the files may be temporary).
        let open = |k: usize| {
            std::fs::File::open(&args.write[k])
                .map(io::BufReader::new)
                .map_err(|source| CompareError::Open {
                    path: args.write[k].display().to_string(),
                    source,
                })
        };
        let report = compare_readers(
            open(0)?,
            &args.interface[0],
            open(1)?,
            &args.interface[1],
            opts,
        )?;
        Ok((report, ends))
    });
    if temporary {
        for path in &args.write {
            let _ = std::fs::remove_file(path);
        }
    }
    result
}

/// Reads both interfaces of `args` at once into their `-w` files.
fn capture_both(args: &LiveArgs) -> Result<Vec<LiveEnd>, RunError> {
    use capture::RecordSource;
    let stop = interrupted();
    let sources = [
        LiveSource::open(args, 0, stop.clone())?,
        LiveSource::open(args, 1, stop)?,
    ];
    let ends: Vec<Result<LiveEnd, LiveFailure>> = std::thread::scope(|s| {
        let running: Vec<_> = sources
            .into_iter()
            .map(|mut source| {
                s.spawn(move || {
                    let failed = loop {
                        match source.next_record() {
                            Ok(Some(_)) => {}
                            Ok(None) => break None,
                            Err(e) => break Some(e),
                        }
                    };
                    let interface = source.interface().to_string();
                    let end = source.finish(failed.is_some())?;
                    match failed {
                        Some(source) => Err(LiveFailure::Read { interface, source }),
                        None => Ok(end),
                    }
                })
            })
            .collect();
        running
            .into_iter()
            .map(|t| t.join().unwrap_or(Err(LiveFailure::Thread)))
            .collect()
    });
    Ok(ends
        .into_iter()
        .collect::<Result<Vec<LiveEnd>, LiveFailure>>()?)
}

/// What the exit status says of a written report.
fn outcome(report: Report) -> Result<Outcome, RunError> {
    if report.connections.is_empty() {
        return Err(RunError::NothingInCommon);
    }
    let tampering = report.has_tampering();
    let problems: Vec<PartialCapture> = report
        .captures
        .into_iter()
        .flat_map(|c| {
            let path = c.path;
            c.warnings.into_iter().map(move |warning| PartialCapture {
                path: path.clone(),
                warning,
            })
        })
        .collect();
    if !problems.is_empty() {
        return Err(RunError::Partial(problems));
    }
    Ok(if tampering {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}
