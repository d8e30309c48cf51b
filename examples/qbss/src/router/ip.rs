//! The few IP header fields the router reads: version, DS field, protocol and ports.

/// What the router needs to know about one IP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The DS field (IPv4 TOS byte, IPv6 traffic class).
    pub ds: u8,
    /// IP protocol / next header (6 TCP, 17 UDP).
    pub protocol: u8,
    /// Source port (TCP and UDP; 0 otherwise).
    pub src_port: u16,
    /// Destination port (TCP and UDP; 0 otherwise).
    pub dst_port: u16,
}

/// Reads the header of the IPv4 or IPv6 packet `p`; `None` when `p` is not one (too
/// short, another version). Extension headers of IPv6 are not walked: a packet with
/// one has no ports.
pub fn parse(p: &[u8]) -> Option<Header> {
    let (ds, protocol, l4) = match p.first()? >> 4 {
        4 => {
            if p.len() < 20 {
                return None;
            }
            let ihl = usize::from(p[0] & 0x0f) * 4;
            // A fragment other than the first has no transport header.
            let first_fragment = u16::from_be_bytes([p[6], p[7]]) & 0x1fff == 0;
            (p[1], p[9], (ihl >= 20 && first_fragment).then_some(ihl))
        }
        6 => {
            if p.len() < 40 {
                return None;
            }
            ((p[0] << 4) | (p[1] >> 4), p[6], Some(40))
        }
        _ => return None,
    };
    let ports = match (protocol, l4) {
        (6 | 17, Some(o)) if p.len() >= o + 4 => (
            u16::from_be_bytes([p[o], p[o + 1]]),
            u16::from_be_bytes([p[o + 2], p[o + 3]]),
        ),
        _ => (0, 0),
    };
    Some(Header {
        ds,
        protocol,
        src_port: ports.0,
        dst_port: ports.1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_udp_and_ipv6_tcp() {
        let mut v4 = [0u8; 28];
        v4[0] = 0x45;
        v4[1] = 0x20; // CS1
        v4[9] = 17;
        v4[20..24].copy_from_slice(&[0x13, 0x88, 0x14, 0x51]);
        assert_eq!(
            parse(&v4),
            Some(Header {
                ds: 0x20,
                protocol: 17,
                src_port: 5000,
                dst_port: 5201
            })
        );
        let mut v6 = [0u8; 60];
        v6[0] = 0x60 | 0x0b; // traffic class 0xb8 (EF)
        v6[1] = 0x80;
        v6[6] = 6;
        v6[40..44].copy_from_slice(&[0x14, 0x51, 0x13, 0x88]);
        let h = parse(&v6).unwrap();
        assert_eq!(
            (h.ds, h.protocol, h.src_port, h.dst_port),
            (0xb8, 6, 5201, 5000)
        );
        assert_eq!(parse(&v4[..10]), None);
        assert_eq!(parse(&[0x10; 40]), None);
        // A later fragment has no ports.
        v4[6] = 0x00;
        v4[7] = 0x10;
        assert_eq!(parse(&v4).map(|h| h.dst_port), Some(0));
    }
}
