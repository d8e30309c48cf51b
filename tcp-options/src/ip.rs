//! IPv4 and IPv6 headers as plain fields, read from and written to the
//! wire: what carries a TCP segment.
//!
//! [`Ipv4Repr`] and [`Ipv6Repr`] hold the fields a tool sets or reads;
//! [`IpRepr`] is either. No length and no header checksum is a field:
//! `parse` checks them against the buffer, `emit` computes them from the
//! payload length it is given.
//!
//! - IPv4 (RFC 791): the DS field (the old TOS byte, DSCP and ECN), the
//!   identification, DF, TTL, protocol, and the options as raw bytes
//!   (usually none: IHL 5). The evil bit (RFC 3514) is ignored when
//!   reading and written as zero. A fragment (MF set or a non-zero
//!   offset) is refused: a repr has no fields for it.
//! - IPv6 (RFC 8200): traffic class, 20-bit flow label, hop limit, the next
//!   header field, and the extension headers as raw bytes (usually none).
//!   `parse` steps over hop-by-hop, routing, fragment, AH and destination
//!   options headers with the same walk as [`crate::netfilter::locate`];
//!   `emit` requires the extension headers to be one whole chain from
//!   [`Ipv6Repr::next_header`] by that walk. A fragment (a fragment
//!   header with M set or a non-zero offset) is refused. Jumbograms
//!   (RFC 2675) are not read: a payload length of 0 is an empty payload.
//!
//! Options and extension headers are carried, not interpreted, so that a
//! packet read and written again keeps them byte for byte.
//!
//! ```
//! use core::net::Ipv4Addr;
//! use tcp_options::ip::{Ipv4Repr, PROTOCOL_TCP};
//!
//! let ip = Ipv4Repr { tos: 0x20, ttl: 3, ..Ipv4Repr::tcp(Ipv4Addr::new(192, 0, 2, 1), Ipv4Addr::new(192, 0, 2, 2)) };
//! let mut buf = [0u8; 28];
//! let n = ip.emit(&mut buf, 8).unwrap(); // 8 bytes of payload follow
//! assert_eq!(n, 20);
//! assert_eq!(&buf[..4], &[0x45, 0x20, 0, 28]);
//! let (back, payload) = Ipv4Repr::parse(&buf).unwrap();
//! assert_eq!((back, payload.len()), (ip, 8));
//! assert_eq!(back.protocol, PROTOCOL_TCP);
//! ```

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::checksum::{self, PseudoHeader};
use crate::error::{EmitError, PacketError};
use crate::netfilter::{ipv6_extensions, IpFamily};

/// IP protocol number (IPv6 next header) of TCP.
pub const PROTOCOL_TCP: u8 = 6;
/// Length of the IPv4 header without options.
pub const IPV4_HEADER_LEN: usize = 20;
/// Length of the fixed IPv6 header.
pub const IPV6_HEADER_LEN: usize = 40;
/// Most bytes of IPv4 options (IHL 15).
pub const MAX_IPV4_OPTIONS_LEN: usize = 40;
/// TTL and hop limit of the constructors: Linux's default
/// (`net.ipv4.ip_default_ttl`, `net.ipv6.conf.*.hop_limit`).
pub const DEFAULT_TTL: u8 = 64;

/// IPv4 flag: don't fragment.
const DF: u16 = 0x4000;
/// IPv4 flag: more fragments.
const MF: u16 = 0x2000;
/// IPv4 fragment offset field (8-byte units).
const FRAGMENT_OFFSET: u16 = 0x1fff;
/// Largest flow label.
const MAX_FLOW_LABEL: u32 = 0xf_ffff;

/// An IPv4 header's fields (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Repr<'a> {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// The DS field (RFC 2474; the TOS byte of RFC 791): DSCP in the upper
    /// six bits, ECN in the lower two.
    pub tos: u8,
    /// Identification.
    pub identification: u16,
    /// The DF (don't fragment) flag.
    pub dont_fragment: bool,
    /// Time to live.
    pub ttl: u8,
    /// Protocol of the payload (6 for TCP).
    pub protocol: u8,
    /// Options as on the wire, whole 32-bit words, at most 40 bytes
    /// (checked by [`Ipv4Repr::emit`]); empty for IHL 5.
    pub options: &'a [u8],
}

impl<'a> Ipv4Repr<'a> {
    /// A header for TCP between these addresses as Linux sends one: DS
    /// field 0, identification 0, DF set, TTL 64, no options.
    pub const fn tcp(src: Ipv4Addr, dst: Ipv4Addr) -> Self {
        Ipv4Repr {
            src,
            dst,
            tos: 0,
            identification: 0,
            dont_fragment: true,
            ttl: DEFAULT_TTL,
            protocol: PROTOCOL_TCP,
            options: &[],
        }
    }

    /// Header length in bytes: 20 plus the options.
    pub const fn header_len(&self) -> usize {
        IPV4_HEADER_LEN + self.options.len()
    }

    /// The TCP pseudo-header of these addresses.
    pub const fn pseudo_header(&self) -> PseudoHeader {
        PseudoHeader::V4 {
            src: self.src,
            dst: self.dst,
        }
    }

    /// Read the IPv4 header at the start of `packet`; returns it and the
    /// payload (up to the total length: bytes after it, such as Ethernet
    /// padding, are not payload). The header checksum is not checked (see
    /// [`checksum::verify_ipv4_header`]).
    ///
    /// Errors: not version 4, a buffer shorter than the header, an IHL
    /// below 5, a total length below the header length or past the buffer,
    /// a fragment.
    pub fn parse(packet: &'a [u8]) -> Result<(Self, &'a [u8]), PacketError> {
        let (repr, header_len, ip_len) = Self::parse_header(packet, false)?;
        Ok((repr, packet.get(header_len..ip_len).unwrap_or(&[])))
    }

    /// Read the IPv4 header of a packet that may be cut short: the quote
    /// in an ICMP error (RFC 792 keeps the IP header and 8 bytes of the
    /// datagram) or a capture cut at its snap length. Returns the header,
    /// the payload bytes present (up to the total length, or to the end of
    /// the buffer when the total length runs past it) and the total length
    /// the header gives. The errors are those of [`Ipv4Repr::parse`] but
    /// for a total length past the buffer, which is no error here.
    ///
    /// ```
    /// use core::net::Ipv4Addr;
    /// use tcp_options::ip::Ipv4Repr;
    ///
    /// let ip = Ipv4Repr::tcp(Ipv4Addr::new(192, 0, 2, 1), Ipv4Addr::new(192, 0, 2, 2));
    /// let mut buf = [0u8; 28];
    /// ip.emit(&mut buf, 40).unwrap(); // the header says 60 bytes, 28 are here
    /// assert!(Ipv4Repr::parse(&buf).is_err());
    /// let (back, payload, total) = Ipv4Repr::parse_quoted(&buf).unwrap();
    /// assert_eq!((back, payload.len(), total), (ip, 8, 60));
    /// ```
    pub fn parse_quoted(packet: &'a [u8]) -> Result<(Self, &'a [u8], usize), PacketError> {
        let (repr, header_len, ip_len) = Self::parse_header(packet, true)?;
        let end = ip_len.min(packet.len());
        Ok((repr, packet.get(header_len..end).unwrap_or(&[]), ip_len))
    }

    /// The header, its length and the total length; a total length past
    /// the buffer is an error unless `cut` (a packet cut short).
    fn parse_header(packet: &'a [u8], cut: bool) -> Result<(Self, usize, usize), PacketError> {
        let len = packet.len();
        let first = *packet
            .first()
            .ok_or(PacketError::Truncated { needed: 1, len })?;
        let version = first >> 4;
        if version != 4 {
            return Err(PacketError::Version { version });
        }
        let Some(fixed) = packet.get(..IPV4_HEADER_LEN) else {
            return Err(PacketError::Truncated {
                needed: IPV4_HEADER_LEN,
                len,
            });
        };
        let ihl = first & 0x0f;
        if ihl < 5 {
            return Err(PacketError::Ipv4HeaderLen { ihl });
        }
        let header_len = usize::from(ihl) * 4;
        if header_len > len {
            return Err(PacketError::Truncated {
                needed: header_len,
                len,
            });
        }
        let total_len = be16(fixed, 2);
        let ip_len = usize::from(total_len);
        if ip_len < header_len {
            return Err(PacketError::Ipv4TotalLen {
                total_len,
                header_len,
            });
        }
        if ip_len > len && !cut {
            return Err(PacketError::LengthOverrun { ip_len, len });
        }
        let frag = be16(fixed, 6);
        if frag & (MF | FRAGMENT_OFFSET) != 0 {
            return Err(PacketError::Fragment {
                // 13 bits times 8: at most 65528, fits.
                offset: (frag & FRAGMENT_OFFSET) << 3,
                more: frag & MF != 0,
            });
        }
        let repr = Ipv4Repr {
            src: Ipv4Addr::from(be32(fixed, 12)),
            dst: Ipv4Addr::from(be32(fixed, 16)),
            tos: fixed.get(1).copied().unwrap_or(0),
            identification: be16(fixed, 4),
            dont_fragment: frag & DF != 0,
            ttl: fixed.get(8).copied().unwrap_or(0),
            protocol: fixed.get(9).copied().unwrap_or(0),
            options: packet.get(IPV4_HEADER_LEN..header_len).unwrap_or(&[]),
        };
        Ok((repr, header_len, ip_len))
    }

    /// Check that the header can be written before `payload_len` bytes;
    /// returns the header length and the total length.
    fn check(&self, payload_len: usize) -> Result<(usize, u16), EmitError> {
        let len = self.options.len();
        if len % 4 != 0 || len > MAX_IPV4_OPTIONS_LEN {
            return Err(EmitError::Ipv4OptionsLen { len });
        }
        let header_len = self.header_len();
        let total = header_len.saturating_add(payload_len);
        let total_len = u16::try_from(total).map_err(|_| EmitError::TooLong {
            len: total,
            max: usize::from(u16::MAX),
        })?;
        Ok((header_len, total_len))
    }

    /// Write the header to the start of `buf`, for `payload_len` bytes of
    /// payload after it (not written here), with its checksum; returns
    /// the header length.
    ///
    /// Errors, with nothing written: options that are not whole words or
    /// over 40 bytes, a total length above 65535, a buffer shorter than
    /// the header.
    pub fn emit(&self, buf: &mut [u8], payload_len: usize) -> Result<usize, EmitError> {
        let (header_len, total_len) = self.check(payload_len)?;
        let available = buf.len();
        let out = buf.get_mut(..header_len).ok_or(EmitError::BufferTooSmall {
            needed: header_len,
            available,
        })?;
        let (fixed, options) = out.split_at_mut(IPV4_HEADER_LEN);
        // At most 60 bytes (checked): 15 words fit the nibble.
        let version_ihl = 0x40 | (header_len / 4) as u8;
        let flags = if self.dont_fragment { DF } else { 0 };
        let [t0, t1] = total_len.to_be_bytes();
        let [i0, i1] = self.identification.to_be_bytes();
        let [f0, f1] = flags.to_be_bytes();
        let [s0, s1, s2, s3] = self.src.octets();
        let [d0, d1, d2, d3] = self.dst.octets();
        fixed.copy_from_slice(&[
            version_ihl,
            self.tos,
            t0,
            t1,
            i0,
            i1,
            f0,
            f1,
            self.ttl,
            self.protocol,
            0,
            0,
            s0,
            s1,
            s2,
            s3,
            d0,
            d1,
            d2,
            d3,
        ]);
        options.copy_from_slice(self.options);
        // 20 to 60 bytes: always filled.
        checksum::fill_ipv4_header(out);
        Ok(header_len)
    }
}

/// An IPv6 header's fields, with any extension headers (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Repr<'a> {
    /// Source address.
    pub src: Ipv6Addr,
    /// Destination address.
    pub dst: Ipv6Addr,
    /// Traffic class (the DS field: DSCP and ECN).
    pub traffic_class: u8,
    /// Flow label, 20 bits (checked by [`Ipv6Repr::emit`]).
    pub flow_label: u32,
    /// Hop limit.
    pub hop_limit: u8,
    /// The next header field of the fixed header: the upper-layer protocol
    /// (6 for TCP) when there are no extension headers, else the type of
    /// the first one.
    pub next_header: u8,
    /// Extension headers as on the wire, between the fixed header and the
    /// upper-layer header; empty when there are none.
    pub extension_headers: &'a [u8],
}

impl<'a> Ipv6Repr<'a> {
    /// A header for TCP between these addresses: traffic class 0, flow
    /// label 0, hop limit 64, no extension headers.
    pub const fn tcp(src: Ipv6Addr, dst: Ipv6Addr) -> Self {
        Ipv6Repr {
            src,
            dst,
            traffic_class: 0,
            flow_label: 0,
            hop_limit: DEFAULT_TTL,
            next_header: PROTOCOL_TCP,
            extension_headers: &[],
        }
    }

    /// Header length in bytes: 40 plus the extension headers.
    pub const fn header_len(&self) -> usize {
        IPV6_HEADER_LEN + self.extension_headers.len()
    }

    /// The TCP pseudo-header of these addresses (the fixed header's
    /// destination, also when a Routing header names another final one).
    pub const fn pseudo_header(&self) -> PseudoHeader {
        PseudoHeader::V6 {
            src: self.src,
            dst: self.dst,
        }
    }

    /// The upper-layer protocol: where the walk from
    /// [`Ipv6Repr::next_header`] over the extension headers ends. `None`
    /// when they are not one whole chain or make a fragment.
    pub fn upper_protocol(&self) -> Option<u8> {
        self.chain().ok()
    }

    /// The walk over the extension headers, which must end exactly at
    /// their end and not make a fragment.
    fn chain(&self) -> Result<u8, EmitError> {
        let ext = self.extension_headers;
        let len = ext.len();
        let walk = ipv6_extensions(ext, self.next_header, 0, len).map_err(|e| {
            EmitError::ExtensionChain {
                offset: e.offset,
                len,
            }
        })?;
        if walk.fragment_offset != 0 || walk.more_fragments {
            return Err(EmitError::Fragment {
                offset: walk.fragment_offset,
                more: walk.more_fragments,
            });
        }
        if walk.offset != len {
            return Err(EmitError::ExtensionChain {
                offset: walk.offset,
                len,
            });
        }
        Ok(walk.next)
    }

    /// Read the IPv6 header and extension headers at the start of
    /// `packet`; returns them and the upper-layer bytes (up to the payload
    /// length: bytes after it are not payload).
    ///
    /// Errors: not version 6, fewer than 40 bytes, a payload length past
    /// the buffer, an extension header past the payload, a fragment.
    pub fn parse(packet: &'a [u8]) -> Result<(Self, &'a [u8]), PacketError> {
        let (repr, upper, ip_len) = Self::parse_header(packet, false)?;
        Ok((repr, packet.get(upper..ip_len).unwrap_or(&[])))
    }

    /// Read the IPv6 header and extension headers of a packet that may be
    /// cut short: the quote in an ICMPv6 error (RFC 4443 keeps as much as
    /// fits in 1280 bytes) or a capture cut at its snap length. Returns the
    /// header, the upper-layer bytes present (up to the payload length, or
    /// to the end of the buffer when the payload length runs past it) and
    /// the packet length the header gives (40 plus the payload length).
    /// The errors are those of [`Ipv6Repr::parse`] but for a payload length
    /// past the buffer, which is no error here; the extension headers must
    /// be in the buffer.
    ///
    /// ```
    /// use core::net::Ipv6Addr;
    /// use tcp_options::ip::Ipv6Repr;
    ///
    /// let ip = Ipv6Repr::tcp(Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST);
    /// let mut buf = [0u8; 48];
    /// ip.emit(&mut buf, 20).unwrap(); // 20 bytes of TCP said, 8 here
    /// assert!(Ipv6Repr::parse(&buf).is_err());
    /// let (back, upper, len) = Ipv6Repr::parse_quoted(&buf).unwrap();
    /// assert_eq!((back, upper.len(), len), (ip, 8, 60));
    /// ```
    pub fn parse_quoted(packet: &'a [u8]) -> Result<(Self, &'a [u8], usize), PacketError> {
        let (repr, upper, ip_len) = Self::parse_header(packet, true)?;
        let end = ip_len.min(packet.len());
        Ok((repr, packet.get(upper..end).unwrap_or(&[]), ip_len))
    }

    /// The header, where the upper-layer header starts and the packet
    /// length; a payload length past the buffer is an error unless `cut`
    /// (a packet cut short: the walk then stops at the buffer's end).
    fn parse_header(packet: &'a [u8], cut: bool) -> Result<(Self, usize, usize), PacketError> {
        let len = packet.len();
        let first = *packet
            .first()
            .ok_or(PacketError::Truncated { needed: 1, len })?;
        let version = first >> 4;
        if version != 6 {
            return Err(PacketError::Version { version });
        }
        let Some(fixed) = packet.get(..IPV6_HEADER_LEN) else {
            return Err(PacketError::Truncated {
                needed: IPV6_HEADER_LEN,
                len,
            });
        };
        let ip_len = IPV6_HEADER_LEN + usize::from(be16(fixed, 4));
        if ip_len > len && !cut {
            return Err(PacketError::LengthOverrun { ip_len, len });
        }
        let next_header = fixed.get(6).copied().unwrap_or(0);
        let end = ip_len.min(len);
        let walk = ipv6_extensions(packet, next_header, IPV6_HEADER_LEN, end).map_err(|e| {
            PacketError::ExtensionOverrun {
                header: e.header,
                offset: e.offset,
            }
        })?;
        if walk.fragment_offset != 0 || walk.more_fragments {
            return Err(PacketError::Fragment {
                offset: walk.fragment_offset,
                more: walk.more_fragments,
            });
        }
        let word = be32(fixed, 0);
        let mut addr = [0u8; 16];
        addr.copy_from_slice(fixed.get(8..24).unwrap_or(&[0; 16]));
        let src = Ipv6Addr::from(addr);
        addr.copy_from_slice(fixed.get(24..40).unwrap_or(&[0; 16]));
        let dst = Ipv6Addr::from(addr);
        let repr = Ipv6Repr {
            src,
            dst,
            traffic_class: (word >> 20) as u8,
            flow_label: word & MAX_FLOW_LABEL,
            hop_limit: fixed.get(7).copied().unwrap_or(0),
            next_header,
            extension_headers: packet.get(IPV6_HEADER_LEN..walk.offset).unwrap_or(&[]),
        };
        Ok((repr, walk.offset, ip_len))
    }

    /// Check that the header can be written before `payload_len` bytes of
    /// upper-layer data; returns the header length, the payload length
    /// field and the upper-layer protocol.
    fn check(&self, payload_len: usize) -> Result<(usize, u16, u8), EmitError> {
        if self.flow_label > MAX_FLOW_LABEL {
            return Err(EmitError::FlowLabel {
                flow_label: self.flow_label,
            });
        }
        let upper = self.chain()?;
        let len = self.extension_headers.len().saturating_add(payload_len);
        let field = u16::try_from(len).map_err(|_| EmitError::TooLong {
            len,
            max: usize::from(u16::MAX),
        })?;
        Ok((self.header_len(), field, upper))
    }

    /// Write the fixed header and the extension headers to the start of
    /// `buf`, for `payload_len` bytes of upper-layer data after them (not
    /// written here); returns the header length.
    ///
    /// Errors, with nothing written: a flow label above 20 bits, extension
    /// headers that are not one whole chain or make a fragment, a payload
    /// length above 65535, a buffer shorter than the headers.
    pub fn emit(&self, buf: &mut [u8], payload_len: usize) -> Result<usize, EmitError> {
        let (header_len, field, _) = self.check(payload_len)?;
        let available = buf.len();
        let out = buf.get_mut(..header_len).ok_or(EmitError::BufferTooSmall {
            needed: header_len,
            available,
        })?;
        let (fixed, ext) = out.split_at_mut(IPV6_HEADER_LEN);
        let word = (6u32 << 28) | (u32::from(self.traffic_class) << 20) | self.flow_label;
        let (w, rest) = fixed.split_at_mut(4);
        w.copy_from_slice(&word.to_be_bytes());
        let (l, rest) = rest.split_at_mut(2);
        l.copy_from_slice(&field.to_be_bytes());
        let (nh, rest) = rest.split_at_mut(2);
        nh.copy_from_slice(&[self.next_header, self.hop_limit]);
        let (s, d) = rest.split_at_mut(16);
        s.copy_from_slice(&self.src.octets());
        d.copy_from_slice(&self.dst.octets());
        ext.copy_from_slice(self.extension_headers);
        Ok(header_len)
    }
}

/// An IPv4 or an IPv6 header (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpRepr<'a> {
    /// IPv4.
    V4(Ipv4Repr<'a>),
    /// IPv6.
    V6(Ipv6Repr<'a>),
}

impl<'a> From<Ipv4Repr<'a>> for IpRepr<'a> {
    fn from(r: Ipv4Repr<'a>) -> Self {
        IpRepr::V4(r)
    }
}

impl<'a> From<Ipv6Repr<'a>> for IpRepr<'a> {
    fn from(r: Ipv6Repr<'a>) -> Self {
        IpRepr::V6(r)
    }
}

impl<'a> IpRepr<'a> {
    /// [`Ipv4Repr::tcp`] or [`Ipv6Repr::tcp`] for these addresses; `None`
    /// when they are not of one family.
    pub const fn tcp(src: IpAddr, dst: IpAddr) -> Option<Self> {
        match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => Some(IpRepr::V4(Ipv4Repr::tcp(s, d))),
            (IpAddr::V6(s), IpAddr::V6(d)) => Some(IpRepr::V6(Ipv6Repr::tcp(s, d))),
            _ => None,
        }
    }

    /// Read the IP header at the start of `packet`, by its version nibble
    /// ([`Ipv4Repr::parse`], [`Ipv6Repr::parse`]); returns it and the
    /// upper-layer bytes.
    pub fn parse(packet: &'a [u8]) -> Result<(Self, &'a [u8]), PacketError> {
        match packet.first().map(|b| b >> 4) {
            Some(6) => Ipv6Repr::parse(packet).map(|(r, p)| (IpRepr::V6(r), p)),
            // An empty buffer and the other versions are reported by it.
            _ => Ipv4Repr::parse(packet).map(|(r, p)| (IpRepr::V4(r), p)),
        }
    }

    /// Read the IP header of a packet that may be cut short, by its
    /// version nibble ([`Ipv4Repr::parse_quoted`],
    /// [`Ipv6Repr::parse_quoted`]); returns it, the upper-layer bytes
    /// present and the packet length its header gives.
    pub fn parse_quoted(packet: &'a [u8]) -> Result<(Self, &'a [u8], usize), PacketError> {
        match packet.first().map(|b| b >> 4) {
            Some(6) => Ipv6Repr::parse_quoted(packet).map(|(r, p, l)| (IpRepr::V6(r), p, l)),
            _ => Ipv4Repr::parse_quoted(packet).map(|(r, p, l)| (IpRepr::V4(r), p, l)),
        }
    }

    /// IPv4 or IPv6.
    pub const fn family(&self) -> IpFamily {
        match self {
            IpRepr::V4(_) => IpFamily::V4,
            IpRepr::V6(_) => IpFamily::V6,
        }
    }

    /// Source address.
    pub const fn src(&self) -> IpAddr {
        match self {
            IpRepr::V4(r) => IpAddr::V4(r.src),
            IpRepr::V6(r) => IpAddr::V6(r.src),
        }
    }

    /// Destination address.
    pub const fn dst(&self) -> IpAddr {
        match self {
            IpRepr::V4(r) => IpAddr::V4(r.dst),
            IpRepr::V6(r) => IpAddr::V6(r.dst),
        }
    }

    /// The DS field: the IPv4 TOS byte or the IPv6 traffic class.
    pub const fn ds_field(&self) -> u8 {
        match self {
            IpRepr::V4(r) => r.tos,
            IpRepr::V6(r) => r.traffic_class,
        }
    }

    /// TTL or hop limit.
    pub const fn hop_limit(&self) -> u8 {
        match self {
            IpRepr::V4(r) => r.ttl,
            IpRepr::V6(r) => r.hop_limit,
        }
    }

    /// The upper-layer protocol: the IPv4 protocol field, or
    /// [`Ipv6Repr::upper_protocol`].
    pub fn protocol(&self) -> Option<u8> {
        match self {
            IpRepr::V4(r) => Some(r.protocol),
            IpRepr::V6(r) => r.upper_protocol(),
        }
    }

    /// Header length in bytes, IPv4 options or IPv6 extension headers included.
    pub const fn header_len(&self) -> usize {
        match self {
            IpRepr::V4(r) => r.header_len(),
            IpRepr::V6(r) => r.header_len(),
        }
    }

    /// The TCP pseudo-header of these addresses.
    pub const fn pseudo_header(&self) -> PseudoHeader {
        match self {
            IpRepr::V4(r) => r.pseudo_header(),
            IpRepr::V6(r) => r.pseudo_header(),
        }
    }

    /// Check that the header can be written before `payload_len` bytes;
    /// returns the header length and the upper-layer protocol.
    pub(crate) fn check(&self, payload_len: usize) -> Result<(usize, u8), EmitError> {
        match self {
            IpRepr::V4(r) => r.check(payload_len).map(|(h, _)| (h, r.protocol)),
            IpRepr::V6(r) => r.check(payload_len).map(|(h, _, p)| (h, p)),
        }
    }

    /// Write the header to the start of `buf` for `payload_len` bytes of
    /// payload ([`Ipv4Repr::emit`], [`Ipv6Repr::emit`]); returns the
    /// header length.
    pub fn emit(&self, buf: &mut [u8], payload_len: usize) -> Result<usize, EmitError> {
        match self {
            IpRepr::V4(r) => r.emit(buf, payload_len),
            IpRepr::V6(r) => r.emit(buf, payload_len),
        }
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some([x, y]) => u16::from_be_bytes([*x, *y]),
        _ => 0,
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some([a, b2, c, d]) => u32::from_be_bytes([*a, *b2, *c, *d]),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A4: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
    const B4: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);
    const A6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, 0, 2);
    const B6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 2, 0, 0, 0, 0, 2);

    fn v4_bytes(ip: &Ipv4Repr, payload: &[u8]) -> std::vec::Vec<u8> {
        let mut b = std::vec![0u8; ip.header_len() + payload.len()];
        let n = ip.emit(&mut b, payload.len()).unwrap();
        b[n..].copy_from_slice(payload);
        b
    }

    #[test]
    fn ipv4_fields_and_checksum() {
        let ip = Ipv4Repr {
            tos: 0x22,
            identification: 0xbeef,
            dont_fragment: false,
            ttl: 7,
            protocol: 17,
            ..Ipv4Repr::tcp(A4, B4)
        };
        let b = v4_bytes(&ip, &[1, 2, 3]);
        assert_eq!(b[..10], [0x45, 0x22, 0, 23, 0xbe, 0xef, 0, 0, 7, 17]);
        assert_eq!(b[12..20], [198, 18, 0, 1, 198, 19, 0, 1]);
        assert!(checksum::verify_ipv4_header(&b[..20]));
        assert_eq!(Ipv4Repr::parse(&b), Ok((ip, &[1u8, 2, 3][..])));
    }

    #[test]
    fn ipv4_options_are_carried() {
        // Router Alert (RFC 2113), then NOP NOP NOP EOL.
        let opts = [0x94, 0x04, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00];
        let ip = Ipv4Repr {
            options: &opts,
            ..Ipv4Repr::tcp(A4, B4)
        };
        let b = v4_bytes(&ip, b"x");
        assert_eq!(b[0], 0x47);
        assert_eq!(b[3], 29);
        assert!(checksum::verify_ipv4_header(&b[..28]));
        let (back, payload) = Ipv4Repr::parse(&b).unwrap();
        assert_eq!(back, ip);
        assert_eq!(payload, b"x");
        let bad = Ipv4Repr {
            options: &opts[..6],
            ..ip
        };
        assert_eq!(
            bad.emit(&mut [0; 64], 0),
            Err(EmitError::Ipv4OptionsLen { len: 6 })
        );
    }

    #[test]
    fn ipv4_parse_errors_say_what() {
        let good = v4_bytes(&Ipv4Repr::tcp(A4, B4), &[0; 4]);
        assert_eq!(
            Ipv4Repr::parse(&[]),
            Err(PacketError::Truncated { needed: 1, len: 0 })
        );
        assert_eq!(
            Ipv4Repr::parse(&good[..19]),
            Err(PacketError::Truncated {
                needed: 20,
                len: 19
            })
        );
        let mut b = good.clone();
        b[0] = 0x65;
        assert_eq!(
            Ipv4Repr::parse(&b),
            Err(PacketError::Version { version: 6 })
        );
        b[0] = 0x44;
        assert_eq!(
            Ipv4Repr::parse(&b),
            Err(PacketError::Ipv4HeaderLen { ihl: 4 })
        );
        b[0] = 0x46;
        assert_eq!(
            Ipv4Repr::parse(&b[..23]),
            Err(PacketError::Truncated {
                needed: 24,
                len: 23
            })
        );
        b[0] = 0x45;
        b[3] = 19;
        assert_eq!(
            Ipv4Repr::parse(&b),
            Err(PacketError::Ipv4TotalLen {
                total_len: 19,
                header_len: 20
            })
        );
        b[3] = 25;
        assert_eq!(
            Ipv4Repr::parse(&b),
            Err(PacketError::LengthOverrun {
                ip_len: 25,
                len: 24
            })
        );
        b[3] = 24;
        b[6] = 0x20; // MF
        assert_eq!(
            Ipv4Repr::parse(&b),
            Err(PacketError::Fragment {
                offset: 0,
                more: true
            })
        );
        b[6] = 0x40;
        b[7] = 0x03; // DF, offset 3 (24 bytes)
        assert_eq!(
            Ipv4Repr::parse(&b),
            Err(PacketError::Fragment {
                offset: 24,
                more: false
            })
        );
        // Trailing bytes (Ethernet padding) are not payload.
        let mut padded = good.clone();
        padded.extend_from_slice(&[0xee; 6]);
        assert_eq!(Ipv4Repr::parse(&padded).unwrap().1, &[0; 4]);
        // The evil bit is ignored.
        let mut evil = good.clone();
        evil[6] |= 0x80;
        assert_eq!(Ipv4Repr::parse(&evil).unwrap().0, Ipv4Repr::tcp(A4, B4));
    }

    #[test]
    fn ipv4_length_limits() {
        let ip = Ipv4Repr::tcp(A4, B4);
        assert_eq!(
            ip.emit(&mut [0; 20], 65516),
            Err(EmitError::TooLong {
                len: 65536,
                max: 65535
            })
        );
        assert_eq!(ip.emit(&mut [0; 20], 65515), Ok(20));
        assert_eq!(
            ip.emit(&mut [0; 19], 0),
            Err(EmitError::BufferTooSmall {
                needed: 20,
                available: 19
            })
        );
    }

    /// A destination options header (8 bytes, PadN) then a fragment header
    /// with offset 0 and M clear (an atomic fragment, RFC 6946), then TCP.
    const EXT: [u8; 16] = [
        44, 0, 1, 4, 0, 0, 0, 0, // dest opts: next fragment, len 0, PadN 4
        6, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, // fragment: next TCP, offset 0, M 0
    ];

    #[test]
    fn ipv6_fields_and_extension_headers() {
        let ip = Ipv6Repr {
            traffic_class: 0x20,
            flow_label: 0xe2be7,
            hop_limit: 9,
            next_header: 60,
            extension_headers: &EXT,
            ..Ipv6Repr::tcp(A6, B6)
        };
        assert_eq!(ip.upper_protocol(), Some(PROTOCOL_TCP));
        let mut b = [0u8; 60];
        assert_eq!(ip.emit(&mut b, 4), Ok(56));
        assert_eq!(b[..8], [0x62, 0x0e, 0x2b, 0xe7, 0, 20, 60, 9]);
        assert_eq!(Ipv6Repr::parse(&b), Ok((ip, &[0u8; 4][..])));
        // The same walk as netfilter's locate: TCP found at 56.
        let at = crate::netfilter::locate(&b).unwrap();
        assert_eq!(at.tcp_offset, 56);
    }

    #[test]
    fn ipv6_chain_must_be_whole() {
        let base = Ipv6Repr::tcp(A6, B6);
        let cases: [(u8, &[u8], EmitError); 4] = [
            // TCP first, but bytes follow: the chain stops at 0.
            (
                6,
                &EXT[..8],
                EmitError::ExtensionChain { offset: 0, len: 8 },
            ),
            // A destination options header cut short.
            (
                60,
                &EXT[..4],
                EmitError::ExtensionChain { offset: 0, len: 4 },
            ),
            // Ends at the fragment header, which is missing.
            (
                60,
                &EXT[..8],
                EmitError::ExtensionChain { offset: 8, len: 8 },
            ),
            // A later fragment.
            (
                44,
                &[6, 0, 0, 0x09, 0, 0, 0, 1],
                EmitError::Fragment {
                    offset: 8,
                    more: true,
                },
            ),
        ];
        for (next_header, ext, err) in cases {
            let ip = Ipv6Repr {
                next_header,
                extension_headers: ext,
                ..base
            };
            let mut b = [0xaau8; 64];
            assert_eq!(ip.emit(&mut b, 0), Err(err), "{ext:?}");
            assert_eq!(b, [0xaa; 64]);
            assert_eq!(ip.upper_protocol(), None);
        }
        let big = Ipv6Repr {
            flow_label: 0x10_0000,
            ..base
        };
        assert_eq!(
            big.emit(&mut [0; 40], 0),
            Err(EmitError::FlowLabel {
                flow_label: 0x10_0000
            })
        );
        assert_eq!(
            base.emit(&mut [0; 40], 65536),
            Err(EmitError::TooLong {
                len: 65536,
                max: 65535
            })
        );
    }

    #[test]
    fn ipv6_parse_errors_say_what() {
        let mut b = [0u8; 60];
        let ip = Ipv6Repr {
            next_header: 60,
            extension_headers: &EXT,
            ..Ipv6Repr::tcp(A6, B6)
        };
        ip.emit(&mut b, 4).unwrap();
        assert_eq!(
            Ipv6Repr::parse(&b[..39]),
            Err(PacketError::Truncated {
                needed: 40,
                len: 39
            })
        );
        assert_eq!(
            Ipv6Repr::parse(&b[..59]),
            Err(PacketError::LengthOverrun {
                ip_len: 60,
                len: 59
            })
        );
        // Payload length 12: the fragment header (40 + 8 .. 56) runs past 52.
        let mut short = b;
        short[5] = 12;
        assert_eq!(
            Ipv6Repr::parse(&short),
            Err(PacketError::ExtensionOverrun {
                header: 44,
                offset: 48
            })
        );
        let mut frag = b;
        frag[48 + 3] = 1; // M set
        assert_eq!(
            Ipv6Repr::parse(&frag),
            Err(PacketError::Fragment {
                offset: 0,
                more: true
            })
        );
        let mut v4 = b;
        v4[0] = 0x45;
        assert_eq!(
            Ipv6Repr::parse(&v4),
            Err(PacketError::Version { version: 4 })
        );
    }

    #[test]
    fn ip_repr_dispatches_by_version() {
        assert_eq!(
            IpRepr::tcp(IpAddr::V4(A4), IpAddr::V6(B6)),
            None,
            "mixed families"
        );
        let v4 = IpRepr::tcp(IpAddr::V4(A4), IpAddr::V4(B4)).unwrap();
        let v6 = IpRepr::tcp(IpAddr::V6(A6), IpAddr::V6(B6)).unwrap();
        for ip in [v4, v6] {
            let mut b = [0u8; 44];
            let n = ip.emit(&mut b, 4).unwrap();
            assert_eq!(n, ip.header_len());
            let (back, payload) = IpRepr::parse(&b[..n + 4]).unwrap();
            assert_eq!(back, ip);
            assert_eq!(payload.len(), 4);
            assert_eq!(back.protocol(), Some(PROTOCOL_TCP));
            assert_eq!(back.hop_limit(), DEFAULT_TTL);
            assert_eq!(back.ds_field(), 0);
        }
        assert_eq!(v4.family(), IpFamily::V4);
        assert_eq!(v6.src(), IpAddr::V6(A6));
        assert_eq!(v4.dst(), IpAddr::V4(B4));
        assert_eq!(
            IpRepr::parse(&[0x50]),
            Err(PacketError::Version { version: 5 })
        );
        assert_eq!(
            IpRepr::parse(&[]),
            Err(PacketError::Truncated { needed: 1, len: 0 })
        );
    }
}
