//! What the router reads of an IP packet, through the crates' representations:
//! the DS field by `dscp`'s IPv4 and IPv6 header views, and the transport ports by
//! `tcp-options`' [`IpRepr`] (the IP header, IPv6 extension headers walked) and,
//! for TCP, [`TcpRepr`].
//!
//! - A packet that is neither IPv4 nor IPv6, or whose IP header is cut short or
//!   malformed (an IPv4 header length below 5 words or past the packet), is not
//!   IP: [`parse`] gives `None`.
//! - Every other packet has a DS field. It has ports when it is a whole TCP
//!   segment or UDP datagram: not when its IP length runs past the packet, when
//!   it is a fragment (IPv4, or an IPv6 fragment header; a fragment's ports, if
//!   any, are not those of a whole datagram), or when its TCP header is
//!   malformed.
//!
//! No crate here represents UDP: its two ports are read as the first four bytes
//! of its header (RFC 768), the one place a field is read by offset.

use std::ops::Range;

use tcp_options::ip::PROTOCOL_TCP;
use tcp_options::{IpRepr, TcpRepr};

/// IP protocol number (IPv6 next header) of UDP.
pub const PROTOCOL_UDP: u8 = 17;

/// The source and destination ports in a UDP header (RFC 768).
const UDP_PORTS: Range<usize> = 0..4;

/// What the router needs to know about one IP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The DS field (IPv4 TOS byte, IPv6 traffic class).
    pub ds: u8,
    /// The transport ports of a whole TCP segment or UDP datagram (module docs).
    pub ports: Option<Ports>,
}

/// A TCP or UDP packet's ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ports {
    /// Source port.
    pub src: u16,
    /// Destination port.
    pub dst: u16,
}

/// Reads what the router needs of the IPv4 or IPv6 packet `p`; `None` when `p`
/// is not one (module docs).
pub fn parse(p: &[u8]) -> Option<Header> {
    let ds = match p.first()? >> 4 {
        dscp::ipv4::VERSION => dscp::ipv4::ds_field(p).ok()?,
        dscp::ipv6::VERSION => dscp::ipv6::traffic_class(p).ok()?,
        _ => return None,
    };
    Some(Header {
        ds: ds.value(),
        ports: ports(p),
    })
}

/// The ports of a whole TCP segment or UDP datagram.
fn ports(p: &[u8]) -> Option<Ports> {
    let (ip, l4) = IpRepr::parse(p).ok()?;
    match ip.protocol()? {
        PROTOCOL_TCP => TcpRepr::parse(l4).ok().map(|t| Ports {
            src: t.src_port,
            dst: t.dst_port,
        }),
        PROTOCOL_UDP => match l4.get(UDP_PORTS)? {
            [s0, s1, d0, d1] => Some(Ports {
                src: u16::from_be_bytes([*s0, *s1]),
                dst: u16::from_be_bytes([*d0, *d1]),
            }),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::{Ipv4Addr, Ipv6Addr};
    use tcp_options::{Ipv4Repr, Ipv6Repr, PacketRepr};

    const A4: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
    const B4: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);
    const A6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, 0, 2);
    const B6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 2, 0, 0, 0, 0, 2);

    /// A TCP segment from port 5201 to 5000 in `ip`, with 4 bytes of data.
    fn tcp(ip: IpRepr) -> Vec<u8> {
        let packet = PacketRepr {
            ip,
            tcp: TcpRepr {
                payload: b"data",
                ..TcpRepr::new(5201, 5000)
            },
        };
        let mut buf = vec![0; packet.buffer_len()];
        let n = packet.emit(&mut buf).unwrap();
        buf.truncate(n);
        buf
    }

    /// A UDP datagram from port 5000 to 5201 with 4 bytes of data, after the
    /// IPv4 header `ip` (protocol UDP). No crate represents UDP: its 8-byte
    /// header is written here (ports, length, checksum 0 = none, RFC 768).
    fn udp(ip: Ipv4Repr) -> Vec<u8> {
        let datagram = [0x13, 0x88, 0x14, 0x51, 0, 12, 0, 0, b'd', b'a', b't', b'a'];
        let mut buf = vec![0; ip.header_len() + datagram.len()];
        let n = ip.emit(&mut buf, datagram.len()).unwrap();
        buf[n..].copy_from_slice(&datagram);
        buf
    }

    fn v4(tos: u8, protocol: u8) -> Ipv4Repr<'static> {
        Ipv4Repr {
            tos,
            protocol,
            ..Ipv4Repr::tcp(A4, B4)
        }
    }

    #[test]
    fn ipv4_udp_and_ipv6_tcp() {
        let cs1 = udp(v4(0x20, PROTOCOL_UDP));
        assert_eq!(
            parse(&cs1),
            Some(Header {
                ds: 0x20,
                ports: Some(Ports {
                    src: 5000,
                    dst: 5201
                })
            })
        );
        let ef = tcp(IpRepr::V6(Ipv6Repr {
            traffic_class: 0xb8,
            ..Ipv6Repr::tcp(A6, B6)
        }));
        assert_eq!(
            parse(&ef),
            Some(Header {
                ds: 0xb8,
                ports: Some(Ports {
                    src: 5201,
                    dst: 5000
                })
            })
        );
        // The whole DS field, ECN included (here CE), is what the classifier reads.
        assert_eq!(
            parse(&tcp(v4(0x23, PROTOCOL_TCP).into())).map(|h| h.ds),
            Some(0x23)
        );
    }

    #[test]
    fn ipv6_extension_headers_are_walked_to_the_ports() {
        // A destination options header (8 bytes of PadN) before the TCP header.
        let ext = [PROTOCOL_TCP, 0, 1, 4, 0, 0, 0, 0];
        let ip = Ipv6Repr {
            next_header: 60,
            extension_headers: &ext,
            ..Ipv6Repr::tcp(A6, B6)
        };
        let h = parse(&tcp(ip.into())).unwrap();
        assert_eq!(h.ports.map(|p| (p.src, p.dst)), Some((5201, 5000)));
    }

    #[test]
    fn what_is_not_ip_and_what_has_no_ports() {
        let good = udp(v4(0x20, PROTOCOL_UDP));
        // Not IP: too short for the header, another version, an IHL below 5.
        assert_eq!(parse(&good[..19]), None);
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&[0x50; 40]), None);
        let mut ihl4 = good.clone();
        ihl4[0] = 0x44; // version 4, IHL 4: no repr writes that

        assert_eq!(parse(&ihl4), None);
        // IP without ports: another protocol, a datagram cut short, a TCP header
        // that is not one, a fragment.
        let icmp = {
            let ip = v4(0, 1);
            let mut buf = vec![0; 28];
            ip.emit(&mut buf, 8).unwrap();
            buf
        };
        assert_eq!(parse(&icmp), Some(Header { ds: 0, ports: None }));
        assert_eq!(parse(&good[..22]).map(|h| h.ports), Some(None));
        let not_tcp = udp(v4(0, PROTOCOL_TCP));
        assert_eq!(parse(&not_tcp).map(|h| h.ports), Some(None));
        // Ipv4Repr has no fragment fields (it refuses fragments): the flags and
        // fragment offset word (RFC 791, bytes 6-7) is set here, to a later
        // fragment and to a first one (more fragments, offset 0).
        for flags in [[0x00, 0x10], [0x20, 0x00]] {
            let mut fragment = good.clone();
            fragment[6..8].copy_from_slice(&flags);
            assert_eq!(
                parse(&fragment),
                Some(Header {
                    ds: 0x20,
                    ports: None
                }),
                "{flags:?}"
            );
        }
    }
}
