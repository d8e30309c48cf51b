//! [`Precedence`]: the 3-bit IP precedence of RFC 791.
//!
//! Before DiffServ, the upper three bits of the IPv4 TOS byte carried a
//! precedence. RFC 2474 keeps them meaningful through the class selector
//! code points `ppp000`, so a router that classifies on precedence (as the
//! Juniper precedence map in the QBSS deployment did) sees DSCP CS*p* and
//! every other DSCP whose upper bits are *p* as precedence *p*.

use core::fmt;
use core::str::FromStr;

use crate::dscp::Dscp;
use crate::error::{ParsePrecedenceError, Radix, ValueError};
use crate::number::{is_binary_of_len, parse_digits, surrounding_whitespace, NumberError};

/// An IP precedence, with the names of RFC 791 section 3.1.
///
/// # Parsing
///
/// `FromStr` accepts, ignoring ASCII case and treating `-`, `_` and space
/// alike: the names printed by `{}` and `{:#}` (`routine`, `priority`,
/// `immediate`, `flash`, `flash-override`, `critic/ecp`,
/// `internetwork-control`, `network-control`), the aliases `critic`, `ecp`,
/// and the IOS keywords `critical`, `internet`, `network`; a digit 0 to 7;
/// or exactly three binary digits (`001`, as precedence is usually written).
///
/// ```
/// use dscp::{Dscp, Precedence};
///
/// let p: Precedence = "001".parse().unwrap();
/// assert_eq!(p, Precedence::Priority);
/// assert_eq!(p.value(), 1);
/// assert_eq!(p.class_selector(), Dscp::CS1);
/// assert_eq!(p.to_string(), "priority");
/// assert_eq!(format!("{:#}", Precedence::Critic), "CRITIC/ECP");
/// assert_eq!("Flash Override".parse(), Ok(Precedence::FlashOverride));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Precedence {
    /// `000` Routine.
    #[default]
    Routine = 0,
    /// `001` Priority.
    Priority = 1,
    /// `010` Immediate.
    Immediate = 2,
    /// `011` Flash.
    Flash = 3,
    /// `100` Flash Override.
    FlashOverride = 4,
    /// `101` CRITIC/ECP.
    Critic = 5,
    /// `110` Internetwork Control.
    InternetworkControl = 6,
    /// `111` Network Control.
    NetworkControl = 7,
}

impl Precedence {
    /// The eight precedences, in increasing order.
    pub const ALL: [Precedence; 8] = [
        Precedence::Routine,
        Precedence::Priority,
        Precedence::Immediate,
        Precedence::Flash,
        Precedence::FlashOverride,
        Precedence::Critic,
        Precedence::InternetworkControl,
        Precedence::NetworkControl,
    ];

    /// A precedence from its 3-bit value; values above 7 are an error.
    pub const fn new(value: u8) -> Result<Precedence, ValueError> {
        if value < 8 {
            Ok(Self::from_low_bits(value))
        } else {
            Err(ValueError::Precedence { value })
        }
    }

    /// The precedence in the three low bits of `bits` (the rest ignored).
    pub(crate) const fn from_low_bits(bits: u8) -> Precedence {
        Self::ALL[(bits & 0b111) as usize]
    }

    /// The precedence in the upper three bits of a TOS / DS-field byte.
    ///
    /// ```
    /// # use dscp::Precedence;
    /// // QBSS marking: TOS byte 0x20 is precedence 001.
    /// assert_eq!(Precedence::from_tos_byte(0x20), Precedence::Priority);
    /// ```
    pub const fn from_tos_byte(byte: u8) -> Precedence {
        Self::from_low_bits(byte >> 5)
    }

    /// The 3-bit value.
    pub const fn value(self) -> u8 {
        self as u8
    }

    /// The class selector code point for this precedence, `ppp000`
    /// (RFC 2474 section 4.2.2).
    pub const fn class_selector(self) -> Dscp {
        Dscp::class_selector(self)
    }

    /// The lower-case short name, e.g. `"flash-override"`.
    pub const fn name(self) -> &'static str {
        match self {
            Precedence::Routine => "routine",
            Precedence::Priority => "priority",
            Precedence::Immediate => "immediate",
            Precedence::Flash => "flash",
            Precedence::FlashOverride => "flash-override",
            Precedence::Critic => "critic/ecp",
            Precedence::InternetworkControl => "internetwork-control",
            Precedence::NetworkControl => "network-control",
        }
    }

    /// The name as RFC 791 spells it, e.g. `"Flash Override"`.
    pub const fn rfc791_name(self) -> &'static str {
        match self {
            Precedence::Routine => "Routine",
            Precedence::Priority => "Priority",
            Precedence::Immediate => "Immediate",
            Precedence::Flash => "Flash",
            Precedence::FlashOverride => "Flash Override",
            Precedence::Critic => "CRITIC/ECP",
            Precedence::InternetworkControl => "Internetwork Control",
            Precedence::NetworkControl => "Network Control",
        }
    }
}

impl TryFrom<u8> for Precedence {
    type Error = ValueError;

    fn try_from(value: u8) -> Result<Self, Self::Error> {
        Precedence::new(value)
    }
}

impl From<Precedence> for u8 {
    fn from(p: Precedence) -> u8 {
        p.value()
    }
}

impl fmt::Display for Precedence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.pad(self.rfc791_name())
        } else {
            f.pad(self.name())
        }
    }
}

/// Extra accepted spellings beyond [`Precedence::name`] and
/// [`Precedence::rfc791_name`].
const ALIASES: [(&str, Precedence); 5] = [
    ("critic", Precedence::Critic),
    ("ecp", Precedence::Critic),
    // Cisco IOS `set precedence` keywords that differ from RFC 791.
    ("critical", Precedence::Critic),
    ("internet", Precedence::InternetworkControl),
    ("network", Precedence::NetworkControl),
];

/// Compares names ignoring ASCII case, with `-`, `_` and space equal.
fn same_name(a: &str, b: &str) -> bool {
    let fold = |c: u8| match c {
        b'-' | b'_' | b' ' => b'-',
        c => c.to_ascii_lowercase(),
    };
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| fold(x) == fold(y))
}

impl FromStr for Precedence {
    type Err = ParsePrecedenceError;

    fn from_str(s: &str) -> Result<Precedence, ParsePrecedenceError> {
        if s.is_empty() {
            return Err(ParsePrecedenceError::Empty);
        }
        if let Some(offset) = surrounding_whitespace(s) {
            return Err(ParsePrecedenceError::SurroundingWhitespace { offset });
        }
        if !s.as_bytes()[0].is_ascii_digit() {
            return Precedence::ALL
                .iter()
                .copied()
                .find(|p| same_name(s, p.name()) || same_name(s, p.rfc791_name()))
                .or_else(|| {
                    ALIASES
                        .iter()
                        .find(|(alias, _)| same_name(s, alias))
                        .map(|&(_, p)| p)
                })
                .ok_or(ParsePrecedenceError::UnknownName);
        }
        let radix = if is_binary_of_len(s, 3) {
            Radix::Binary
        } else {
            Radix::Decimal
        };
        let value = parse_digits(s, 0, radix).map_err(|e| match e {
            NumberError::Overflow => ParsePrecedenceError::Overflow,
            NumberError::InvalidDigit {
                offset,
                found,
                radix,
            } => ParsePrecedenceError::InvalidDigit {
                offset,
                found,
                radix,
            },
            // `s` is not empty.
            NumberError::MissingDigits => ParsePrecedenceError::Empty,
        })?;
        if radix == Radix::Decimal && s.len() > 1 && s.starts_with('0') {
            return Err(ParsePrecedenceError::LeadingZero);
        }
        match u8::try_from(value) {
            Ok(v) if v < 8 => Ok(Precedence::from_low_bits(v)),
            _ => Err(ParsePrecedenceError::OutOfRange { value }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc791_values() {
        // RFC 791 section 3.1, "Precedence" table.
        assert_eq!(Precedence::NetworkControl.value(), 0b111);
        assert_eq!(Precedence::InternetworkControl.value(), 0b110);
        assert_eq!(Precedence::Critic.value(), 0b101);
        assert_eq!(Precedence::FlashOverride.value(), 0b100);
        assert_eq!(Precedence::Flash.value(), 0b011);
        assert_eq!(Precedence::Immediate.value(), 0b010);
        assert_eq!(Precedence::Priority.value(), 0b001);
        assert_eq!(Precedence::Routine.value(), 0b000);
    }

    #[test]
    fn every_value_round_trips() {
        extern crate std;
        use std::string::ToString;
        for v in 0..8u8 {
            let p = Precedence::new(v).unwrap();
            assert_eq!(p.value(), v);
            assert_eq!(p.to_string().parse(), Ok(p));
            assert_eq!(std::format!("{p:#}").parse(), Ok(p));
            assert_eq!(v.to_string().parse(), Ok(p));
            assert_eq!(std::format!("{v:03b}").parse(), Ok(p));
        }
        assert_eq!(Precedence::new(8), Err(ValueError::Precedence { value: 8 }));
    }

    #[test]
    fn aliases_and_spellings() {
        assert_eq!("CRITIC".parse(), Ok(Precedence::Critic));
        assert_eq!("critical".parse(), Ok(Precedence::Critic));
        assert_eq!("flash_override".parse(), Ok(Precedence::FlashOverride));
        assert_eq!("Network Control".parse(), Ok(Precedence::NetworkControl));
        assert_eq!("internet".parse(), Ok(Precedence::InternetworkControl));
    }

    #[test]
    fn errors_say_why() {
        use ParsePrecedenceError::*;
        assert_eq!("".parse::<Precedence>(), Err(Empty));
        assert_eq!(
            " 1".parse::<Precedence>(),
            Err(SurroundingWhitespace { offset: 0 })
        );
        assert_eq!("8".parse::<Precedence>(), Err(OutOfRange { value: 8 }));
        assert_eq!("012".parse::<Precedence>(), Err(LeadingZero));
        assert_eq!("0001".parse::<Precedence>(), Err(LeadingZero));
        assert_eq!("99999999999".parse::<Precedence>(), Err(Overflow));
        assert_eq!(
            "1x".parse::<Precedence>(),
            Err(InvalidDigit {
                offset: 1,
                found: 'x',
                radix: Radix::Decimal
            })
        );
        assert_eq!("urgent".parse::<Precedence>(), Err(UnknownName));
    }

    #[test]
    fn tos_byte_upper_bits() {
        for byte in 0..=255u8 {
            assert_eq!(Precedence::from_tos_byte(byte).value(), byte >> 5);
        }
    }
}
