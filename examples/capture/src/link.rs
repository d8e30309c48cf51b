//! Link layers: from a captured frame to the network-layer header it carries.
//!
//! Supported LINKTYPE_ values (tcpdump.org/linktypes.html): Ethernet (1) with
//! any stack of 802.1Q (0x8100), 802.1ad / QinQ (0x88a8) and legacy QinQ
//! (0x9100, 0x9200) tags; Linux cooked capture SLL (113) and SLL2 (276); raw
//! IP (101, and 12 / 14 as some systems number it), raw IPv4 (228) and IPv6
//! (229); BSD loopback NULL (0, address family in host byte order) and
//! OpenBSD LOOP (108, address family in network byte order); IP over
//! InfiniBand (242).
//!
//! LINKTYPE_IPOIB's header is 44 bytes, as Wireshark dissects tcpdump's
//! `ipoib.pcap` (checked against its bytes): 20 bytes Wireshark reads as
//! the part of the InfiniBand global route header it keeps (zero in that
//! file), the 20-byte destination hardware address (flags and 24-bit queue
//! pair number, 16-byte GID), then RFC 4391's encapsulation header: a
//! 16-bit protocol type, an EtherType, and 2 reserved bytes. It is a plain
//! link like Linux SLL (a fixed header, an EtherType, no identifier that
//! names a tunnel): not a layer of [`crate::encap`].

use super::error::DecodeError;

/// BSD loopback: 4-byte address family in the capturing host's byte order.
pub const LINKTYPE_NULL: u32 = 0;
/// Ethernet II / 802.3.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Raw IP as numbered by some BSDs (DLT_RAW 12).
pub const LINKTYPE_RAW_12: u32 = 12;
/// Raw IP as numbered by OpenBSD (DLT_RAW 14).
pub const LINKTYPE_RAW_14: u32 = 14;
/// Raw IP, version taken from the first nibble.
pub const LINKTYPE_RAW: u32 = 101;
/// OpenBSD loopback: 4-byte address family in network byte order.
pub const LINKTYPE_LOOP: u32 = 108;
/// Linux cooked capture v1.
pub const LINKTYPE_LINUX_SLL: u32 = 113;
/// Raw IPv4.
pub const LINKTYPE_IPV4: u32 = 228;
/// Raw IPv6.
pub const LINKTYPE_IPV6: u32 = 229;
/// Linux cooked capture v2.
pub const LINKTYPE_LINUX_SLL2: u32 = 276;
/// IP over InfiniBand.
pub const LINKTYPE_IPOIB: u32 = 242;

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
/// EtherType of an 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// EtherType of an 802.1ad service tag (QinQ).
pub const ETHERTYPE_QINQ: u16 = 0x88a8;
/// Pre-standard QinQ tag EtherTypes.
pub const ETHERTYPE_QINQ_OLD: [u16; 2] = [0x9100, 0x9200];

/// Ethernet header length without tags.
pub const ETHERNET_HEADER_LEN: usize = 14;
/// Length of one VLAN tag (TCI + inner EtherType).
pub const VLAN_TAG_LEN: usize = 4;
/// Linux SLL header length.
pub const SLL_HEADER_LEN: usize = 16;
/// Offset of the protocol field in the SLL header.
pub const SLL_PROTOCOL: usize = 14;
/// Linux SLL2 header length.
pub const SLL2_HEADER_LEN: usize = 20;
/// Offset of the protocol field in the SLL2 header.
pub const SLL2_PROTOCOL: usize = 0;
/// IPoIB header length: the kept part of the global route header (20),
/// the destination hardware address (20), protocol type (2), reserved (2).
pub const IPOIB_HEADER_LEN: usize = 44;
/// Offset of the protocol type (an EtherType) in the IPoIB header.
pub const IPOIB_PROTOCOL: usize = 40;
/// NULL / LOOP header length.
pub const LOOPBACK_HEADER_LEN: usize = 4;
/// At most this many VLAN tags are unwrapped.
pub const MAX_VLAN_TAGS: usize = 8;

/// BSD address family of IPv4.
const AF_INET: u32 = 2;
/// BSD / Linux address families used for IPv6 (Linux 10, NetBSD/OpenBSD 24, FreeBSD 28, Darwin 30).
const AF_INET6: [u32; 4] = [10, 24, 28, 30];

/// The network-layer protocol a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// IPv4.
    Ipv4,
    /// IPv6.
    Ipv6,
    /// Another EtherType (ARP, MPLS, ...): not decoded.
    OtherEthertype(u16),
    /// A loopback address family that is not IP.
    OtherFamily(u32),
    /// A link type this decoder does not know.
    UnsupportedLinktype(u32),
}

/// Where the network-layer header starts, and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkPayload {
    /// The network protocol.
    pub network: Network,
    /// Offset of the network-layer header in the frame.
    pub offset: usize,
    /// Number of VLAN tags skipped.
    pub vlan_tags: u8,
}

fn be16(frame: &[u8], at: usize) -> Option<u16> {
    let b = frame.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

fn need(
    layer: &'static str,
    frame: &[u8],
    offset: usize,
    needed: usize,
) -> Result<(), DecodeError> {
    let available = frame.len().saturating_sub(offset);
    if available < needed {
        return Err(DecodeError::Truncated {
            layer,
            offset,
            needed,
            available,
        });
    }
    Ok(())
}

/// Follows an EtherType (and any VLAN tags after it) starting at `type_at`,
/// with the payload beginning at `payload_at`.
pub(crate) fn by_ethertype(
    frame: &[u8],
    type_at: usize,
    payload_at: usize,
) -> Result<LinkPayload, DecodeError> {
    let mut ethertype = be16(frame, type_at).ok_or(DecodeError::Truncated {
        layer: "link",
        offset: type_at,
        needed: 2,
        available: frame.len().saturating_sub(type_at),
    })?;
    let mut offset = payload_at;
    let mut tags = 0u8;
    while ethertype == ETHERTYPE_VLAN
        || ethertype == ETHERTYPE_QINQ
        || ETHERTYPE_QINQ_OLD.contains(&ethertype)
    {
        if usize::from(tags) >= MAX_VLAN_TAGS {
            return Err(DecodeError::Malformed {
                layer: "VLAN",
                offset,
                reason: "more than 8 stacked VLAN tags",
            });
        }
        need("VLAN", frame, offset, VLAN_TAG_LEN)?;
        ethertype = be16(frame, offset + 2).unwrap_or(0);
        offset += VLAN_TAG_LEN;
        tags += 1;
    }
    let network = match ethertype {
        ETHERTYPE_IPV4 => Network::Ipv4,
        ETHERTYPE_IPV6 => Network::Ipv6,
        other => Network::OtherEthertype(other),
    };
    Ok(LinkPayload {
        network,
        offset,
        vlan_tags: tags,
    })
}

fn by_version(frame: &[u8], offset: usize) -> Result<LinkPayload, DecodeError> {
    need("IP", frame, offset, 1)?;
    let network = match frame[offset] >> 4 {
        4 => Network::Ipv4,
        6 => Network::Ipv6,
        _ => {
            return Err(DecodeError::Malformed {
                layer: "IP",
                offset,
                reason: "IP version is neither 4 nor 6",
            })
        }
    };
    Ok(LinkPayload {
        network,
        offset,
        vlan_tags: 0,
    })
}

fn by_family(family: u32) -> LinkPayload {
    let network = if family == AF_INET {
        Network::Ipv4
    } else if AF_INET6.contains(&family) {
        Network::Ipv6
    } else {
        Network::OtherFamily(family)
    };
    LinkPayload {
        network,
        offset: LOOPBACK_HEADER_LEN,
        vlan_tags: 0,
    }
}

/// Decodes the link-layer header of `frame` captured with `linktype`.
#[inline]
pub fn decode_link(linktype: u32, frame: &[u8]) -> Result<LinkPayload, DecodeError> {
    match linktype {
        LINKTYPE_ETHERNET => {
            need("Ethernet", frame, 0, ETHERNET_HEADER_LEN)?;
            by_ethertype(frame, 12, ETHERNET_HEADER_LEN)
        }
        LINKTYPE_LINUX_SLL => {
            need("Linux SLL", frame, 0, SLL_HEADER_LEN)?;
            by_ethertype(frame, SLL_PROTOCOL, SLL_HEADER_LEN)
        }
        LINKTYPE_LINUX_SLL2 => {
            need("Linux SLL2", frame, 0, SLL2_HEADER_LEN)?;
            by_ethertype(frame, SLL2_PROTOCOL, SLL2_HEADER_LEN)
        }
        LINKTYPE_IPOIB => {
            need("IPoIB", frame, 0, IPOIB_HEADER_LEN)?;
            by_ethertype(frame, IPOIB_PROTOCOL, IPOIB_HEADER_LEN)
        }
        LINKTYPE_RAW | LINKTYPE_RAW_12 | LINKTYPE_RAW_14 => by_version(frame, 0),
        LINKTYPE_IPV4 => Ok(LinkPayload {
            network: Network::Ipv4,
            offset: 0,
            vlan_tags: 0,
        }),
        LINKTYPE_IPV6 => Ok(LinkPayload {
            network: Network::Ipv6,
            offset: 0,
            vlan_tags: 0,
        }),
        LINKTYPE_NULL => {
            need("loopback", frame, 0, LOOPBACK_HEADER_LEN)?;
            let bytes = [frame[0], frame[1], frame[2], frame[3]];
            // Host byte order of the capturing machine: the family is small, so
            // whichever reading is below 256 is the right one.
            let le = u32::from_le_bytes(bytes);
            let be = u32::from_be_bytes(bytes);
            Ok(by_family(if le < 256 { le } else { be }))
        }
        LINKTYPE_LOOP => {
            need("loopback", frame, 0, LOOPBACK_HEADER_LEN)?;
            Ok(by_family(u32::from_be_bytes([
                frame[0], frame[1], frame[2], frame[3],
            ])))
        }
        other => Ok(LinkPayload {
            network: Network::UnsupportedLinktype(other),
            offset: 0,
            vlan_tags: 0,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_with_qinq_and_vlan() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x88, 0xa8, 0x00, 0xc8, 0x81, 0x00, 0x07, 0xd1, 0x86, 0xdd]);
        f.push(0x60);
        let p = decode_link(LINKTYPE_ETHERNET, &f).unwrap();
        assert_eq!(p.network, Network::Ipv6);
        assert_eq!(p.offset, 22);
        assert_eq!(p.vlan_tags, 2);
    }

    #[test]
    fn truncated_tag_is_an_error() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x81, 0x00, 0x00]);
        assert!(matches!(
            decode_link(LINKTYPE_ETHERNET, &f),
            Err(DecodeError::Truncated { layer: "VLAN", .. })
        ));
    }

    #[test]
    fn too_many_tags() {
        let mut f = vec![0u8; 12];
        for _ in 0..20 {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        }
        f.extend_from_slice(&[0x81, 0x00]);
        assert!(decode_link(LINKTYPE_ETHERNET, &f).is_err());
    }

    /// The IPoIB header of tcpdump's `ipoib.pcap` frame 9, and an IPv4 byte.
    fn ipoib_frame() -> Vec<u8> {
        let mut f = vec![0u8; 20];
        f.extend_from_slice(&[0x80, 0x00, 0x05, 0x50]);
        f.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0]);
        f.extend_from_slice(&[0x00, 0x10, 0xe0, 0x00, 0x66, 0x4a, 0xb4, 0x51]);
        f.extend_from_slice(&[0x08, 0x00, 0x00, 0x00, 0x45]);
        f
    }

    #[test]
    fn ipoib() {
        let f = ipoib_frame();
        let p = decode_link(LINKTYPE_IPOIB, &f).unwrap();
        assert_eq!((p.network, p.offset, p.vlan_tags), (Network::Ipv4, 44, 0));
        let mut arp = f.clone();
        arp[IPOIB_PROTOCOL + 1] = 0x06;
        assert_eq!(
            decode_link(LINKTYPE_IPOIB, &arp).unwrap().network,
            Network::OtherEthertype(0x0806)
        );
        let mut v6 = f.clone();
        v6[IPOIB_PROTOCOL..IPOIB_PROTOCOL + 2].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(
            decode_link(LINKTYPE_IPOIB, &v6).unwrap().network,
            Network::Ipv6
        );
        // Every field cut short: the header is checked whole.
        for n in 0..IPOIB_HEADER_LEN {
            assert!(
                matches!(
                    decode_link(LINKTYPE_IPOIB, &f[..n]),
                    Err(DecodeError::Truncated { layer: "IPoIB", .. })
                ),
                "{n}"
            );
        }
    }

    #[test]
    fn sll_sll2_null_loop_raw() {
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x08, 0x00, 0x45]);
        assert_eq!(decode_link(LINKTYPE_LINUX_SLL, &sll).unwrap().offset, 16);
        let mut sll2 = vec![0x86, 0xdd];
        sll2.extend_from_slice(&[0u8; 18]);
        assert_eq!(
            decode_link(LINKTYPE_LINUX_SLL2, &sll2).unwrap().network,
            Network::Ipv6
        );
        assert_eq!(
            decode_link(LINKTYPE_NULL, &[2, 0, 0, 0, 0x45])
                .unwrap()
                .network,
            Network::Ipv4
        );
        assert_eq!(
            decode_link(LINKTYPE_NULL, &[0, 0, 0, 30, 0x60])
                .unwrap()
                .network,
            Network::Ipv6
        );
        assert_eq!(
            decode_link(LINKTYPE_LOOP, &[0, 0, 0, 24, 0x60])
                .unwrap()
                .network,
            Network::Ipv6
        );
        assert_eq!(
            decode_link(LINKTYPE_RAW, &[0x45]).unwrap().network,
            Network::Ipv4
        );
        assert!(decode_link(LINKTYPE_RAW, &[0x15]).is_err());
        assert_eq!(
            decode_link(147, &[]).unwrap().network,
            Network::UnsupportedLinktype(147)
        );
    }
}
