//! Cisco FabricPath (MAC-in-MAC, EtherType 0x8903): an outer Ethernet-like
//! header whose addresses are hierarchical (switch ids), then the customer's
//! whole Ethernet frame.
//!
//! Format facts from Wireshark's dissection (`tshark -V -x` on nDPI's
//! `ajp.pcap` and `tshark -G fields`, the `cfp.*` fields), checked against
//! the bytes: 16 bytes, outer destination (6), outer source (6), EtherType
//! 0x8903 (2), then FTag (10 bits) and TTL (6 bits). Each outer address is
//! a 24-bit word (end node id, U/L, I/G, OOO/DL bits, 12-bit switch id in
//! its low bits), the sub-switch id (1 byte) and the local id (2 bytes).
//! The inner Ethernet header follows at once; the frame may end with
//! FabricPath's own 4-byte FCS, after the inner packet.

use super::{be16, malformed, need, Parsed, Payload, Skip};

/// EtherType of FabricPath.
pub const ETHERTYPE_FABRICPATH: u16 = 0x8903;
/// FabricPath header length, from the outer destination address to the
/// end of the FTag/TTL word.
pub const HEADER_LEN: usize = 16;
/// Offset of the outer destination address's switch id (low 12 bits of the 16-bit word).
const DST_SWITCH_ID: usize = 1;
/// Offset of the outer source address's switch id.
const SRC_SWITCH_ID: usize = 7;
/// Offset of the EtherType.
const ETHERTYPE: usize = 12;
/// Offset of the FTag/TTL word.
const FTAG_TTL: usize = 14;
/// The switch id bits of its 16-bit word.
const SWITCH_ID_MASK: u16 = 0x0fff;
/// TTL bits of the FTag/TTL word (the FTag is the 10 bits above).
const TTL_MASK: u16 = 0x003f;
/// Width of the TTL.
const TTL_BITS: u32 = 6;

/// A decoded FabricPath header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FabricPath {
    /// Switch id of the outer destination address (Wireshark's first `cfp.swid`).
    pub dst_switch_id: u16,
    /// Switch id of the outer source address (Wireshark's second `cfp.swid`).
    pub src_switch_id: u16,
    /// Forwarding tag: the distribution tree (`cfp.ftag`, 10 bits).
    pub ftag: u16,
    /// Remaining hop count (`cfp.ttl`, 6 bits).
    pub ttl: u8,
}

impl FabricPath {
    /// Decodes the FabricPath header that starts at `at` (its outer
    /// destination address; the 0x8903 EtherType is at `at + 12`).
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<FabricPath>, Skip> {
        need("FabricPath", data, at, HEADER_LEN)?;
        if be16(data, at + ETHERTYPE) != ETHERTYPE_FABRICPATH {
            return Err(malformed("FabricPath", at, "EtherType is not 0x8903"));
        }
        let word = be16(data, at + FTAG_TTL);
        Ok(Parsed {
            header: FabricPath {
                dst_switch_id: be16(data, at + DST_SWITCH_ID) & SWITCH_ID_MASK,
                src_switch_id: be16(data, at + SRC_SWITCH_ID) & SWITCH_ID_MASK,
                ftag: word >> TTL_BITS,
                ttl: (word & TTL_MASK) as u8,
            },
            payload_at: at + HEADER_LEN,
            payload: Payload::Ethernet,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FabricPath header of `ajp.pcap`'s frame 3.
    const AJP: [u8; 16] = [
        0x02, 0x0a, 0xbd, 0x00, 0x00, 0x00, 0x02, 0x0a, 0xbc, 0x00, 0x00, 0x00, 0x89, 0x03, 0x40,
        0x20,
    ];

    #[test]
    fn fields_as_tshark_shows_them() {
        let p = FabricPath::parse(&AJP, 0).unwrap();
        assert_eq!(
            p.header,
            FabricPath {
                dst_switch_id: 2749,
                src_switch_id: 2748,
                ftag: 256,
                ttl: 32,
            }
        );
        assert_eq!((p.payload_at, p.payload), (16, Payload::Ethernet));
    }

    #[test]
    fn truncated_at_every_field_and_no_panic() {
        for n in 0..HEADER_LEN {
            assert!(
                matches!(FabricPath::parse(&AJP[..n], 0), Err(Skip::Decode(_))),
                "{n}"
            );
        }
        let mut other = AJP;
        other[13] = 0x04;
        assert!(FabricPath::parse(&other, 0).is_err());
    }
}
