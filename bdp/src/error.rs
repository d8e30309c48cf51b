//! Error types: one for reading quantities from text, one for calculations.
//!
//! Both are small `Copy` enums that say what was wrong and, for text, at which
//! byte offset of the input.

/// The kind of quantity a parser was reading, named in [`ParseError`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantity {
    /// A rate in bits per second ([`crate::BitsPerSecond`]).
    Rate,
    /// A size in bytes ([`crate::Bytes`]).
    Size,
    /// A duration ([`core::time::Duration`]).
    Duration,
}

impl Quantity {
    /// The base unit the quantity is counted in: values must be whole multiples of it.
    pub const fn base_unit(self) -> &'static str {
        match self {
            Quantity::Rate => "bit/s",
            Quantity::Size => "byte",
            Quantity::Duration => "nanosecond",
        }
    }
}

impl core::fmt::Display for Quantity {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Quantity::Rate => "rate",
            Quantity::Size => "size",
            Quantity::Duration => "duration",
        })
    }
}

/// Why a rate, size or duration string was refused.
///
/// Offsets (`at`) are byte offsets into the string given to the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ParseError {
    /// The input was empty or only whitespace.
    #[error("empty {kind}")]
    Empty {
        /// What was being parsed.
        kind: Quantity,
    },
    /// The input starts with a minus sign; no quantity here can be negative.
    #[error("negative {kind} at byte {at}: a {kind} cannot be negative")]
    Negative {
        /// What was being parsed.
        kind: Quantity,
        /// Offset of the minus sign.
        at: usize,
    },
    /// A digit was expected (the number is missing or malformed).
    #[error("{kind}: expected a decimal number at byte {at}")]
    ExpectedNumber {
        /// What was being parsed.
        kind: Quantity,
        /// Offset where the number should be.
        at: usize,
    },
    /// The text after the number is not a unit this quantity accepts.
    #[error("{kind}: unknown unit at byte {at}")]
    UnknownUnit {
        /// What was being parsed.
        kind: Quantity,
        /// Offset of the unit.
        at: usize,
    },
    /// A duration was given without a unit (`0.55` instead of `0.55s`).
    #[error("duration needs a unit (s, ms, us, ns, min) after the number at byte {at}")]
    MissingUnit {
        /// Offset just after the number.
        at: usize,
    },
    /// A size was written with a bare prefix such as `64K`, which could mean 64,000 or 65,536.
    #[error(
        "size: ambiguous unit at byte {at}: write KB for powers of 1000 or KiB for powers of 1024"
    )]
    AmbiguousPrefix {
        /// Offset of the prefix.
        at: usize,
    },
    /// A size was written in bits (`b`, `bit`): sizes are bytes.
    #[error("size: unit at byte {at} is in bits; sizes are bytes (B, KB, KiB, ...)")]
    BitsForBytes {
        /// Offset of the unit.
        at: usize,
    },
    /// A rate was written in bytes per second (`MB/s`, `MBps`): rates are bits per second.
    #[error("rate: unit at byte {at} is bytes per second; rates are bits per second (bit/s, Mbps, ...), 1 byte/s = 8 bit/s")]
    BytesForBits {
        /// Offset of the unit.
        at: usize,
    },
    /// The value is not a whole number of the quantity's base unit (bit/s, byte, nanosecond).
    #[error("{kind} is not a whole number of {unit}s", unit = kind.base_unit())]
    Inexact {
        /// What was being parsed.
        kind: Quantity,
    },
    /// The value does not fit the quantity's integer type.
    #[error("{kind} is too large")]
    Overflow {
        /// What was being parsed.
        kind: Quantity,
    },
}

/// Why a calculation could not give a meaningful answer.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum CalcError {
    /// A round-trip time of zero where a rate is divided by it.
    #[error("round-trip time must be greater than zero")]
    ZeroRtt,
    /// A rate of zero where it divides something.
    #[error("rate must be greater than zero")]
    ZeroRate,
    /// A window of zero where it divides something.
    #[error("window must be greater than zero")]
    ZeroWindow,
    /// A segment size of zero.
    #[error("segment size (MSS) must be greater than zero")]
    ZeroMss,
    /// A window larger than any window-scale shift can express (RFC 7323: 65535 << 14).
    #[error("window of {window} bytes exceeds RFC 7323's limit of {max} bytes (65535 << 14)")]
    WindowTooLarge {
        /// The window asked for.
        window: u64,
        /// The largest window TCP can advertise.
        max: u64,
    },
    /// A window-scale shift above RFC 7323's maximum of 14.
    #[error("window-scale shift {shift} exceeds RFC 7323's maximum of 14")]
    ShiftTooLarge {
        /// The shift asked for.
        shift: u8,
    },
    /// A loss probability outside `(0, 1]` or not a number.
    #[error("loss probability {p} is outside (0, 1]")]
    LossOutOfRange {
        /// The probability given.
        p: f64,
    },
    /// A model parameter that is not a finite number in its range.
    #[error("parameter {name} must be a finite number greater than zero")]
    InvalidParameter {
        /// Name of the parameter.
        name: &'static str,
    },
    /// An intermediate or the result does not fit its integer type.
    #[error("{what} overflows")]
    Overflow {
        /// The quantity that overflowed.
        what: &'static str,
    },
    /// A transfer time was asked with neither a rate nor a window to limit it.
    #[error("neither a rate nor a window limits the transfer")]
    NoLimit,
    /// RFC 6349 TCP efficiency with more bytes retransmitted than transmitted.
    #[error("{retransmitted} retransmitted bytes exceed the {transmitted} transmitted bytes")]
    RetransmittedExceedsTransmitted {
        /// Transmitted bytes (originals and retransmissions).
        transmitted: u64,
        /// Retransmitted bytes.
        retransmitted: u64,
    },
    /// A duration of zero where it divides something.
    #[error("{what} must be greater than zero")]
    ZeroDuration {
        /// Which duration.
        what: &'static str,
    },
    /// A size of zero where it divides something.
    #[error("{what} must be greater than zero")]
    ZeroSize {
        /// Which size.
        what: &'static str,
    },
    /// A Linux setting that would have to exceed the largest value the kernel
    /// holds (socket buffers are C `int`s: at most 2,147,483,647 bytes).
    #[error("{setting} would need {needed} bytes, above the largest the kernel accepts ({max})")]
    SettingTooLarge {
        /// The setting (sysctl name).
        setting: &'static str,
        /// What it would need, saturated at `u64::MAX`.
        needed: u64,
        /// The largest value the kernel accepts.
        max: u64,
    },
    /// A packet longer than the link's MTU.
    #[error("packet of {len} bytes exceeds the MTU of {mtu} bytes")]
    PacketTooLarge {
        /// Packet length.
        len: u64,
        /// The MTU.
        mtu: u64,
    },
    /// An MTU too small to hold the TCP/IP headers and at least one byte.
    #[error("MTU of {mtu} bytes leaves no room for data after {headers} header bytes")]
    MtuTooSmall {
        /// The MTU.
        mtu: u64,
        /// TCP/IP header bytes per packet.
        headers: u64,
    },
}
