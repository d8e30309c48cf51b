//! `firewall-check compare`: its command line, and the run that ties the
//! two captures, the comparison and the output together.

use std::io::{self, Write};
use std::path::PathBuf;

use thiserror::Error;

use crate::analysis::compare::{compare_paths, CaptureWarning, CompareError, Options, Report};
use crate::conn::tracker::DEFAULT_CAPACITY;
use crate::output::compare::{render_text, report_json};
use crate::{Failure, Outcome};

/// Arguments of `firewall-check compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Capture taken on one side of the middlebox (pcap or pcapng; `-` for
    /// standard input).
    pub capture_a: PathBuf,
    /// Capture taken on the other side, at the same time (either order; `-`
    /// for standard input unless CAPTURE_A is).
    pub capture_b: PathBuf,
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
        )
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
    let report = compare_paths(&args.capture_a, &args.capture_b, &opts)?;
    let out = if args.json {
        report_json(&report).map_err(RunError::Json)?
    } else {
        render_text(&report)
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
