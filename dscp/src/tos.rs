//! [`Tos`] and [`TosFlags`]: the legacy IPv4 type-of-service byte of
//! RFC 791 as revised by RFC 1349, for reading old markings.
//!
//! ```text
//!   0     1     2     3     4     5     6     7
//! +-----+-----+-----+-----+-----+-----+-----+-----+
//! |   PRECEDENCE    |          TOS          | MBZ |
//! +-----+-----+-----+-----+-----+-----+-----+-----+
//! ```
//!
//! RFC 1349 section 4 defines the 4-bit TOS field as a value (1000 minimize
//! delay, 0100 maximize throughput, 0010 maximize reliability, 0001
//! minimize monetary cost, 0000 normal service) rather than a set of
//! independent bits, while RFC 791 had D, T and R as separate flags; old
//! equipment sets combinations, so the field is exposed both as flags and
//! as its 4-bit value. RFC 2474 reuses the same byte as the DS field (see
//! [`DsField`](crate::DsField)); the MBZ bit became part of ECN.

use core::fmt;

use crate::ds_field::DsField;
use crate::precedence::Precedence;

bitflags::bitflags! {
    /// The RFC 1349 TOS bits, at their positions in the TOS byte.
    ///
    /// ```
    /// use dscp::{Tos, TosFlags};
    ///
    /// // Interactive traffic of the 1990s: TOS 0x10, "minimize delay".
    /// let tos = Tos::new(0x10);
    /// assert_eq!(tos.flags(), TosFlags::MINIMIZE_DELAY);
    /// assert_eq!(tos.tos_value(), 0b1000);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
    pub struct TosFlags: u8 {
        /// `1000`: minimize delay (RFC 791 "D", low delay).
        const MINIMIZE_DELAY = 0b0001_0000;
        /// `0100`: maximize throughput (RFC 791 "T", high throughput).
        const MAXIMIZE_THROUGHPUT = 0b0000_1000;
        /// `0010`: maximize reliability (RFC 791 "R", high reliability).
        const MAXIMIZE_RELIABILITY = 0b0000_0100;
        /// `0001`: minimize monetary cost (added by RFC 1349).
        const MINIMIZE_MONETARY_COST = 0b0000_0010;
    }
}

impl TosFlags {
    /// The flags with the names RFC 1349 gives them, in bit order.
    const NAMED: [(TosFlags, &'static str); 4] = [
        (TosFlags::MINIMIZE_DELAY, "minimize delay"),
        (TosFlags::MAXIMIZE_THROUGHPUT, "maximize throughput"),
        (TosFlags::MAXIMIZE_RELIABILITY, "maximize reliability"),
        (TosFlags::MINIMIZE_MONETARY_COST, "minimize monetary cost"),
    ];
}

/// A TOS byte read with the RFC 1349 layout.
///
/// ```
/// use dscp::{Precedence, Tos, TosFlags};
///
/// let tos = Tos::from_parts(Precedence::Priority, TosFlags::empty());
/// assert_eq!(tos.value(), 0x20); // the QBSS marking
/// assert_eq!(tos.to_string(), "priority");
/// assert_eq!(Tos::new(0x18).to_string(), "routine (minimize delay, maximize throughput)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tos(u8);

impl Tos {
    /// The must-be-zero bit of RFC 1349 (ECN's low bit since RFC 3168).
    pub const MBZ_MASK: u8 = 0b0000_0001;
    /// The bits of the 4-bit TOS field.
    pub const TOS_MASK: u8 = 0b0001_1110;
    /// The bits of the precedence.
    pub const PRECEDENCE_MASK: u8 = 0b1110_0000;

    /// The TOS view of a byte; any byte is accepted.
    pub const fn new(byte: u8) -> Tos {
        Tos(byte)
    }

    /// A TOS byte from a precedence and TOS flags, MBZ clear.
    ///
    /// Only the four TOS bits of `flags` are used: bits a `TosFlags` may
    /// carry from [`TosFlags::from_bits_retain`] are masked off, so they
    /// never reach the precedence or the MBZ bit.
    ///
    /// ```
    /// use dscp::{Precedence, Tos, TosFlags};
    ///
    /// let stray = TosFlags::from_bits_retain(0xff);
    /// let tos = Tos::from_parts(Precedence::Priority, stray);
    /// assert_eq!(tos.value(), 0x3e);
    /// assert_eq!(tos.precedence(), Precedence::Priority);
    /// ```
    pub const fn from_parts(precedence: Precedence, flags: TosFlags) -> Tos {
        Tos((precedence.value() << 5) | (flags.bits() & Self::TOS_MASK))
    }

    /// This byte with its precedence replaced; the TOS bits and MBZ are kept.
    pub const fn with_precedence(self, precedence: Precedence) -> Tos {
        Tos((self.0 & !Self::PRECEDENCE_MASK) | (precedence.value() << 5))
    }

    /// This byte with its four TOS bits replaced (bits of `flags` outside
    /// them are ignored); the precedence and MBZ are kept.
    pub const fn with_flags(self, flags: TosFlags) -> Tos {
        Tos((self.0 & !Self::TOS_MASK) | (flags.bits() & Self::TOS_MASK))
    }

    /// The byte.
    pub const fn value(self) -> u8 {
        self.0
    }

    /// The precedence, the upper three bits.
    pub const fn precedence(self) -> Precedence {
        Precedence::from_tos_byte(self.0)
    }

    /// The TOS bits.
    pub const fn flags(self) -> TosFlags {
        TosFlags::from_bits_truncate(self.0)
    }

    /// The 4-bit TOS field as a number (RFC 1349 section 4), 0 to 15.
    pub const fn tos_value(self) -> u8 {
        (self.0 & Self::TOS_MASK) >> 1
    }

    /// True if the must-be-zero bit is set (in a DS-field reading, ECN is
    /// ECT(1) or CE).
    pub const fn mbz_set(self) -> bool {
        self.0 & Self::MBZ_MASK != 0
    }

    /// The same byte read as a DS field.
    pub const fn ds_field(self) -> DsField {
        DsField::new(self.0)
    }
}

impl From<u8> for Tos {
    fn from(byte: u8) -> Tos {
        Tos(byte)
    }
}

impl From<Tos> for u8 {
    fn from(tos: Tos) -> u8 {
        tos.0
    }
}

impl fmt::Display for Tos {
    /// The precedence name, then the RFC 1349 names of the set TOS bits in
    /// parentheses, then `MBZ set` if that bit is set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.precedence())?;
        let flags = self.flags();
        let mut first = true;
        let mut item = |f: &mut fmt::Formatter<'_>, text: &str| {
            let sep = if first { " (" } else { ", " };
            first = false;
            write!(f, "{sep}{text}")
        };
        for (flag, name) in TosFlags::NAMED {
            if flags.contains(flag) {
                item(f, name)?;
            }
        }
        if self.mbz_set() {
            item(f, "MBZ set")?;
        }
        if !first {
            f.write_str(")")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1349_values() {
        // RFC 1349 section 4: 1000 minimize delay, 0100 maximize throughput,
        // 0010 maximize reliability, 0001 minimize monetary cost.
        assert_eq!(
            Tos::new(TosFlags::MINIMIZE_DELAY.bits()).tos_value(),
            0b1000
        );
        assert_eq!(
            Tos::new(TosFlags::MAXIMIZE_THROUGHPUT.bits()).tos_value(),
            0b0100
        );
        assert_eq!(
            Tos::new(TosFlags::MAXIMIZE_RELIABILITY.bits()).tos_value(),
            0b0010
        );
        assert_eq!(
            Tos::new(TosFlags::MINIMIZE_MONETARY_COST.bits()).tos_value(),
            0b0001
        );
    }

    #[test]
    fn every_byte_splits_into_disjoint_parts() {
        for byte in 0..=255u8 {
            let t = Tos::new(byte);
            let rebuilt = Tos::from_parts(t.precedence(), t.flags()).value()
                | if t.mbz_set() { Tos::MBZ_MASK } else { 0 };
            assert_eq!(rebuilt, byte);
            assert_eq!(t.ds_field().value(), byte);
        }
    }

    #[test]
    fn setters_touch_only_their_own_bits() {
        // Every TosFlags bit pattern, stray bits included, against every
        // byte: the precedence and MBZ bits never change through the flags,
        // the TOS bits and MBZ never through the precedence.
        for byte in 0..=255u8 {
            let t = Tos::new(byte);
            for bits in 0..=255u8 {
                let flags = TosFlags::from_bits_retain(bits);
                let f = t.with_flags(flags);
                assert_eq!(f.value() & !Tos::TOS_MASK, byte & !Tos::TOS_MASK);
                assert_eq!(f.value() & Tos::TOS_MASK, bits & Tos::TOS_MASK);
                let built = Tos::from_parts(t.precedence(), flags);
                assert_eq!(built.precedence(), t.precedence());
                assert!(!built.mbz_set());
            }
            for p in 0..8 {
                let p = Precedence::new(p).unwrap();
                let w = t.with_precedence(p);
                assert_eq!(w.precedence(), p);
                assert_eq!(
                    w.value() & !Tos::PRECEDENCE_MASK,
                    byte & !Tos::PRECEDENCE_MASK
                );
            }
        }
    }

    #[test]
    fn display_lists_flags_and_mbz() {
        extern crate std;
        use std::string::ToString;
        assert_eq!(Tos::new(0x00).to_string(), "routine");
        assert_eq!(
            Tos::new(0xff).to_string(),
            "network-control (minimize delay, maximize throughput, maximize reliability, \
             minimize monetary cost, MBZ set)"
        );
        assert_eq!(Tos::new(0x21).to_string(), "priority (MBZ set)");
    }
}
