//! [`Seen`]: a TCP packet as one observer saw it.

use std::net::IpAddr;

use dscp::DsField;
use tcp_options::{Flags, IpRepr, PacketError, QuotedPacket, QuotedSegment};

/// A TCP packet as some observer saw it: the prober (an answer from the
/// target), a router (its ICMP quote, perhaps of the first 8 TCP bytes
/// only) or the reflector (its capture, cut after the headers). Ports and
/// sequence number are always there; every other TCP field only when the
/// observer saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// The DS field (DSCP and ECN).
    pub ds: DsField,
    /// TTL or hop limit as seen.
    pub ttl: u8,
    /// IPv4 identification, or the low 16 bits of the IPv6 flow label.
    pub ident: u16,
    /// The TCP bytes seen (at least 8).
    tcp: Vec<u8>,
    /// The segment's whole length, from its IP header.
    segment_len: usize,
}

impl Seen {
    /// Reads an IPv4 or IPv6 packet carrying TCP, whole or cut short
    /// ([`QuotedPacket::parse`]).
    pub fn parse(packet: &[u8]) -> Result<Seen, PacketError> {
        QuotedPacket::parse(packet).map(|q| Seen::from_quoted(&q))
    }

    /// The packet `q` as an owned observation.
    pub fn from_quoted(q: &QuotedPacket<'_>) -> Seen {
        let (ident, ttl) = match q.ip {
            IpRepr::V4(r) => (r.identification, r.ttl),
            IpRepr::V6(r) => ((r.flow_label & 0xffff) as u16, r.hop_limit),
        };
        Seen {
            src: q.ip.src(),
            dst: q.ip.dst(),
            ds: DsField::new(q.ip.ds_field()),
            ttl,
            ident,
            tcp: q.tcp.bytes().to_vec(),
            segment_len: q.tcp.segment_len(),
        }
    }

    /// The segment as far as it was seen.
    fn segment(&self) -> Option<QuotedSegment<'_>> {
        QuotedSegment::new(&self.tcp, self.segment_len).ok()
    }

    /// Source port.
    pub fn sport(&self) -> u16 {
        self.segment().map_or(0, |s| s.src_port())
    }

    /// Destination port.
    pub fn dport(&self) -> u16 {
        self.segment().map_or(0, |s| s.dst_port())
    }

    /// Sequence number.
    pub fn seq(&self) -> u32 {
        self.segment().map_or(0, |s| s.seq_number())
    }

    /// Acknowledgment number, when seen.
    pub fn ack(&self) -> Option<u32> {
        self.segment()?.ack_number()
    }

    /// Control bits, when the fixed header was seen.
    pub fn flags(&self) -> Option<Flags> {
        self.segment()?.flags()
    }

    /// Whether the fixed header was seen and has all of `f`.
    pub fn has(&self, f: Flags) -> bool {
        self.flags().is_some_and(|x| x.contains(f))
    }

    /// Window field, when the fixed header was seen.
    pub fn window(&self) -> Option<u16> {
        self.segment()?.window()
    }

    /// Header length in bytes, when the fixed header was seen.
    pub fn header_len(&self) -> Option<usize> {
        self.segment()?.header_len()
    }

    /// The option block, when the whole header was seen.
    pub fn options(&self) -> Option<&[u8]> {
        self.segment()?.options()
    }

    /// The data as far as it was seen, once the whole header was.
    pub fn payload(&self) -> Option<&[u8]> {
        self.segment()?.payload()
    }

    /// Whether data was seen.
    pub fn has_data(&self) -> bool {
        self.payload().is_some_and(|p| !p.is_empty())
    }

    /// TCP bytes seen.
    pub fn quoted_len(&self) -> usize {
        self.tcp.len()
    }

    /// The same observation cut to its first `n` TCP bytes (at least 8):
    /// what an RFC 792 router would have quoted.
    pub fn truncated(&self, n: usize) -> Seen {
        let mut s = self.clone();
        s.tcp.truncate(n.max(tcp_options::quote::MIN_QUOTED_TCP));
        s
    }
}
