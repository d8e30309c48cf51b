//! [`Dscp`]: the 6-bit Differentiated Services Code Point (RFC 2474).
//!
//! The DSCP occupies the upper six bits of the DS field (the old IPv4 TOS
//! byte, the IPv6 traffic class); the lower two bits are ECN (RFC 3168):
//!
//! ```text
//!   0   1   2   3   4   5   6   7
//! +---+---+---+---+---+---+---+---+
//! |          DSCP         |  ECN  |
//! +---+---+---+---+---+---+---+---+
//! ```
//!
//! Any of the 64 values is a valid `Dscp`; 24 of them have names in the
//! IANA registry (see [`Dscp::name`]).

use core::fmt;
use core::str::FromStr;

use crate::error::{ParseDscpError, Radix, ValueError};
use crate::names;
use crate::number::{
    is_binary_of_len, parse_digits, strip_prefix_ignore_case, surrounding_whitespace, NumberError,
};
use crate::pool::Pool;
use crate::precedence::Precedence;

/// A Differentiated Services Code Point: a 6-bit value, 0 to 63.
///
/// # Parsing
///
/// `FromStr` accepts, in any ASCII case:
///
/// - a short name: `CS0`..`CS7`, `AF11`..`AF43`, `EF`, `LE`, `VOICE-ADMIT`,
///   and `BE`, `DF`, `DEFAULT` for 0;
/// - a long name as printed by `{:#}`: `Expedited Forwarding`,
///   `Class Selector 3`, `Assured Forwarding 41`, `Lower Effort`,
///   `Voice Admit` (and `Default Forwarding` for 0);
/// - a decimal number 0 to 63 without leading zeros (`46`);
/// - hexadecimal after `0x` (`0x2e`), binary after `0b` (`0b101110`);
/// - exactly six binary digits (`101110`).
///
/// Everything else is a [`ParseDscpError`] that says why: `cs8`
/// ([`ClassSelectorOutOfRange`](ParseDscpError::ClassSelectorOutOfRange)),
/// `af14` ([`AfDropPrecedenceOutOfRange`](ParseDscpError::AfDropPrecedenceOutOfRange)),
/// `64` ([`OutOfRange`](ParseDscpError::OutOfRange)), `""`
/// ([`Empty`](ParseDscpError::Empty)), `" ef"`
/// ([`SurroundingWhitespace`](ParseDscpError::SurroundingWhitespace)).
///
/// ```
/// use dscp::{Dscp, ParseDscpError};
///
/// assert_eq!("ef".parse(), Ok(Dscp::EF));
/// assert_eq!("0x2E".parse(), Ok(Dscp::EF));
/// assert_eq!("101110".parse(), Ok(Dscp::EF));
/// assert_eq!("46".parse(), Ok(Dscp::EF));
/// assert_eq!("Assured Forwarding 41".parse(), Ok(Dscp::AF41));
/// assert_eq!("default".parse(), Ok(Dscp::CS0));
/// assert_eq!(
///     "af14".parse::<Dscp>(),
///     Err(ParseDscpError::AfDropPrecedenceOutOfRange { class: 1, drop: 4 })
/// );
/// assert_eq!("64".parse::<Dscp>(), Err(ParseDscpError::OutOfRange { value: 64 }));
/// ```
///
/// # Display
///
/// `{}` prints the short upper-case name, or the decimal value when the
/// code point has no name; `{:#}` prints the long name. Both parse back.
///
/// ```
/// use dscp::Dscp;
///
/// assert_eq!(format!("{}", Dscp::AF41), "AF41");
/// assert_eq!(format!("{:#}", Dscp::AF41), "Assured Forwarding 41");
/// assert_eq!(format!("{:#}", Dscp::LE), "Lower Effort");
/// assert_eq!(format!("{}", Dscp::new(5).unwrap()), "5");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dscp(u8);

impl Dscp {
    /// The largest DSCP value.
    pub const MAX: u8 = 63;
    /// Number of DSCP values.
    pub const COUNT: usize = 64;

    /// Class selector 0, the default PHB (RFC 2474 section 4.1).
    pub const CS0: Dscp = Dscp(0);
    /// Class selector 1 (RFC 2474); QBSS scavenger marking of precedence 001.
    pub const CS1: Dscp = Dscp(8);
    /// Class selector 2 (RFC 2474).
    pub const CS2: Dscp = Dscp(16);
    /// Class selector 3 (RFC 2474).
    pub const CS3: Dscp = Dscp(24);
    /// Class selector 4 (RFC 2474).
    pub const CS4: Dscp = Dscp(32);
    /// Class selector 5 (RFC 2474).
    pub const CS5: Dscp = Dscp(40);
    /// Class selector 6 (RFC 2474), network control.
    pub const CS6: Dscp = Dscp(48);
    /// Class selector 7 (RFC 2474).
    pub const CS7: Dscp = Dscp(56);
    /// Assured forwarding class 1, low drop precedence (RFC 2597).
    pub const AF11: Dscp = Dscp(10);
    /// Assured forwarding class 1, medium drop precedence (RFC 2597).
    pub const AF12: Dscp = Dscp(12);
    /// Assured forwarding class 1, high drop precedence (RFC 2597).
    pub const AF13: Dscp = Dscp(14);
    /// Assured forwarding class 2, low drop precedence (RFC 2597).
    pub const AF21: Dscp = Dscp(18);
    /// Assured forwarding class 2, medium drop precedence (RFC 2597).
    pub const AF22: Dscp = Dscp(20);
    /// Assured forwarding class 2, high drop precedence (RFC 2597).
    pub const AF23: Dscp = Dscp(22);
    /// Assured forwarding class 3, low drop precedence (RFC 2597).
    pub const AF31: Dscp = Dscp(26);
    /// Assured forwarding class 3, medium drop precedence (RFC 2597).
    pub const AF32: Dscp = Dscp(28);
    /// Assured forwarding class 3, high drop precedence (RFC 2597).
    pub const AF33: Dscp = Dscp(30);
    /// Assured forwarding class 4, low drop precedence (RFC 2597).
    pub const AF41: Dscp = Dscp(34);
    /// Assured forwarding class 4, medium drop precedence (RFC 2597).
    pub const AF42: Dscp = Dscp(36);
    /// Assured forwarding class 4, high drop precedence (RFC 2597).
    pub const AF43: Dscp = Dscp(38);
    /// Expedited forwarding, `101110` (RFC 3246).
    pub const EF: Dscp = Dscp(46);
    /// Capacity-admitted traffic, `101100` (RFC 5865).
    pub const VOICE_ADMIT: Dscp = Dscp(44);
    /// Lower effort, `000001` (RFC 8622): the scavenger class.
    pub const LE: Dscp = Dscp(1);
    /// Non-queue-building, `101101` (RFC 9956, pool 3): a shallow-buffered
    /// best-effort queue for smooth, low-rate, application-limited flows.
    pub const NQB: Dscp = Dscp(45);
    /// Default forwarding: the same code point as [`Dscp::CS0`].
    pub const DF: Dscp = Dscp(0);

    /// A DSCP from its 6-bit value; values above 63 are an error.
    ///
    /// ```
    /// # use dscp::{Dscp, ValueError};
    /// assert_eq!(Dscp::new(46), Ok(Dscp::EF));
    /// assert_eq!(Dscp::new(64), Err(ValueError::Dscp { value: 64 }));
    /// ```
    pub const fn new(value: u8) -> Result<Dscp, ValueError> {
        if value <= Self::MAX {
            Ok(Dscp(value))
        } else {
            Err(ValueError::Dscp { value })
        }
    }

    /// The DSCP in the upper six bits of a DS-field / TOS byte.
    pub(crate) const fn from_ds_byte(byte: u8) -> Dscp {
        Dscp(byte >> 2)
    }

    /// The 6-bit value.
    pub const fn value(self) -> u8 {
        self.0
    }

    /// All 64 code points, in increasing order.
    ///
    /// ```
    /// # use dscp::Dscp;
    /// assert_eq!(Dscp::all().count(), 64);
    /// assert_eq!(Dscp::all().filter(|d| d.name().is_some()).count(), 24);
    /// ```
    pub fn all() -> impl DoubleEndedIterator<Item = Dscp> + ExactSizeIterator + Clone {
        (0..=Self::MAX).map(Dscp)
    }

    /// The IP precedence a DSCP reads as on equipment that only looks at
    /// the upper three bits (RFC 2474 section 4.2.2).
    ///
    /// ```
    /// # use dscp::{Dscp, Precedence};
    /// assert_eq!(Dscp::EF.precedence(), Precedence::Critic);
    /// assert_eq!(Dscp::CS1.precedence(), Precedence::Priority);
    /// ```
    pub const fn precedence(self) -> Precedence {
        Precedence::from_low_bits(self.0 >> 3)
    }

    /// The class selector code point `ppp000` of a precedence (RFC 2474
    /// section 4.2.2).
    ///
    /// ```
    /// # use dscp::{Dscp, Precedence};
    /// assert_eq!(Dscp::class_selector(Precedence::Priority), Dscp::CS1);
    /// ```
    pub const fn class_selector(precedence: Precedence) -> Dscp {
        Dscp(precedence.value() << 3)
    }

    /// True for the eight class selectors `xxx000`.
    pub const fn is_class_selector(self) -> bool {
        self.0 & 0b111 == 0
    }

    /// The assured-forwarding code point AF*cd* (RFC 2597): `class` 1 to 4,
    /// `drop` precedence 1 to 3; `None` outside those ranges.
    ///
    /// ```
    /// # use dscp::Dscp;
    /// assert_eq!(Dscp::assured_forwarding(4, 1), Some(Dscp::AF41));
    /// assert_eq!(Dscp::assured_forwarding(1, 4), None);
    /// ```
    pub const fn assured_forwarding(class: u8, drop: u8) -> Option<Dscp> {
        if class >= 1 && class <= 4 && drop >= 1 && drop <= 3 {
            Some(Dscp(class * 8 + drop * 2))
        } else {
            None
        }
    }

    /// For an AF code point, its class (1 to 4) and drop precedence (1 to 3).
    ///
    /// ```
    /// # use dscp::Dscp;
    /// assert_eq!(Dscp::AF32.af_class_and_drop(), Some((3, 2)));
    /// assert_eq!(Dscp::EF.af_class_and_drop(), None);
    /// ```
    pub const fn af_class_and_drop(self) -> Option<(u8, u8)> {
        let class = self.0 >> 3;
        let drop = (self.0 >> 1) & 0b11;
        if class >= 1 && class <= 4 && drop >= 1 && self.0 & 1 == 0 {
            Some((class, drop))
        } else {
            None
        }
    }

    /// The registry pool the code point belongs to (RFC 2474 section 6).
    ///
    /// ```
    /// # use dscp::{Dscp, Pool};
    /// assert_eq!(Dscp::EF.pool(), Pool::Pool1);
    /// assert_eq!(Dscp::LE.pool(), Pool::Pool3);
    /// assert_eq!(Dscp::new(3).unwrap().pool(), Pool::Pool2);
    /// ```
    pub const fn pool(self) -> Pool {
        Pool::of(self.0)
    }

    /// The short IANA name (`"CS1"`, `"AF41"`, `"EF"`, `"VOICE-ADMIT"`,
    /// `"LE"`), or `None` for an unnamed code point.
    pub const fn name(self) -> Option<&'static str> {
        match names::lookup(self.0) {
            Some(entry) => Some(entry.short),
            None => None,
        }
    }

    /// The long name (`"Expedited Forwarding"`, `"Class Selector 1"`), or
    /// `None` for an unnamed code point.
    pub const fn long_name(self) -> Option<&'static str> {
        match names::lookup(self.0) {
            Some(entry) => Some(entry.long),
            None => None,
        }
    }
}

impl TryFrom<u8> for Dscp {
    type Error = ValueError;

    fn try_from(value: u8) -> Result<Self, Self::Error> {
        Dscp::new(value)
    }
}

impl From<Dscp> for u8 {
    fn from(dscp: Dscp) -> u8 {
        dscp.0
    }
}

impl From<Precedence> for Dscp {
    /// The class selector of the precedence.
    fn from(precedence: Precedence) -> Dscp {
        Dscp::class_selector(precedence)
    }
}

impl fmt::Display for Dscp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match names::lookup(self.0) {
            Some(entry) if f.alternate() => f.pad(entry.long),
            Some(entry) => f.pad(entry.short),
            None => fmt::Display::fmt(&self.0, f),
        }
    }
}

const CS_SHAPE: &str = "CS followed by one digit 0-7";
const AF_SHAPE: &str =
    "AF followed by a class digit 1-4 and a drop-precedence digit 1-3, as in AF41";

impl FromStr for Dscp {
    type Err = ParseDscpError;

    fn from_str(s: &str) -> Result<Dscp, ParseDscpError> {
        if s.is_empty() {
            return Err(ParseDscpError::Empty);
        }
        if let Some(offset) = surrounding_whitespace(s) {
            return Err(ParseDscpError::SurroundingWhitespace { offset });
        }
        if s.as_bytes()[0].is_ascii_digit() {
            parse_number(s)
        } else {
            parse_name(s)
        }
    }
}

fn number_error(e: NumberError, radix: Radix) -> ParseDscpError {
    match e {
        NumberError::Overflow => ParseDscpError::Overflow,
        NumberError::InvalidDigit {
            offset,
            found,
            radix,
        } => ParseDscpError::InvalidDigit {
            offset,
            found,
            radix,
        },
        NumberError::MissingDigits => ParseDscpError::MissingDigits { radix },
    }
}

fn in_range(value: u32) -> Result<Dscp, ParseDscpError> {
    match u8::try_from(value) {
        Ok(v) if v <= Dscp::MAX => Ok(Dscp(v)),
        _ => Err(ParseDscpError::OutOfRange { value }),
    }
}

/// `s` is non-empty and starts with an ASCII digit.
fn parse_number(s: &str) -> Result<Dscp, ParseDscpError> {
    let prefixed = |prefix: &str, radix: Radix| {
        strip_prefix_ignore_case(s, prefix).map(|digits| {
            parse_digits(digits, prefix.len(), radix)
                .map_err(|e| number_error(e, radix))
                .and_then(in_range)
        })
    };
    if let Some(result) = prefixed("0x", Radix::Hexadecimal) {
        return result;
    }
    if let Some(result) = prefixed("0b", Radix::Binary) {
        return result;
    }
    if is_binary_of_len(s, 6) {
        return parse_digits(s, 0, Radix::Binary)
            .map_err(|e| number_error(e, Radix::Binary))
            .and_then(in_range);
    }
    let value = parse_digits(s, 0, Radix::Decimal).map_err(|e| number_error(e, Radix::Decimal))?;
    if s.len() > 1 && s.starts_with('0') {
        return Err(ParseDscpError::LeadingZero);
    }
    in_range(value)
}

/// The value of a single ASCII digit string, if it is one.
fn single_digit(s: &str) -> Option<u8> {
    match s.as_bytes() {
        [d] if d.is_ascii_digit() => Some(d - b'0'),
        _ => None,
    }
}

/// `s` is non-empty and does not start with an ASCII digit.
fn parse_name(s: &str) -> Result<Dscp, ParseDscpError> {
    if let Some(value) = names::find(s) {
        return Ok(Dscp(value));
    }
    // Not a known name: explain what is wrong with the CS / AF forms.
    let class_selector = strip_prefix_ignore_case(s, "cs")
        .or_else(|| strip_prefix_ignore_case(s, "class selector "));
    if let Some(rest) = class_selector {
        if rest.bytes().all(|b| b.is_ascii_digit()) {
            return match single_digit(rest) {
                // 0-7 were found by name above.
                Some(class) => Err(ParseDscpError::ClassSelectorOutOfRange { class }),
                None => Err(ParseDscpError::MalformedName { expected: CS_SHAPE }),
            };
        }
    }
    let assured = strip_prefix_ignore_case(s, "af")
        .or_else(|| strip_prefix_ignore_case(s, "assured forwarding "));
    if let Some(rest) = assured {
        if rest.bytes().all(|b| b.is_ascii_digit()) {
            return match rest.as_bytes() {
                [c, d] => {
                    let (class, drop) = (c - b'0', d - b'0');
                    if !(1..=4).contains(&class) {
                        Err(ParseDscpError::AfClassOutOfRange { class })
                    } else {
                        Err(ParseDscpError::AfDropPrecedenceOutOfRange { class, drop })
                    }
                }
                _ => Err(ParseDscpError::MalformedName { expected: AF_SHAPE }),
            };
        }
    }
    Err(ParseDscpError::UnknownName)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_have_their_rfc_bit_patterns() {
        // RFC 3246 section 5: EF is 101110.
        assert_eq!(Dscp::EF.value(), 0b101110);
        // RFC 5865 section 4: VOICE-ADMIT is 101100.
        assert_eq!(Dscp::VOICE_ADMIT.value(), 0b101100);
        // RFC 8622 section 4: LE is 000001.
        assert_eq!(Dscp::LE.value(), 0b000001);
        // RFC 2597 section 6: AF43 is 100110.
        assert_eq!(Dscp::AF43.value(), 0b100110);
    }

    #[test]
    fn af_parts_only_for_af_code_points() {
        let mut af = 0;
        for d in Dscp::all() {
            if let Some((c, p)) = d.af_class_and_drop() {
                assert_eq!(Dscp::assured_forwarding(c, p), Some(d));
                af += 1;
            }
        }
        assert_eq!(af, 12);
    }

    #[test]
    fn class_selectors_round_trip_through_precedence() {
        for d in Dscp::all().filter(|d| d.is_class_selector()) {
            assert_eq!(Dscp::class_selector(d.precedence()), d);
        }
        assert_eq!(Dscp::all().filter(|d| d.is_class_selector()).count(), 8);
    }

    #[test]
    fn name_errors_say_why() {
        use ParseDscpError::*;
        let cases: [(&str, ParseDscpError); 14] = [
            ("cs8", ClassSelectorOutOfRange { class: 8 }),
            ("CS9", ClassSelectorOutOfRange { class: 9 }),
            ("class selector 8", ClassSelectorOutOfRange { class: 8 }),
            ("cs10", MalformedName { expected: CS_SHAPE }),
            ("cs", MalformedName { expected: CS_SHAPE }),
            ("af14", AfDropPrecedenceOutOfRange { class: 1, drop: 4 }),
            ("AF40", AfDropPrecedenceOutOfRange { class: 4, drop: 0 }),
            ("af51", AfClassOutOfRange { class: 5 }),
            ("af01", AfClassOutOfRange { class: 0 }),
            ("af1", MalformedName { expected: AF_SHAPE }),
            ("af111", MalformedName { expected: AF_SHAPE }),
            (
                "assured forwarding 14",
                AfDropPrecedenceOutOfRange { class: 1, drop: 4 },
            ),
            ("efx", UnknownName),
            ("-1", UnknownName),
        ];
        for (text, err) in cases {
            assert_eq!(text.parse::<Dscp>(), Err(err), "{text:?}");
        }
    }

    #[test]
    fn number_errors_say_why() {
        use ParseDscpError::*;
        let cases: [(&str, ParseDscpError); 12] = [
            ("64", OutOfRange { value: 64 }),
            ("255", OutOfRange { value: 255 }),
            ("0x40", OutOfRange { value: 64 }),
            ("0b1000000", OutOfRange { value: 64 }),
            ("99999999999", Overflow),
            (
                "0x",
                MissingDigits {
                    radix: Radix::Hexadecimal,
                },
            ),
            (
                "0b",
                MissingDigits {
                    radix: Radix::Binary,
                },
            ),
            (
                "0x2g",
                InvalidDigit {
                    offset: 3,
                    found: 'g',
                    radix: Radix::Hexadecimal,
                },
            ),
            (
                "4a",
                InvalidDigit {
                    offset: 1,
                    found: 'a',
                    radix: Radix::Decimal,
                },
            ),
            ("046", LeadingZero),
            ("00", LeadingZero),
            ("0010", LeadingZero),
        ];
        for (text, err) in cases {
            assert_eq!(text.parse::<Dscp>(), Err(err), "{text:?}");
        }
    }

    #[test]
    fn six_binary_digits_win_over_decimal() {
        assert_eq!("000001".parse(), Ok(Dscp::LE));
        assert_eq!("111111".parse(), Ok(Dscp(63)));
        assert_eq!("001000".parse(), Ok(Dscp::CS1));
        // Seven binary digits are not binary; as decimal they are too big.
        assert_eq!(
            "1000000".parse::<Dscp>(),
            Err(ParseDscpError::OutOfRange { value: 1_000_000 })
        );
        assert_eq!("0".parse(), Ok(Dscp::CS0));
        assert_eq!("10".parse(), Ok(Dscp::AF11));
    }

    #[test]
    fn whitespace_and_empty() {
        assert_eq!("".parse::<Dscp>(), Err(ParseDscpError::Empty));
        assert_eq!(
            " ef".parse::<Dscp>(),
            Err(ParseDscpError::SurroundingWhitespace { offset: 0 })
        );
        assert_eq!(
            "ef\n".parse::<Dscp>(),
            Err(ParseDscpError::SurroundingWhitespace { offset: 2 })
        );
        assert_eq!(
            "46 ".parse::<Dscp>(),
            Err(ParseDscpError::SurroundingWhitespace { offset: 2 })
        );
    }

    #[test]
    fn display_pads_names_and_numbers() {
        extern crate std;
        use std::format;
        assert_eq!(format!("{:>6}|", Dscp::EF), "    EF|");
        assert_eq!(format!("{:<4}|", Dscp(5)), "5   |");
    }
}
