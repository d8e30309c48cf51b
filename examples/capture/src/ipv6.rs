//! IPv6 header (RFC 8200) and the walk over extension headers to the upper layer.
//!
//! Hop-by-hop options (0, searched for a Jumbo Payload option, RFC 2675),
//! routing (43), destination options (60), mobility (135), HIP (139) and
//! shim6 (140) share the "next header, length in 8-byte units beyond the
//! first 8" layout; the fragment header (44) is 8 bytes and a non-first
//! fragment carries no upper-layer header; AH (51) counts its length in
//! 4-byte units beyond the first 8. ESP (50) and "no next header" (59) end
//! the walk without an upper layer.

use std::net::Ipv6Addr;

use super::error::DecodeError;

/// Fixed IPv6 header length.
pub const IPV6_HEADER_LEN: usize = 40;
/// Offset of the payload length.
const PAYLOAD_LEN: usize = 4;
/// Offset of the next header field.
const NEXT_HEADER: usize = 6;
/// Offset of the hop limit.
const HOP_LIMIT: usize = 7;
/// Source address.
const SRC: usize = 8;
/// Destination address.
const DST: usize = 24;

/// Hop-by-hop options header.
pub const NH_HOP_BY_HOP: u8 = 0;
/// Routing header.
pub const NH_ROUTING: u8 = 43;
/// Fragment header.
pub const NH_FRAGMENT: u8 = 44;
/// Encapsulating security payload.
pub const NH_ESP: u8 = 50;
/// Authentication header.
pub const NH_AH: u8 = 51;
/// No next header.
pub const NH_NONE: u8 = 59;
/// Destination options header.
pub const NH_DEST_OPTS: u8 = 60;
/// Mobility header.
pub const NH_MOBILITY: u8 = 135;
/// Host identity protocol.
pub const NH_HIP: u8 = 139;
/// Shim6.
pub const NH_SHIM6: u8 = 140;
/// Jumbo Payload option type in a hop-by-hop header (RFC 2675).
pub const OPT_JUMBO: u8 = 0xc2;
/// Fragment header length.
const FRAGMENT_HEADER_LEN: usize = 8;

/// The decoded fields of an IPv6 header and its extension-header chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Header {
    /// Source address.
    pub src: Ipv6Addr,
    /// Destination address.
    pub dst: Ipv6Addr,
    /// Traffic class (DSCP in the upper six bits, ECN in the lower two).
    pub traffic_class: u8,
    /// Flow label.
    pub flow_label: u32,
    /// Hop limit.
    pub hop_limit: u8,
    /// Payload length field (0 with a jumbogram or segmentation offload).
    pub payload_len: u16,
    /// Jumbo Payload length, when a hop-by-hop Jumbo option is present.
    pub jumbo_len: Option<u32>,
    /// Upper-layer protocol after the extension headers; `None` when there is none
    /// to decode (no next header, ESP, or a non-first fragment).
    pub upper_protocol: Option<u8>,
    /// Bytes from the start of the IPv6 header to the upper-layer header.
    pub header_len: usize,
    /// Identification of the fragment header, when there is one.
    pub fragment_id: Option<u32>,
    /// Fragment offset in 8-byte units (0 if not fragmented).
    pub fragment_offset: u16,
    /// The Next Header value the walk stopped at: the upper-layer protocol,
    /// [`NH_NONE`], [`NH_ESP`], or the next header of a non-first fragment.
    pub last_next_header: u8,
}

impl Ipv6Header {
    /// Parses the fixed header and walks the extension headers in the captured `data`.
    pub fn parse(data: &[u8]) -> Result<Self, DecodeError> {
        if data.len() < IPV6_HEADER_LEN {
            return Err(DecodeError::Truncated {
                layer: "IPv6",
                offset: 0,
                needed: IPV6_HEADER_LEN,
                available: data.len(),
            });
        }
        if data[0] >> 4 != 6 {
            return Err(DecodeError::Malformed {
                layer: "IPv6",
                offset: 0,
                reason: "version is not 6",
            });
        }
        let mut src = [0u8; 16];
        src.copy_from_slice(&data[SRC..SRC + 16]);
        let mut dst = [0u8; 16];
        dst.copy_from_slice(&data[DST..DST + 16]);
        let mut h = Ipv6Header {
            src: Ipv6Addr::from(src),
            dst: Ipv6Addr::from(dst),
            traffic_class: (data[0] << 4) | (data[1] >> 4),
            flow_label: u32::from_be_bytes([0, data[1] & 0x0f, data[2], data[3]]),
            hop_limit: data[HOP_LIMIT],
            payload_len: u16::from_be_bytes([data[PAYLOAD_LEN], data[PAYLOAD_LEN + 1]]),
            jumbo_len: None,
            upper_protocol: None,
            header_len: IPV6_HEADER_LEN,
            fragment_id: None,
            fragment_offset: 0,
            last_next_header: data[NEXT_HEADER],
        };
        let mut next = data[NEXT_HEADER];
        let mut at = IPV6_HEADER_LEN;
        let mut first = true;
        loop {
            h.last_next_header = next;
            let ext_len = match next {
                NH_HOP_BY_HOP | NH_ROUTING | NH_DEST_OPTS | NH_MOBILITY | NH_HIP | NH_SHIM6 => {
                    ext_need(data, at, 2)?;
                    (usize::from(data[at + 1]) + 1) * 8
                }
                NH_AH => {
                    ext_need(data, at, 2)?;
                    (usize::from(data[at + 1]) + 2) * 4
                }
                NH_FRAGMENT => FRAGMENT_HEADER_LEN,
                NH_NONE | NH_ESP => {
                    h.header_len = at;
                    return Ok(h);
                }
                upper => {
                    h.upper_protocol = Some(upper);
                    h.header_len = at;
                    return Ok(h);
                }
            };
            ext_need(data, at, ext_len)?;
            let ext = &data[at..at + ext_len];
            if next == NH_HOP_BY_HOP {
                if !first {
                    return Err(DecodeError::Malformed {
                        layer: "IPv6 hop-by-hop",
                        offset: at,
                        reason: "hop-by-hop header not first",
                    });
                }
                h.jumbo_len = jumbo(ext);
            }
            if next == NH_FRAGMENT {
                let off = u16::from_be_bytes([ext[2], ext[3]]);
                h.fragment_offset = off >> 3;
                h.fragment_id = Some(u32::from_be_bytes([ext[4], ext[5], ext[6], ext[7]]));
                if h.fragment_offset != 0 {
                    h.last_next_header = ext[0];
                    h.header_len = at + ext_len;
                    return Ok(h);
                }
            }
            first = false;
            next = ext[0];
            at += ext_len;
        }
    }

    /// Upper-layer payload length on the wire according to the header (jumbo
    /// length included), `None` when the length fields are 0 without a jumbo option.
    pub fn upper_len(&self) -> Option<usize> {
        let ip_payload = if self.payload_len != 0 {
            usize::from(self.payload_len)
        } else {
            self.jumbo_len? as usize
        };
        Some(ip_payload.saturating_sub(self.header_len - IPV6_HEADER_LEN))
    }
}

fn ext_need(data: &[u8], at: usize, needed: usize) -> Result<(), DecodeError> {
    let available = data.len().saturating_sub(at);
    if available < needed {
        return Err(DecodeError::Truncated {
            layer: "IPv6 extension header",
            offset: at,
            needed,
            available,
        });
    }
    Ok(())
}

/// The Jumbo Payload length in a hop-by-hop header, if present and well formed.
fn jumbo(ext: &[u8]) -> Option<u32> {
    let mut i = 2;
    while i < ext.len() {
        let kind = ext[i];
        if kind == 0 {
            i += 1; // Pad1
            continue;
        }
        let len = usize::from(*ext.get(i + 1)?);
        if kind == OPT_JUMBO && len == 4 {
            let v = ext.get(i + 2..i + 6)?;
            return Some(u32::from_be_bytes([v[0], v[1], v[2], v[3]]));
        }
        i += 2 + len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(next: u8, payload_len: u16) -> Vec<u8> {
        let mut v = vec![0x6b, 0x80, 0x00, 0x01];
        v.extend_from_slice(&payload_len.to_be_bytes());
        v.push(next);
        v.push(64);
        v.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        v.extend_from_slice(&[0; 12]);
        v.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        v.extend_from_slice(&[0; 11]);
        v.push(2);
        v
    }

    #[test]
    fn traffic_class_and_plain_tcp() {
        let h = Ipv6Header::parse(&base(6, 20)).unwrap();
        assert_eq!(h.traffic_class, 0xb8);
        assert_eq!(h.upper_protocol, Some(6));
        assert_eq!(h.upper_len(), Some(20));
    }

    #[test]
    fn jumbogram_routing_fragment() {
        // Hop-by-hop with Jumbo option (RFC 2675), then routing, then first fragment.
        let mut p = base(NH_HOP_BY_HOP, 0);
        p.extend_from_slice(&[NH_ROUTING, 0, OPT_JUMBO, 4, 0x00, 0x01, 0x38, 0x80]);
        p.extend_from_slice(&[NH_FRAGMENT, 0, 0, 0, 0, 0, 0, 0]);
        p.extend_from_slice(&[6, 0, 0x00, 0x01, 0, 0, 0, 7]);
        let h = Ipv6Header::parse(&p).unwrap();
        assert_eq!(h.jumbo_len, Some(80_000));
        assert_eq!(h.upper_protocol, Some(6));
        assert_eq!(h.header_len, 64);
        assert_eq!(h.upper_len(), Some(80_000 - 24));
        assert_eq!(h.fragment_id, Some(7));
    }

    #[test]
    fn non_first_fragment_has_no_upper_header() {
        let mut p = base(NH_FRAGMENT, 16);
        p.extend_from_slice(&[6, 0, 0x00, 0x08, 0, 0, 0, 1]);
        let h = Ipv6Header::parse(&p).unwrap();
        assert_eq!(h.upper_protocol, None);
        assert_eq!(h.fragment_offset, 1);
    }

    #[test]
    fn truncated_extension_header() {
        let mut p = base(NH_DEST_OPTS, 16);
        p.extend_from_slice(&[6, 1, 0, 0]);
        assert!(matches!(
            Ipv6Header::parse(&p),
            Err(DecodeError::Truncated { offset: 40, .. })
        ));
    }
}
