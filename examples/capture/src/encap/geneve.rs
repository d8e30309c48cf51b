//! Geneve (RFC 8926 section 3.4): an 8-byte header after UDP, then variable
//! options, then the payload named by the protocol type.
//!
//! Version (2 bits, 0) and options length (6 bits, in 4-byte words); O and
//! C flags and 6 reserved bits; protocol type (an EtherType: 0x6558 for
//! Ethernet, 0x0800 / 0x86dd for IP); 24-bit VNI; 8 reserved bits.

use super::{be16, be24, need, Parsed, Payload, Skip, Unsupported};

/// Fixed Geneve header length.
pub const HEADER_LEN: usize = 8;
/// Offset of the protocol type.
const PROTOCOL: usize = 2;
/// Offset of the VNI.
const VNI: usize = 4;
/// Options length bits of the first byte (4-byte words).
const OPT_LEN_MASK: u8 = 0x3f;
/// Shift of the version bits in the first byte.
const VERSION_SHIFT: u8 = 6;
/// Protocol type of an Ethernet frame.
pub const PROTO_ETHERNET: u16 = 0x6558;
/// Protocol type of IPv4.
pub const PROTO_IPV4: u16 = 0x0800;
/// Protocol type of IPv6.
pub const PROTO_IPV6: u16 = 0x86dd;

/// A decoded Geneve header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geneve {
    /// The Virtual Network Identifier (24 bits).
    pub vni: u32,
    /// The protocol type of the payload.
    pub protocol: u16,
    /// Bytes of options.
    pub options_len: usize,
}

impl Geneve {
    /// Decodes the Geneve header at `at`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<Geneve>, Skip> {
        need("Geneve", data, at, HEADER_LEN)?;
        let protocol = be16(data, at + PROTOCOL);
        if data[at] >> VERSION_SHIFT != 0 {
            return Err(Skip::Unsupported(Unsupported::GeneveProtocol(protocol)));
        }
        let options_len = usize::from(data[at] & OPT_LEN_MASK) * 4;
        need("Geneve", data, at, HEADER_LEN + options_len)?;
        let payload = match protocol {
            PROTO_ETHERNET => Payload::Ethernet,
            PROTO_IPV4 => Payload::Ipv4,
            PROTO_IPV6 => Payload::Ipv6,
            other => return Err(Skip::Unsupported(Unsupported::GeneveProtocol(other))),
        };
        Ok(Parsed {
            header: Geneve {
                vni: be24(data, at + VNI),
                protocol,
                options_len,
            },
            payload_at: at + HEADER_LEN + options_len,
            payload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_skipped() {
        let mut h = vec![0x02, 0, 0x65, 0x58, 0, 0, 0x2a, 0];
        h.extend_from_slice(&[0; 8]);
        let p = Geneve::parse(&h, 0).unwrap();
        assert_eq!(p.header.vni, 42);
        assert_eq!(p.payload_at, 16);
        assert_eq!(p.payload, Payload::Ethernet);
        assert!(Geneve::parse(&h[..12], 0).is_err());
        h[0] = 0x40;
        assert!(matches!(Geneve::parse(&h, 0), Err(Skip::Unsupported(_))));
    }
}
