//! `firewall-check`: dump, analyze and compare TCP captures to find tampering middleboxes.
//!
//! # Building blocks for every subcommand
//!
//! - [`packet`]: [`packet::decode_packet`] turns a capture record into a
//!   [`packet::TcpRecord`], the per-packet decoded record (frame, time, IP
//!   facts, TCP fields, captured option block, payload length, snap-length
//!   truncation, first option problem). It borrows the reader's buffer and
//!   allocates nothing; copy out what you keep.
//! - [`flow`]: connection tracking. [`flow::ConnTracker`] maps each segment
//!   to a connection (client = the SYN sender) and a [`flow::Direction`],
//!   holds one caller-defined state value per open connection, hands a
//!   connection back shortly after it closes (RST, or FIN both ways), and
//!   caps the number of open connections (evicting closed ones first, then
//!   the least recently active), so memory follows open connections only.
//! - [`format`](mod@format): allocation-free hex, UTC time, JSON
//!   string escaping.
//! - [`fastjson`]: `serde_json`'s compact output for per-connection
//!   documents, without escaping the derived keys.
//!
//! # Subcommands
//!
//! - [`dump`]: every TCP segment as tcpdump-like text or JSON lines.
//! - [`analyze`]: per connection, what was negotiated, the window ceiling
//!   and whether the window capped throughput.
//! - [`compare`]: two captures from the two sides of a middlebox, and every
//!   field it changed, with the cost and the likely cause.
//! - [`series`]: each connection's sequence, ACK and window edges, bytes in
//!   flight, throughput and limit over time, as CSV or an SVG plot.

pub mod analyze;
pub mod cli;
pub mod compare;
pub mod dump;
pub mod fastjson;
pub mod finding;
pub mod flow;
pub mod format;
pub mod limit_log;
pub mod limits;
pub mod missed;
pub mod negotiation;
pub mod open_ids;
pub mod packet;
pub mod probe;
pub mod rewrite;
pub mod series;

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
