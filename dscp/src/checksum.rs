//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//!
//! The checksum is the one's complement of the one's complement sum of the
//! data taken as big-endian 16-bit words (an odd last byte is padded with a
//! zero byte). A header is valid when the sum over all of it, checksum
//! field included, is `0xffff`.
//!
//! When one 16-bit word of a header changes from `m` to `m'`, RFC 1624
//! eqn. 3 gives the new checksum without reading the rest of the header:
//!
//! ```text
//! HC' = ~(~HC + ~m + m')        (one's complement arithmetic)
//! ```
//!
//! RFC 1624 recommends eqn. 3 over RFC 1141's `HC' = HC + m + ~m'`
//! (its eqn. 2), which can produce `0xffff` (-0) where a full
//! recomputation gives `0x0000` (+0). With the end-around carry, eqn. 3
//! cannot do that: the folded sum `~HC + ~m + m'` is zero only when all
//! three terms are zero, so the result is `0xffff` only for
//! `HC = 0xffff, m = 0xffff, m' = 0x0000`. In particular an unchanged word
//! (`m == m'`) keeps every checksum except `0xffff`, which becomes
//! `0x0000`, never the other way round (tested below). The header writers
//! of this crate still skip the update when the byte does not change, so
//! a rewrite that changes nothing writes nothing.

/// The folded one's complement sum of `data` as big-endian 16-bit words.
///
/// ```
/// // RFC 1071 section 3, numerical example: the sum of
/// // 00 01 f2 03 f4 f5 f6 f7 is 0xddf2.
/// let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
/// assert_eq!(dscp::checksum::ones_complement_sum(&data), 0xddf2);
/// ```
pub fn ones_complement_sum(data: &[u8]) -> u16 {
    // A u64 accumulator cannot overflow before 2^48 words.
    let mut sum: u64 = 0;
    let mut chunks = data.chunks_exact(2);
    for word in &mut chunks {
        sum += u64::from(u16::from_be_bytes([word[0], word[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(u16::from_be_bytes([*last, 0]));
    }
    fold(sum)
}

/// The Internet checksum of `data`: the complement of
/// [`ones_complement_sum`].
pub fn internet_checksum(data: &[u8]) -> u16 {
    !ones_complement_sum(data)
}

/// RFC 1624 eqn. 3: the checksum after one 16-bit word covered by
/// `checksum` changes from `old` to `new`.
///
/// ```
/// use dscp::checksum::incremental_update;
///
/// // RFC 1624 section 4: m = 0x5555 becomes m' = 0x3285 under a checksum of
/// // 0xdd2f; recomputation gives 0x0000, and so does eqn. 3.
/// assert_eq!(incremental_update(0xdd2f, 0x5555, 0x3285), 0x0000);
/// ```
pub const fn incremental_update(checksum: u16, old: u16, new: u16) -> u16 {
    let sum = (!checksum) as u64 + (!old) as u64 + new as u64;
    !fold(sum)
}

/// Adds the carries of a wide one's complement sum back into 16 bits.
const fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1624_section4_example() {
        // RFC 1624 section 4: the other header words sum to 0xcd7a and the
        // changing word m = 0x5555, so HC = ~(0xcd7a + 0x5555) = 0xdd2f.
        // After m' = 0x3285, recomputation gives ~(0xcd7a + 0x3285) = 0x0000;
        let rest = 0xcd7a_u16;
        let hc = !fold(u64::from(rest) + 0x5555);
        assert_eq!(hc, 0xdd2f);
        let recomputed = !fold(u64::from(rest) + 0x3285);
        assert_eq!(recomputed, 0x0000);
        assert_eq!(incremental_update(hc, 0x5555, 0x3285), recomputed);
        // RFC 1141's eqn. 2, HC + m + ~m', would give 0xffff instead.
        let eqn2 = fold(u64::from(hc) + 0x5555 + u64::from(!0x3285_u16));
        assert_eq!(eqn2, 0xffff);
    }

    #[test]
    fn eqn3_never_turns_zero_into_minus_zero() {
        // RFC 1624 section 3, eqn. 3 with the end-around carry: an
        // unchanged word keeps a 0x0000 checksum, and 0xffff (-0) becomes
        // 0x0000 (+0); every other checksum is kept as it is.
        for hc in 0..=0xffff_u16 {
            for m in [0x0000, 0x4500, 0x4522, 0xfffe, 0xffff] {
                let expected = if hc == 0xffff { 0x0000 } else { hc };
                assert_eq!(
                    incremental_update(hc, m, m),
                    expected,
                    "hc {hc:#06x} m {m:#06x}"
                );
            }
        }
        // From a 0x0000 checksum no change of word gives 0xffff; the only
        // input that yields 0xffff at all is (0xffff, 0xffff, 0x0000).
        for new in 0..=0xffff_u16 {
            for old in [0x0000, 0x0001, 0x4500, 0x8000, 0xffff] {
                assert_ne!(incremental_update(0x0000, old, new), 0xffff);
                let minus_zero = incremental_update(0xffff, old, new) == 0xffff;
                assert_eq!(minus_zero, old == 0xffff && new == 0x0000);
            }
        }
    }

    #[test]
    fn rfc1071_example_sum() {
        // RFC 1071 section 3: byte-order-independent sum 0xddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(ones_complement_sum(&data), 0xddf2);
        assert_eq!(internet_checksum(&data), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(ones_complement_sum(&[0x12]), 0x1200);
        assert_eq!(ones_complement_sum(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
        assert_eq!(ones_complement_sum(&[]), 0);
    }

    #[test]
    fn carries_wrap_around() {
        assert_eq!(ones_complement_sum(&[0xff, 0xff, 0x00, 0x02]), 0x0002);
        assert_eq!(ones_complement_sum(&[0xff; 64]), 0xffff);
    }
}
