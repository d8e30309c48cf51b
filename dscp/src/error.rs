//! Error types.
//!
//! Three families, kept apart so that a caller can tell them apart by type:
//!
//! - [`ValueError`]: a raw number does not fit a field (a DSCP above 63, an
//!   ECN codepoint above 3, a precedence above 7).
//! - [`ParseDscpError`], [`ParsePrecedenceError`], [`ParseEcnError`]: text
//!   that is not a code point, with the reason.
//! - [`HeaderError`]: a buffer that is not an IPv4 or IPv6 header this
//!   crate can read or rewrite. [`ReadError`] and [`WriteError`] are other
//!   names of it, kept for existing callers.

use thiserror::Error;

/// A number that does not fit the field it was meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum ValueError {
    /// A DSCP is 6 bits: 0 to 63.
    #[error("DSCP value {value} is out of range: a DSCP is 6 bits, 0 to 63")]
    Dscp {
        /// The rejected value.
        value: u8,
    },
    /// An ECN codepoint is 2 bits: 0 to 3.
    #[error("ECN value {value} is out of range: an ECN codepoint is 2 bits, 0 to 3")]
    Ecn {
        /// The rejected value.
        value: u8,
    },
    /// An IP precedence is 3 bits: 0 to 7.
    #[error("precedence value {value} is out of range: a precedence is 3 bits, 0 to 7")]
    Precedence {
        /// The rejected value.
        value: u8,
    },
}

/// Why a string is not a DSCP.
///
/// Accepted forms are described on [`Dscp`'s `FromStr`](crate::Dscp#parsing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum ParseDscpError {
    /// The string is empty.
    #[error("empty string: expected a DSCP name (CS0-CS7, AF11-AF43, EF, LE, NQB, VOICE-ADMIT, BE), a decimal number 0-63, 0x hex or six binary digits")]
    Empty,
    /// The string starts or ends with whitespace; nothing is trimmed silently.
    #[error("whitespace at byte {offset}: a DSCP must not be surrounded by spaces")]
    SurroundingWhitespace {
        /// Byte offset of the offending whitespace character.
        offset: usize,
    },
    /// `CS8`, `CS9`: there are eight class selectors, CS0 to CS7.
    #[error("class selector CS{class} does not exist: class selectors are CS0 to CS7")]
    ClassSelectorOutOfRange {
        /// The class digit that was given.
        class: u8,
    },
    /// `AF51`, `AF01`: assured forwarding classes are 1 to 4 (RFC 2597).
    #[error("assured forwarding class {class} does not exist: AF classes are 1 to 4 (RFC 2597)")]
    AfClassOutOfRange {
        /// The class digit that was given.
        class: u8,
    },
    /// `AF14`, `AF20`: drop precedences are 1 to 3 (RFC 2597).
    #[error("AF{class}{drop} does not exist: drop precedence {drop} is outside 1 to 3 (RFC 2597)")]
    AfDropPrecedenceOutOfRange {
        /// The class digit that was given (valid).
        class: u8,
        /// The drop-precedence digit that was given.
        drop: u8,
    },
    /// `CS` or `AF` followed by the wrong number of digits (`CS10`, `AF1`).
    #[error("malformed name: expected {expected}")]
    MalformedName {
        /// The shape the name should have had.
        expected: &'static str,
    },
    /// A number above 63.
    #[error("value {value} is out of range: a DSCP is 6 bits, 0 to 63")]
    OutOfRange {
        /// The number that was given.
        value: u32,
    },
    /// A number too large to even hold in 32 bits.
    #[error("number too large: a DSCP is 6 bits, 0 to 63")]
    Overflow,
    /// A character that is not a digit of the number's base.
    #[error("invalid {radix} digit {found:?} at byte {offset}")]
    InvalidDigit {
        /// Byte offset of the character.
        offset: usize,
        /// The character.
        found: char,
        /// The base being parsed.
        radix: Radix,
    },
    /// `0x` or `0b` with nothing after it.
    #[error("no digits after the {radix} prefix")]
    MissingDigits {
        /// The base announced by the prefix.
        radix: Radix,
    },
    /// A decimal number with a leading zero that is not six binary digits
    /// (`046`, `0101`): refused as ambiguous.
    #[error("leading zero in a decimal number: write decimal without leading zeros, or exactly six binary digits")]
    LeadingZero,
    /// A word that is not a DSCP name.
    #[error("unknown DSCP name: expected CS0-CS7, AF11-AF43, EF, LE, NQB, VOICE-ADMIT, BE/DF/DEFAULT or a long name such as \"Expedited Forwarding\"")]
    UnknownName,
}

/// The base of a number being parsed; used in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Radix {
    /// Base 2.
    Binary,
    /// Base 10.
    Decimal,
    /// Base 16.
    Hexadecimal,
}

impl core::fmt::Display for Radix {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Radix::Binary => "binary",
            Radix::Decimal => "decimal",
            Radix::Hexadecimal => "hexadecimal",
        })
    }
}

/// Why a string is not an IP precedence.
///
/// Accepted forms are described on
/// [`Precedence`'s `FromStr`](crate::Precedence#parsing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum ParsePrecedenceError {
    /// The string is empty.
    #[error("empty string: expected a precedence name (routine .. network-control), a digit 0-7 or three binary digits")]
    Empty,
    /// The string starts or ends with whitespace.
    #[error("whitespace at byte {offset}: a precedence must not be surrounded by spaces")]
    SurroundingWhitespace {
        /// Byte offset of the offending whitespace character.
        offset: usize,
    },
    /// A number above 7.
    #[error("value {value} is out of range: a precedence is 3 bits, 0 to 7")]
    OutOfRange {
        /// The number that was given.
        value: u32,
    },
    /// A number too large to even hold in 32 bits.
    #[error("number too large: a precedence is 3 bits, 0 to 7")]
    Overflow,
    /// A character that is not a digit.
    #[error("invalid {radix} digit {found:?} at byte {offset}")]
    InvalidDigit {
        /// Byte offset of the character.
        offset: usize,
        /// The character.
        found: char,
        /// The base being parsed.
        radix: Radix,
    },
    /// A decimal number with a leading zero that is not three binary digits.
    #[error("leading zero in a decimal number: write a digit 0-7, or exactly three binary digits")]
    LeadingZero,
    /// A word that is not a precedence name.
    #[error("unknown precedence name: expected routine, priority, immediate, flash, flash-override, critic/ecp, internetwork-control or network-control")]
    UnknownName,
}

/// Why a string is not an ECN codepoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum ParseEcnError {
    /// The string is empty.
    #[error(
        "empty string: expected Not-ECT, ECT(1), ECT(0), CE, a digit 0-3 or two binary digits"
    )]
    Empty,
    /// A digit above 3.
    #[error("value {value} is out of range: an ECN codepoint is 2 bits, 0 to 3")]
    OutOfRange {
        /// The digit that was given.
        value: u8,
    },
    /// Anything else.
    #[error("unknown ECN codepoint: expected Not-ECT, ECT(1), ECT(0), CE, a digit 0-3 or two binary digits")]
    UnknownName,
}

/// Which IP header a [`HeaderError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpVersion {
    /// IPv4 (RFC 791).
    V4,
    /// IPv6 (RFC 8200).
    V6,
}

impl IpVersion {
    /// The value of the 4-bit version field.
    pub const fn number(self) -> u8 {
        match self {
            IpVersion::V4 => 4,
            IpVersion::V6 => 6,
        }
    }
}

impl core::fmt::Display for IpVersion {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "IPv{}", self.number())
    }
}

/// A buffer that is not an IPv4 or IPv6 header this crate can read or
/// rewrite. Readers and writers share it: a writer that fails has written
/// nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum HeaderError {
    /// The buffer is shorter than the header.
    #[error("not a whole {header} header: buffer of {len} bytes, the header needs {needed}")]
    TooShort {
        /// The header being read or rewritten.
        header: IpVersion,
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        len: usize,
    },
    /// The version nibble (byte 0, high 4 bits) is not the expected one.
    #[error("not an {expected} header: version field (byte 0, high nibble) is {found}")]
    WrongVersion {
        /// The header that was expected.
        expected: IpVersion,
        /// The version field found.
        found: u8,
    },
    /// IPv4 IHL (byte 0, low 4 bits) below 5: the header would be shorter
    /// than its fixed 20 bytes.
    #[error("not a valid IPv4 header: IHL (byte 0, low nibble) is {ihl} (header of {} bytes), the minimum is 5 (20 bytes)", *ihl as usize * 4)]
    BadIhl {
        /// The IHL field, in 32-bit words.
        ihl: u8,
    },
}

/// The error of the header readers: the same type as [`HeaderError`].
pub type ReadError = HeaderError;

/// The error of the header writers: the same type as [`HeaderError`]
/// (nothing was written).
pub type WriteError = HeaderError;
