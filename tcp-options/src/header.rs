//! The fixed 20-byte TCP header and the checked segment view.
//!
//! [`TcpHeader`] is a zerocopy layout of the fixed part (RFC 9293 section
//! 3.1); [`TcpPacket::new_checked`] validates a whole segment once (at least
//! 20 bytes, data offset at least 5 words and within the buffer) so that every
//! accessor afterwards is a plain field read that cannot panic.

use zerocopy::byteorder::network_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::error::HeaderError;
use crate::flags::Flags;
use crate::walk::{LinuxOptions, StrictOptions};

/// Length of the fixed TCP header in bytes.
pub const HEADER_LEN: usize = 20;
/// Largest TCP header (data offset 15 words).
pub const MAX_HEADER_LEN: usize = 60;

/// Byte ranges of the fixed header fields, relative to the start of the segment.
pub mod field {
    use core::ops::Range;
    /// Source port.
    pub const SRC_PORT: Range<usize> = 0..2;
    /// Destination port.
    pub const DST_PORT: Range<usize> = 2..4;
    /// Sequence number.
    pub const SEQ_NUM: Range<usize> = 4..8;
    /// Acknowledgment number.
    pub const ACK_NUM: Range<usize> = 8..12;
    /// Data offset (high nibble), reserved bits and the AE flag (low bit).
    pub const DATA_OFFSET: usize = 12;
    /// The other eight flags.
    pub const FLAGS: usize = 13;
    /// Window.
    pub const WINDOW: Range<usize> = 14..16;
    /// Checksum.
    pub const CHECKSUM: Range<usize> = 16..18;
    /// Urgent pointer.
    pub const URGENT: Range<usize> = 18..20;
    /// Start of the options.
    pub const OPTIONS: usize = 20;
}

/// The fixed 20 bytes of a TCP header, in wire layout (network byte order).
///
/// Obtain one from bytes with zerocopy (`TcpHeader::ref_from_prefix`) or, with
/// the data offset checked, from [`TcpPacket::new_checked`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct TcpHeader {
    src_port: U16,
    dst_port: U16,
    seq_number: U32,
    ack_number: U32,
    offset_flags: U16,
    window: U16,
    checksum: U16,
    urgent_pointer: U16,
}

impl TcpHeader {
    /// Source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        self.src_port.get()
    }
    /// Destination port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        self.dst_port.get()
    }
    /// Sequence number.
    #[inline]
    pub fn seq_number(&self) -> u32 {
        self.seq_number.get()
    }
    /// Acknowledgment number (meaningful when [`Flags::ACK`] is set).
    #[inline]
    pub fn ack_number(&self) -> u32 {
        self.ack_number.get()
    }
    /// Data offset in 32-bit words (0..=15 as on the wire; a checked packet has >= 5).
    #[inline]
    pub fn data_offset(&self) -> u8 {
        (self.offset_flags.get() >> 12) as u8
    }
    /// Header length in bytes (`data_offset * 4`).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.data_offset()) * 4
    }
    /// The three reserved bits between the data offset and the AE flag.
    #[inline]
    pub fn reserved(&self) -> u8 {
        ((self.offset_flags.get() >> 9) & 0x7) as u8
    }
    /// The nine control bits.
    #[inline]
    pub fn flags(&self) -> Flags {
        Flags::from_bits_truncate(self.offset_flags.get() & 0x01ff)
    }
    /// Raw window field (unscaled).
    #[inline]
    pub fn window(&self) -> u16 {
        self.window.get()
    }
    /// Checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        self.checksum.get()
    }
    /// Urgent pointer.
    #[inline]
    pub fn urgent_pointer(&self) -> u16 {
        self.urgent_pointer.get()
    }
    /// Whether SYN is set.
    #[inline]
    pub fn syn(&self) -> bool {
        self.flags().contains(Flags::SYN)
    }
    /// Set the source port.
    pub fn set_src_port(&mut self, v: u16) {
        self.src_port.set(v)
    }
    /// Set the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        self.dst_port.set(v)
    }
    /// Set the sequence number.
    pub fn set_seq_number(&mut self, v: u32) {
        self.seq_number.set(v)
    }
    /// Set the acknowledgment number.
    pub fn set_ack_number(&mut self, v: u32) {
        self.ack_number.set(v)
    }
    /// Set the data offset in words; values above 15 are an error (nothing is written).
    pub fn set_data_offset(&mut self, words: u8) -> Result<(), HeaderError> {
        if words > 15 {
            return Err(HeaderError::DataOffsetTooLarge { data_offset: words });
        }
        let v = self.offset_flags.get();
        self.offset_flags
            .set((v & 0x0fff) | (u16::from(words) << 12));
        Ok(())
    }
    /// Set the nine control bits; the data offset and the reserved bits are
    /// kept, and bits of `flags` outside the nine (possible with
    /// [`Flags::from_bits_retain`]) are ignored.
    pub fn set_flags(&mut self, flags: Flags) {
        let v = self.offset_flags.get();
        self.offset_flags
            .set((v & !Flags::all().bits()) | (flags.bits() & Flags::all().bits()));
    }
    /// Set the window field.
    pub fn set_window(&mut self, v: u16) {
        self.window.set(v)
    }
    /// Set the checksum field.
    pub fn set_checksum(&mut self, v: u16) {
        self.checksum.set(v)
    }
    /// Set the urgent pointer.
    pub fn set_urgent_pointer(&mut self, v: u16) {
        self.urgent_pointer.set(v)
    }
}

/// A checked, borrowed view of a TCP segment: fixed header, options, payload.
///
/// ```
/// use tcp_options::{Flags, TcpPacket, TcpOption};
/// // SYN from port 40000 to 80, data offset 6 (one MSS option).
/// let seg = [0x9c, 0x40, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x60, 0x02, 0xff, 0xff,
///            0, 0, 0, 0, 0x02, 0x04, 0x05, 0xb4];
/// let pkt = TcpPacket::new_checked(&seg).unwrap();
/// assert_eq!(pkt.header().dst_port(), 80);
/// assert_eq!(pkt.header().flags(), Flags::SYN);
/// let first = pkt.options_strict().next().unwrap().unwrap();
/// assert_eq!(first.option, TcpOption::MaxSegmentSize(1460));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpPacket<'a> {
    header: &'a TcpHeader,
    options: &'a [u8],
    payload: &'a [u8],
}

impl<'a> TcpPacket<'a> {
    /// Validate `segment` (TCP header and payload, no IP header).
    ///
    /// Errors: fewer than 20 bytes, a data offset below 5, or a data offset
    /// that runs past the buffer.
    pub fn new_checked(segment: &'a [u8]) -> Result<Self, HeaderError> {
        let (header, _) = TcpHeader::ref_from_prefix(segment)
            .map_err(|_| HeaderError::Truncated { len: segment.len() })?;
        let data_offset = header.data_offset();
        if data_offset < 5 {
            return Err(HeaderError::DataOffsetTooSmall { data_offset });
        }
        let header_len = header.header_len();
        if header_len > segment.len() {
            return Err(HeaderError::DataOffsetOverrun {
                data_offset,
                len: segment.len(),
            });
        }
        let (head, payload) = segment.split_at(header_len);
        let options = head.get(HEADER_LEN..).unwrap_or(&[]);
        Ok(TcpPacket {
            header,
            options,
            payload,
        })
    }

    /// The fixed header.
    #[inline]
    pub fn header(&self) -> &'a TcpHeader {
        self.header
    }
    /// The option block (0..=40 bytes, a multiple of 4).
    #[inline]
    pub fn options(&self) -> &'a [u8] {
        self.options
    }
    /// The bytes after the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }
    /// Iterate the options under the strict policy (see [`StrictOptions`]).
    #[inline]
    pub fn options_strict(&self) -> StrictOptions<'a> {
        StrictOptions::new(self.options)
    }
    /// Iterate the options under the Linux-compatible policy (see [`LinuxOptions`]).
    #[inline]
    pub fn options_linux(&self) -> LinuxOptions<'a> {
        LinuxOptions::new(self.options)
    }
    /// What Linux would record from this segment's options (see [`crate::LinuxRepr`]).
    pub fn linux_repr(&self, ctx: crate::ParseContext) -> crate::LinuxRepr<'a> {
        crate::LinuxRepr::parse(self.options, ctx.with_syn(self.header.syn()))
    }
}
