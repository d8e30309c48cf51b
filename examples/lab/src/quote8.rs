//! Make a Linux router quote like an RFC 792 one (`lab-quote8`, run by
//! `probe-lab.sh` in a router's namespace): 8 bytes past the IP header.
//!
//! Linux routers quote as much of the expired datagram as fits (RFC 1812;
//! ICMPv6 up to 1280 bytes, RFC 4443), so `firewall-check probe`'s handling
//! of minimal quotes cannot be seen on a line of Linux routers without
//! help. [`cut`] is that help: given the router's own ICMP or ICMPv6
//! time-exceeded message (taken from an NFQUEUE queue by the binary), it
//! cuts the quoted TCP datagram to its IP header and the first 8 bytes of
//! the segment ([`tcp_options::quote::MIN_QUOTED_TCP`]: ports and sequence
//! number), and rewrites the outer IP header (its length and checksum,
//! through [`tcp_options::IpRepr::emit`]) and the ICMP checksum. The quote
//! is read with [`tcp_options::QuotedPacket`], so IPv4 options and IPv6
//! extension headers of the quoted datagram are kept whole.

use tcp_options::checksum;
use tcp_options::quote::MIN_QUOTED_TCP;
use tcp_options::{IpRepr, QuotedPacket};

/// IP protocol number of ICMP.
pub const PROTOCOL_ICMP: u8 = 1;
/// IPv6 next header of ICMPv6.
pub const PROTOCOL_ICMPV6: u8 = 58;
/// ICMP type "time exceeded" (RFC 792).
pub const ICMP_TIME_EXCEEDED: u8 = 11;
/// ICMPv6 type "time exceeded" (RFC 4443).
pub const ICMPV6_TIME_EXCEEDED: u8 = 3;
/// ICMP header: type, code, checksum, 4 bytes (unused, or RFC 4884's
/// length).
const ICMP_HEADER: usize = 8;
/// Byte of the ICMP header holding RFC 4884's length (ICMP: 5, ICMPv6: 4).
const fn rfc4884_length_at(v6: bool) -> usize {
    if v6 {
        4
    } else {
        5
    }
}

/// `packet` (starting at its IP header) with its quote cut to the quoted
/// IP header and 8 bytes of TCP, when it is an ICMP or ICMPv6
/// time-exceeded message quoting more than that of a TCP datagram;
/// `None` (accept unchanged) for anything else.
pub fn cut(packet: &[u8]) -> Option<Vec<u8>> {
    let (ip, icmp) = IpRepr::parse(packet).ok()?;
    let v6 = match ip {
        IpRepr::V4(r) if r.protocol == PROTOCOL_ICMP => false,
        IpRepr::V6(r) if r.upper_protocol().unwrap_or(r.next_header) == PROTOCOL_ICMPV6 => true,
        _ => return None,
    };
    let time_exceeded = if v6 {
        ICMPV6_TIME_EXCEEDED
    } else {
        ICMP_TIME_EXCEEDED
    };
    if icmp.first() != Some(&time_exceeded) {
        return None;
    }
    let quote = icmp.get(ICMP_HEADER..)?;
    let quoted = QuotedPacket::parse(quote).ok()?;
    let keep = quoted.ip.header_len() + MIN_QUOTED_TCP;
    if quote.len() <= keep {
        return None;
    }
    let icmp_len = ICMP_HEADER + keep;
    let mut out = vec![0u8; ip.header_len() + icmp_len];
    let ip_len = ip.emit(&mut out, icmp_len).ok()?;
    let new_icmp = out.get_mut(ip_len..).filter(|b| b.len() == icmp_len)?;
    let (head, body) = new_icmp.split_at_mut(ICMP_HEADER);
    head.copy_from_slice(icmp.get(..ICMP_HEADER)?);
    body.copy_from_slice(quote.get(..keep)?);
    // No RFC 4884 length: the quote is all that follows.
    new_icmp[rfc4884_length_at(v6)] = 0;
    new_icmp[2..4].fill(0);
    let pseudo = match ip {
        IpRepr::V4(_) => 0,
        IpRepr::V6(r) => {
            // RFC 8200 section 8.1: source, destination (a router's own
            // message carries no routing header), length, next header.
            checksum::sum(&r.src.octets(), 0)
                + checksum::sum(&r.dst.octets(), 0)
                + icmp_len as u64
                + u64::from(PROTOCOL_ICMPV6)
        }
    };
    let sum = !checksum::fold(pseudo + checksum::sum(new_icmp, 0));
    new_icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use tcp_options::{Flags, Ipv4Repr, Ipv6Repr, PacketRepr, TcpRepr};

    /// An ICMP(v6) time-exceeded from `router` quoting all of a SYN.
    fn time_exceeded(router: IpRepr<'_>, syn: &[u8]) -> Vec<u8> {
        let v6 = matches!(router, IpRepr::V6(_));
        let mut icmp = vec![
            if v6 {
                ICMPV6_TIME_EXCEEDED
            } else {
                ICMP_TIME_EXCEEDED
            },
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        icmp.extend_from_slice(syn);
        let mut out = vec![0u8; router.header_len() + icmp.len()];
        let n = router.emit(&mut out, icmp.len()).unwrap();
        out[n..].copy_from_slice(&icmp);
        out
    }

    fn syn(ip: IpRepr<'_>) -> Vec<u8> {
        let opts = [2, 4, 5, 0xb4, 1, 3, 3, 7];
        let p = PacketRepr {
            ip,
            tcp: TcpRepr {
                flags: Flags::SYN,
                seq_number: 0xdead_beef,
                options: &opts,
                ..TcpRepr::new(40000, 5201)
            },
        };
        let mut b = vec![0u8; p.buffer_len()];
        p.emit(&mut b).unwrap();
        b
    }

    fn icmp_sum_ok(pseudo: u64, icmp: &[u8]) -> bool {
        checksum::fold(pseudo + checksum::sum(icmp, 0)) == 0xffff
    }

    #[test]
    fn an_ipv4_quote_is_cut_to_28_bytes_and_checksums_hold() {
        let client = Ipv4Addr::new(198, 18, 41, 2);
        let server = Ipv4Addr::new(198, 18, 44, 2);
        let router = Ipv4Addr::new(198, 18, 42, 1);
        let quoted = syn(IpRepr::tcp(client.into(), server.into()).unwrap());
        let te = time_exceeded(
            IpRepr::V4(Ipv4Repr {
                protocol: PROTOCOL_ICMP,
                ..Ipv4Repr::tcp(router, client)
            }),
            &quoted,
        );
        let out = cut(&te).expect("cut");
        assert_eq!(out.len(), 20 + 8 + 20 + 8);
        assert_eq!(usize::from(u16::from_be_bytes([out[2], out[3]])), out.len());
        assert!(checksum::verify_ipv4_header(&out[..20]));
        assert!(icmp_sum_ok(0, &out[20..]));
        assert_eq!(&out[28..], &quoted[..28]);
        let q = QuotedPacket::parse(&out[28..]).unwrap();
        assert_eq!((q.tcp.src_port(), q.tcp.seq_number()), (40000, 0xdead_beef));
        assert_eq!(q.tcp.flags(), None);
        // Already minimal: nothing to cut.
        assert_eq!(cut(&out), None);
    }

    #[test]
    fn an_ipv6_quote_is_cut_to_48_bytes_and_checksums_hold() {
        let client = Ipv6Addr::new(0x2001, 0xdb8, 0x41, 0, 0, 0, 0, 2);
        let server = Ipv6Addr::new(0x2001, 0xdb8, 0x44, 0, 0, 0, 0, 2);
        let router = Ipv6Addr::new(0x2001, 0xdb8, 0x42, 0, 0, 0, 0, 1);
        let quoted = syn(IpRepr::tcp(client.into(), server.into()).unwrap());
        let te = time_exceeded(
            IpRepr::V6(Ipv6Repr {
                next_header: PROTOCOL_ICMPV6,
                ..Ipv6Repr::tcp(router, client)
            }),
            &quoted,
        );
        let out = cut(&te).expect("cut");
        assert_eq!(out.len(), 40 + 8 + 40 + 8);
        assert_eq!(usize::from(u16::from_be_bytes([out[4], out[5]])), 56);
        let icmp = &out[40..];
        let pseudo = checksum::sum(&router.octets(), 0)
            + checksum::sum(&client.octets(), 0)
            + icmp.len() as u64
            + u64::from(PROTOCOL_ICMPV6);
        assert!(icmp_sum_ok(pseudo, icmp));
        assert_eq!(&out[48..], &quoted[..48]);
    }

    #[test]
    fn anything_else_is_left_alone() {
        let a = Ipv4Addr::new(198, 18, 41, 2);
        let b = Ipv4Addr::new(198, 18, 44, 2);
        let tcp = syn(IpRepr::tcp(a.into(), b.into()).unwrap());
        assert_eq!(cut(&tcp), None, "not ICMP");
        let mut te = time_exceeded(
            IpRepr::V4(Ipv4Repr {
                protocol: PROTOCOL_ICMP,
                ..Ipv4Repr::tcp(b, a)
            }),
            &tcp,
        );
        te[20] = 3; // destination unreachable
        assert_eq!(cut(&te), None, "not time exceeded");
        assert_eq!(cut(&[]), None);
        assert_eq!(cut(&[0x45, 0, 0]), None);
    }
}
