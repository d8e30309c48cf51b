//! Simulated time: integer nanoseconds, and exact rate arithmetic.

/// Simulated time or duration in nanoseconds.
pub type Nanos = u64;

/// Nanoseconds in one second.
pub const NS_PER_S: Nanos = 1_000_000_000;

/// Converts seconds (finite, non-negative) to nanoseconds, rounded to the nearest
/// nanosecond; `None` when negative, not finite or beyond `u64`.
pub fn secs_to_ns(s: f64) -> Option<Nanos> {
    if !s.is_finite() || s < 0.0 {
        return None;
    }
    let ns = (s * 1e9).round();
    if ns >= u64::MAX as f64 {
        None
    } else {
        Some(ns as Nanos)
    }
}

/// Paces events at `bits` per event over a rate in bit/s without drift: each call
/// returns the next gap in nanoseconds and keeps the sub-nanosecond remainder, so the
/// long-run rate is exact.
#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    rate_bps: u64,
    carry: u64,
    // Cache of the last size: bits * 10^9 = quotient * rate + remainder.
    bits: u64,
    quotient: u64,
    remainder: u64,
}

impl Pacer {
    /// A pacer for `rate_bps` bit/s (at least 1).
    pub fn new(rate_bps: u64) -> Self {
        let rate_bps = rate_bps.min(1 << 62);
        Pacer {
            rate_bps: rate_bps.max(1),
            carry: 0,
            bits: 0,
            quotient: 0,
            remainder: 0,
        }
    }

    /// The rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Nanoseconds needed to send `bits` at the rate, carrying the remainder to the next call.
    ///
    /// The division is done once per distinct size (a stream's packets share one), so
    /// the per-packet cost is an add and a compare.
    #[inline]
    pub fn gap(&mut self, bits: u64) -> Nanos {
        if bits != self.bits {
            let num = u128::from(bits) * u128::from(NS_PER_S);
            let rate = u128::from(self.rate_bps);
            self.bits = bits;
            self.quotient = u64::try_from(num / rate).unwrap_or(u64::MAX);
            // The remainder is below the rate, a u64.
            self.remainder = (num % rate) as u64;
        }
        // carry < rate and remainder < rate, so the sum cannot overflow u64 (rate < 2^63).
        let c = self.carry + self.remainder;
        if c >= self.rate_bps {
            self.carry = c - self.rate_bps;
            self.quotient.saturating_add(1)
        } else {
            self.carry = c;
            self.quotient
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacer_is_exact_over_many_gaps() {
        // 1500-byte packets at 155.52 Mbit/s: 12000 bits take 77160.49... ns each.
        let mut p = Pacer::new(155_520_000);
        let total: u64 = (0..155_520).map(|_| p.gap(12_000)).sum();
        // 155520 packets * 12000 bits = 1.86624e9 bits = exactly 12 s at 155.52 Mbit/s.
        assert_eq!(total, 12 * NS_PER_S);
    }

    #[test]
    fn secs_to_ns_rejects_bad_values() {
        assert_eq!(secs_to_ns(1.5), Some(1_500_000_000));
        assert_eq!(secs_to_ns(-1.0), None);
        assert_eq!(secs_to_ns(f64::NAN), None);
        assert_eq!(secs_to_ns(1e30), None);
    }
}
