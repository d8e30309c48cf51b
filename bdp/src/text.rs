//! Exact decimal reading and writing shared by the unit types.
//!
//! A quantity is read as `<digits>[.<digits>] [unit]`. The integer part is
//! multiplied by the unit's integer factor and the fractional digits are
//! scaled by it exactly (see [`scale`]); a remainder means the value is not a
//! whole number of the base unit. Nothing goes through floating point. Writing is the
//! reverse: an integer ratio is printed digit by digit, exactly (every ratio
//! printed here has a power of two and five as denominator, so the expansion
//! ends) or rounded half-up to a requested precision.

use crate::error::{ParseError, Quantity};
use core::fmt;
use core::fmt::Write as _;

/// A non-negative decimal number: an integer part and the digits after the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decimal<'a> {
    pub int: u128,
    /// ASCII digits after the decimal point (possibly empty).
    pub frac: &'a str,
}

/// Splits `s` into a number and the unit text after it.
///
/// Returns the number, the unit (trimmed) and the unit's byte offset in `s`.
pub(crate) fn split_number(
    s: &str,
    kind: Quantity,
) -> Result<(Decimal<'_>, &str, usize), ParseError> {
    let start = s.len() - s.trim_start().len();
    let body = s.trim();
    if body.is_empty() {
        return Err(ParseError::Empty { kind });
    }
    let bytes = body.as_bytes();
    if bytes[0] == b'-' {
        return Err(ParseError::Negative { kind, at: start });
    }
    let int_end = bytes
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(bytes.len());
    let mut end = int_end;
    let mut frac = "";
    if bytes.get(int_end) == Some(&b'.') {
        let frac_len = bytes[int_end + 1..]
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(bytes.len() - int_end - 1);
        frac = &body[int_end + 1..int_end + 1 + frac_len];
        end = int_end + 1 + frac_len;
    }
    if int_end == 0 && frac.is_empty() {
        return Err(ParseError::ExpectedNumber { kind, at: start });
    }
    let mut int: u128 = 0;
    for &b in &bytes[..int_end] {
        int = int
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(b - b'0')))
            .ok_or(ParseError::Overflow { kind })?;
    }
    let rest = &body[end..];
    let unit = rest.trim_start();
    let unit_at = start + end + (rest.len() - unit.len());
    Ok((Decimal { int, frac }, unit, unit_at))
}

/// Splits the SI (`k`, `M`, `G`, `T`: powers of 1000) or binary (`Ki`,
/// `Mi`, `Gi`, `Ti`: powers of 1024) prefix off a unit: its factor (1
/// without a prefix), the unit word after it, and `Some(binary)` when there
/// was a prefix. Either case of the prefix letter is accepted.
pub(crate) fn split_prefix(unit: &str) -> (u128, &str, Option<bool>) {
    let bytes = unit.as_bytes();
    let binary = bytes.get(1) == Some(&b'i');
    let k: u128 = if binary { 1024 } else { 1000 };
    let factor = match bytes.first() {
        Some(b'k' | b'K') => k,
        Some(b'm' | b'M') => k * k,
        Some(b'g' | b'G') => k * k * k,
        Some(b't' | b'T') => k * k * k * k,
        _ => return (1, unit, None),
    };
    (factor, &unit[if binary { 2 } else { 1 }..], Some(binary))
}

/// `number * factor`, exactly, as an integer.
///
/// The fraction is scaled digit by digit from the last one: with
/// `u = factor * 0.d_j d_(j+1)...`, each step computes
/// `u_j = (factor * d_j + u_(j+1)) / 10`. If the final product is an integer
/// every intermediate is one too, so a division with a remainder proves the
/// value inexact; and no intermediate exceeds `10 * factor`, so any number of
/// fractional digits is handled without overflow.
pub(crate) fn scale(number: Decimal<'_>, factor: u128, kind: Quantity) -> Result<u128, ParseError> {
    let whole = number
        .int
        .checked_mul(factor)
        .ok_or(ParseError::Overflow { kind })?;
    let mut u: u128 = 0;
    for &b in number.frac.as_bytes().iter().rev() {
        let n = factor
            .checked_mul(u128::from(b - b'0'))
            .and_then(|x| x.checked_add(u))
            .ok_or(ParseError::Overflow { kind })?;
        if n % 10 != 0 {
            return Err(ParseError::Inexact { kind });
        }
        u = n / 10;
    }
    whole.checked_add(u).ok_or(ParseError::Overflow { kind })
}

/// A fixed stack buffer implementing `fmt::Write`, so a value can be
/// formatted first and then padded as a whole with `Formatter::pad`.
pub(crate) struct Buf {
    data: [u8; 128],
    len: usize,
}

impl Buf {
    pub(crate) const fn new() -> Self {
        Buf {
            data: [0; 128],
            len: 0,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only whole `&str`s are ever appended, so the contents are UTF-8.
        core::str::from_utf8(&self.data[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for Buf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        if end > self.data.len() {
            return Err(fmt::Error);
        }
        self.data[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes `num / den` in decimal followed by `unit`.
///
/// Without a precision the expansion is exact (at most 60 fractional digits,
/// enough for every denominator of the form `2^a * 5^b` used here); with one,
/// the value is rounded half-up to that many digits (at most 18).
pub(crate) fn write_ratio(
    out: &mut impl fmt::Write,
    num: u128,
    den: u128,
    precision: Option<usize>,
    unit: &str,
) -> fmt::Result {
    if den == 0 {
        return Err(fmt::Error);
    }
    match precision {
        None => {
            write!(out, "{}", num / den)?;
            let mut rem = num % den;
            if rem != 0 {
                out.write_str(".")?;
                let mut n = 0;
                while rem != 0 && n < 60 {
                    // rem < den <= u128::MAX / 10 for every unit used here; fall back on overflow.
                    let Some(r10) = rem.checked_mul(10) else {
                        break;
                    };
                    write!(out, "{}", r10 / den)?;
                    rem = r10 % den;
                    n += 1;
                }
            }
        }
        Some(p) => {
            let p = p.min(18) as u32;
            let pow = 10u128.pow(p);
            let int = num / den;
            let rem = num % den;
            // rem < den, and den <= 2^80 here, so rem * 10^18 fits in u128.
            let scaled = rem.checked_mul(pow).ok_or(fmt::Error)?;
            let mut frac = scaled / den;
            let mut int = int;
            if (scaled % den).checked_mul(2).ok_or(fmt::Error)? >= den {
                frac += 1;
                if frac == pow {
                    frac = 0;
                    int += 1;
                }
            }
            write!(out, "{int}")?;
            if p > 0 {
                write!(out, ".{frac:0width$}", width = p as usize)?;
            }
        }
    }
    if !unit.is_empty() {
        out.write_str(" ")?;
        out.write_str(unit)?;
    }
    Ok(())
}

/// Writes `s` honouring the formatter's width, fill and alignment (left by
/// default). Unlike `Formatter::pad`, the precision is not applied as a
/// truncation: it has already been used to round the number.
pub(crate) fn pad(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    let len = s.chars().count();
    let width = f.width().unwrap_or(0);
    if width <= len {
        return f.write_str(s);
    }
    let fill = f.fill();
    let gap = width - len;
    let (before, after) = match f.align() {
        Some(fmt::Alignment::Right) => (gap, 0),
        Some(fmt::Alignment::Center) => (gap / 2, gap - gap / 2),
        Some(fmt::Alignment::Left) | None => (0, gap),
    };
    for _ in 0..before {
        f.write_char(fill)?;
    }
    f.write_str(s)?;
    for _ in 0..after {
        f.write_char(fill)?;
    }
    Ok(())
}

/// Writes `v` in the largest of `units` it reaches (`units` from the largest
/// divisor down to 1), honouring the formatter's precision and padding.
pub(crate) fn fmt_largest(
    v: u64,
    units: &[(u128, &'static str)],
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    let v = u128::from(v);
    let (den, unit) = units
        .iter()
        .copied()
        .find(|&(d, _)| v >= d)
        .or_else(|| units.last().copied())
        .unwrap_or((1, ""));
    let mut buf = Buf::new();
    write_ratio(&mut buf, v, den, f.precision(), unit)?;
    pad(f, buf.as_str())
}
