//! From a captured frame to a TCP segment view: link layer, IP, then the TCP bytes.

use std::net::IpAddr;

use super::error::DecodeError;
use super::ipv4::Ipv4Header;
use super::ipv6::Ipv6Header;
use super::link::{decode_link, LinkPayload, Network};

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
    /// The link layer.
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
}

impl TcpSegment<'_> {
    /// True when the snap length cut the segment short.
    pub fn is_truncated(&self) -> bool {
        self.tcp.len() < self.wire_len
    }
}

/// Decodes `frame` (captured with `linktype`, `origlen` bytes on the wire)
/// down to its TCP segment.
///
/// `Ok(None)` means the frame is well formed but holds no TCP header: another
/// protocol, or a non-first IP fragment.
pub fn decode_tcp(
    linktype: u32,
    frame: &[u8],
    origlen: u32,
) -> Result<Option<TcpSegment<'_>>, DecodeError> {
    let link = decode_link(linktype, frame)?;
    let ip_bytes = frame.get(link.offset..).unwrap_or(&[]);
    let ip_offset = link.offset;
    let (ip, protocol, ip_payload_len) = match link.network {
        Network::Ipv4 => {
            let h = Ipv4Header::parse(ip_bytes).map_err(|e| shift(e, ip_offset))?;
            if h.fragment_offset != 0 {
                return Ok(None);
            }
            let info = IpInfo {
                version: IpVersion::V4,
                src: IpAddr::V4(h.src),
                dst: IpAddr::V4(h.dst),
                tos: h.tos,
                ttl: h.ttl,
                ident: Some(u32::from(h.ident)),
                df: h.df,
                flow_label: None,
                header_len: h.header_len,
            };
            (info, Some(h.protocol), h.payload_len())
        }
        Network::Ipv6 => {
            let h = Ipv6Header::parse(ip_bytes).map_err(|e| shift(e, ip_offset))?;
            let info = IpInfo {
                version: IpVersion::V6,
                src: IpAddr::V6(h.src),
                dst: IpAddr::V6(h.dst),
                tos: h.traffic_class,
                ttl: h.hop_limit,
                ident: h.fragment_id,
                df: false,
                flow_label: Some(h.flow_label),
                header_len: h.header_len,
            };
            (info, h.upper_protocol, h.upper_len())
        }
        _ => return Ok(None),
    };
    if protocol != Some(IPPROTO_TCP) {
        return Ok(None);
    }
    let tcp_offset = ip_offset + ip.header_len;
    let captured = frame.get(tcp_offset..).unwrap_or(&[]);
    // Without a usable IP length (segmentation offload), the wire length of the frame decides.
    let wire_len = ip_payload_len.unwrap_or_else(|| {
        (origlen as usize)
            .saturating_sub(tcp_offset)
            .max(captured.len())
    });
    let tcp = &captured[..captured.len().min(wire_len)];
    Ok(Some(TcpSegment {
        link,
        ip,
        tcp_offset,
        tcp,
        wire_len,
    }))
}

/// Makes a header-relative error offset frame-relative.
fn shift(e: DecodeError, by: usize) -> DecodeError {
    match e {
        DecodeError::Truncated {
            layer,
            offset,
            needed,
            available,
        } => DecodeError::Truncated {
            layer,
            offset: offset + by,
            needed,
            available,
        },
        DecodeError::Malformed {
            layer,
            offset,
            reason,
        } => DecodeError::Malformed {
            layer,
            offset: offset + by,
            reason,
        },
    }
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
