//! UDP (RFC 768), only as far as the tunnels it carries: the destination
//! port decides, and for L2TP either port.
//!
//! Decoded: VXLAN (4789, RFC 7348; and 8472, the port Linux used before
//! IANA's assignment), Geneve (6081, RFC 8926), GTP-U (2152, 3GPP TS
//! 29.281), L2TP (1701, RFC 2661; as source or destination port: a LAC or
//! LNS may answer from another port, section 8.1). Recognised and not
//! decoded ([`Unsupported::UdpPort`]): Teredo (3544), VXLAN-GPE (4790),
//! AYIYA (5072), MPLS over UDP (6635). Any other port is plain UDP: not
//! TCP.

use super::{be16, need, Skip, Unsupported};

/// UDP header length.
pub const HEADER_LEN: usize = 8;
/// Offset of the source port.
const SRC_PORT: usize = 0;
/// Offset of the destination port.
const DST_PORT: usize = 2;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;

/// VXLAN's IANA port.
pub const PORT_VXLAN: u16 = 4789;
/// The VXLAN port of Linux before IANA's assignment.
pub const PORT_VXLAN_LINUX: u16 = 8472;
/// Geneve's port.
pub const PORT_GENEVE: u16 = 6081;
/// GTP-U's port.
pub const PORT_GTP_U: u16 = 2152;
/// L2TP's port.
pub const PORT_L2TP: u16 = 1701;
/// Tunnel ports recognised but not decoded: Teredo, VXLAN-GPE, AYIYA, MPLS over UDP.
pub const PORTS_UNSUPPORTED: [u16; 4] = [3544, 4790, 5072, 6635];

/// The tunnel a UDP datagram carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpTunnel {
    /// VXLAN.
    Vxlan,
    /// Geneve.
    Geneve,
    /// GTP-U.
    GtpU,
    /// L2TP.
    L2tp,
}

/// The tunnel in the UDP datagram at `at` and where its header starts.
pub fn tunnel(data: &[u8], at: usize) -> Result<(UdpTunnel, usize), Skip> {
    need("UDP", data, at, HEADER_LEN)?;
    let port = be16(data, at + DST_PORT);
    let src = be16(data, at + SRC_PORT);
    let tunnel = match port {
        PORT_VXLAN | PORT_VXLAN_LINUX => UdpTunnel::Vxlan,
        PORT_GENEVE => UdpTunnel::Geneve,
        PORT_GTP_U => UdpTunnel::GtpU,
        _ if port == PORT_L2TP || src == PORT_L2TP => UdpTunnel::L2tp,
        p if PORTS_UNSUPPORTED.contains(&p) => {
            return Err(Skip::Unsupported(Unsupported::UdpPort(p)))
        }
        _ => return Err(Skip::NotTcp(IPPROTO_UDP)),
    };
    Ok((tunnel, at + HEADER_LEN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_destination_port() {
        let udp_from = |src: u16, dst: u16| {
            let mut h = src.to_be_bytes().to_vec();
            h.extend_from_slice(&dst.to_be_bytes());
            h.extend_from_slice(&[0, 8, 0, 0]);
            h
        };
        let udp = |dst: u16| udp_from(12345, dst);
        assert_eq!(tunnel(&udp(4789), 0), Ok((UdpTunnel::Vxlan, 8)));
        assert_eq!(tunnel(&udp(2152), 0), Ok((UdpTunnel::GtpU, 8)));
        assert_eq!(tunnel(&udp(53), 0), Err(Skip::NotTcp(17)));
        assert_eq!(
            tunnel(&udp(3544), 0),
            Err(Skip::Unsupported(Unsupported::UdpPort(3544)))
        );
        // L2TP on either port.
        assert_eq!(tunnel(&udp(1701), 0), Ok((UdpTunnel::L2tp, 8)));
        assert_eq!(tunnel(&udp_from(1701, 40000), 0), Ok((UdpTunnel::L2tp, 8)));
        assert_eq!(tunnel(&udp_from(1701, 4789), 0), Ok((UdpTunnel::Vxlan, 8)));
        assert_eq!(tunnel(&udp_from(53, 1701), 0), Ok((UdpTunnel::L2tp, 8)));
    }
}
