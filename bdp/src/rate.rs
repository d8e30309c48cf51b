//! [`BitsPerSecond`]: a rate in bits per second.
//!
//! Text form: a decimal number, optional spaces, then an optional SI prefix
//! (`k`, `M`, `G`, `T`, any case, powers of 1000; `Ki`, `Mi`, `Gi`, `Ti`,
//! powers of 1024) and an optional bit unit (`bps`, `bit/s`, `bits/s`, `b/s`,
//! `bit`). `1Gbps`, `155.52Mbit/s`, `1.544Mbps`, `10G`, `100kbit/s` and
//! `1000000` all parse. Byte-based units (`MB/s`, `MBps`, `byte/s`) are refused
//! with [`ParseError::BytesForBits`]: rates here are bits, always.
//!
//! Display is exact in the largest SI unit the value reaches, so that
//! `parse(display(x)) == x`: `155520000` shows as `155.52 Mbit/s`. A precision
//! (`{:.2}`) rounds for people instead.

use crate::error::{ParseError, Quantity};
use crate::text::{fmt_largest, scale, split_number, split_prefix};
use core::fmt;
use core::str::FromStr;

/// A rate in bits per second.
///
/// Distinct from [`crate::Bytes`] so that a window can never be passed where
/// a rate is meant.
///
/// ```
/// use bdp::BitsPerSecond;
/// let oc3: BitsPerSecond = "155.52Mbit/s".parse()?;
/// assert_eq!(oc3.get(), 155_520_000);
/// assert_eq!(oc3.to_string(), "155.52 Mbit/s");
/// assert_eq!(format!("{:.1}", oc3), "155.5 Mbit/s");
/// # Ok::<(), bdp::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BitsPerSecond(u64);

/// Short name for [`BitsPerSecond`].
pub type Rate = BitsPerSecond;

impl BitsPerSecond {
    /// Zero bits per second.
    pub const ZERO: BitsPerSecond = BitsPerSecond(0);

    /// A rate of `bits` bits per second.
    pub const fn new(bits: u64) -> Self {
        BitsPerSecond(bits)
    }

    /// `kbit` thousands of bits per second, `None` on overflow.
    pub const fn from_kbps(kbit: u64) -> Option<Self> {
        match kbit.checked_mul(1_000) {
            Some(v) => Some(BitsPerSecond(v)),
            None => None,
        }
    }

    /// `mbit` millions of bits per second, `None` on overflow.
    pub const fn from_mbps(mbit: u64) -> Option<Self> {
        match mbit.checked_mul(1_000_000) {
            Some(v) => Some(BitsPerSecond(v)),
            None => None,
        }
    }

    /// `gbit` billions of bits per second, `None` on overflow.
    pub const fn from_gbps(gbit: u64) -> Option<Self> {
        match gbit.checked_mul(1_000_000_000) {
            Some(v) => Some(BitsPerSecond(v)),
            None => None,
        }
    }

    /// The rate in bits per second.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The rate as a float, for models that need one.
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }

    /// True for zero bits per second.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

/// Bit-rate unit words accepted after the prefix.
const BIT_UNITS: [&str; 7] = ["", "bps", "bit/s", "bits/s", "b/s", "bit", "bits"];
/// Byte-rate unit words, refused with a clear error.
const BYTE_UNITS: [&str; 6] = ["Bps", "B/s", "byte/s", "bytes/s", "Byte/s", "Bytes/s"];

impl FromStr for BitsPerSecond {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, ParseError> {
        const KIND: Quantity = Quantity::Rate;
        let (number, unit, at) = split_number(s, KIND)?;
        let (factor, rest, prefix) = split_prefix(unit);
        if prefix == Some(true) && rest.is_empty() {
            return Err(ParseError::UnknownUnit { kind: KIND, at });
        }
        if BYTE_UNITS.contains(&rest) {
            return Err(ParseError::BytesForBits { at });
        }
        if !BIT_UNITS.contains(&rest) {
            return Err(ParseError::UnknownUnit { kind: KIND, at });
        }
        let value = scale(number, factor, KIND)?;
        u64::try_from(value)
            .map(BitsPerSecond)
            .map_err(|_| ParseError::Overflow { kind: KIND })
    }
}

impl fmt::Display for BitsPerSecond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u128, &str); 5] = [
            (1_000_000_000_000, "Tbit/s"),
            (1_000_000_000, "Gbit/s"),
            (1_000_000, "Mbit/s"),
            (1_000, "kbit/s"),
            (1, "bit/s"),
        ];
        fmt_largest(self.0, &UNITS, f)
    }
}

impl From<BitsPerSecond> for u64 {
    fn from(r: BitsPerSecond) -> u64 {
        r.0
    }
}
