//! E-Tag (EtherType 0x893F; IEEE 802.1BR bridge port extension): a 6-byte
//! tag between the source address and the EtherType, naming the extended
//! port (E-CID) of a port extender.
//!
//! Format facts from Wireshark's `etag` fields (`tshark -G fields`: the
//! masks of `etag.pcp`, `etag.dei`, `etag.iecid_base`, `etag.resv`,
//! `etag.group`, `etag.ecid_base`, then `etag.iecid_ext`, `etag.ecid_ext`,
//! `etag.etype`), checked against tshark's dissection of frames built byte
//! by byte: E-PCP (3 bits), E-DEI (1), ingress E-CID base (12); reserved
//! (2), GRP (2), E-CID base (12); ingress E-CID extension (8); E-CID
//! extension (8); then the next EtherType (or an 802.3 length).

use super::{be16, need, Parsed, Payload, Skip};

/// EtherType of E-Tag.
pub const ETHERTYPE_ETAG: u16 = 0x893f;
/// Length of the tag after its EtherType: 6 bytes and the next EtherType.
pub const TAG_LEN: usize = 8;
/// Offset of the word with the ingress E-CID base.
const INGRESS_BASE: usize = 0;
/// Offset of the word with GRP and the E-CID base.
const ECID_BASE: usize = 2;
/// Offset of the ingress E-CID extension.
const INGRESS_EXT: usize = 4;
/// Offset of the E-CID extension.
const ECID_EXT: usize = 5;
/// Offset of the next EtherType.
const NEXT_ETHERTYPE: usize = 6;
/// The 12 base bits of an E-CID word.
const BASE_MASK: u16 = 0x0fff;
/// GRP bits.
const GRP_MASK: u16 = 0x3000;
/// Shift of GRP.
const GRP_SHIFT: u32 = 12;
/// Shift of E-PCP.
const PCP_SHIFT: u32 = 13;

/// A decoded E-Tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ETag {
    /// E-CID base (12 bits; `etag.ecid_base`).
    pub ecid_base: u16,
    /// E-CID extension (`etag.ecid_ext`).
    pub ecid_ext: u8,
    /// GRP (2 bits; `etag.group`): non-zero for a multicast E-CID.
    pub grp: u8,
    /// Ingress E-CID base (12 bits; `etag.iecid_base`).
    pub ingress_ecid_base: u16,
    /// Ingress E-CID extension (`etag.iecid_ext`).
    pub ingress_ecid_ext: u8,
    /// E-PCP.
    pub pcp: u8,
}

impl ETag {
    /// Decodes the tag at `at` (after the 0x893F EtherType); the payload
    /// is that of the EtherType after the tag, at `payload_at`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<ETag>, Skip> {
        need("E-Tag", data, at, TAG_LEN)?;
        let first = be16(data, at + INGRESS_BASE);
        let second = be16(data, at + ECID_BASE);
        Ok(Parsed {
            header: ETag {
                ecid_base: second & BASE_MASK,
                ecid_ext: data[at + ECID_EXT],
                grp: ((second & GRP_MASK) >> GRP_SHIFT) as u8,
                ingress_ecid_base: first & BASE_MASK,
                ingress_ecid_ext: data[at + INGRESS_EXT],
                pcp: (first >> PCP_SHIFT) as u8,
            },
            payload_at: at + TAG_LEN,
            payload: Payload::EtherType(be16(data, at + NEXT_ETHERTYPE)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PCP 5, ingress base 0x012, GRP 1, base 0x345, ingress ext 6, ext 7, IPv6.
    const TAG: [u8; 8] = [0xa0, 0x12, 0x13, 0x45, 0x06, 0x07, 0x86, 0xdd];

    #[test]
    fn ecids_and_next_ethertype() {
        let p = ETag::parse(&TAG, 0).unwrap();
        assert_eq!(
            p.header,
            ETag {
                ecid_base: 0x345,
                ecid_ext: 7,
                grp: 1,
                ingress_ecid_base: 0x012,
                ingress_ecid_ext: 6,
                pcp: 5,
            }
        );
        assert_eq!((p.payload_at, p.payload), (8, Payload::EtherType(0x86dd)));
    }

    #[test]
    fn truncated_at_every_field() {
        for n in 0..TAG_LEN {
            assert!(
                matches!(ETag::parse(&TAG[..n], 0), Err(Skip::Decode(_))),
                "{n}"
            );
        }
    }
}
