//! From a captured frame to a TCP segment view: link layer, IP, then the TCP bytes.

use std::net::IpAddr;

use super::decode::{plain_tcp, walk};
use super::encap::{Skip, Tunnels, MAX_LAYERS};
use super::error::DecodeError;
use super::link::{decode_link, LinkPayload};

/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;

/// IP version of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpVersion {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

/// The IP-layer facts about a TCP segment, for either IP version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpInfo {
    /// IPv4 or IPv6.
    pub version: IpVersion,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// IPv4 TOS byte or IPv6 traffic class (DSCP << 2 | ECN).
    pub tos: u8,
    /// IPv4 TTL or IPv6 hop limit.
    pub ttl: u8,
    /// IPv4 identification, or the IPv6 fragment identification if any.
    pub ident: Option<u32>,
    /// IPv4 Don't Fragment (always false for IPv6, which has no such flag).
    pub df: bool,
    /// IPv6 flow label.
    pub flow_label: Option<u32>,
    /// IP header length in bytes, IPv4 options or IPv6 extension headers included.
    pub header_len: usize,
}

impl IpInfo {
    /// The DSCP (upper six bits of the DS field).
    pub fn dscp(&self) -> u8 {
        self.tos >> 2
    }
    /// The ECN codepoint (lower two bits).
    pub fn ecn(&self) -> u8 {
        self.tos & 0b11
    }
}

/// A TCP segment found in a captured frame. The TCP header itself is not
/// checked here: `tcp` holds whatever was captured from its first byte.
#[derive(Debug, Clone, Copy)]
pub struct TcpSegment<'a> {
    /// The capture's link layer as [`crate::link::decode_link`] reads it
    /// (for the link types only the encapsulation decoders know, FDDI, PPP,
    /// C-HDLC and NFLOG, `UnsupportedLinktype`: `tunnels` says the rest).
    pub link: LinkPayload,
    /// The IP layer.
    pub ip: IpInfo,
    /// Offset of the TCP header in the frame.
    pub tcp_offset: usize,
    /// The captured TCP bytes (header and payload), clipped to the IP length
    /// so that link-layer padding is not taken for payload.
    pub tcp: &'a [u8],
    /// Length of TCP header plus payload on the wire.
    pub wire_len: usize,
    /// The tunnels and encapsulations the segment was carried in, outermost
    /// first (empty on a plain link, and always from [`decode_tcp`]).
    pub tunnels: Tunnels<'a>,
}

impl TcpSegment<'_> {
    /// True when the snap length cut the segment short.
    pub fn is_truncated(&self) -> bool {
        self.tcp.len() < self.wire_len
    }
}

/// Decodes `frame` (captured with `linktype`, `origlen` bytes on the wire)
/// down to its TCP segment on a plain link (Ethernet with any VLAN tags,
/// Linux cooked capture, raw IP, loopback): tunnels are not entered.
///
/// `Ok(None)` means the frame is well formed but holds no TCP header that
/// this function reaches: another protocol, a non-first IP fragment, or
/// TCP inside a tunnel or another encapsulation ([`decode_segment`] goes
/// there).
#[inline]
pub fn decode_tcp(
    linktype: u32,
    frame: &[u8],
    origlen: u32,
) -> Result<Option<TcpSegment<'_>>, DecodeError> {
    plain_tcp(frame, origlen, decode_link(linktype, frame)?)
}

/// Decodes `frame` (captured with `linktype`, `origlen` bytes on the wire)
/// through any tunnels and encapsulations ([`crate::encap`], at most
/// [`MAX_LAYERS`] deep) down to its TCP segment, whose
/// [`tunnels`](TcpSegment::tunnels) say what it was carried in; or the
/// reason there is none.
///
/// ```
/// use capture::{decode_segment, encap::{EncapKind, Layer, Skip}, link::LINKTYPE_RAW};
/// // IPv4 carrying GRE (key 7) carrying IPv4 carrying a TCP header.
/// let mut pkt = vec![0x45, 0, 0, 72, 0, 1, 0, 0, 64, 47, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2];
/// pkt.extend_from_slice(&[0x20, 0, 0x08, 0x00, 0, 0, 0, 7]);
/// pkt.extend_from_slice(&[0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 198, 19, 0, 1, 198, 19, 0, 2]);
/// pkt.extend_from_slice(&[0u8; 20]);
/// let seg = decode_segment(LINKTYPE_RAW, &pkt, 72).unwrap();
/// assert_eq!(seg.tcp.len(), 20);
/// let gre = seg.tunnels.iter().next().unwrap();
/// assert_eq!(gre.kind(), EncapKind::Gre);
/// assert!(matches!(gre.layer, Layer::Gre(g) if g.key == Some(7)));
/// assert_eq!(gre.outer.unwrap().src.to_string(), "198.18.0.1");
/// // The same frame cut inside the GRE header.
/// assert!(matches!(decode_segment(LINKTYPE_RAW, &pkt[..24], 72), Err(Skip::Decode(_))));
/// ```
#[inline]
pub fn decode_segment(linktype: u32, frame: &[u8], origlen: u32) -> Result<TcpSegment<'_>, Skip> {
    walk(linktype, frame, origlen, MAX_LAYERS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{LINKTYPE_ETHERNET, LINKTYPE_RAW};

    fn ipv4_tcp(total_len: u16, frag: u16) -> Vec<u8> {
        let mut p = vec![0x45, 0x2e];
        p.extend_from_slice(&total_len.to_be_bytes());
        p.extend_from_slice(&[0, 1]);
        p.extend_from_slice(&frag.to_be_bytes());
        p.extend_from_slice(&[64, 6, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2]);
        p.extend_from_slice(&[0u8; 20]);
        p
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&ipv4_tcp(40, 0x4000));
        f.extend_from_slice(&[0u8; 6]);
        let s = decode_tcp(LINKTYPE_ETHERNET, &f, f.len() as u32)
            .unwrap()
            .unwrap();
        assert_eq!(s.tcp.len(), 20);
        assert_eq!(s.wire_len, 20);
        assert!(!s.is_truncated());
        assert_eq!(s.ip.dscp(), 11);
        assert_eq!(s.ip.ecn(), 2);
        assert!(s.ip.df);
    }

    #[test]
    fn snaplen_truncation_and_fragments() {
        let p = ipv4_tcp(1500, 0);
        let s = decode_tcp(LINKTYPE_RAW, &p, 1500).unwrap().unwrap();
        assert!(s.is_truncated());
        assert!(decode_tcp(LINKTYPE_RAW, &ipv4_tcp(40, 0x0010), 40)
            .unwrap()
            .is_none());
    }

    #[test]
    fn offload_zero_length_uses_frame_length() {
        let p = ipv4_tcp(0, 0);
        let s = decode_tcp(LINKTYPE_RAW, &p, 80_040).unwrap().unwrap();
        assert_eq!(s.wire_len, 80_020);
    }

    #[test]
    fn error_offsets_are_frame_relative() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        assert!(matches!(
            decode_tcp(LINKTYPE_ETHERNET, &f, 100),
            Err(DecodeError::Truncated { offset: 14, .. })
        ));
    }
}
