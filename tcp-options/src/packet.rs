//! A whole IP packet carrying one TCP segment, as fields: an [`IpRepr`]
//! and a [`TcpRepr`].
//!
//! [`PacketRepr::parse`] reads an IPv4 or IPv6 packet (starting at the IP
//! header) and checks, in this order: the IP version, the IP header length,
//! the IP length against the buffer, that it is not a fragment, IPv6
//! extension headers, that the upper-layer protocol is TCP, and the TCP
//! header ([`crate::TcpPacket::new_checked`]). Every error is a
//! [`PacketError`] that says what was wrong and at which offset.
//! [`PacketRepr::parse_verified`] also checks the IPv4 header checksum and
//! the TCP checksum.
//!
//! [`PacketRepr::emit`] writes the IP header (IPv4 total length and header
//! checksum, or IPv6 payload length, computed), then the TCP segment with
//! its checksum over the right pseudo-header. A packet read by `parse`
//! whose checksums are correct (and whose evil bit and TCP reserved bits
//! are clear) is written back byte for byte, IPv4 options and IPv6
//! extension headers included.
//!
//! ```
//! use core::net::Ipv6Addr;
//! use tcp_options::{Flags, IpRepr, Ipv6Repr, PacketRepr, TcpRepr};
//!
//! let src = Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, 0, 2);
//! let dst = Ipv6Addr::new(0x2001, 0xdb8, 2, 0, 0, 0, 0, 2);
//! let rst = PacketRepr {
//!     ip: IpRepr::V6(Ipv6Repr::tcp(src, dst)),
//!     tcp: TcpRepr { flags: Flags::RST, seq_number: 7, ..TcpRepr::new(443, 40000) },
//! };
//! let mut buf = [0u8; 1500];
//! let n = rst.emit(&mut buf).unwrap();
//! assert_eq!(n, rst.buffer_len()); // 40 + 20
//! assert_eq!(PacketRepr::parse_verified(&buf[..n]), Ok(rst));
//! ```

use crate::checksum;
use crate::error::{EmitError, PacketError};
use crate::header::field;
use crate::ip::{IpRepr, PROTOCOL_TCP};
use crate::repr::TcpRepr;

/// An IP packet with one TCP segment (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketRepr<'a> {
    /// The IP header.
    pub ip: IpRepr<'a>,
    /// The TCP segment.
    pub tcp: TcpRepr<'a>,
}

impl<'a> PacketRepr<'a> {
    /// Read `packet` (module docs). Bytes after the IP length (Ethernet
    /// padding) are ignored; checksums are not checked.
    pub fn parse(packet: &'a [u8]) -> Result<Self, PacketError> {
        let (ip, segment) = IpRepr::parse(packet)?;
        let offset = ip.header_len();
        let protocol = match ip {
            IpRepr::V4(r) => r.protocol,
            // The walk in `parse` ended at the start of `segment`; the
            // protocol there is the last next header of the chain.
            IpRepr::V6(r) => r.upper_protocol().unwrap_or(r.next_header),
        };
        if protocol != PROTOCOL_TCP {
            return Err(PacketError::NotTcp { protocol, offset });
        }
        let tcp = TcpRepr::parse(segment).map_err(|error| PacketError::Tcp { offset, error })?;
        Ok(PacketRepr { ip, tcp })
    }

    /// [`PacketRepr::parse`], then check the IPv4 header checksum
    /// ([`PacketError::Ipv4Checksum`]) and the TCP checksum
    /// ([`PacketError::TcpChecksum`]). Captures taken on the sending host
    /// often hold TCP checksums left to the network card; those fail here.
    pub fn parse_verified(packet: &'a [u8]) -> Result<Self, PacketError> {
        let repr = PacketRepr::parse(packet)?;
        let offset = repr.ip.header_len();
        if let IpRepr::V4(_) = repr.ip {
            let header = packet.get(..offset).unwrap_or(&[]);
            let computed = checksum::ipv4_header(header).unwrap_or(0);
            let stored = be16(header, 10);
            if stored != computed {
                return Err(PacketError::Ipv4Checksum { stored, computed });
            }
        }
        let segment = packet
            .get(offset..offset + repr.tcp.buffer_len())
            .unwrap_or(&[]);
        // A parsed segment fits its IP length field, so the pseudo-header
        // can describe it.
        let computed = repr.ip.pseudo_header().checksum(segment).unwrap_or(0);
        let stored = be16(segment, field::CHECKSUM.start);
        if stored != computed {
            return Err(PacketError::TcpChecksum {
                offset,
                stored,
                computed,
            });
        }
        Ok(repr)
    }

    /// Bytes [`PacketRepr::emit`] writes: IP header, TCP header, options,
    /// payload.
    pub const fn buffer_len(&self) -> usize {
        self.ip.header_len() + self.tcp.buffer_len()
    }

    /// Write the packet to the start of `buf` (module docs); returns its
    /// length ([`PacketRepr::buffer_len`]).
    ///
    /// Errors, with nothing written: the TCP or IP option lengths of
    /// [`TcpRepr::emit`] and [`crate::Ipv4Repr::emit`], IPv6 fields that
    /// [`crate::Ipv6Repr::emit`] refuses, an IP header whose protocol is
    /// not TCP ([`EmitError::NotTcp`]), a packet too long for its length
    /// field, a buffer shorter than the packet.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let pseudo = self.ip.pseudo_header();
        let tcp_len = self.tcp.check(Some(&pseudo))?;
        let (ip_len, protocol) = self.ip.check(tcp_len)?;
        if protocol != PROTOCOL_TCP {
            return Err(EmitError::NotTcp { protocol });
        }
        // Both lengths fit a 16-bit field (checked): no overflow.
        let total = ip_len + tcp_len;
        let available = buf.len();
        let out = buf.get_mut(..total).ok_or(EmitError::BufferTooSmall {
            needed: total,
            available,
        })?;
        let (head, segment) = out.split_at_mut(ip_len);
        // Everything was checked above: these cannot fail.
        self.tcp.emit(segment, Some(pseudo))?;
        self.ip.emit(head, tcp_len)?;
        Ok(total)
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some([x, y]) => u16::from_be_bytes([*x, *y]),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::HeaderError;
    use crate::flags::Flags;
    use crate::ip::{Ipv4Repr, Ipv6Repr};
    use core::net::{Ipv4Addr, Ipv6Addr};

    const A4: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 2);
    const B4: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 2);

    fn syn<'a>(ip: IpRepr<'a>, opts: &'a [u8]) -> PacketRepr<'a> {
        PacketRepr {
            ip,
            tcp: TcpRepr {
                flags: Flags::SYN,
                seq_number: 1,
                window: 64240,
                options: opts,
                ..TcpRepr::new(40000, 5201)
            },
        }
    }

    #[test]
    fn emit_then_parse_both_families() {
        let opts = [2, 4, 5, 0xb4];
        let v6 = Ipv6Repr::tcp(Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST);
        for ip in [IpRepr::V4(Ipv4Repr::tcp(A4, B4)), IpRepr::V6(v6)] {
            let p = syn(ip, &opts);
            let mut buf = [0u8; 80];
            let n = p.emit(&mut buf).unwrap();
            assert_eq!(n, p.buffer_len());
            assert_eq!(PacketRepr::parse_verified(&buf[..n]), Ok(p));
            // Trailing bytes are ignored.
            assert_eq!(PacketRepr::parse(&buf), Ok(p));
        }
    }

    #[test]
    fn parse_errors_carry_offsets() {
        let p = syn(IpRepr::V4(Ipv4Repr::tcp(A4, B4)), &[]);
        let mut buf = [0u8; 40];
        p.emit(&mut buf).unwrap();
        let mut udp = buf;
        udp[9] = 17;
        assert_eq!(
            PacketRepr::parse(&udp),
            Err(PacketError::NotTcp {
                protocol: 17,
                offset: 20
            })
        );
        let mut doff = buf;
        doff[32] = 0x40;
        assert_eq!(
            PacketRepr::parse(&doff),
            Err(PacketError::Tcp {
                offset: 20,
                error: HeaderError::DataOffsetTooSmall { data_offset: 4 }
            })
        );
        let mut ipsum = buf;
        ipsum[10] ^= 1;
        assert!(matches!(
            PacketRepr::parse_verified(&ipsum),
            Err(PacketError::Ipv4Checksum { .. })
        ));
        assert_eq!(PacketRepr::parse(&ipsum), Ok(p));
        let mut tcpsum = buf;
        tcpsum[36] ^= 0x80;
        let e = PacketRepr::parse_verified(&tcpsum).unwrap_err();
        assert!(matches!(e, PacketError::TcpChecksum { offset: 20, .. }));
        assert!(std::format!("{e}").contains("at offset 36"));
    }

    #[test]
    fn emit_refuses_a_header_that_is_not_tcp() {
        let ip = Ipv4Repr {
            protocol: 17,
            ..Ipv4Repr::tcp(A4, B4)
        };
        let p = syn(IpRepr::V4(ip), &[]);
        let mut buf = [0xaau8; 64];
        assert_eq!(p.emit(&mut buf), Err(EmitError::NotTcp { protocol: 17 }));
        let ext = [17, 0, 1, 4, 0, 0, 0, 0]; // dest opts, then UDP
        let ip = Ipv6Repr {
            next_header: 60,
            extension_headers: &ext,
            ..Ipv6Repr::tcp(Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST)
        };
        let p = syn(IpRepr::V6(ip), &[]);
        assert_eq!(p.emit(&mut buf), Err(EmitError::NotTcp { protocol: 17 }));
        assert_eq!(
            syn(IpRepr::V4(Ipv4Repr::tcp(A4, B4)), &[]).emit(&mut buf[..39]),
            Err(EmitError::BufferTooSmall {
                needed: 40,
                available: 39
            })
        );
        assert_eq!(buf, [0xaa; 64], "nothing written");
    }

    #[test]
    fn largest_ipv4_packet() {
        static PAYLOAD: [u8; 65495] = [0; 65495];
        let mut p = syn(IpRepr::V4(Ipv4Repr::tcp(A4, B4)), &[]);
        p.tcp.payload = &PAYLOAD;
        assert_eq!(p.buffer_len(), 65535);
        let mut buf = std::vec![0u8; 65536];
        assert_eq!(p.emit(&mut buf), Ok(65535));
        assert_eq!(PacketRepr::parse_verified(&buf), Ok(p));
        let opts = [1u8; 4];
        p.tcp.options = &opts;
        assert_eq!(
            p.emit(&mut buf),
            Err(EmitError::TooLong {
                len: 65539,
                max: 65535
            })
        );
    }
}
