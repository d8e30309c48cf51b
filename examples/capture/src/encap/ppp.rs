//! PPP (RFC 1661 section 2): the protocol field, and the HDLC-like framing
//! of RFC 1662 section 3.1 in front of it.
//!
//! The protocol field is 2 bytes, or 1 when Protocol-Field-Compression is
//! in use (a first byte with its low bit set). 0x0021 is IPv4, 0x0057 IPv6,
//! 0x0281 / 0x0283 MPLS; LCP, IPCP, authentication and the rest carry no
//! IP. In HDLC-like framing the address (0xff) and control (0x03) bytes
//! come first, unless Address-and-Control-Field-Compression left them out.

use super::{need, NotIp, Payload, Skip};

/// PPP protocol of IPv4.
pub const PROTO_IPV4: u16 = 0x0021;
/// PPP protocol of IPv6.
pub const PROTO_IPV6: u16 = 0x0057;
/// PPP protocol of MPLS unicast.
pub const PROTO_MPLS: u16 = 0x0281;
/// PPP protocol of MPLS multicast.
pub const PROTO_MPLS_MULTICAST: u16 = 0x0283;
/// HDLC-like framing: the all-stations address.
pub const HDLC_ADDRESS: u8 = 0xff;
/// HDLC-like framing: the unnumbered-information control byte.
pub const HDLC_CONTROL: u8 = 0x03;

/// Offset after the HDLC-like address and control bytes, when present at `at`.
pub fn skip_hdlc(data: &[u8], at: usize) -> usize {
    match data.get(at..at + 2) {
        Some([HDLC_ADDRESS, HDLC_CONTROL]) => at + 2,
        _ => at,
    }
}

/// Decodes the protocol field at `at`: the payload and where it starts.
pub fn protocol(data: &[u8], at: usize) -> Result<(Payload, usize), Skip> {
    need("PPP", data, at, 1)?;
    let (proto, len) = if data[at] & 1 == 1 {
        (u16::from(data[at]), 1)
    } else {
        need("PPP", data, at, 2)?;
        (u16::from_be_bytes([data[at], data[at + 1]]), 2)
    };
    let payload = match proto {
        PROTO_IPV4 => Payload::Ipv4,
        PROTO_IPV6 => Payload::Ipv6,
        PROTO_MPLS | PROTO_MPLS_MULTICAST => Payload::Mpls,
        other => return Err(Skip::NotIp(NotIp::PppProtocol(other))),
    };
    Ok((payload, at + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_and_compressed_fields() {
        assert_eq!(protocol(&[0x00, 0x21], 0), Ok((Payload::Ipv4, 2)));
        assert_eq!(protocol(&[0x57], 0), Ok((Payload::Ipv6, 1)));
        assert_eq!(
            protocol(&[0xc0, 0x21], 0),
            Err(Skip::NotIp(NotIp::PppProtocol(0xc021)))
        );
        assert_eq!(skip_hdlc(&[0xff, 0x03, 0, 0x21], 0), 2);
        assert_eq!(skip_hdlc(&[0, 0x21], 0), 0);
    }
}
