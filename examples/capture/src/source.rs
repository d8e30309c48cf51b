//! Where records come from: a capture file or pipe ([`CaptureReader`]) or,
//! with the `live` feature, a network interface ([`crate::live`]). The
//! tools read both through [`RecordSource`], the same [`Record`]s down the
//! same decode.

use std::io::Read;

use thiserror::Error;

use crate::error::CaptureError;
use crate::reader::{CaptureReader, Record};

/// What a live capture lost, as the kernel counted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureLoss {
    /// Packets received by the capture (libpcap's `ps_recv`).
    pub received: u64,
    /// Packets the kernel dropped for want of room in the capture buffer
    /// (`ps_drop`): the capture missed them, the network did not.
    pub kernel_drops: u64,
    /// Packets the interface or its driver dropped (`ps_ifdrop`), where known.
    pub interface_drops: Option<u64>,
}

/// A source of capture records.
pub trait RecordSource {
    /// The next record, `Ok(None)` at the end (of the file; of a live
    /// capture: its count, its duration, or an interruption).
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError>;

    /// True when the next call can answer without waiting for input (the
    /// caller flushes its output when it cannot).
    fn has_buffered_record(&self) -> bool;

    /// What the capture lost: `None` for a file, whose loss (if any)
    /// happened when it was written.
    fn loss(&mut self) -> Option<CaptureLoss> {
        None
    }
}

impl<R: Read> RecordSource for CaptureReader<R> {
    fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        CaptureReader::next_record(self)
    }

    fn has_buffered_record(&self) -> bool {
        CaptureReader::has_buffered_record(self)
    }
}

/// Why a live capture could not be opened or read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LiveError {
    /// This build has no live capture.
    #[error("live capture is not in this build (build with `--features live`, which needs libpcap-dev)")]
    NotBuilt,
    /// libpcap could not open or activate the interface.
    #[error("cannot capture on {interface}: {message}")]
    Open {
        /// The interface.
        interface: String,
        /// libpcap's message.
        message: String,
    },
    /// libpcap refused the capture filter.
    #[error("capture filter {filter:?} on {interface}: {message}")]
    Filter {
        /// The interface.
        interface: String,
        /// The filter expression.
        filter: String,
        /// libpcap's message.
        message: String,
    },
    /// A read from the interface failed.
    #[error("reading from {interface}: {message}")]
    Read {
        /// The interface.
        interface: String,
        /// libpcap's message.
        message: String,
    },
}
