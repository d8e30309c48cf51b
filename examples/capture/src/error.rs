//! Errors of the capture layer: reading the file, then decoding a record.
//!
//! Read errors ([`CaptureError`]) end the stream; decode errors
//! ([`DecodeError`]) concern one record and the caller may go on to the next.

use thiserror::Error;

/// Why a capture file could not be read (further).
///
/// Every variant says where: `offset` is the byte offset in the file of the
/// block or record that could not be read, `frame` the 1-based number the next
/// packet record would have had.
#[derive(Debug, Error)]
pub enum CaptureError {
    /// The operating system refused a read.
    #[error("read error at byte {offset}: {source}")]
    Io {
        /// Bytes of the file consumed before the failing read.
        offset: u64,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is empty.
    #[error("the file is empty: not a pcap or pcapng capture")]
    Empty,
    /// The first bytes are neither a pcap nor a pcapng magic number.
    #[error("not a pcap or pcapng capture (first bytes {magic:02x?})")]
    NotACapture {
        /// Up to the first four bytes of the file.
        magic: [u8; 4],
    },
    /// The file ends in the middle of a header, block or record.
    #[error("capture truncated: the file ends inside the record starting at byte {offset} (frame {frame})")]
    Truncated {
        /// Byte offset of the incomplete record.
        offset: u64,
        /// Number the incomplete packet record would have had.
        frame: u64,
    },
    /// A record claims more bytes than the reader accepts.
    #[error("record at byte {offset} (frame {frame}) is larger than the {limit}-byte limit of this reader")]
    RecordTooLarge {
        /// Byte offset of the record.
        offset: u64,
        /// Number the packet record would have had.
        frame: u64,
        /// The limit in bytes.
        limit: usize,
    },
    /// A header or block is malformed.
    #[error("corrupt capture at byte {offset} (frame {frame}): {reason}")]
    Corrupt {
        /// Byte offset of the malformed block or record.
        offset: u64,
        /// Number the next packet record would have had.
        frame: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A pcapng block's length field is impossible for its type; the block
    /// is refused before any of its contents are parsed.
    #[error("corrupt capture at byte {offset} (frame {frame}): {} with length {length}: {problem}", crate::reader::block_name(*block_type))]
    BadBlockLength {
        /// Byte offset of the block.
        offset: u64,
        /// Number the next packet record would have had.
        frame: u64,
        /// The block type field (as read in the section's byte order).
        block_type: u32,
        /// The (leading) block length field.
        length: u32,
        /// What is wrong with it.
        problem: BlockLengthProblem,
    },
    /// A pcapng packet block names an interface no Interface Description Block declared.
    #[error("corrupt capture at byte {offset} (frame {frame}): packet on interface {interface}, but only {declared} interface(s) declared in this section")]
    UnknownInterface {
        /// Byte offset of the packet block.
        offset: u64,
        /// Number of the packet record.
        frame: u64,
        /// Interface id in the block.
        interface: u32,
        /// Interfaces declared in the current section.
        declared: usize,
    },
    /// A live capture could not be opened or read.
    #[error(transparent)]
    Live(#[from] crate::source::LiveError),
    /// The copy of the records (`-w`, [`crate::source::Tee`]) could not be written.
    #[error(transparent)]
    Write(Box<crate::writer::WriteError>),
    /// More interfaces than the reader keeps track of.
    #[error("corrupt capture at byte {offset}: more than {limit} interfaces in one section")]
    TooManyInterfaces {
        /// Byte offset of the Interface Description Block.
        offset: u64,
        /// The limit.
        limit: usize,
    },
}

/// What is wrong with a pcapng block's length field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum BlockLengthProblem {
    /// Shorter than the fixed fields of the block type (12 bytes for any block).
    #[error("below the {minimum} bytes this block type needs")]
    BelowMinimum {
        /// The smallest valid length of the block type.
        minimum: u32,
    },
    /// Not a multiple of 4, as every block length must be.
    #[error("not a multiple of 4")]
    NotMultipleOf4,
    /// The trailing copy of the length differs from the leading one.
    #[error("the trailing copy of the length says {trailer}")]
    TrailerMismatch {
        /// The trailing length field.
        trailer: u32,
    },
}

/// Why one record could not be decoded down to a TCP segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum DecodeError {
    /// The link-layer header is longer than the captured bytes.
    #[error(
        "{layer} header truncated: need {needed} bytes at offset {offset}, {available} captured"
    )]
    Truncated {
        /// Which header.
        layer: &'static str,
        /// Offset of the header in the record.
        offset: usize,
        /// Bytes the header needs.
        needed: usize,
        /// Bytes captured from that offset.
        available: usize,
    },
    /// A header field has an impossible value.
    #[error("bad {layer} header at offset {offset}: {reason}")]
    Malformed {
        /// Which header.
        layer: &'static str,
        /// Offset of the header in the record.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },
}
