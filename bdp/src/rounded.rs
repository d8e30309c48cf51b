//! Measured quantities to three significant digits: [`Rounded`].
//!
//! A figure read off a capture (a throughput, a ceiling, an RTT) is known
//! to a few percent at best; printing it to the bit or the nanosecond
//! claims more than it knows, and printing it with a fixed number of
//! decimals gives `9.0 bit/s` and `4.4 Gbit/s` alike. [`Rounded`] prints
//! three significant digits, rounded half up, trailing zeros dropped, in
//! the largest unit that keeps the number below 1000 *after* rounding
//! (999,999 bit/s is `1 Mbit/s`, never `1000 kbit/s`). The base unit
//! (bit/s, ns) prints whole numbers; above 999 of the largest unit the
//! number is printed whole. All arithmetic is on integers.
//!
//! ```
//! use bdp::{BitsPerSecond, Rounded};
//! use core::time::Duration;
//! // The campus incident: 65,535 bytes per 10 ms.
//! assert_eq!(Rounded(BitsPerSecond::new(52_428_000)).to_string(), "52.4 Mbit/s");
//! assert_eq!(Rounded(BitsPerSecond::new(999_999)).to_string(), "1 Mbit/s");
//! assert_eq!(Rounded(Duration::from_micros(126_771)).to_string(), "127 ms");
//! ```

use core::fmt;
use core::fmt::Write as _;
use core::time::Duration;

use crate::text::{pad, Buf};
use crate::BitsPerSecond;

/// A quantity displayed to three significant digits (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounded<T>(pub T);

/// Units of rates, largest first.
const RATE_UNITS: [(u128, &str); 5] = [
    (1_000_000_000_000, "Tbit/s"),
    (1_000_000_000, "Gbit/s"),
    (1_000_000, "Mbit/s"),
    (1_000, "kbit/s"),
    (1, "bit/s"),
];

/// Units of time in nanoseconds, largest first.
const TIME_UNITS: [(u128, &str); 4] = [
    (1_000_000_000, "s"),
    (1_000_000, "ms"),
    (1_000, "us"),
    (1, "ns"),
];

/// `v / den` rounded half up to three significant digits: the digits as
/// an integer and the number of them after the decimal point (2, 1 or 0);
/// `None` when the rounded value is 1000 or more in this unit.
fn three_digits(v: u128, den: u128) -> Option<(u128, u32)> {
    for decimals in [2u32, 1, 0] {
        let scale = 10u128.pow(decimals);
        let digits = v.checked_mul(scale)?.checked_add(den / 2)? / den;
        if digits < 1000 {
            return Some((digits, decimals));
        }
    }
    None
}

/// Writes `v` base units in the largest of `units` that keeps it below
/// 1000 after rounding.
fn write_rounded(v: u128, units: &[(u128, &str)], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let start = units
        .iter()
        .position(|&(d, _)| v >= d)
        .unwrap_or(units.len() - 1);
    let mut buf = Buf::new();
    // From the unit the value reaches; one larger when rounding carries it
    // to 1000.
    for i in (0..=start).rev() {
        let (den, unit) = units[i];
        match three_digits(v, den) {
            Some((digits, decimals)) => {
                let scale = 10u128.pow(decimals);
                let (int, mut frac, mut places) = (digits / scale, digits % scale, decimals);
                while places > 0 && frac % 10 == 0 {
                    frac /= 10;
                    places -= 1;
                }
                if places == 0 {
                    write!(buf, "{int} {unit}")?;
                } else {
                    write!(buf, "{int}.{frac:0width$} {unit}", width = places as usize)?;
                }
                return pad(f, buf.as_str());
            }
            None if i == 0 => {
                // Beyond the largest unit's 999: the whole number of it.
                let whole = v / den + u128::from(v % den >= den.div_ceil(2));
                write!(buf, "{whole} {unit}")?;
                return pad(f, buf.as_str());
            }
            None => {}
        }
    }
    Ok(())
}

impl fmt::Display for Rounded<BitsPerSecond> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rounded(u128::from(self.0.get()), &RATE_UNITS, f)
    }
}

impl fmt::Display for Rounded<Duration> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rounded(self.0.as_nanos(), &TIME_UNITS, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::string::ToString;

    fn rate(bps: u64) -> std::string::String {
        Rounded(BitsPerSecond::new(bps)).to_string()
    }

    fn time(d: Duration) -> std::string::String {
        Rounded(d).to_string()
    }

    #[test]
    fn rates_keep_three_significant_digits() {
        for (bps, want) in [
            (0, "0 bit/s"),
            (9, "9 bit/s"),
            (191, "191 bit/s"),
            (999, "999 bit/s"),
            (1_000, "1 kbit/s"),
            (1_234, "1.23 kbit/s"),
            (57_344, "57.3 kbit/s"),
            (57_000, "57 kbit/s"),
            (999_499, "999 kbit/s"),
            (999_500, "1 Mbit/s"),
            (999_999, "1 Mbit/s"),
            // The campus incident (DESIGN.md): 65,535 bytes per 10 ms.
            (52_428_000, "52.4 Mbit/s"),
            (553_500_000, "554 Mbit/s"),
            // OC-3 ATM goodput for 1500-byte packets (DESIGN.md, QBSS).
            (132_450_000, "132 Mbit/s"),
            (1_000_000_000, "1 Gbit/s"),
            (1_250_000_000, "1.25 Gbit/s"),
            (4_434_000_000, "4.43 Gbit/s"),
            (999_999_999_999, "1 Tbit/s"),
            (1_234_567_000_000_000, "1235 Tbit/s"),
            (u64::MAX, "18446744 Tbit/s"),
        ] {
            assert_eq!(rate(bps), want, "{bps} bit/s");
        }
    }

    #[test]
    fn times_keep_three_significant_digits() {
        for (d, want) in [
            (Duration::ZERO, "0 ns"),
            (Duration::from_nanos(67_123), "67.1 us"),
            (Duration::from_micros(10_191), "10.2 ms"),
            (Duration::from_millis(10), "10 ms"),
            (Duration::from_micros(126_771), "127 ms"),
            (Duration::from_micros(999_600), "1 s"),
            // The satellite incident (DESIGN.md): RTT 0.55 s.
            (Duration::from_millis(550), "550 ms"),
            (Duration::from_millis(1_550), "1.55 s"),
            (Duration::from_secs(3600), "3600 s"),
        ] {
            assert_eq!(time(d), want, "{d:?}");
        }
    }

    #[test]
    fn width_and_alignment_pad_the_whole_text() {
        let r = Rounded(BitsPerSecond::new(52_428_000));
        assert_eq!(std::format!("[{r:>14}]"), "[   52.4 Mbit/s]");
    }
}
