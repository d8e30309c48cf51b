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
use std::path::Path;

/// How a subcommand that ran to its end went; maps to the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done, nothing to report (exit status 0).
    Clean,
    /// Done, and something was found: `compare` found tampering, `analyze`
    /// found a broken negotiation or a window-limited transfer (exit status 3).
    Findings,
}

/// Why a subcommand failed; maps to the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The command line asks for something impossible (exit status 2).
    Usage(String),
    /// Reading, decoding or writing failed (exit status 1); whatever valid
    /// output there was has been written.
    Runtime(String),
}

impl Failure {
    /// The message for standard error.
    pub fn message(&self) -> &str {
        match self {
            Failure::Usage(m) | Failure::Runtime(m) => m,
        }
    }
}

impl From<String> for Failure {
    fn from(m: String) -> Self {
        Failure::Runtime(m)
    }
}

/// True for the error a write to a closed pipe gives (`| head`): the tools
/// then stop quietly with status 0, as `cat` does.
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Opens a capture for reading (`-` is standard input), with a message
/// naming the file on failure.
pub fn open_capture(path: &Path) -> Result<Box<dyn Read>, String> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(io::stdin()));
    }
    File::open(path)
        .map(|f| Box::new(f) as Box<dyn Read>)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}
