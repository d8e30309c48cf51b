//! Sequence-number order: 32-bit sequence numbers (and timestamp values,
//! RFC 7323 section 5.2) wrap, so they compare modulo 2^32 (RFC 9293
//! section 3.4; RFC 1982 serial-number arithmetic): `a` comes before `b`
//! when `b` lies less than 2^31 ahead of it.

/// `a` comes before `b` in sequence space.
#[inline]
pub fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `a` is at or after `b` in sequence space.
#[inline]
pub fn seq_ge(a: u32, b: u32) -> bool {
    !seq_lt(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_wraps_around() {
        assert!(seq_lt(1, 2) && !seq_lt(2, 1) && !seq_lt(5, 5));
        assert!(seq_ge(5, 5) && seq_ge(2, 1) && !seq_ge(1, 2));
        // Across the wrap: u32::MAX comes just before 0.
        assert!(seq_lt(u32::MAX, 0) && seq_ge(0, u32::MAX));
        assert!(seq_lt(u32::MAX - 99, 100));
        // Less than half the space ahead is after; more is before.
        assert!(seq_lt(0, (1 << 31) - 1) && !seq_lt(0, (1 << 31) + 1));
        assert!(seq_lt((1 << 31) + 1, 0));
        // Exactly 2^31 apart is undefined (RFC 1982): each reads as before
        // the other.
        assert!(seq_lt(0, 1 << 31) && seq_lt(1 << 31, 0));
    }
}
