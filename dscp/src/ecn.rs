//! [`Ecn`]: the 2-bit ECN field of RFC 3168 section 5.
//!
//! The two low bits of the DS field:
//!
//! | bits | codepoint | meaning |
//! |------|-----------|---------|
//! | `00` | Not-ECT   | the transport is not ECN-capable |
//! | `01` | ECT(1)    | ECN-capable transport (L4S, RFC 9331) |
//! | `10` | ECT(0)    | ECN-capable transport |
//! | `11` | CE        | congestion experienced |

use core::fmt;
use core::str::FromStr;

use crate::error::{ParseEcnError, ValueError};

/// What a congested router does with a packet instead of dropping it
/// (RFC 3168 section 5), from [`Ecn::on_congestion`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CongestionAction {
    /// ECT(0) or ECT(1): set the ECN field to CE and forward.
    MarkCe,
    /// Already CE: forward unchanged.
    AlreadyCe,
    /// Not-ECT: drop the packet, as a router without ECN would. Marking
    /// it is forbidden; its transport would not react to CE.
    Drop,
}

/// An ECN codepoint (RFC 3168).
///
/// ```
/// use dscp::Ecn;
///
/// assert_eq!(Ecn::new(0b10), Ok(Ecn::Ect0));
/// assert_eq!(Ecn::Ce.to_string(), "CE");
/// assert_eq!("ect(1)".parse(), Ok(Ecn::Ect1));
/// assert!(Ecn::Ect0.is_ect() && !Ecn::Ce.is_ect());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Ecn {
    /// `00`: not ECN-capable transport.
    #[default]
    NotEct = 0b00,
    /// `01`: ECN-capable transport, ECT(1).
    Ect1 = 0b01,
    /// `10`: ECN-capable transport, ECT(0).
    Ect0 = 0b10,
    /// `11`: congestion experienced.
    Ce = 0b11,
}

impl Ecn {
    /// The four codepoints, in increasing order of value.
    pub const ALL: [Ecn; 4] = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce];

    /// An ECN codepoint from its 2-bit value; values above 3 are an error.
    pub const fn new(value: u8) -> Result<Ecn, ValueError> {
        if value < 4 {
            Ok(Self::from_low_bits(value))
        } else {
            Err(ValueError::Ecn { value })
        }
    }

    /// The codepoint in the two low bits of `bits` (a DS-field byte); the
    /// other bits are ignored.
    pub const fn from_low_bits(bits: u8) -> Ecn {
        Self::ALL[(bits & 0b11) as usize]
    }

    /// The 2-bit value.
    pub const fn value(self) -> u8 {
        self as u8
    }

    /// True for ECT(0) and ECT(1): an ECN-capable transport whose packet
    /// has not been marked.
    pub const fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }

    /// True for CE: a router marked congestion.
    pub const fn is_ce(self) -> bool {
        matches!(self, Ecn::Ce)
    }

    /// What a router that would drop this packet for congestion does
    /// instead (RFC 3168 section 5): an ECN-capable packet (ECT(0) or
    /// ECT(1)) is marked CE, a packet already marked CE is forwarded as it
    /// is, and a Not-ECT packet is **dropped**, never marked: its transport
    /// would not see the mark.
    ///
    /// ```
    /// use dscp::{CongestionAction, Ecn};
    ///
    /// assert_eq!(Ecn::Ect0.on_congestion(), CongestionAction::MarkCe);
    /// assert_eq!(Ecn::Ce.on_congestion(), CongestionAction::AlreadyCe);
    /// assert_eq!(Ecn::NotEct.on_congestion(), CongestionAction::Drop);
    /// ```
    pub const fn on_congestion(self) -> CongestionAction {
        match self {
            Ecn::Ect0 | Ecn::Ect1 => CongestionAction::MarkCe,
            Ecn::Ce => CongestionAction::AlreadyCe,
            Ecn::NotEct => CongestionAction::Drop,
        }
    }

    /// True if a network node that supports L4S classifies the packet for
    /// L4S treatment (RFC 9331 section 5.3): ECT(1), the L4S identifier,
    /// and CE (which may have been ECT(1) before a mark, so it is treated
    /// as L4S). ECT(0) and Not-ECT are Classic.
    ///
    /// ```
    /// use dscp::Ecn;
    ///
    /// assert!(Ecn::Ect1.is_l4s() && Ecn::Ce.is_l4s());
    /// assert!(!Ecn::Ect0.is_l4s() && !Ecn::NotEct.is_l4s());
    /// ```
    pub const fn is_l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }

    /// The name used in RFC 3168: `"Not-ECT"`, `"ECT(1)"`, `"ECT(0)"`, `"CE"`.
    pub const fn name(self) -> &'static str {
        match self {
            Ecn::NotEct => "Not-ECT",
            Ecn::Ect1 => "ECT(1)",
            Ecn::Ect0 => "ECT(0)",
            Ecn::Ce => "CE",
        }
    }
}

impl TryFrom<u8> for Ecn {
    type Error = ValueError;

    fn try_from(value: u8) -> Result<Self, Self::Error> {
        Ecn::new(value)
    }
}

impl From<Ecn> for u8 {
    fn from(ecn: Ecn) -> u8 {
        ecn.value()
    }
}

impl fmt::Display for Ecn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Ecn {
    type Err = ParseEcnError;

    /// Accepts the RFC 3168 names in any ASCII case (`Not-ECT`, `ECT(1)`,
    /// `ECT(0)`, `CE`; also `NotECT`, `ECT1`, `ECT0`), one digit 0 to 3, or
    /// exactly two binary digits (`10`).
    fn from_str(s: &str) -> Result<Ecn, ParseEcnError> {
        const ALIASES: [(&str, Ecn); 4] = [
            ("NotECT", Ecn::NotEct),
            ("Not_ECT", Ecn::NotEct),
            ("ECT1", Ecn::Ect1),
            ("ECT0", Ecn::Ect0),
        ];
        match s.as_bytes() {
            [] => Err(ParseEcnError::Empty),
            [d] if d.is_ascii_digit() => {
                Ecn::new(d - b'0').map_err(|_| ParseEcnError::OutOfRange { value: d - b'0' })
            }
            [hi @ (b'0' | b'1'), lo @ (b'0' | b'1')] => {
                Ok(Ecn::from_low_bits(((hi - b'0') << 1) | (lo - b'0')))
            }
            _ => Ecn::ALL
                .iter()
                .map(|&e| (e.name(), e))
                .chain(ALIASES)
                .find(|(name, _)| name.eq_ignore_ascii_case(s))
                .map(|(_, e)| e)
                .ok_or(ParseEcnError::UnknownName),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3168_codepoints() {
        // RFC 3168 section 5, figure 1.
        assert_eq!(Ecn::NotEct.value(), 0b00);
        assert_eq!(Ecn::Ect1.value(), 0b01);
        assert_eq!(Ecn::Ect0.value(), 0b10);
        assert_eq!(Ecn::Ce.value(), 0b11);
    }

    #[test]
    fn rfc3168_section5_router_marking() {
        // RFC 3168 section 5: CE is set only on ECT(0) and ECT(1); a
        // Not-ECT packet is dropped, a CE packet stays CE.
        let table = [
            (Ecn::NotEct, CongestionAction::Drop),
            (Ecn::Ect1, CongestionAction::MarkCe),
            (Ecn::Ect0, CongestionAction::MarkCe),
            (Ecn::Ce, CongestionAction::AlreadyCe),
        ];
        for (ecn, action) in table {
            assert_eq!(ecn.on_congestion(), action, "{ecn}");
            assert_eq!(action == CongestionAction::MarkCe, ecn.is_ect());
        }
    }

    #[test]
    fn rfc9331_l4s_classification() {
        // RFC 9331 section 5.3: ECT(1) and CE are classified as L4S.
        let l4s: [Ecn; 2] = [Ecn::Ect1, Ecn::Ce];
        for e in Ecn::ALL {
            assert_eq!(e.is_l4s(), l4s.contains(&e), "{e}");
        }
    }

    #[test]
    fn parse_display_round_trip() {
        extern crate std;
        use std::string::ToString;
        for e in Ecn::ALL {
            assert_eq!(e.to_string().parse(), Ok(e));
            assert_eq!(e.to_string().to_lowercase().parse(), Ok(e));
            assert_eq!(e.value().to_string().parse(), Ok(e));
            assert_eq!(std::format!("{:02b}", e.value()).parse(), Ok(e));
            assert_eq!(Ecn::from_low_bits(e.value() | 0b1111_1100), e);
        }
    }

    #[test]
    fn errors() {
        assert_eq!("".parse::<Ecn>(), Err(ParseEcnError::Empty));
        assert_eq!(
            "4".parse::<Ecn>(),
            Err(ParseEcnError::OutOfRange { value: 4 })
        );
        assert_eq!("12".parse::<Ecn>(), Err(ParseEcnError::UnknownName));
        assert_eq!("ect(2)".parse::<Ecn>(), Err(ParseEcnError::UnknownName));
        assert_eq!(Ecn::new(4), Err(ValueError::Ecn { value: 4 }));
    }
}
