//! [`Bytes`]: a size in bytes (windows, buffers, transfers, segments).
//!
//! Text form: a decimal number, optional spaces, then an optional unit:
//! `B`, `byte`, `bytes`; SI `KB`/`kB`, `MB`, `GB`, `TB` (powers of 1000);
//! binary `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024). `65535`, `64KiB`,
//! `1MiB`, `1.25MB` and `4KB` all parse, exactly: `1.25MB` is 1,250,000 and
//! `1.5KiB` is 1,536. A bare prefix (`64K`) is refused as ambiguous, bit
//! units (`Kb`, `Mbit`) as bits, and a fraction of a byte (`1.0001KB`) as
//! inexact.
//!
//! Display is exact: the largest binary unit the value is a whole multiple
//! of (`64 KiB`, `8 MiB`), else plain bytes (`1250000 B`). The adaptors
//! [`Bytes::si`] and [`Bytes::binary`] print in the largest SI or binary
//! unit, exactly or rounded with a precision (`{:.2}`).

use crate::error::{ParseError, Quantity};
use crate::text::{fmt_largest, pad, scale, split_number, split_prefix, write_ratio, Buf};
use core::fmt;
use core::str::FromStr;

/// A size in bytes.
///
/// ```
/// use bdp::Bytes;
/// assert_eq!("64KiB".parse::<Bytes>()?, Bytes::new(65_536));
/// assert_eq!("1.25MB".parse::<Bytes>()?, Bytes::new(1_250_000));
/// assert_eq!(Bytes::new(8 << 20).to_string(), "8 MiB");
/// assert_eq!(format!("{:.2}", Bytes::new(1_250_000).binary()), "1.19 MiB");
/// # Ok::<(), bdp::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(u64);

/// One KiB.
const KIB: u64 = 1024;

impl Bytes {
    /// Zero bytes.
    pub const ZERO: Bytes = Bytes(0);

    /// A size of `n` bytes.
    pub const fn new(n: u64) -> Self {
        Bytes(n)
    }

    /// `n` KiB (1024 bytes each), `None` on overflow.
    pub const fn from_kib(n: u64) -> Option<Self> {
        match n.checked_mul(KIB) {
            Some(v) => Some(Bytes(v)),
            None => None,
        }
    }

    /// `n` MiB (1024 KiB each), `None` on overflow.
    pub const fn from_mib(n: u64) -> Option<Self> {
        match n.checked_mul(KIB * KIB) {
            Some(v) => Some(Bytes(v)),
            None => None,
        }
    }

    /// The size in bytes.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The size in bits (never overflows: u64 bytes * 8 fits u128).
    pub const fn bits(self) -> u128 {
        self.0 as u128 * 8
    }

    /// True for zero bytes.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Displays in the largest SI unit (powers of 1000): `1.25 MB`.
    pub const fn si(self) -> SiBytes {
        SiBytes(self)
    }

    /// Displays in the largest binary unit (powers of 1024): `1.1920928955078125 MiB`,
    /// or `1.19 MiB` with `{:.2}`.
    pub const fn binary(self) -> BinaryBytes {
        BinaryBytes(self)
    }
}

impl From<Bytes> for u64 {
    fn from(b: Bytes) -> u64 {
        b.0
    }
}

const BYTE_UNITS: [&str; 5] = ["B", "byte", "bytes", "Byte", "Bytes"];
const BIT_UNITS: [&str; 5] = ["b", "bit", "bits", "Bit", "Bits"];

impl FromStr for Bytes {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, ParseError> {
        const KIND: Quantity = Quantity::Size;
        let (number, unit, at) = split_number(s, KIND)?;
        let (factor, rest, prefix) = split_prefix(unit);
        if BIT_UNITS.contains(&rest) {
            return Err(ParseError::BitsForBytes { at });
        }
        if prefix.is_some() && rest.is_empty() {
            return Err(ParseError::AmbiguousPrefix { at });
        }
        if !(rest.is_empty() || BYTE_UNITS.contains(&rest)) {
            return Err(ParseError::UnknownUnit { kind: KIND, at });
        }
        let value = scale(number, factor, KIND)?;
        u64::try_from(value)
            .map(Bytes)
            .map_err(|_| ParseError::Overflow { kind: KIND })
    }
}

const BINARY_UNITS: [(u128, &str); 5] = [
    (1 << 40, "TiB"),
    (1 << 30, "GiB"),
    (1 << 20, "MiB"),
    (1 << 10, "KiB"),
    (1, "B"),
];

const SI_UNITS: [(u128, &str); 5] = [
    (1_000_000_000_000, "TB"),
    (1_000_000_000, "GB"),
    (1_000_000, "MB"),
    (1_000, "KB"),
    (1, "B"),
];

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = u128::from(self.0);
        let (den, unit) = if v == 0 {
            (1, "B")
        } else {
            BINARY_UNITS
                .iter()
                .copied()
                .find(|&(d, _)| v % d == 0)
                .unwrap_or((1, "B"))
        };
        let mut buf = Buf::new();
        write_ratio(&mut buf, v, den, f.precision(), unit)?;
        pad(f, buf.as_str())
    }
}

/// [`Bytes`] displayed in the largest SI unit it reaches (see [`Bytes::si`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiBytes(pub Bytes);

impl fmt::Display for SiBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_largest(self.0 .0, &SI_UNITS, f)
    }
}

/// [`Bytes`] displayed in the largest binary unit it reaches (see [`Bytes::binary`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinaryBytes(pub Bytes);

impl fmt::Display for BinaryBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_largest(self.0 .0, &BINARY_UNITS, f)
    }
}
