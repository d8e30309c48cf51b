//! Shared, allocation-free helpers for parsing numbers and spotting
//! surrounding whitespace. Private to the crate.

use crate::error::Radix;

/// Why a run of digits is not a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Does not fit in a `u32`.
    Overflow,
    /// A character outside the base, at a byte offset of the whole input.
    InvalidDigit {
        offset: usize,
        found: char,
        radix: Radix,
    },
    /// No digits at all.
    MissingDigits,
}

/// Parses `digits` (which starts at byte `base_offset` of the full input) in
/// `radix`, with checked arithmetic: overflow is an error, never a wrap.
pub(crate) fn parse_digits(
    digits: &str,
    base_offset: usize,
    radix: Radix,
) -> Result<u32, NumberError> {
    if digits.is_empty() {
        return Err(NumberError::MissingDigits);
    }
    let base = match radix {
        Radix::Binary => 2,
        Radix::Decimal => 10,
        Radix::Hexadecimal => 16,
    };
    // Report the first bad character before any overflow, so that the
    // error names the real problem in "99999999999x".
    for (i, c) in digits.char_indices() {
        if c.to_digit(base).is_none() {
            return Err(NumberError::InvalidDigit {
                offset: base_offset + i,
                found: c,
                radix,
            });
        }
    }
    let mut value: u32 = 0;
    for c in digits.chars() {
        // Every character was checked above.
        let digit = c.to_digit(base).ok_or(NumberError::MissingDigits)?;
        value = value
            .checked_mul(base)
            .and_then(|v| v.checked_add(digit))
            .ok_or(NumberError::Overflow)?;
    }
    Ok(value)
}

/// Byte offset of whitespace at either end of `s`, if any.
pub(crate) fn surrounding_whitespace(s: &str) -> Option<usize> {
    if s.chars().next().is_some_and(char::is_whitespace) {
        return Some(0);
    }
    s.char_indices()
        .next_back()
        .filter(|(_, c)| c.is_whitespace())
        .map(|(i, _)| i)
}

/// `s` with an ASCII `prefix` removed, ignoring ASCII case.
pub(crate) fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    if head.eq_ignore_ascii_case(prefix) {
        s.get(prefix.len()..)
    } else {
        None
    }
}

/// True if `s` is exactly `n` characters, each `0` or `1`.
pub(crate) fn is_binary_of_len(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b == b'0' || b == b'1')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_in_each_radix() {
        assert_eq!(parse_digits("101110", 0, Radix::Binary), Ok(46));
        assert_eq!(parse_digits("46", 0, Radix::Decimal), Ok(46));
        assert_eq!(parse_digits("2e", 0, Radix::Hexadecimal), Ok(46));
        assert_eq!(parse_digits("2E", 0, Radix::Hexadecimal), Ok(46));
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        assert_eq!(parse_digits("4294967295", 0, Radix::Decimal), Ok(u32::MAX));
        assert_eq!(
            parse_digits("4294967296", 0, Radix::Decimal),
            Err(NumberError::Overflow)
        );
        assert_eq!(
            parse_digits("100000000", 0, Radix::Hexadecimal),
            Err(NumberError::Overflow)
        );
    }

    #[test]
    fn bad_digit_reports_its_offset_in_the_whole_input() {
        assert_eq!(
            parse_digits("1g", 2, Radix::Hexadecimal),
            Err(NumberError::InvalidDigit {
                offset: 3,
                found: 'g',
                radix: Radix::Hexadecimal
            })
        );
        assert_eq!(
            parse_digits("", 2, Radix::Decimal),
            Err(NumberError::MissingDigits)
        );
    }

    #[test]
    fn whitespace_at_either_end() {
        assert_eq!(surrounding_whitespace(" ef"), Some(0));
        assert_eq!(surrounding_whitespace("ef "), Some(2));
        assert_eq!(surrounding_whitespace("ef\u{a0}"), Some(2));
        assert_eq!(surrounding_whitespace("e f"), None);
        assert_eq!(surrounding_whitespace(""), None);
    }

    #[test]
    fn prefix_ignores_case_and_multibyte_boundaries() {
        assert_eq!(strip_prefix_ignore_case("CS1", "cs"), Some("1"));
        assert_eq!(strip_prefix_ignore_case("c", "cs"), None);
        // 'é' is two bytes: slicing at 2 would split it.
        assert_eq!(strip_prefix_ignore_case("aé", "af"), None);
        assert_eq!(strip_prefix_ignore_case("éa", "af"), None);
    }
}
