//! VN-Tag (EtherType 0x8926; Cisco's virtual network tag, proposed for
//! IEEE 802.1Qbh): a 4-byte tag between the source address and the
//! EtherType, naming the virtual interfaces (VIFs) of an interface
//! virtualizer and its controlling bridge.
//!
//! Format facts from Wireshark's `vntag` fields (`tshark -G fields`: the
//! masks of `vntag.dir`, `vntag.ptr`, `vntag.dst`, `vntag.looped`,
//! `vntag.version`, `vntag.src`, then `vntag.etype`), checked against
//! tshark's dissection of frames built byte by byte: one 32-bit word,
//! direction (1 bit), pointer (1), destination VIF (14), looped (1),
//! reserved (1), version (2), source VIF (12); then the next EtherType (or
//! an 802.3 length).

use super::{be16, be32, need, Parsed, Payload, Skip};

/// EtherType of VN-Tag.
pub const ETHERTYPE_VNTAG: u16 = 0x8926;
/// Length of the tag after its EtherType: the 32-bit word and the next EtherType.
pub const TAG_LEN: usize = 6;
/// Offset of the next EtherType.
const NEXT_ETHERTYPE: usize = 4;
/// Direction bit (set: from the bridge to the interface virtualizer).
const DIRECTION: u32 = 0x8000_0000;
/// Pointer bit (the destination VIF names a list).
const POINTER: u32 = 0x4000_0000;
/// Destination VIF bits.
const DST_VIF: u32 = 0x3fff_0000;
/// Shift of the destination VIF.
const DST_VIF_SHIFT: u32 = 16;
/// Looped bit.
const LOOPED: u32 = 0x8000;
/// Source VIF bits.
const SRC_VIF: u32 = 0x0fff;

/// A decoded VN-Tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VnTag {
    /// Destination VIF (14 bits; `vntag.dst`).
    pub dst_vif: u16,
    /// Source VIF (12 bits; `vntag.src`).
    pub src_vif: u16,
    /// Direction bit: set from the bridge towards the interface virtualizer.
    pub direction: bool,
    /// Pointer bit: the destination VIF is a list (multicast).
    pub pointer: bool,
    /// Looped bit.
    pub looped: bool,
}

impl VnTag {
    /// Decodes the tag at `at` (after the 0x8926 EtherType); the payload
    /// is that of the EtherType after the tag, at `payload_at`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<VnTag>, Skip> {
        need("VN-Tag", data, at, TAG_LEN)?;
        let word = be32(data, at);
        Ok(Parsed {
            header: VnTag {
                dst_vif: ((word & DST_VIF) >> DST_VIF_SHIFT) as u16,
                src_vif: (word & SRC_VIF) as u16,
                direction: word & DIRECTION != 0,
                pointer: word & POINTER != 0,
                looped: word & LOOPED != 0,
            },
            payload_at: at + TAG_LEN,
            payload: Payload::EtherType(be16(data, at + NEXT_ETHERTYPE)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vifs_and_next_ethertype() {
        // d=1, p=0, dst 0x1234, looped, version 0, src 0x0abc; IPv4.
        let t = [0x92, 0x34, 0x8a, 0xbc, 0x08, 0x00];
        let p = VnTag::parse(&t, 0).unwrap();
        assert_eq!(
            p.header,
            VnTag {
                dst_vif: 0x1234,
                src_vif: 0x0abc,
                direction: true,
                pointer: false,
                looped: true,
            }
        );
        assert_eq!((p.payload_at, p.payload), (6, Payload::EtherType(0x0800)));
    }

    #[test]
    fn truncated_at_every_field() {
        let t = [0x92, 0x34, 0x8a, 0xbc, 0x08, 0x00];
        for n in 0..TAG_LEN {
            assert!(
                matches!(VnTag::parse(&t[..n], 0), Err(Skip::Decode(_))),
                "{n}"
            );
        }
    }
}
