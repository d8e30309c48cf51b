//! IEEE 802.1ah Provider Backbone Bridges (MAC-in-MAC): the I-TAG
//! (EtherType 0x88e7), usually after a B-TAG (0x88a8, an ordinary service
//! VLAN tag), then the customer's Ethernet header.
//!
//! The I-TAG's 4 bytes: priority (3 bits), drop eligible (1), use customer
//! addresses (1), reserved (3), the 24-bit service instance identifier
//! (I-SID). The customer destination and source MAC addresses and the
//! customer EtherType follow: a whole Ethernet header.

use super::{be24, need, Parsed, Payload, Skip};

/// EtherType of the I-TAG.
pub const ETHERTYPE_ITAG: u16 = 0x88e7;
/// Length of the I-TAG's control information (after its EtherType).
pub const ITAG_LEN: usize = 4;
/// Offset of the I-SID.
const ISID: usize = 1;

/// A decoded I-TAG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pbb {
    /// The service instance identifier (24 bits).
    pub isid: u32,
    /// Priority code point.
    pub pcp: u8,
}

impl Pbb {
    /// Decodes the I-TAG control information at `at` (after the 0x88e7 EtherType).
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<Pbb>, Skip> {
        need("802.1ah I-TAG", data, at, ITAG_LEN)?;
        Ok(Parsed {
            header: Pbb {
                isid: be24(data, at + ISID),
                pcp: data[at] >> 5,
            },
            payload_at: at + ITAG_LEN,
            payload: Payload::Ethernet,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isid() {
        let p = Pbb::parse(&[0xa0, 0x01, 0x00, 0x02], 0).unwrap();
        assert_eq!((p.header.isid, p.header.pcp), (0x010002, 5));
        assert_eq!(p.payload_at, 4);
    }
}
