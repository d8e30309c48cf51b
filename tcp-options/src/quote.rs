//! A TCP packet as an ICMP error quotes it: the IP header and as much of
//! the segment as the sender of the error kept.
//!
//! An ICMP error carries the start of the datagram that caused it. RFC 792
//! asks for the IP header and the first 64 bits of the data: a TCP
//! segment's ports and sequence number, nothing more. RFC 1812 (section
//! 4.3.2.3) lets a router quote as much as fits in 576 bytes, which Linux
//! does, and ICMPv6 (RFC 4443 section 2.4) as much as fits in 1280 bytes.
//! The quoted IP header still gives the datagram's whole length, so
//! [`crate::PacketRepr::parse`] refuses a short quote
//! ([`PacketError::LengthOverrun`]); [`QuotedPacket::parse`] reads what is
//! there. A capture cut at its snap length is read the same way.
//!
//! [`QuotedSegment`] gives each TCP field only when the quote holds it:
//! ports and sequence number always (a quote of fewer than 8 TCP bytes is
//! refused: every ICMP error holds them), the acknowledgment number from 12
//! bytes on, flags, window and data offset from 20, the option block once
//! the whole header is quoted, the payload as far as it is quoted, and a
//! whole [`TcpRepr`] when the whole segment is.
//!
//! ```
//! use core::net::Ipv4Addr;
//! use tcp_options::quote::QuotedPacket;
//! use tcp_options::{Flags, IpRepr, OptionsBuilder, PacketRepr, TcpRepr};
//!
//! let opts = OptionsBuilder::new().mss(1460).window_scale(7).build().unwrap();
//! let syn = PacketRepr {
//!     ip: IpRepr::tcp(Ipv4Addr::new(192, 0, 2, 1).into(), Ipv4Addr::new(192, 0, 2, 2).into()).unwrap(),
//!     tcp: TcpRepr { flags: Flags::SYN, seq_number: 7, options: &opts, ..TcpRepr::new(40000, 443) },
//! };
//! let mut buf = [0u8; 48];
//! let n = syn.emit(&mut buf).unwrap();
//!
//! // A router that quotes the whole SYN (Linux): every field.
//! let whole = QuotedPacket::parse(&buf[..n]).unwrap();
//! assert_eq!(whole.tcp.repr(), Some(syn.tcp));
//!
//! // An RFC 792 router: the IP header and 8 bytes, ports and sequence number.
//! let short = QuotedPacket::parse(&buf[..28]).unwrap();
//! assert_eq!((short.tcp.src_port(), short.tcp.seq_number()), (40000, 7));
//! assert_eq!(short.tcp.flags(), None);
//! assert_eq!(short.tcp.options(), None);
//! assert!(PacketRepr::parse(&buf[..28]).is_err());
//! ```

use zerocopy::FromBytes;

use crate::error::PacketError;
use crate::flags::Flags;
use crate::header::{TcpHeader, HEADER_LEN};
use crate::ip::{IpRepr, PROTOCOL_TCP};
use crate::repr::TcpRepr;

/// TCP bytes every ICMP error quotes (RFC 792: 64 bits of the datagram):
/// source port, destination port, sequence number.
pub const MIN_QUOTED_TCP: usize = 8;

/// Bytes up to the end of the acknowledgment number.
const ACK_END: usize = 12;

/// An IP packet carrying TCP, as far as it was quoted (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotedPacket<'a> {
    /// The IP header (IPv4 options and IPv6 extension headers must be
    /// quoted whole).
    pub ip: IpRepr<'a>,
    /// The packet's length as its IP header gives it (the original
    /// datagram's, which the quote may not hold).
    pub ip_len: usize,
    /// The TCP segment as far as it was quoted.
    pub tcp: QuotedSegment<'a>,
}

impl<'a> QuotedPacket<'a> {
    /// Read a quoted packet: its IP header
    /// ([`IpRepr::parse_quoted`]: a length past the buffer is no error),
    /// TCP as the upper-layer protocol and at least [`MIN_QUOTED_TCP`]
    /// bytes of the segment.
    ///
    /// Errors: those of [`IpRepr::parse_quoted`], [`PacketError::NotTcp`],
    /// and [`PacketError::QuoteTooShort`] when fewer than 8 TCP bytes are
    /// there.
    pub fn parse(quote: &'a [u8]) -> Result<Self, PacketError> {
        let (ip, upper, ip_len) = IpRepr::parse_quoted(quote)?;
        let offset = ip.header_len();
        let protocol = match ip {
            IpRepr::V4(r) => r.protocol,
            IpRepr::V6(r) => r.upper_protocol().unwrap_or(r.next_header),
        };
        if protocol != PROTOCOL_TCP {
            return Err(PacketError::NotTcp { protocol, offset });
        }
        let segment_len = ip_len.saturating_sub(offset);
        let tcp = QuotedSegment::new(upper, segment_len).map_err(|e| match e {
            PacketError::QuoteTooShort { len, .. } => PacketError::QuoteTooShort { offset, len },
            other => other,
        })?;
        Ok(QuotedPacket { ip, ip_len, tcp })
    }

    /// Whether the whole packet was quoted.
    pub fn is_whole(&self) -> bool {
        self.tcp.is_whole()
    }
}

/// The start of a TCP segment: at least its ports and sequence number,
/// and every other field the quote holds (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotedSegment<'a> {
    /// The quoted bytes (at least 8, at most `segment_len`).
    bytes: &'a [u8],
    /// The segment's whole length (from the IP header).
    segment_len: usize,
}

impl<'a> QuotedSegment<'a> {
    /// The quoted bytes `bytes` of a segment of `segment_len` bytes (bytes
    /// beyond `segment_len` are not the segment's and are left out; a
    /// `segment_len` below the bytes quoted is taken as their length).
    ///
    /// Errors: [`PacketError::QuoteTooShort`] (offset 0) for fewer than
    /// [`MIN_QUOTED_TCP`] bytes of the segment.
    pub fn new(bytes: &'a [u8], segment_len: usize) -> Result<Self, PacketError> {
        let bytes = bytes.get(..segment_len).unwrap_or(bytes);
        if bytes.len() < MIN_QUOTED_TCP {
            return Err(PacketError::QuoteTooShort {
                offset: 0,
                len: bytes.len(),
            });
        }
        Ok(QuotedSegment {
            bytes,
            segment_len: segment_len.max(bytes.len()),
        })
    }

    /// The quoted bytes.
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// How many bytes of the segment were quoted.
    pub const fn quoted_len(&self) -> usize {
        self.bytes.len()
    }

    /// The segment's whole length (header, options and payload), from its
    /// IP header.
    pub const fn segment_len(&self) -> usize {
        self.segment_len
    }

    /// Whether the whole segment was quoted.
    pub const fn is_whole(&self) -> bool {
        self.bytes.len() == self.segment_len
    }

    fn be16(&self, at: usize) -> u16 {
        match self.bytes.get(at..at + 2) {
            Some([a, b]) => u16::from_be_bytes([*a, *b]),
            _ => 0,
        }
    }

    fn be32(&self, at: usize) -> Option<u32> {
        match self.bytes.get(at..at + 4) {
            Some([a, b, c, d]) => Some(u32::from_be_bytes([*a, *b, *c, *d])),
            _ => None,
        }
    }

    /// Source port (always quoted).
    pub fn src_port(&self) -> u16 {
        self.be16(0)
    }

    /// Destination port (always quoted).
    pub fn dst_port(&self) -> u16 {
        self.be16(2)
    }

    /// Sequence number (always quoted).
    pub fn seq_number(&self) -> u32 {
        self.be32(4).unwrap_or(0)
    }

    /// Acknowledgment number, when quoted (12 bytes or more).
    pub fn ack_number(&self) -> Option<u32> {
        self.bytes.get(..ACK_END).and(self.be32(8))
    }

    /// The fixed header, when its 20 bytes were quoted.
    pub fn header(&self) -> Option<&'a TcpHeader> {
        TcpHeader::ref_from_prefix(self.bytes).ok().map(|(h, _)| h)
    }

    /// The control bits, when the fixed header was quoted.
    pub fn flags(&self) -> Option<Flags> {
        self.header().map(TcpHeader::flags)
    }

    /// The window field, when the fixed header was quoted.
    pub fn window(&self) -> Option<u16> {
        self.header().map(TcpHeader::window)
    }

    /// The header length in bytes (data offset times 4), when the fixed
    /// header was quoted and its data offset is at least 5.
    pub fn header_len(&self) -> Option<usize> {
        self.header()
            .filter(|h| h.data_offset() >= 5)
            .map(TcpHeader::header_len)
    }

    /// The option block, when the whole header was quoted.
    pub fn options(&self) -> Option<&'a [u8]> {
        let len = self.header_len()?;
        self.bytes.get(HEADER_LEN..len)
    }

    /// The payload as far as it was quoted (all of it when
    /// [`QuotedSegment::is_whole`]), once the whole header was.
    pub fn payload(&self) -> Option<&'a [u8]> {
        let len = self.header_len()?;
        self.bytes.get(len..)
    }

    /// The payload's whole length (from the IP header), once the header
    /// length was quoted and fits the segment.
    pub fn payload_len(&self) -> Option<usize> {
        self.segment_len.checked_sub(self.header_len()?)
    }

    /// The segment's fields, when the whole segment was quoted and is a
    /// valid one ([`TcpRepr::parse`]).
    pub fn repr(&self) -> Option<TcpRepr<'a>> {
        if !self.is_whole() {
            return None;
        }
        TcpRepr::parse(self.bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::{Ipv4Repr, Ipv6Repr};
    use crate::{OptionsBuilder, PacketRepr};
    use core::net::{Ipv4Addr, Ipv6Addr};

    const A4: Ipv4Addr = Ipv4Addr::new(198, 18, 41, 2);
    const B4: Ipv4Addr = Ipv4Addr::new(198, 18, 44, 2);

    /// A SYN with MSS and window scale and `payload`, written out.
    fn syn(ip: IpRepr<'static>, payload: &'static [u8]) -> ([u8; 128], usize) {
        let opts = OptionsBuilder::new()
            .mss(1460)
            .window_scale(7)
            .build()
            .unwrap();
        let p = PacketRepr {
            ip,
            tcp: TcpRepr {
                flags: Flags::SYN | Flags::ECE | Flags::CWR,
                seq_number: 0x0102_0304,
                ack_number: 0x0506_0708,
                window: 64240,
                options: &opts,
                payload,
                ..TcpRepr::new(40000, 5201)
            },
        };
        let mut buf = [0u8; 128];
        let n = p.emit(&mut buf).unwrap();
        (buf, n)
    }

    /// RFC 792: IP header and 8 bytes: ports and sequence number only.
    #[test]
    fn an_rfc_792_quote_holds_ports_and_sequence_number() {
        let (buf, _) = syn(Ipv4Repr::tcp(A4, B4).into(), &[]);
        let q = QuotedPacket::parse(&buf[..28]).unwrap();
        assert_eq!(q.ip_len, 48);
        assert_eq!(q.ip.src(), A4);
        let t = q.tcp;
        assert_eq!((t.src_port(), t.dst_port()), (40000, 5201));
        assert_eq!(t.seq_number(), 0x0102_0304);
        assert_eq!((t.quoted_len(), t.segment_len()), (8, 28));
        assert_eq!(t.ack_number(), None);
        assert_eq!((t.flags(), t.window(), t.header_len()), (None, None, None));
        assert_eq!((t.options(), t.payload(), t.repr()), (None, None, None));
        assert!(!q.is_whole());
        // 12 bytes: the acknowledgment number too.
        let q = QuotedPacket::parse(&buf[..32]).unwrap();
        assert_eq!(q.tcp.ack_number(), Some(0x0506_0708));
        assert_eq!(q.tcp.flags(), None);
    }

    /// A quote cut inside the options: the fixed header, not the options.
    #[test]
    fn a_quote_cut_in_the_options_has_the_fixed_header_only() {
        let (buf, n) = syn(Ipv4Repr::tcp(A4, B4).into(), b"data");
        let q = QuotedPacket::parse(&buf[..44]).unwrap();
        assert_eq!(q.tcp.flags(), Some(Flags::SYN | Flags::ECE | Flags::CWR));
        assert_eq!(q.tcp.window(), Some(64240));
        assert_eq!(q.tcp.header_len(), Some(28));
        assert_eq!(q.tcp.options(), None);
        assert_eq!(q.tcp.payload_len(), Some(4));
        // The header whole, the payload in part.
        let q = QuotedPacket::parse(&buf[..50]).unwrap();
        assert_eq!(q.tcp.options(), Some(&[2, 4, 5, 0xb4, 1, 3, 3, 7][..]));
        assert_eq!(q.tcp.payload(), Some(&b"da"[..]));
        assert_eq!(q.tcp.repr(), None);
        // All of it: the same fields as the whole packet's repr.
        let q = QuotedPacket::parse(&buf[..n]).unwrap();
        assert!(q.is_whole());
        assert_eq!(
            q.tcp.repr(),
            Some(PacketRepr::parse(&buf[..n]).unwrap().tcp)
        );
        // Bytes after the IP length (padding) are not the segment's.
        let q = QuotedPacket::parse(&buf[..n + 6]).unwrap();
        assert_eq!(q.tcp.quoted_len(), n - 20);
        assert!(q.is_whole());
    }

    #[test]
    fn ipv6_quotes_and_errors() {
        let a = Ipv6Addr::new(0x2001, 0xdb8, 0x41, 0, 0, 0, 0, 2);
        let b = Ipv6Addr::new(0x2001, 0xdb8, 0x44, 0, 0, 0, 0, 2);
        let (buf, n) = syn(Ipv6Repr::tcp(a, b).into(), &[]);
        let q = QuotedPacket::parse(&buf[..48]).unwrap();
        assert_eq!((q.ip_len, q.tcp.seq_number()), (n, 0x0102_0304));
        assert_eq!(q.tcp.flags(), None);
        assert_eq!(
            QuotedPacket::parse(&buf[..47]),
            Err(PacketError::QuoteTooShort { offset: 40, len: 7 })
        );
        assert_eq!(
            QuotedPacket::parse(&buf[..39]),
            Err(PacketError::Truncated {
                needed: 40,
                len: 39
            })
        );
        let mut udp = buf;
        udp[6] = 17;
        assert_eq!(
            QuotedPacket::parse(&udp[..n]),
            Err(PacketError::NotTcp {
                protocol: 17,
                offset: 40
            })
        );
    }

    /// No prefix of a packet, however short, makes parsing panic, and what
    /// a prefix shows agrees with the whole packet.
    #[test]
    fn every_prefix_agrees_with_the_whole() {
        let (buf, n) = syn(Ipv4Repr::tcp(A4, B4).into(), b"0123456789");
        let whole = PacketRepr::parse(&buf[..n]).unwrap().tcp;
        for cut in 0..=n {
            let Ok(q) = QuotedPacket::parse(&buf[..cut]) else {
                assert!(cut < 28, "{cut}");
                continue;
            };
            let t = q.tcp;
            assert_eq!(t.seq_number(), whole.seq_number);
            assert_eq!(t.quoted_len(), cut - 20);
            if let Some(f) = t.flags() {
                assert_eq!(f, whole.flags);
            }
            if let Some(o) = t.options() {
                assert_eq!(o, whole.options);
            }
            if let Some(p) = t.payload() {
                assert!(whole.payload.starts_with(p));
            }
            assert_eq!(t.repr().is_some(), cut == n);
        }
        assert_eq!(
            QuotedSegment::new(&[1, 2, 3], 20),
            Err(PacketError::QuoteTooShort { offset: 0, len: 3 })
        );
    }
}
