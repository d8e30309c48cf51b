//! Durations: [`core::time::Duration`] read from and written as text.
//!
//! Text form: a decimal number, optional spaces, and a unit, which is
//! required: `s` (`sec`, `secs`), `ms` (`msec`), `us` (`µs`, `μs`, `usec`),
//! `ns`, `min`. `10ms`, `0.55s`, `550ms` and `25us` parse exactly; a value
//! that is not a whole number of nanoseconds (`1.5ns`) is refused as inexact.
//!
//! [`DurationDisplay`] writes a duration exactly in the largest unit it
//! reaches (`550 ms`, `4.4 s`), so that reading it back gives the same
//! duration; a precision (`{:.3}`) rounds instead.

use crate::error::{ParseError, Quantity};
use crate::text::{pad, scale, split_number, write_ratio, Buf};
use core::fmt;
use core::time::Duration;

/// Nanoseconds in a second.
pub(crate) const NANOS_PER_SEC: u128 = 1_000_000_000;

const UNITS: [(&str, u128); 13] = [
    ("s", NANOS_PER_SEC),
    ("sec", NANOS_PER_SEC),
    ("secs", NANOS_PER_SEC),
    ("ms", 1_000_000),
    ("msec", 1_000_000),
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("usec", 1_000),
    ("ns", 1),
    ("nsec", 1),
    ("min", 60 * NANOS_PER_SEC),
    ("mins", 60 * NANOS_PER_SEC),
];

/// Reads a duration such as `10ms`, `0.55s` or `25us`.
///
/// ```
/// use core::time::Duration;
/// assert_eq!(bdp::parse_duration("0.55s")?, Duration::from_millis(550));
/// assert_eq!(bdp::parse_duration("25 us")?, Duration::from_micros(25));
/// assert!(bdp::parse_duration("1.5ns").is_err());
/// # Ok::<(), bdp::ParseError>(())
/// ```
pub fn parse_duration(s: &str) -> Result<Duration, ParseError> {
    const KIND: Quantity = Quantity::Duration;
    let (number, unit, at) = split_number(s, KIND)?;
    if unit.is_empty() {
        return Err(ParseError::MissingUnit { at });
    }
    let factor = UNITS
        .iter()
        .find(|&&(name, _)| name == unit)
        .map(|&(_, f)| f)
        .ok_or(ParseError::UnknownUnit { kind: KIND, at })?;
    let nanos = scale(number, factor, KIND)?;
    duration_from_nanos(nanos).ok_or(ParseError::Overflow { kind: KIND })
}

/// A [`Duration`] of `nanos` nanoseconds, `None` if it exceeds `Duration::MAX`.
pub(crate) fn duration_from_nanos(nanos: u128) -> Option<Duration> {
    let secs = u64::try_from(nanos / NANOS_PER_SEC).ok()?;
    // The remainder is below 10^9 and fits u32.
    let sub = (nanos % NANOS_PER_SEC) as u32;
    Some(Duration::new(secs, sub))
}

/// Writes a [`Duration`] exactly in the largest of s, ms, us, ns that it reaches.
///
/// ```
/// use core::time::Duration;
/// use bdp::DurationDisplay;
/// assert_eq!(DurationDisplay(Duration::from_millis(550)).to_string(), "550 ms");
/// assert_eq!(DurationDisplay(Duration::from_millis(4400)).to_string(), "4.4 s");
/// assert_eq!(format!("{:.2}", DurationDisplay(Duration::from_nanos(1_234_567))), "1.23 ms");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationDisplay(pub Duration);

impl fmt::Display for DurationDisplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.0.as_nanos();
        let (den, unit) = if nanos >= NANOS_PER_SEC {
            (NANOS_PER_SEC, "s")
        } else if nanos >= 1_000_000 {
            (1_000_000, "ms")
        } else if nanos >= 1_000 {
            (1_000, "us")
        } else {
            (1, "ns")
        };
        let mut buf = Buf::new();
        write_ratio(&mut buf, nanos, den, f.precision(), unit)?;
        pad(f, buf.as_str())
    }
}
