//! Packet timestamps with nanosecond precision, whatever the file's resolution.

use core::fmt;

/// Nanoseconds per second.
pub const NANOS_PER_SEC: u32 = 1_000_000_000;

/// A capture timestamp: seconds since the Unix epoch plus nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01 00:00:00 UTC (negative before).
    pub secs: i64,
    /// Nanoseconds within the second, always below [`NANOS_PER_SEC`].
    pub nanos: u32,
}

impl Timestamp {
    /// Now, by the system clock (the epoch if the clock is before it;
    /// the largest second if past it): the time of live events that no
    /// record carries.
    pub fn now() -> Self {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp {
            secs: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
            nanos: since.subsec_nanos(),
        }
    }

    /// A timestamp from seconds and a fraction counted in `units_per_sec` units.
    ///
    /// Returns `None` when `units_per_sec` is zero or `frac` is not below it.
    pub fn from_fraction(secs: i64, frac: u64, units_per_sec: u64) -> Option<Self> {
        if units_per_sec == 0 || frac >= units_per_sec {
            return None;
        }
        let nanos = (u128::from(frac) * u128::from(NANOS_PER_SEC)) / u128::from(units_per_sec);
        Some(Timestamp {
            secs,
            nanos: u32::try_from(nanos).ok()?,
        })
    }

    /// A timestamp from a 64-bit count of `units_per_sec` units plus an offset in seconds
    /// (the pcapng Enhanced Packet Block encoding). `None` on a zero resolution or overflow.
    pub fn from_units(units: u64, units_per_sec: u64, offset_secs: i64) -> Option<Self> {
        if units_per_sec == 0 {
            return None;
        }
        let secs = i64::try_from(units / units_per_sec)
            .ok()?
            .checked_add(offset_secs)?;
        Self::from_fraction(secs, units % units_per_sec, units_per_sec)
    }

    /// Seconds as a float (for JSON and rates; loses precision below ~100 ns for current dates).
    pub fn as_secs_f64(&self) -> f64 {
        self.secs as f64 + f64::from(self.nanos) / f64::from(NANOS_PER_SEC)
    }

    /// The value as sign, whole seconds and nanoseconds of its magnitude:
    /// `{secs: -2, nanos: 500_000_000}` (-1.5 s) is `(true, 1, 500_000_000)`.
    pub fn magnitude(&self) -> (bool, u64, u32) {
        if self.secs >= 0 {
            (false, self.secs.unsigned_abs(), self.nanos)
        } else if self.nanos == 0 {
            (true, self.secs.unsigned_abs(), 0)
        } else {
            (
                true,
                self.secs.unsigned_abs() - 1,
                NANOS_PER_SEC - self.nanos,
            )
        }
    }

    /// Nanoseconds elapsed from `earlier` to `self`, or `None` if negative or overflowing.
    pub fn nanos_since(&self, earlier: &Timestamp) -> Option<u64> {
        let a = i128::from(self.secs) * i128::from(NANOS_PER_SEC) + i128::from(self.nanos);
        let b = i128::from(earlier.secs) * i128::from(NANOS_PER_SEC) + i128::from(earlier.nanos);
        u64::try_from(a.checked_sub(b)?).ok()
    }
}

impl fmt::Display for Timestamp {
    /// `seconds.nanoseconds` since the epoch, nine fraction digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (negative, whole, frac) = self.magnitude();
        write!(f, "{}{whole}.{frac:09}", if negative { "-" } else { "" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microsecond_and_nanosecond_fractions() {
        let t = Timestamp::from_fraction(1_418_145_369, 924_505, 1_000_000).unwrap();
        assert_eq!(t.nanos, 924_505_000);
        let t = Timestamp::from_fraction(1_418_145_369, 924_505_488, 1_000_000_000).unwrap();
        assert_eq!(t.to_string(), "1418145369.924505488");
        assert!(Timestamp::from_fraction(0, 1_000_000, 1_000_000).is_none());
        assert!(Timestamp::from_fraction(0, 0, 0).is_none());
    }

    #[test]
    fn units_with_offset_and_overflow() {
        let t = Timestamp::from_units(1_500_000, 1_000_000, 10).unwrap();
        assert_eq!((t.secs, t.nanos), (11, 500_000_000));
        assert!(Timestamp::from_units(u64::MAX, 1, i64::MAX).is_none());
        let t = Timestamp::from_units(3, 1 << 1, 0).unwrap();
        assert_eq!((t.secs, t.nanos), (1, 500_000_000));
    }

    #[test]
    fn negative_times_print_their_value() {
        let t = Timestamp {
            secs: -2,
            nanos: 500_000_000,
        };
        assert_eq!(t.to_string(), "-1.500000000");
        assert_eq!(Timestamp { secs: -3, nanos: 0 }.to_string(), "-3.000000000");
        assert!((t.as_secs_f64() + 1.5).abs() < 1e-12);
    }

    #[test]
    fn elapsed() {
        let a = Timestamp {
            secs: 1,
            nanos: 900_000_000,
        };
        let b = Timestamp {
            secs: 2,
            nanos: 100_000_000,
        };
        assert_eq!(b.nanos_since(&a), Some(200_000_000));
        assert_eq!(a.nanos_since(&b), None);
    }
}
