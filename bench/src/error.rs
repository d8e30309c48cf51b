//! Why a capture could not be generated.

use std::io;
use std::net::IpAddr;
use std::path::PathBuf;

use capture::writer::WriteError;
use tcp_options::{BuildError, EmitError, RewriteError};

/// A generator's error. The packet errors cannot happen with the traffic
/// model's fixed sizes (at most 40 bytes of options, 1460 of payload); they
/// are reported, not unwrapped, should the model change.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The options of a segment could not be built.
    #[error("building the TCP options: {0}")]
    Options(#[from] BuildError),
    /// A packet could not be emitted.
    #[error("emitting a packet: {0}")]
    Emit(#[from] EmitError),
    /// The window-scale strip of a SYN failed.
    #[error("stripping the window scale option: {0}")]
    Rewrite(#[from] RewriteError),
    /// A record could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A connection's two addresses are not of one family.
    #[error("a connection from {src} to {dst}: the addresses are not of one family")]
    MixedFamilies {
        /// The sender's address.
        src: IpAddr,
        /// The receiver's address.
        dst: IpAddr,
    },
    /// A file could not be created, renamed or written.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

impl From<io::Error> for GenError {
    fn from(e: io::Error) -> Self {
        GenError::Write(WriteError::Io(e))
    }
}
