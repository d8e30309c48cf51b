//! The meaning of a TCP segment as plain fields, read from and written to
//! the wire.
//!
//! [`TcpRepr`] holds what a segment says: ports, sequence and
//! acknowledgment numbers, [`Flags`] (all nine, AE/ECE/CWR included),
//! window, urgent pointer, the option block as raw bytes and the payload.
//! It has no data offset and no checksum field: the data offset follows
//! from the option block, and the checksum from the pseudo-header given to
//! [`TcpRepr::emit`].
//!
//! - Reading: [`TcpRepr::parse`] checks a segment ([`TcpPacket::new_checked`])
//!   and borrows its option block and payload; [`TcpRepr::from_packet`]
//!   does the same from an already checked view. The checksum is not looked
//!   at: check it with [`PseudoHeader::verify`] (or read the whole packet
//!   with [`crate::PacketRepr::parse_verified`]).
//! - Writing: [`TcpRepr::emit`] writes header, options and payload into
//!   the caller's buffer and, given a [`PseudoHeader`], fills the checksum;
//!   [`TcpRepr::buffer_len`] says how many bytes that takes.
//! - Options: any block of whole 32-bit words up to 40 bytes, written as
//!   given (malformed ones too: a probe may want them). The usual way to
//!   make one is [`OptionsBuilder::build`](crate::OptionsBuilder::build),
//!   whose `heapless::Vec` the repr borrows.
//!
//! The three reserved bits are not represented: they are ignored when
//! reading and written as zero (RFC 9293 section 3.1). So for a segment
//! with reserved bits clear and a correct checksum, emitting what was
//! parsed gives the same bytes.
//!
//! ```
//! use core::net::Ipv4Addr;
//! use tcp_options::{checksum::PseudoHeader, Flags, OptionsBuilder, TcpRepr};
//!
//! let opts = OptionsBuilder::new().mss(1460).sack_permitted().window_scale(7).build().unwrap();
//! let syn = TcpRepr {
//!     flags: Flags::SYN,
//!     seq_number: 1_000,
//!     window: 64240,
//!     options: &opts,
//!     ..TcpRepr::new(40000, 443)
//! };
//! let ph = PseudoHeader::V4 { src: Ipv4Addr::new(192, 0, 2, 1), dst: Ipv4Addr::new(192, 0, 2, 2) };
//! let mut buf = [0u8; 60];
//! let n = syn.emit(&mut buf, Some(ph)).unwrap();
//! assert_eq!(n, 32); // 20 + 12 bytes of options
//! assert!(ph.verify(&buf[..n]));
//! assert_eq!(TcpRepr::parse(&buf[..n]).unwrap(), syn);
//! ```

use zerocopy::{FromZeros, IntoBytes};

use crate::checksum::PseudoHeader;
use crate::error::{EmitError, HeaderError};
use crate::flags::Flags;
use crate::header::{TcpHeader, TcpPacket, HEADER_LEN};
use crate::kind::MAX_OPTIONS_LEN;
use crate::walk::{LinuxOptions, StrictOptions};

/// A TCP segment's fields (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TcpRepr<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq_number: u32,
    /// Acknowledgment number (written as given; meaningful with [`Flags::ACK`]).
    pub ack_number: u32,
    /// The nine control bits; bits outside them are not written.
    pub flags: Flags,
    /// Window field (unscaled).
    pub window: u16,
    /// Urgent pointer (written as given; meaningful with [`Flags::URG`]).
    pub urgent_pointer: u16,
    /// The option block as on the wire: whole 32-bit words, at most 40
    /// bytes (checked by [`TcpRepr::emit`]).
    pub options: &'a [u8],
    /// The bytes after the header.
    pub payload: &'a [u8],
}

impl<'a> TcpRepr<'a> {
    /// A segment between these ports with every other field zero or empty
    /// (no flags, no options, no payload); set the rest with struct update
    /// syntax.
    pub const fn new(src_port: u16, dst_port: u16) -> Self {
        TcpRepr {
            src_port,
            dst_port,
            seq_number: 0,
            ack_number: 0,
            flags: Flags::empty(),
            window: 0,
            urgent_pointer: 0,
            options: &[],
            payload: &[],
        }
    }

    /// The fields of a checked segment view.
    pub fn from_packet(packet: &TcpPacket<'a>) -> Self {
        let h = packet.header();
        TcpRepr {
            src_port: h.src_port(),
            dst_port: h.dst_port(),
            seq_number: h.seq_number(),
            ack_number: h.ack_number(),
            flags: h.flags(),
            window: h.window(),
            urgent_pointer: h.urgent_pointer(),
            options: packet.options(),
            payload: packet.payload(),
        }
    }

    /// Check `segment` (TCP header and payload, no IP header) and read it;
    /// the errors are those of [`TcpPacket::new_checked`]. The checksum is
    /// not checked.
    pub fn parse(segment: &'a [u8]) -> Result<Self, HeaderError> {
        TcpPacket::new_checked(segment).map(|p| TcpRepr::from_packet(&p))
    }

    /// Header length in bytes: 20 plus the option block.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN + self.options.len()
    }

    /// Bytes [`TcpRepr::emit`] writes: header, options and payload.
    pub const fn buffer_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }

    /// Iterate the options under the strict policy (see [`StrictOptions`]).
    pub fn options_strict(&self) -> StrictOptions<'a> {
        StrictOptions::new(self.options)
    }

    /// Iterate the options under the Linux-compatible policy (see [`LinuxOptions`]).
    pub fn options_linux(&self) -> LinuxOptions<'a> {
        LinuxOptions::new(self.options)
    }

    /// What Linux would record from the options (see [`crate::LinuxRepr`]),
    /// SYN taken from [`TcpRepr::flags`].
    pub fn linux_repr(&self, ctx: crate::ParseContext) -> crate::LinuxRepr<'a> {
        crate::LinuxRepr::parse(self.options, ctx.with_syn(self.flags.contains(Flags::SYN)))
    }

    /// Check that the segment can be written for `pseudo` and return its
    /// length.
    pub(crate) fn check(&self, pseudo: Option<&PseudoHeader>) -> Result<usize, EmitError> {
        let len = self.options.len();
        if len % 4 != 0 || len > MAX_OPTIONS_LEN {
            return Err(EmitError::TcpOptionsLen { len });
        }
        // At most 60 + a slice length (at most isize::MAX): no overflow.
        let total = self.buffer_len();
        if let Some(p) = pseudo {
            let max = p.max_segment_len();
            if total > max {
                return Err(EmitError::TooLong { len: total, max });
            }
        }
        Ok(total)
    }

    /// Write the segment to the start of `buf` and return its length
    /// ([`TcpRepr::buffer_len`]). With a pseudo-header the checksum is
    /// filled; with `None` it is left zero (for a caller that fills it
    /// later, or hardware that does).
    ///
    /// Errors, with nothing written: an option block that is not whole
    /// words or is over 40 bytes, a segment longer than the pseudo-header
    /// can describe, a buffer shorter than the segment.
    pub fn emit(&self, buf: &mut [u8], pseudo: Option<PseudoHeader>) -> Result<usize, EmitError> {
        let total = self.check(pseudo.as_ref())?;
        let available = buf.len();
        let out = buf.get_mut(..total).ok_or(EmitError::BufferTooSmall {
            needed: total,
            available,
        })?;
        let mut h = TcpHeader::new_zeroed();
        h.set_src_port(self.src_port);
        h.set_dst_port(self.dst_port);
        h.set_seq_number(self.seq_number);
        h.set_ack_number(self.ack_number);
        // At most 60 bytes (checked): 15 words fit the field.
        let _ = h.set_data_offset((self.header_len() / 4) as u8);
        h.set_flags(self.flags);
        h.set_window(self.window);
        h.set_urgent_pointer(self.urgent_pointer);
        let (head, rest) = out.split_at_mut(HEADER_LEN);
        head.copy_from_slice(h.as_bytes());
        let (opts, payload) = rest.split_at_mut(self.options.len());
        opts.copy_from_slice(self.options);
        payload.copy_from_slice(self.payload);
        if let Some(p) = pseudo {
            // The length was checked against the pseudo-header above.
            p.fill(out);
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::{Ipv4Addr, Ipv6Addr};

    const V4: PseudoHeader = PseudoHeader::V4 {
        src: Ipv4Addr::new(198, 18, 0, 1),
        dst: Ipv4Addr::new(198, 19, 0, 1),
    };

    #[test]
    fn emit_writes_every_field_where_the_header_says() {
        let opts = [2, 4, 0x05, 0xb4];
        let r = TcpRepr {
            seq_number: 0x0102_0304,
            ack_number: 0x0506_0708,
            flags: Flags::SYN | Flags::ACK | Flags::ECE | Flags::CWR | Flags::AE,
            window: 0x090a,
            urgent_pointer: 0x0b0c,
            options: &opts,
            payload: b"xy",
            ..TcpRepr::new(0x1122, 0x3344)
        };
        let mut buf = [0xffu8; 32];
        assert_eq!(r.emit(&mut buf, None), Ok(26));
        assert_eq!(
            buf[..26],
            [
                0x11, 0x22, 0x33, 0x44, 1, 2, 3, 4, 5, 6, 7, 8, 0x61, 0xd2, 0x09, 0x0a, 0, 0, 0x0b,
                0x0c, 2, 4, 0x05, 0xb4, b'x', b'y'
            ]
        );
        assert_eq!(buf[26..], [0xff; 6], "nothing after the segment");
        assert_eq!(TcpRepr::parse(&buf[..26]), Ok(r));
    }

    #[test]
    fn bad_option_blocks_and_small_buffers_write_nothing() {
        let mut buf = [0xaau8; 64];
        for len in [1, 2, 3, 5, 41, 44] {
            let opts = [1u8; 44];
            let r = TcpRepr {
                options: &opts[..len],
                ..TcpRepr::new(1, 2)
            };
            assert_eq!(
                r.emit(&mut buf, None),
                Err(EmitError::TcpOptionsLen { len })
            );
        }
        let r = TcpRepr {
            payload: &[0; 30],
            ..TcpRepr::new(1, 2)
        };
        assert_eq!(
            r.emit(&mut buf[..49], Some(V4)),
            Err(EmitError::BufferTooSmall {
                needed: 50,
                available: 49
            })
        );
        assert_eq!(buf, [0xaa; 64]);
    }

    #[test]
    fn checksum_follows_the_pseudo_header() {
        let r = TcpRepr {
            payload: b"hello",
            ..TcpRepr::new(1, 2)
        };
        let v6 = PseudoHeader::V6 {
            src: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1),
            dst: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2),
        };
        let mut buf = [0u8; 25];
        for ph in [V4, v6] {
            r.emit(&mut buf, Some(ph)).unwrap();
            assert!(ph.verify(&buf));
        }
        r.emit(&mut buf, None).unwrap();
        assert_eq!(buf[16..18], [0, 0]);
    }

    #[test]
    fn segment_too_long_for_ipv4() {
        static BIG: [u8; 65516] = [0; 65516];
        let r = TcpRepr {
            payload: &BIG,
            ..TcpRepr::new(1, 2)
        };
        assert_eq!(r.buffer_len(), 65536);
        let mut buf = [0u8; 4];
        assert_eq!(
            r.emit(&mut buf, Some(V4)),
            Err(EmitError::TooLong {
                len: 65536,
                max: 65535
            })
        );
    }
}
