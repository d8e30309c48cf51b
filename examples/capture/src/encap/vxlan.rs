//! VXLAN (RFC 7348 section 5): an 8-byte header after UDP, then an Ethernet
//! frame.
//!
//! Flags (8 bits, I = 0x08 says the VNI is valid), 24 reserved bits, the
//! 24-bit VXLAN Network Identifier, 8 reserved bits.

use super::{be24, need, Parsed, Payload, Skip};

/// VXLAN header length.
pub const HEADER_LEN: usize = 8;
/// Offset of the VNI.
const VNI: usize = 4;
/// The I flag: the VNI is valid.
pub const FLAG_I: u8 = 0x08;

/// A decoded VXLAN header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vxlan {
    /// The VXLAN Network Identifier (24 bits).
    pub vni: u32,
    /// The flags byte (I = 0x08).
    pub flags: u8,
}

impl Vxlan {
    /// Decodes the VXLAN header at `at`.
    pub fn parse(data: &[u8], at: usize) -> Result<Parsed<Vxlan>, Skip> {
        need("VXLAN", data, at, HEADER_LEN)?;
        Ok(Parsed {
            header: Vxlan {
                vni: be24(data, at + VNI),
                flags: data[at],
            },
            payload_at: at + HEADER_LEN,
            payload: Payload::Ethernet,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vni() {
        let p = Vxlan::parse(&[0x08, 0, 0, 0, 0x01, 0x02, 0x03, 0], 0).unwrap();
        assert_eq!(p.header.vni, 0x010203);
        assert_eq!(p.payload_at, 8);
        assert!(Vxlan::parse(&[0x08, 0, 0], 0).is_err());
    }
}
