//! [`DsField`]: the whole DS-field byte (RFC 2474, RFC 3168), which is the
//! IPv4 TOS byte and the IPv6 traffic class.
//!
//! Every one of the 256 byte values is a valid `DsField`; it splits without
//! loss into a [`Dscp`] (upper six bits) and an [`Ecn`] (lower two), and
//! changing one never touches the other.

use core::fmt;

use crate::dscp::Dscp;
use crate::ecn::Ecn;
use crate::precedence::Precedence;
use crate::tos::Tos;

/// The DS field: DSCP in the upper six bits, ECN in the lower two.
///
/// ```
/// use dscp::{Dscp, DsField, Ecn};
///
/// // A TOS byte of 0xb8 is EF, Not-ECT.
/// let field = DsField::new(0xb8);
/// assert_eq!(field.dscp(), Dscp::EF);
/// assert_eq!(field.ecn(), Ecn::NotEct);
///
/// // A router marks congestion: DSCP is kept.
/// let marked = field.with_ecn(Ecn::Ce);
/// assert_eq!(marked.value(), 0xbb);
/// assert_eq!(marked.dscp(), Dscp::EF);
///
/// // A remarking policy changes DSCP: ECN is kept.
/// let remarked = marked.with_dscp(Dscp::CS1);
/// assert_eq!(remarked.value(), 0x23);
/// assert_eq!(remarked.ecn(), Ecn::Ce);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DsField(u8);

impl DsField {
    /// Bits of the byte that hold the DSCP.
    pub const DSCP_MASK: u8 = 0b1111_1100;
    /// Bits of the byte that hold the ECN codepoint.
    pub const ECN_MASK: u8 = 0b0000_0011;
    /// How far the DSCP is shifted left in the byte.
    pub const DSCP_SHIFT: u32 = 2;

    /// The DS field of a byte; any byte is valid.
    pub const fn new(byte: u8) -> DsField {
        DsField(byte)
    }

    /// The DS field holding `dscp` and `ecn`.
    pub const fn from_parts(dscp: Dscp, ecn: Ecn) -> DsField {
        DsField((dscp.value() << Self::DSCP_SHIFT) | ecn.value())
    }

    /// The byte.
    pub const fn value(self) -> u8 {
        self.0
    }

    /// The DSCP, the upper six bits.
    pub const fn dscp(self) -> Dscp {
        Dscp::from_ds_byte(self.0)
    }

    /// The ECN codepoint, the lower two bits.
    pub const fn ecn(self) -> Ecn {
        Ecn::from_low_bits(self.0)
    }

    /// The IP precedence, the upper three bits.
    pub const fn precedence(self) -> Precedence {
        Precedence::from_tos_byte(self.0)
    }

    /// The same byte read with the RFC 1349 TOS layout.
    pub const fn tos(self) -> Tos {
        Tos::new(self.0)
    }

    /// This field with its DSCP replaced; ECN is kept.
    pub const fn with_dscp(self, dscp: Dscp) -> DsField {
        DsField((self.0 & Self::ECN_MASK) | (dscp.value() << Self::DSCP_SHIFT))
    }

    /// This field with its ECN codepoint replaced; DSCP is kept.
    pub const fn with_ecn(self, ecn: Ecn) -> DsField {
        DsField((self.0 & Self::DSCP_MASK) | ecn.value())
    }
}

impl From<u8> for DsField {
    fn from(byte: u8) -> DsField {
        DsField(byte)
    }
}

impl From<DsField> for u8 {
    fn from(field: DsField) -> u8 {
        field.0
    }
}

impl From<Dscp> for DsField {
    /// The DSCP with ECN Not-ECT.
    fn from(dscp: Dscp) -> DsField {
        DsField::from_parts(dscp, Ecn::NotEct)
    }
}

impl fmt::Display for DsField {
    /// `0xb8 (EF, Not-ECT)`; with `{:#}` the DSCP's long name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            write!(f, "{:#04x} ({:#}, {})", self.0, self.dscp(), self.ecn())
        } else {
            write!(f, "{:#04x} ({}, {})", self.0, self.dscp(), self.ecn())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_splits_and_joins_without_loss() {
        for byte in 0..=255u8 {
            let f = DsField::new(byte);
            assert_eq!(DsField::from_parts(f.dscp(), f.ecn()), f);
            assert_eq!(f.dscp().value(), byte >> 2);
            assert_eq!(f.ecn().value(), byte & 3);
        }
    }

    #[test]
    fn display() {
        extern crate std;
        assert_eq!(std::format!("{}", DsField::new(0xb9)), "0xb9 (EF, ECT(1))");
        assert_eq!(
            std::format!("{:#}", DsField::new(0x20)),
            "0x20 (Class Selector 1, Not-ECT)"
        );
        assert_eq!(std::format!("{}", DsField::new(0x0e)), "0x0e (3, ECT(0))");
    }
}
