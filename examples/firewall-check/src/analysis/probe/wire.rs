//! Probe packets on the wire: building IPv4 TCP probes and reading what
//! comes back (the target's TCP answer, or an ICMP error quoting the probe).
//!
//! Everything here is pure: bytes in, bytes or decoded views out, so the
//! unit tests can check it without sockets.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use tcp_options::Flags;

use capture::ipv4::Ipv4Header;
use capture::ipv6::Ipv6Header;

/// IP protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of ICMP.
pub const PROTO_ICMP: u8 = 1;
/// ICMP type: destination unreachable (RFC 792).
pub const ICMP_UNREACHABLE: u8 = 3;
/// ICMP type: time exceeded (RFC 792).
pub const ICMP_TIME_EXCEEDED: u8 = 11;
/// IPv6 next header of ICMPv6.
pub const PROTO_ICMPV6: u8 = 58;
/// ICMPv6 type: destination unreachable (RFC 4443).
pub const ICMPV6_UNREACHABLE: u8 = 1;
/// ICMPv6 type: time exceeded (RFC 4443).
pub const ICMPV6_TIME_EXCEEDED: u8 = 3;

/// The TCP segment of a probe, before the IP header is put around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (written as given; meaningful with ACK).
    pub ack: u32,
    /// Control bits.
    pub flags: Flags,
    /// Window field.
    pub window: u16,
    /// The option block, a multiple of 4 bytes, at most 40.
    pub options: Vec<u8>,
    /// Payload bytes.
    pub payload: Vec<u8>,
}

impl Segment {
    /// The TCP bytes with a zero checksum.
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        if !self.options.len().is_multiple_of(4) || self.options.len() > 40 {
            return Err(format!(
                "option block of {} bytes (must be a multiple of 4, at most 40)",
                self.options.len()
            ));
        }
        let doff = (20 + self.options.len()) / 4;
        let mut b = Vec::with_capacity(doff * 4 + self.payload.len());
        b.extend_from_slice(&self.sport.to_be_bytes());
        b.extend_from_slice(&self.dport.to_be_bytes());
        b.extend_from_slice(&self.seq.to_be_bytes());
        b.extend_from_slice(&self.ack.to_be_bytes());
        let word = ((doff as u16) << 12) | (self.flags.bits() & 0x01ff);
        b.extend_from_slice(&word.to_be_bytes());
        b.extend_from_slice(&self.window.to_be_bytes());
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(&self.options);
        b.extend_from_slice(&self.payload);
        Ok(b)
    }
}

/// An IPv4 packet around `seg`: DF set, the given DS byte, TTL and
/// identification, both checksums filled.
pub fn build_ipv4(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    tos: u8,
    ttl: u8,
    ident: u16,
    seg: &Segment,
) -> Result<Vec<u8>, String> {
    let mut tcp = seg.to_bytes()?;
    if !tcp_options::checksum::fill_ipv4(src.octets(), dst.octets(), &mut tcp) {
        return Err("TCP segment too long for a checksum".into());
    }
    let total = 20 + tcp.len();
    let total = u16::try_from(total).map_err(|_| format!("IPv4 packet of {total} bytes"))?;
    let mut p = Vec::with_capacity(usize::from(total));
    p.extend_from_slice(&[0x45, tos]);
    p.extend_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&ident.to_be_bytes());
    p.extend_from_slice(&[0x40, 0x00, ttl, PROTO_TCP, 0, 0]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    dscp::ipv4::fill_checksum(&mut p).map_err(|e| format!("IPv4 checksum: {e}"))?;
    p.extend_from_slice(&tcp);
    Ok(p)
}

/// An IPv6 packet around `seg`: the given traffic class, hop limit and
/// flow label (`ident`, which ICMPv6 quotes carry back), TCP checksum
/// filled.
pub fn build_ipv6(
    src: Ipv6Addr,
    dst: Ipv6Addr,
    tclass: u8,
    hop_limit: u8,
    ident: u16,
    seg: &Segment,
) -> Result<Vec<u8>, String> {
    let mut tcp = seg.to_bytes()?;
    if !tcp_options::checksum::fill_ipv6(src.octets(), dst.octets(), &mut tcp) {
        return Err("TCP segment too long for a checksum".into());
    }
    let len =
        u16::try_from(tcp.len()).map_err(|_| format!("IPv6 payload of {} bytes", tcp.len()))?;
    let word = (6u32 << 28) | (u32::from(tclass) << 20) | u32::from(ident);
    let mut p = Vec::with_capacity(40 + tcp.len());
    p.extend_from_slice(&word.to_be_bytes());
    p.extend_from_slice(&len.to_be_bytes());
    p.extend_from_slice(&[PROTO_TCP, hop_limit]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(&tcp);
    Ok(p)
}

/// An IPv4 or IPv6 packet around `seg` (`ident`: the IPv4 identification
/// or the IPv6 flow label); the two addresses must be of one family.
pub fn build_ip(
    src: IpAddr,
    dst: IpAddr,
    tos: u8,
    ttl: u8,
    ident: u16,
    seg: &Segment,
) -> Result<Vec<u8>, String> {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => build_ipv4(s, d, tos, ttl, ident, seg),
        (IpAddr::V6(s), IpAddr::V6(d)) => build_ipv6(s, d, tos, ttl, ident, seg),
        _ => Err(format!("{src} and {dst} are not of one address family")),
    }
}

/// A packet as some observer saw it: the prober (an answer from the
/// target), a router (its ICMP quote) or the reflector (its capture).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Source address in the IP header.
    pub src: IpAddr,
    /// Destination address in the IP header.
    pub dst: IpAddr,
    /// The DS byte (DSCP and ECN).
    pub tos: u8,
    /// Time to live / hop limit as seen.
    pub ttl: u8,
    /// IPv4 identification (0 for IPv6).
    pub ident: u16,
    /// The TCP bytes as far as they were seen (a router's quote may hold
    /// only the first 8).
    pub tcp: Vec<u8>,
}

impl Seen {
    /// Decodes an IPv4 packet carrying TCP, cut at its total length.
    pub fn from_ipv4(packet: &[u8]) -> Option<Seen> {
        let h = Ipv4Header::parse(packet).ok()?;
        if h.protocol != PROTO_TCP || h.fragment_offset != 0 {
            return None;
        }
        let end = if h.total_len == 0 {
            packet.len()
        } else {
            usize::from(h.total_len).min(packet.len())
        };
        let tcp = packet.get(h.header_len..end)?.to_vec();
        Some(Seen {
            src: IpAddr::V4(h.src),
            dst: IpAddr::V4(h.dst),
            tos: h.tos,
            ttl: h.ttl,
            ident: h.ident,
            tcp,
        })
    }

    /// Decodes an IPv6 packet carrying TCP (after any extension headers),
    /// cut at its payload length; `ident` is the flow label's low 16 bits.
    pub fn from_ipv6(packet: &[u8]) -> Option<Seen> {
        let h = Ipv6Header::parse(packet).ok()?;
        if h.upper_protocol != Some(PROTO_TCP) {
            return None;
        }
        let end = match h.upper_len() {
            Some(n) => (h.header_len + n).min(packet.len()),
            None => packet.len(),
        };
        let tcp = packet.get(h.header_len..end)?.to_vec();
        Some(Seen {
            src: IpAddr::V6(h.src),
            dst: IpAddr::V6(h.dst),
            tos: h.traffic_class,
            ttl: h.hop_limit,
            ident: (h.flow_label & 0xffff) as u16,
            tcp,
        })
    }

    /// Decodes an IPv4 or IPv6 packet by its version.
    pub fn from_ip(packet: &[u8]) -> Option<Seen> {
        match packet.first()? >> 4 {
            4 => Seen::from_ipv4(packet),
            6 => Seen::from_ipv6(packet),
            _ => None,
        }
    }

    /// Source port (the first two TCP bytes), when seen.
    pub fn sport(&self) -> Option<u16> {
        Some(u16::from_be_bytes([*self.tcp.first()?, *self.tcp.get(1)?]))
    }

    /// Destination port, when seen.
    pub fn dport(&self) -> Option<u16> {
        Some(u16::from_be_bytes([*self.tcp.get(2)?, *self.tcp.get(3)?]))
    }

    /// Sequence number, when seen.
    pub fn seq(&self) -> Option<u32> {
        let b = self.tcp.get(4..8)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Acknowledgment number, when the fixed header was seen.
    pub fn ack(&self) -> Option<u32> {
        let b = self.tcp.get(8..12)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Header length in bytes (data offset), when the fixed header was seen.
    pub fn header_len(&self) -> Option<usize> {
        self.tcp.get(19)?;
        Some(usize::from(self.tcp[12] >> 4) * 4)
    }

    /// Control bits, when the fixed header was seen.
    pub fn flags(&self) -> Option<Flags> {
        self.tcp.get(19)?;
        let word = u16::from_be_bytes([self.tcp[12], self.tcp[13]]);
        Some(Flags::from_bits_truncate(word & 0x01ff))
    }

    /// Window field, when the fixed header was seen.
    pub fn window(&self) -> Option<u16> {
        self.tcp.get(19)?;
        Some(u16::from_be_bytes([self.tcp[14], self.tcp[15]]))
    }

    /// The option block, when the whole TCP header was seen.
    pub fn options(&self) -> Option<&[u8]> {
        let len = self.header_len()?;
        if len < 20 {
            return None;
        }
        self.tcp.get(20..len)
    }

    /// The payload, when the whole segment was seen (IPv4 total length).
    pub fn payload(&self) -> Option<&[u8]> {
        let len = self.header_len()?;
        self.tcp.get(len..)
    }
}

/// What one ICMP error says about a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IcmpError {
    /// The router (or host) that sent it.
    pub from: IpAddr,
    /// ICMP type.
    pub icmp_type: u8,
    /// ICMP code.
    pub code: u8,
    /// The quoted probe, as the sender of the error saw it.
    pub quote: Seen,
    /// Bytes of the TCP header the quote holds (8 for an RFC 792 minimal
    /// quote, the whole header and more from RFC 1812 routers).
    pub quoted_tcp_len: usize,
    /// The message carried an RFC 4884 extension structure after the quote.
    pub extensions: bool,
}

/// One packet read from the raw sockets, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A TCP segment (from the target, or a reflector's crafted packet).
    Tcp(Seen),
    /// An ICMP time-exceeded or destination-unreachable quoting TCP.
    Icmp(IcmpError),
}

/// Decodes an IPv4 packet read from a raw socket: TCP, or an ICMP error
/// that quotes a TCP segment. Anything else is `None`.
pub fn parse_ipv4_answer(packet: &[u8]) -> Option<Answer> {
    let h = Ipv4Header::parse(packet).ok()?;
    match h.protocol {
        PROTO_TCP => Seen::from_ipv4(packet).map(Answer::Tcp),
        PROTO_ICMP => {
            let end = if h.total_len == 0 {
                packet.len()
            } else {
                usize::from(h.total_len).min(packet.len())
            };
            let icmp = packet.get(h.header_len..end)?;
            parse_icmpv4_error(IpAddr::V4(h.src), icmp).map(Answer::Icmp)
        }
        _ => None,
    }
}

/// Decodes an IPv4 or IPv6 packet read from a raw or packet socket.
pub fn parse_ip_answer(packet: &[u8]) -> Option<Answer> {
    match packet.first()? >> 4 {
        4 => parse_ipv4_answer(packet),
        6 => parse_ipv6_answer(packet),
        _ => None,
    }
}

/// Decodes an IPv6 packet: TCP, or an ICMPv6 error quoting TCP.
pub fn parse_ipv6_answer(packet: &[u8]) -> Option<Answer> {
    let h = Ipv6Header::parse(packet).ok()?;
    match h.upper_protocol? {
        PROTO_TCP => Seen::from_ipv6(packet).map(Answer::Tcp),
        PROTO_ICMPV6 => {
            let end = match h.upper_len() {
                Some(n) => (h.header_len + n).min(packet.len()),
                None => packet.len(),
            };
            parse_icmpv6_error(IpAddr::V6(h.src), packet.get(h.header_len..end)?).map(Answer::Icmp)
        }
        _ => None,
    }
}

/// Decodes an ICMPv6 message (from its type byte on) sent by `from`.
///
/// RFC 4884: byte 4 is the length of the original datagram in 64-bit
/// words; when non-zero the quote is that long and an extension follows.
/// ICMPv6 errors quote as much of the packet as fits in 1280 bytes
/// (RFC 4443), so a SYN is quoted whole.
pub fn parse_icmpv6_error(from: IpAddr, icmp: &[u8]) -> Option<IcmpError> {
    let icmp_type = *icmp.first()?;
    let code = *icmp.get(1)?;
    if icmp_type != ICMPV6_TIME_EXCEEDED && icmp_type != ICMPV6_UNREACHABLE {
        return None;
    }
    let words = usize::from(*icmp.get(4)?);
    let body = icmp.get(8..)?;
    let (quote, extensions) = if words > 0 && words * 8 <= body.len() {
        (&body[..words * 8], body.len() > words * 8)
    } else {
        (body, false)
    };
    let mut q = Seen::from_ipv6(quote)?;
    if q.tcp.len() < 8 {
        return None;
    }
    // Zero padding after the datagram is not TCP: the quoted payload
    // length already cut it in from_ipv6.
    let quoted_tcp_len = q.tcp.len();
    q.tcp.truncate(quoted_tcp_len);
    Some(IcmpError {
        from,
        // Report ICMPv6 types with the ICMPv4 numbers the prober checks.
        icmp_type: if icmp_type == ICMPV6_TIME_EXCEEDED {
            ICMP_TIME_EXCEEDED
        } else {
            ICMP_UNREACHABLE
        },
        code,
        quote: q,
        quoted_tcp_len,
        extensions,
    })
}

/// Decodes an ICMPv4 message (from its type byte on) sent by `from`.
///
/// RFC 4884: byte 5 is the length of the original datagram in 32-bit
/// words; when it is non-zero, the quote is that long (zero padded) and an
/// extension structure follows. Without it the quote runs to the end.
pub fn parse_icmpv4_error(from: IpAddr, icmp: &[u8]) -> Option<IcmpError> {
    let icmp_type = *icmp.first()?;
    let code = *icmp.get(1)?;
    if icmp_type != ICMP_TIME_EXCEEDED && icmp_type != ICMP_UNREACHABLE {
        return None;
    }
    let words = usize::from(*icmp.get(5)?);
    let body = icmp.get(8..)?;
    let (quote, extensions) = if words > 0 && words * 4 <= body.len() {
        (&body[..words * 4], body.len() > words * 4)
    } else {
        (body, false)
    };
    let ip = Ipv4Header::parse(quote).ok()?;
    if ip.protocol != PROTO_TCP || ip.fragment_offset != 0 {
        return None;
    }
    // The quote holds the datagram as far as the router kept it; the IP
    // total length says how long the datagram was (padding is not TCP).
    let end = usize::from(ip.total_len).clamp(ip.header_len, quote.len());
    let tcp = quote.get(ip.header_len..end)?.to_vec();
    if tcp.len() < 8 {
        return None;
    }
    let quoted_tcp_len = tcp.len();
    Some(IcmpError {
        from,
        icmp_type,
        code,
        quote: Seen {
            src: IpAddr::V4(ip.src),
            dst: IpAddr::V4(ip.dst),
            tos: ip.tos,
            ttl: ip.ttl,
            ident: ip.ident,
            tcp,
        },
        quoted_tcp_len,
        extensions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcp_options::{OptionsBuilder, TcpPacket};

    fn syn() -> Segment {
        Segment {
            sport: 40000,
            dport: 5201,
            seq: 0x0102_0304,
            ack: 0,
            flags: Flags::SYN,
            window: 64240,
            options: OptionsBuilder::new()
                .mss(1460)
                .window_scale(7)
                .build()
                .unwrap()
                .to_vec(),
            payload: vec![],
        }
    }

    const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
    const B: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 2);

    #[test]
    fn built_probe_has_valid_checksums_and_fields() {
        let p = build_ipv4(A, B, 0x28, 3, 0x0203, &syn()).unwrap();
        assert_eq!(p.len(), 20 + 20 + 8);
        assert!(dscp::ipv4::verify_checksum(&p).unwrap());
        assert!(tcp_options::checksum::verify_ipv4(
            A.octets(),
            B.octets(),
            &p[20..]
        ));
        let s = Seen::from_ipv4(&p).unwrap();
        assert_eq!((s.tos, s.ttl, s.ident), (0x28, 3, 0x0203));
        assert_eq!(
            (s.sport(), s.dport(), s.seq()),
            (Some(40000), Some(5201), Some(0x0102_0304))
        );
        let t = TcpPacket::new_checked(&s.tcp).unwrap();
        assert_eq!(t.header().flags(), Flags::SYN);
        assert_eq!(t.options(), s.options().unwrap());
        assert_eq!(s.options().unwrap(), &[2, 4, 5, 0xb4, 1, 3, 3, 7]);
    }

    #[test]
    fn odd_option_block_is_refused() {
        let mut s = syn();
        s.options.push(1);
        assert!(build_ipv4(A, B, 0, 64, 1, &s).is_err());
    }

    /// An ICMP time exceeded from `from` quoting `quoted` (cut to `keep`
    /// bytes), with an optional RFC 4884 length and extension.
    fn icmp(from: Ipv4Addr, quoted: &[u8], keep: usize, rfc4884: bool) -> Vec<u8> {
        let mut q = quoted[..keep.min(quoted.len())].to_vec();
        let mut msg = vec![ICMP_TIME_EXCEEDED, 0, 0, 0, 0, 0, 0, 0];
        if rfc4884 {
            while q.len() < 128 {
                q.push(0);
            }
            msg[5] = (q.len() / 4) as u8;
        }
        msg.extend_from_slice(&q);
        if rfc4884 {
            // Extension header (version 2) and one object header.
            msg.extend_from_slice(&[0x20, 0, 0, 0, 0, 8, 2, 1, 0, 0, 0, 1]);
        }
        let total = (20 + msg.len()) as u16;
        let mut p = vec![0x45, 0xc0];
        p.extend_from_slice(&total.to_be_bytes());
        p.extend_from_slice(&[0, 0, 0, 0, 64, PROTO_ICMP, 0, 0]);
        p.extend_from_slice(&from.octets());
        p.extend_from_slice(&A.octets());
        p.extend_from_slice(&msg);
        p
    }

    #[test]
    fn full_quote_is_decoded_with_its_options() {
        let probe = build_ipv4(A, B, 0, 1, 7, &syn()).unwrap();
        let r = Ipv4Addr::new(198, 18, 1, 1);
        let Some(Answer::Icmp(e)) = parse_ipv4_answer(&icmp(r, &probe, 576, false)) else {
            panic!("not an ICMP error");
        };
        assert_eq!(e.from, IpAddr::V4(r));
        assert_eq!(e.quoted_tcp_len, 28);
        assert!(!e.extensions);
        assert_eq!(e.quote.options().unwrap(), &[2, 4, 5, 0xb4, 1, 3, 3, 7]);
        assert_eq!(e.quote.ident, 7);
    }

    #[test]
    fn eight_byte_quote_keeps_ports_and_sequence_only() {
        let probe = build_ipv4(A, B, 0, 1, 7, &syn()).unwrap();
        let r = Ipv4Addr::new(198, 18, 1, 1);
        let Some(Answer::Icmp(e)) = parse_ipv4_answer(&icmp(r, &probe, 28, false)) else {
            panic!("not an ICMP error");
        };
        assert_eq!(e.quoted_tcp_len, 8);
        assert_eq!(e.quote.seq(), Some(0x0102_0304));
        assert!(e.quote.window().is_none());
        assert!(e.quote.options().is_none());
    }

    #[test]
    fn rfc4884_length_cuts_the_padding_and_flags_extensions() {
        let probe = build_ipv4(A, B, 0, 1, 7, &syn()).unwrap();
        let r = Ipv4Addr::new(198, 18, 1, 1);
        let Some(Answer::Icmp(e)) = parse_ipv4_answer(&icmp(r, &probe, 576, true)) else {
            panic!("not an ICMP error");
        };
        assert!(e.extensions);
        // The zero padding up to 128 bytes is not TCP: the quoted total
        // length (48) ends the segment.
        assert_eq!(e.quoted_tcp_len, 28);
    }

    #[test]
    fn ipv6_probe_and_its_icmpv6_quote() {
        let a: Ipv6Addr = "2001:db8:41::2".parse().unwrap();
        let b: Ipv6Addr = "2001:db8:44::2".parse().unwrap();
        let r: Ipv6Addr = "2001:db8:41::1".parse().unwrap();
        let p = build_ipv6(a, b, 0x28, 1, 0x0301, &syn()).unwrap();
        assert!(tcp_options::checksum::verify_ipv6(
            a.octets(),
            b.octets(),
            &p[40..]
        ));
        let s = Seen::from_ip(&p).unwrap();
        assert_eq!((s.tos, s.ttl, s.ident), (0x28, 1, 0x0301));
        assert_eq!(s.options().unwrap(), &[2, 4, 5, 0xb4, 1, 3, 3, 7]);
        // Time exceeded (type 3) from r quoting the probe whole.
        let mut icmp = vec![ICMPV6_TIME_EXCEEDED, 0, 0, 0, 0, 0, 0, 0];
        icmp.extend_from_slice(&p);
        let mut outer = vec![0x60, 0, 0, 0];
        outer.extend_from_slice(&(icmp.len() as u16).to_be_bytes());
        outer.extend_from_slice(&[PROTO_ICMPV6, 64]);
        outer.extend_from_slice(&r.octets());
        outer.extend_from_slice(&a.octets());
        outer.extend_from_slice(&icmp);
        let Some(Answer::Icmp(e)) = parse_ip_answer(&outer) else {
            panic!("not an ICMPv6 error");
        };
        assert_eq!(e.from, IpAddr::V6(r));
        assert_eq!(e.icmp_type, ICMP_TIME_EXCEEDED);
        assert_eq!(e.quote.ident, 0x0301);
        assert_eq!(e.quote, s);
        for cut in 0..outer.len() {
            let _ = parse_ip_answer(&outer[..cut]);
        }
    }

    #[test]
    fn other_icmp_and_garbage_are_ignored() {
        let probe = build_ipv4(A, B, 0, 1, 7, &syn()).unwrap();
        let mut echo = icmp(Ipv4Addr::new(198, 18, 1, 1), &probe, 576, false);
        echo[20] = 0; // echo reply
        assert_eq!(parse_ipv4_answer(&echo), None);
        assert_eq!(parse_ipv4_answer(&[0x45, 0, 0]), None);
        for cut in 0..probe.len() {
            let _ = parse_ipv4_answer(&probe[..cut]);
        }
    }
}
