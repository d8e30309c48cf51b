//! Probe packets on the wire: what the prober sends and what comes back,
//! built and read through tcp-options' representations, never packed by
//! hand.
//!
//! - Sending: a [`Segment`] (the TCP fields a test chooses, owning its
//!   option block and data) becomes a [`tcp_options::TcpRepr`], wrapped in
//!   an [`tcp_options::IpRepr`] carrying the copy's [`IpFields`] (DS field,
//!   TTL, identification; over IPv6 the identification is the flow label,
//!   which ICMPv6 quotes carry back) and written by
//!   [`tcp_options::PacketRepr::emit`], which computes every length and
//!   checksum ([`packet`]).
//! - Reading: [`Seen`] is a packet as an observer saw it (the target's
//!   answer, a router's quote, the reflector's capture), read with
//!   [`tcp_options::QuotedPacket`]: a quote may hold only the first 8 TCP
//!   bytes, and each field says whether it was seen. [`parse_answer`] reads
//!   what the raw sockets return: a TCP segment, or an ICMP / ICMPv6 error
//!   ([`IcmpError`]) quoting one.
//!
//! Everything here is pure: bytes in, bytes or decoded values out.

mod icmp;
mod seen;

pub use icmp::{parse_answer, Answer, IcmpError, IcmpKind};
pub use seen::Seen;

use std::net::IpAddr;

use dscp::DsField;
use tcp_options::{Flags, IpRepr, PacketRepr, TcpRepr};

use super::error::WireError;

/// The IP header fields a probe copy chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpFields {
    /// The DS field (DSCP and ECN).
    pub ds: DsField,
    /// TTL or hop limit.
    pub ttl: u8,
    /// IPv4 identification, IPv6 flow label (16 bits of it): which copy
    /// a quote is of.
    pub ident: u16,
}

impl IpFields {
    /// A copy with the DS field `ds`, TTL `ttl`, identification `ident`.
    pub const fn new(ds: DsField, ttl: u8, ident: u16) -> IpFields {
        IpFields { ds, ttl, ident }
    }
}

/// A TCP segment the prober (or the reflector) sends: the fields of a
/// [`TcpRepr`], owning the option block and the data it borrows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (meaningful with ACK).
    pub ack: u32,
    /// Control bits.
    pub flags: Flags,
    /// Window field.
    pub window: u16,
    /// The option block (whole words, at most 40 bytes).
    pub options: Vec<u8>,
    /// Data.
    pub payload: Vec<u8>,
}

impl Segment {
    /// A segment between these ports, everything else zero or empty.
    pub fn new(sport: u16, dport: u16) -> Segment {
        Segment {
            sport,
            dport,
            seq: 0,
            ack: 0,
            flags: Flags::empty(),
            window: 0,
            options: Vec::new(),
            payload: Vec::new(),
        }
    }

    /// The segment as the crate's representation (borrowing it).
    pub fn repr(&self) -> TcpRepr<'_> {
        TcpRepr {
            seq_number: self.seq,
            ack_number: self.ack,
            flags: self.flags,
            window: self.window,
            options: &self.options,
            payload: &self.payload,
            ..TcpRepr::new(self.sport, self.dport)
        }
    }
}

/// The IP packet from `src` to `dst` around `seg`, with the copy's IP
/// fields; IPv4 with DF set. Lengths and checksums come from
/// [`PacketRepr::emit`].
pub fn packet(src: IpAddr, dst: IpAddr, ip: IpFields, seg: &Segment) -> Result<Vec<u8>, WireError> {
    let mut repr = IpRepr::tcp(src, dst).ok_or(WireError::Families { src, dst })?;
    match &mut repr {
        IpRepr::V4(r) => {
            r.tos = ip.ds.value();
            r.ttl = ip.ttl;
            r.identification = ip.ident;
        }
        IpRepr::V6(r) => {
            r.traffic_class = ip.ds.value();
            r.hop_limit = ip.ttl;
            r.flow_label = u32::from(ip.ident);
        }
    }
    let p = PacketRepr {
        ip: repr,
        tcp: seg.repr(),
    };
    let mut buf = vec![0u8; p.buffer_len()];
    let n = p.emit(&mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// An option block from the builder.
pub fn options(b: tcp_options::OptionsBuilder<'_>) -> Result<Vec<u8>, WireError> {
    Ok(b.build()?.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use tcp_options::OptionsBuilder;

    pub(crate) fn syn() -> Segment {
        Segment {
            seq: 0x0102_0304,
            flags: Flags::SYN,
            window: 64240,
            options: options(OptionsBuilder::new().mss(1460).window_scale(7)).unwrap(),
            ..Segment::new(40000, 5201)
        }
    }

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 19, 0, 2));

    #[test]
    fn built_probe_has_valid_checksums_and_fields() {
        let ip = IpFields::new(DsField::new(0x28), 3, 0x0203);
        let p = packet(A, B, ip, &syn()).unwrap();
        assert_eq!(p.len(), 20 + 20 + 8);
        let back = PacketRepr::parse_verified(&p).unwrap();
        assert_eq!(back.tcp, syn().repr());
        let s = Seen::parse(&p).unwrap();
        assert_eq!((s.ds.value(), s.ttl, s.ident), (0x28, 3, 0x0203));
        assert_eq!((s.sport(), s.dport(), s.seq()), (40000, 5201, 0x0102_0304));
        assert_eq!(s.flags(), Some(Flags::SYN));
        assert_eq!(s.options(), Some(&[2, 4, 5, 0xb4, 1, 3, 3, 7][..]));
    }

    #[test]
    fn odd_option_block_and_mixed_families_are_refused() {
        let mut s = syn();
        s.options.push(1);
        let ip = IpFields::new(DsField::new(0), 64, 1);
        assert!(matches!(packet(A, B, ip, &s), Err(WireError::Emit(_))));
        let v6 = IpAddr::V6(Ipv6Addr::LOCALHOST);
        assert_eq!(
            packet(A, v6, ip, &syn()),
            Err(WireError::Families { src: A, dst: v6 })
        );
    }

    #[test]
    fn ipv6_probe_carries_its_identification_in_the_flow_label() {
        let a: IpAddr = "2001:db8:41::2".parse().unwrap();
        let b: IpAddr = "2001:db8:44::2".parse().unwrap();
        let p = packet(a, b, IpFields::new(DsField::new(0x28), 1, 0x0301), &syn()).unwrap();
        assert!(PacketRepr::parse_verified(&p).is_ok());
        let s = Seen::parse(&p).unwrap();
        assert_eq!((s.ds.value(), s.ttl, s.ident), (0x28, 1, 0x0301));
    }
}
