//! `firewall-check`: find what a middlebox does to TCP, from captures and by
//! probing.
//!
//! # One way through, one home per stage
//!
//! ```text
//! capture (pcap, pcapng, stdin: the `capture` crate)
//!   -> decode    one segment per record (link, IP, TCP through tcp-options)
//!   -> conn      one tracker; each endpoint as its kernel holds it
//!   -> analysis  analyze, limits, series, compare, probe/reflect, rewrite
//!   -> finding   what was found: kind, direction, evidence, impact
//!   -> output    text for people, JSON for scripts; exit status
//! ```
//!
//! - [`decode`]: [`decode::decode_tunneled`] turns a capture record into a
//!   [`decode::TcpRecord`] (frame, time, IP facts, TCP fields, the captured
//!   option block, payload length, snap-length truncation, the first option
//!   problem, the tunnels it was carried in), or says why it gave none
//!   ([`decode::Unrecorded`]); [`decode::decode_packet`] reads plain links
//!   only. Both borrow the reader's buffer and allocate nothing.
//! - [`conn`]: [`conn::tracker::ConnTracker`] maps each segment to a
//!   connection (client = the SYN sender) and a [`conn::Direction`], holds
//!   one state value per open connection and hands a connection back
//!   shortly after it closes; [`conn::negotiation`] reads the handshake as
//!   each endpoint's kernel does.
//! - [`analysis`]: the commands' reasoning: [`analysis::analyze`],
//!   [`analysis::limits`], [`analysis::series`], [`analysis::compare`],
//!   [`analysis::probe`], [`analysis::rewrite`].
//! - [`finding`]: the one [`finding::Finding`] (kind, direction,
//!   confidence, typed evidence, impact), the one list of finding kinds,
//!   the typed values before and after a middlebox.
//! - [`output`]: text, JSON, CSV and SVG: [`output::analyze`],
//!   [`output::compare`], [`output::dump`], [`output::series`],
//!   [`output::finding`], [`output::impact`], [`output::format`],
//!   [`output::fastjson`].
//! - [`cli`]: the command line, and the exit status; each command's
//!   arguments and the run that wires its stages ([`cli::analyze`],
//!   [`cli::compare`], [`cli::dump`], [`cli::series`], [`cli::rewrite`]).

pub mod analysis;
pub mod cli;
pub mod conn;
pub mod decode;
pub mod finding;
pub mod output;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// How a subcommand that ran to its end went; maps to the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done, nothing to report (exit status 0).
    Clean,
    /// Done, and something was found: `compare` found tampering, `analyze`
    /// found a broken negotiation or a window-limited transfer (exit status 3).
    Findings,
}

/// Why a subcommand failed: the command's own error, which says what failed
/// and where (the arguments, opening a file, reading the capture, writing
/// the output, probing); [`Failure::exit_status`] maps it to 2 (usage) or
/// 1 (runtime). Its `Display` is the message for standard error.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// `dump` failed.
    #[error(transparent)]
    Dump(#[from] cli::dump::DumpFailure),
    /// `analyze` failed.
    #[error(transparent)]
    Analyze(#[from] cli::analyze::AnalyzeFailure),
    /// `compare` failed.
    #[error(transparent)]
    Compare(#[from] cli::compare::RunError),
    /// `rewrite` failed.
    #[error(transparent)]
    Rewrite(#[from] cli::rewrite::RewriteFailure),
    /// `series` failed.
    #[error(transparent)]
    Series(#[from] cli::series::SeriesFailure),
    /// `probe` or `reflect` failed.
    #[error(transparent)]
    Probe(#[from] analysis::probe::error::ProbeError),
}

impl Failure {
    /// True for a command line that asks for something impossible.
    pub fn is_usage(&self) -> bool {
        match self {
            Failure::Dump(e) => e.is_usage(),
            Failure::Analyze(e) => e.is_usage(),
            Failure::Compare(e) => e.is_usage(),
            Failure::Rewrite(e) => matches!(e, cli::rewrite::RewriteFailure::Rules(_)),
            Failure::Series(e) => e.is_usage(),
            Failure::Probe(e) => matches!(e, analysis::probe::error::ProbeError::Usage(_)),
        }
    }

    /// The exit status: 2 for a usage error, 1 for a runtime error
    /// (reading, decoding, writing, probing; whatever valid output there
    /// was has been written).
    pub fn exit_status(&self) -> u8 {
        if self.is_usage() {
            2
        } else {
            1
        }
    }
}

/// True for the error a write to a closed pipe gives (`| head`): the tools
/// then stop quietly with status 0, as `cat` does.
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// A file named on the command line that cannot be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open {}: {source}", path.display())]
pub struct OpenError {
    /// The file as given.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: io::Error,
}

/// An output file named on the command line that cannot be created.
#[derive(Debug, thiserror::Error)]
#[error("cannot create {}: {source}", path.display())]
pub struct CreateError {
    /// The file as given.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: io::Error,
}

/// Opens a capture for reading (`-` is standard input); the error names
/// the file.
pub fn open_capture(path: &Path) -> Result<Box<dyn Read>, OpenError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(io::stdin()));
    }
    File::open(path)
        .map(|f| Box::new(f) as Box<dyn Read>)
        .map_err(|source| OpenError {
            path: path.to_path_buf(),
            source,
        })
}

/// Creates an output file; the error names the file.
pub fn create_output(path: &Path) -> Result<File, CreateError> {
    File::create(path).map_err(|source| CreateError {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cli::series::SeriesFailure;

    fn open_error() -> OpenError {
        OpenError {
            path: PathBuf::from("x.pcap"),
            source: io::Error::from(io::ErrorKind::NotFound),
        }
    }

    #[test]
    fn usage_errors_exit_2_and_the_rest_1() {
        let usage = Failure::from(cli::analyze::AnalyzeFailure::from(cli::NoConnections));
        assert_eq!(usage.exit_status(), 2);
        assert_eq!(usage.to_string(), "--max-connections must be at least 1");
        assert_eq!(Failure::from(SeriesFailure::SvgNeedsFile).exit_status(), 2);
        let rules = cli::rewrite::RewriteFailure::from(cli::rewrite::RulesError::Nothing);
        assert_eq!(Failure::from(rules).exit_status(), 2);

        let open = Failure::from(cli::dump::DumpFailure::from(open_error()));
        assert_eq!(open.exit_status(), 1);
        assert!(
            open.to_string().starts_with("cannot open x.pcap: "),
            "{open}"
        );
        let csv = Failure::from(SeriesFailure::Csv(io::Error::from(
            io::ErrorKind::WriteZero,
        )));
        assert_eq!(csv.exit_status(), 1);
        assert!(csv.to_string().starts_with("writing the CSV: "), "{csv}");
    }

    #[test]
    fn an_rtt_of_zero_is_refused_by_name() {
        assert!(matches!(cli::parse_rtt("0s"), Err(cli::RttError::Zero)));
        assert!(matches!(cli::parse_rtt("x"), Err(cli::RttError::Parse(_))));
        assert_eq!(
            cli::parse_rtt("10ms").ok(),
            Some(std::time::Duration::from_millis(10))
        );
    }
}
