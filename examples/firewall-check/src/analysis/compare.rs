//! `firewall-check compare`: two captures of the same traffic, taken on the
//! two sides of a middlebox, and every field the middlebox changed.
//!
//! The steps, one submodule each, on the model every subcommand shares
//! ([`crate::decode`] decodes, [`crate::conn::tracker`] tracks
//! connections, [`crate::finding`] names what is found):
//!
//! 1. [`engine`]: read both captures together in time order (`-` is
//!    standard input for one of them), each segment decoded once and put in
//!    its connection by the shared tracker; memory follows the connections
//!    open at once and a bounded alignment window, not the captures' size
//!    (see [`engine`] for the bounds). A capture that breaks off mid-way
//!    gives what was read and a warning; only a file that is not a capture
//!    is an error.
//! 2. [`matching`]: pair connections across the captures on what survives
//!    address and port translation, sequence rewriting and handshake
//!    proxying (client ISN, SYN timestamps, data segment lengths and bytes,
//!    IPv4 identifications, addresses); then, per paired connection
//!    ([`pair`]), decide which capture is nearer the client (TTL, then
//!    time) and align each direction packet by packet.
//! 3. [`findings`]: compare every aligned pair (DSCP, ECN, addresses and
//!    ports, sequence and acknowledgment numbers, window field, each option
//!    as on the wire, values as the receiving Linux kernel reads them) and
//!    decide on packets seen on one side only: dropped or injected by the
//!    middlebox, or missed by a capture (the receiver acknowledged their
//!    bytes on the wire of the capture that lacks them, or they fall outside
//!    that capture's time span); fold everything into one finding per
//!    connection, direction and kind, with the packets affected.
//! 4. [`impact`]: what each finding costs (throughput ceilings from `bdp` at
//!    the measured or given RTT), typed ([`crate::finding::Impact`]).
//! 5. [`report`]: the findings ([`crate::finding::Finding`] with
//!    [`crate::finding::Compared`] evidence, all of
//!    [`crate::finding::Confidence::High`]), the connections and the notes,
//!    typed; [`crate::output::compare`] writes them as text and JSON, and
//!    [`crate::cli::compare`] runs the command.
//!
//! "Before" and "after" always mean before and after the middlebox in the
//! packet's direction, so the verdicts do not depend on the order in which
//! the two files are given. A router's TTL decrement is not a finding: the
//! TTL only tells which capture is nearer the client. The JSON form is
//! documented field by field in `docs/json.md`.
//!
//! ```
//! use firewall_check::analysis::compare::{compare_paths, Options};
//! use firewall_check::finding::{FieldValue, Kind};
//! let report = compare_paths(
//!     "../data/campus-inside.pcap".as_ref(),
//!     "../data/campus-outside.pcap".as_ref(),
//!     &Options::default(),
//! )?;
//! let f = &report.findings[0];
//! assert_eq!(f.kind, Kind::WscaleStripped);
//! assert_eq!(f.compared().map(|c| &c.before), Some(&FieldValue::Shift(10)));
//! # Ok::<(), firewall_check::analysis::compare::CompareError>(())
//! ```

pub mod engine;
pub mod findings;
pub mod impact;
pub mod matching;
pub mod packet;
pub mod pair;
pub mod report;

use std::io::{BufReader, Read};
use std::path::Path;
use std::time::Duration;

use thiserror::Error;

use crate::conn::tracker::DEFAULT_CAPACITY;
use capture::CaptureError;
use engine::Input;

pub use findings::{NoteDetail, NoteWhat};
pub use report::{
    CaptureSummary, CaptureWarning, ConnEnds, ConnReport, ConnSide, MatchedOn, Note, Report, Rtt,
    RttSource, SidesBy,
};

/// The version of the JSON document (`schema_version`); 2 since findings'
/// `before`/`after` are structured values.
pub const SCHEMA_VERSION: u32 = 2;

/// Why a comparison could not run.
#[derive(Debug, Error)]
pub enum CompareError {
    /// A capture file could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not a capture (or unreadable from its first bytes).
    #[error("{path}: {source}")]
    Capture {
        /// The file.
        path: String,
        /// The cause.
        source: CaptureError,
    },
    /// Both captures were given as standard input.
    #[error("only one of the two captures can be read from standard input (-)")]
    BothStdin,
}

/// Settings of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Round-trip time for impacts; measured from the handshake when `None`.
    pub rtt: Option<Duration>,
    /// Most connections each capture's tracker holds open at once.
    pub max_connections: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rtt: None,
            max_connections: DEFAULT_CAPACITY,
        }
    }
}

/// Opens and compares two capture files (`-` is standard input, for one of them).
pub fn compare_paths(a: &Path, b: &Path, opts: &Options) -> Result<Report, CompareError> {
    let stdin = |p: &Path| p.as_os_str() == "-";
    if stdin(a) && stdin(b) {
        return Err(CompareError::BothStdin);
    }
    let open = |p: &Path| -> Result<Box<dyn Read>, CompareError> {
        if stdin(p) {
            return Ok(Box::new(std::io::stdin().lock()));
        }
        std::fs::File::open(p)
            .map(|f| Box::new(BufReader::new(f)) as Box<dyn Read>)
            .map_err(|source| CompareError::Open {
                path: p.display().to_string(),
                source,
            })
    };
    let (fa, fb) = (open(a)?, open(b)?);
    compare_readers(
        fa,
        &a.display().to_string(),
        fb,
        &b.display().to_string(),
        opts,
    )
}

/// Compares two captures read from `a` and `b`, named `name_a` and `name_b`.
pub fn compare_readers<A: Read, B: Read>(
    a: A,
    name_a: &str,
    b: B,
    name_b: &str,
    opts: &Options,
) -> Result<Report, CompareError> {
    let mut ia =
        Input::new(name_a, a, opts.max_connections).map_err(|source| CompareError::Capture {
            path: name_a.to_string(),
            source,
        })?;
    let mut ib =
        Input::new(name_b, b, opts.max_connections).map_err(|source| CompareError::Capture {
            path: name_b.to_string(),
            source,
        })?;
    let e = engine::run(&mut ia, &mut ib, opts.rtt);
    Ok(report::build_report(
        e,
        [ia.summary_parts(), ib.summary_parts()],
    ))
}
