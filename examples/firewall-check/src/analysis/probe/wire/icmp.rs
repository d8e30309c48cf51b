//! What the raw sockets return: the target's TCP answers, and ICMP / ICMPv6
//! errors quoting a probe.
//!
//! An ICMP error (RFC 792) is type, code, checksum, four bytes (RFC 4884
//! puts the quote's length in them: byte 5 in 32-bit words for ICMPv4,
//! byte 4 in 64-bit words for ICMPv6, when an extension structure follows
//! the quote), then the quoted datagram, read with
//! [`tcp_options::QuotedPacket`] (a quote may be as short as the IP header
//! and 8 TCP bytes).

use std::net::IpAddr;

use tcp_options::{IpRepr, QuotedPacket};

use super::Seen;

/// IP protocol number of ICMP.
const PROTO_ICMP: u8 = 1;
/// IPv6 next header of ICMPv6.
const PROTO_ICMPV6: u8 = 58;
/// IP protocol number of TCP.
const PROTO_TCP: u8 = 6;
/// ICMP type: destination unreachable (RFC 792).
const ICMP_UNREACHABLE: u8 = 3;
/// ICMP type: time exceeded (RFC 792).
const ICMP_TIME_EXCEEDED: u8 = 11;
/// ICMPv6 type: destination unreachable (RFC 4443).
const ICMPV6_UNREACHABLE: u8 = 1;
/// ICMPv6 type: time exceeded (RFC 4443).
const ICMPV6_TIME_EXCEEDED: u8 = 3;
/// The ICMP header before the quote: type, code, checksum, 4 bytes.
const ICMP_HEADER_LEN: usize = 8;
/// Offset of the RFC 4884 length (32-bit words) in an ICMPv4 error.
const ICMPV4_LENGTH_AT: usize = 5;
/// Offset of the RFC 4884 length (64-bit words) in an ICMPv6 error.
const ICMPV6_LENGTH_AT: usize = 4;

/// Which error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IcmpKind {
    /// Time exceeded in transit: a router on the path (ICMP type 11,
    /// ICMPv6 type 3).
    TimeExceeded,
    /// Destination unreachable (ICMP type 3, ICMPv6 type 1): reported
    /// with ICMP's type number.
    Unreachable,
}

impl IcmpKind {
    /// The ICMP (IPv4) type number.
    pub const fn icmp_type(self) -> u8 {
        match self {
            IcmpKind::TimeExceeded => ICMP_TIME_EXCEEDED,
            IcmpKind::Unreachable => ICMP_UNREACHABLE,
        }
    }
}

/// What one ICMP error says about a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IcmpError {
    /// The router (or host) that sent it.
    pub from: IpAddr,
    /// Which error.
    pub kind: IcmpKind,
    /// Its code.
    pub code: u8,
    /// The quoted probe, as the sender of the error saw it.
    pub quote: Seen,
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

/// Decodes an IPv4 or IPv6 packet read from a raw or packet socket (or a
/// capture of one cut after its headers): TCP, or an ICMP / ICMPv6 error
/// quoting a TCP segment. Anything else is `None`.
pub fn parse_answer(packet: &[u8]) -> Option<Answer> {
    let (ip, upper, _) = IpRepr::parse_quoted(packet).ok()?;
    match (ip, ip.protocol()?) {
        (_, PROTO_TCP) => Seen::parse(packet).ok().map(Answer::Tcp),
        (IpRepr::V4(_), PROTO_ICMP) => icmp_error(ip.src(), upper, false).map(Answer::Icmp),
        (IpRepr::V6(_), PROTO_ICMPV6) => icmp_error(ip.src(), upper, true).map(Answer::Icmp),
        _ => None,
    }
}

/// Decodes an ICMP (`v6` false) or ICMPv6 message, from its type byte on,
/// sent by `from`: a time exceeded or destination unreachable quoting TCP.
fn icmp_error(from: IpAddr, icmp: &[u8], v6: bool) -> Option<IcmpError> {
    let (icmp_type, code) = (*icmp.first()?, *icmp.get(1)?);
    let kind = match (v6, icmp_type) {
        (false, ICMP_TIME_EXCEEDED) | (true, ICMPV6_TIME_EXCEEDED) => IcmpKind::TimeExceeded,
        (false, ICMP_UNREACHABLE) | (true, ICMPV6_UNREACHABLE) => IcmpKind::Unreachable,
        _ => return None,
    };
    // RFC 4884: a non-zero length says how long the quote is (zero
    // padded); an extension structure follows it.
    let (at, unit) = if v6 {
        (ICMPV6_LENGTH_AT, 8)
    } else {
        (ICMPV4_LENGTH_AT, 4)
    };
    let words = usize::from(*icmp.get(at)?);
    let body = icmp.get(ICMP_HEADER_LEN..)?;
    let (quote, extensions) = match body.get(..words * unit) {
        Some(q) if words > 0 => (q, body.len() > q.len()),
        _ => (body, false),
    };
    // The quoted IP length ends the datagram: padding is not TCP.
    let q = QuotedPacket::parse(quote).ok()?;
    Some(IcmpError {
        from,
        kind,
        code,
        quote: Seen::from_quoted(&q),
        extensions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::wire::{packet, IpFields, Segment};
    use dscp::DsField;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use tcp_options::{Flags, Ipv4Repr, Ipv6Repr};

    const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
    const B: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 2);
    const R: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 1);

    fn probe(src: IpAddr, dst: IpAddr) -> Vec<u8> {
        let seg = Segment {
            seq: 0x0102_0304,
            flags: Flags::SYN,
            window: 64240,
            options: vec![2, 4, 5, 0xb4, 1, 3, 3, 7],
            ..Segment::new(40000, 5201)
        };
        packet(src, dst, IpFields::new(DsField::new(0), 1, 7), &seg).unwrap()
    }

    /// The ICMP message: `icmp_type`, the quote cut to `keep` bytes, with
    /// an RFC 4884 length and extension when `rfc4884`.
    fn message(icmp_type: u8, quoted: &[u8], keep: usize, rfc4884: Option<usize>) -> Vec<u8> {
        let mut q = quoted[..keep.min(quoted.len())].to_vec();
        let mut msg = vec![icmp_type, 0, 0, 0, 0, 0, 0, 0];
        if let Some(at) = rfc4884 {
            q.resize(128, 0);
            msg[at] = (q.len() / if at == ICMPV4_LENGTH_AT { 4 } else { 8 }) as u8;
        }
        msg.extend_from_slice(&q);
        if rfc4884.is_some() {
            // Extension header (version 2) and one object header.
            msg.extend_from_slice(&[0x20, 0, 0, 0, 0, 8, 2, 1, 0, 0, 0, 1]);
        }
        msg
    }

    /// An IPv4 packet from `from` to A carrying `msg` as ICMP.
    fn icmpv4(from: Ipv4Addr, msg: &[u8]) -> Vec<u8> {
        let ip = Ipv4Repr {
            protocol: PROTO_ICMP,
            tos: 0xc0,
            ..Ipv4Repr::tcp(from, A)
        };
        let mut p = vec![0u8; 20 + msg.len()];
        let n = ip.emit(&mut p, msg.len()).unwrap();
        p[n..].copy_from_slice(msg);
        p
    }

    fn decoded(p: &[u8]) -> IcmpError {
        match parse_answer(p) {
            Some(Answer::Icmp(e)) => e,
            other => panic!("not an ICMP error: {other:?}"),
        }
    }

    #[test]
    fn full_quote_is_decoded_with_its_options() {
        let p = probe(A.into(), B.into());
        let e = decoded(&icmpv4(R, &message(ICMP_TIME_EXCEEDED, &p, 576, None)));
        assert_eq!((e.from, e.kind), (IpAddr::V4(R), IcmpKind::TimeExceeded));
        assert_eq!(e.quote.quoted_len(), 28);
        assert!(!e.extensions);
        assert_eq!(e.quote.options(), Some(&[2, 4, 5, 0xb4, 1, 3, 3, 7][..]));
        assert_eq!(e.quote.ident, 7);
    }

    #[test]
    fn eight_byte_quote_keeps_ports_and_sequence_only() {
        let p = probe(A.into(), B.into());
        let e = decoded(&icmpv4(R, &message(ICMP_TIME_EXCEEDED, &p, 28, None)));
        assert_eq!(e.quote.quoted_len(), 8);
        assert_eq!(e.quote.seq(), 0x0102_0304);
        assert_eq!(e.quote.window(), None);
        assert_eq!(e.quote.options(), None);
        // Fewer than 8 TCP bytes: not a quote of a TCP probe.
        assert_eq!(
            parse_answer(&icmpv4(R, &message(ICMP_TIME_EXCEEDED, &p, 27, None))),
            None
        );
    }

    #[test]
    fn rfc4884_length_cuts_the_padding_and_flags_extensions() {
        let p = probe(A.into(), B.into());
        let e = decoded(&icmpv4(
            R,
            &message(ICMP_TIME_EXCEEDED, &p, 576, Some(ICMPV4_LENGTH_AT)),
        ));
        assert!(e.extensions);
        // The zero padding up to 128 bytes is not TCP: the quoted total
        // length (48) ends the segment.
        assert_eq!(e.quote.quoted_len(), 28);
    }

    #[test]
    fn ipv6_probe_and_its_icmpv6_quote() {
        let a: Ipv6Addr = "2001:db8:41::2".parse().unwrap();
        let b: Ipv6Addr = "2001:db8:44::2".parse().unwrap();
        let r: Ipv6Addr = "2001:db8:41::1".parse().unwrap();
        let p = probe(a.into(), b.into());
        let msg = message(ICMPV6_TIME_EXCEEDED, &p, 1280, None);
        let ip = Ipv6Repr {
            next_header: PROTO_ICMPV6,
            ..Ipv6Repr::tcp(r, a)
        };
        let mut outer = vec![0u8; 40 + msg.len()];
        ip.emit(&mut outer, msg.len()).unwrap();
        outer[40..].copy_from_slice(&msg);
        let e = decoded(&outer);
        assert_eq!((e.from, e.kind), (IpAddr::V6(r), IcmpKind::TimeExceeded));
        assert_eq!(e.quote, Seen::parse(&p).unwrap());
        assert_eq!(e.quote.ident, 7);
        for cut in 0..outer.len() {
            let _ = parse_answer(&outer[..cut]);
        }
        // RFC 4884 over ICMPv6: the length in 64-bit words.
        let msg = message(ICMPV6_UNREACHABLE, &p, 1280, Some(ICMPV6_LENGTH_AT));
        let mut outer = vec![0u8; 40 + msg.len()];
        ip.emit(&mut outer, msg.len()).unwrap();
        outer[40..].copy_from_slice(&msg);
        let e = decoded(&outer);
        assert_eq!(e.kind, IcmpKind::Unreachable);
        assert!(e.extensions);
        assert_eq!(e.quote.quoted_len(), 28);
    }

    #[test]
    fn other_icmp_and_garbage_are_ignored() {
        let p = probe(A.into(), B.into());
        // Echo reply (type 0).
        assert_eq!(parse_answer(&icmpv4(R, &message(0, &p, 576, None))), None);
        assert_eq!(parse_answer(&[0x45, 0, 0]), None);
        for cut in 0..p.len() {
            let _ = parse_answer(&p[..cut]);
        }
        assert!(matches!(parse_answer(&p), Some(Answer::Tcp(_))));
    }
}
