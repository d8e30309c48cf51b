//! Locating errors, and the checks every field goes through: an integer in a
//! range, a rate with a unit, a time, a keyword from a table. Each refusal is a
//! [`ScenarioError`] at the line of the value and with the field's path.

use std::fmt;
use std::ops::Range;

use toml::Spanned;

use super::raw::RawScenario;
use super::ScenarioError;
use crate::time::{secs_to_ns, Nanos, NS_PER_S};

/// Largest rate a scenario may give, in bit/s (10 Tbit/s).
const MAX_RATE_BPS: u64 = 10_000_000_000_000;

/// 1-based line of byte `offset` in `src`.
pub(super) fn line_of(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    1 + src
        .as_bytes()
        .get(..end)
        .unwrap_or_default()
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The field path of a deserialization error, as this module names fields: tables
/// and keys joined by dots, array entries counted from 1 (`stream[2].rate`).
fn field_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => {
                let _ = fmt::Write::write_fmt(&mut out, format_args!("[{}]", index + 1));
            }
            // `toml::Spanned` wraps a value in a private one-field table: not a field.
            Segment::Map { key } | Segment::Enum { variant: key } if key.starts_with("$__") => {}
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// Reads the TOML shape of `src`. The deserializer's own span locates the line;
/// `serde_path_to_error` names the field (the path it had reached when the error
/// happened).
pub(super) fn deserialize(src: &str) -> Result<RawScenario, ScenarioError> {
    let de = toml::Deserializer::new(src);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = field_path(e.path());
        let inner = e.into_inner();
        let span = inner.span().unwrap_or(0..0);
        ScenarioError {
            line: line_of(src, span.start),
            field,
            message: match inner.message().trim() {
                // The TOML parser gives some syntax errors (a lone
                // carriage return, say) no text of their own.
                "" => "invalid TOML syntax".to_string(),
                m => m.to_string(),
            },
        }
    })
}

/// A keyword of the scenario format and what it stands for; a table of them
/// lists the keywords in the order an error names them.
pub(super) type Keywords<T> = [(&'static str, T)];

/// The checks, over one scenario's text (to turn spans into lines).
pub(super) struct Ctx<'a> {
    /// The scenario's text.
    pub(super) src: &'a str,
}

impl Ctx<'_> {
    /// The error `message` about `field`, at the line where `span` starts.
    pub(super) fn err(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl fmt::Display,
    ) -> ScenarioError {
        ScenarioError {
            line: line_of(self.src, span.start),
            field: field.into(),
            message: message.to_string(),
        }
    }

    /// An integer in `lo..=hi`.
    pub(super) fn int(
        &self,
        v: &Spanned<i64>,
        field: &str,
        lo: i64,
        hi: i64,
    ) -> Result<i64, ScenarioError> {
        let x = *v.get_ref();
        if x < lo || x > hi {
            return Err(self.err(v.span(), field, format!("{x} is outside {lo}..={hi}")));
        }
        Ok(x)
    }

    /// A rate with a unit, above 0 and at most 10 Tbit/s, in bit/s.
    pub(super) fn rate(&self, v: &Spanned<String>, field: &str) -> Result<u64, ScenarioError> {
        // `bdp` reads a bare number as bit/s; in a scenario that is almost always a
        // forgotten unit ("200" meant 200 Mbit/s), so the unit is required.
        let text = v.get_ref().trim();
        if text.ends_with(|c: char| c.is_ascii_digit() || c == '.') {
            return Err(self.err(
                v.span(),
                field,
                format_args!("{text:?} has no unit: write it with one, as \"{text}Mbit/s\""),
            ));
        }
        let r: bdp::BitsPerSecond = v
            .get_ref()
            .parse()
            .map_err(|e| self.err(v.span(), field, format_args!("{:?}: {e}", v.get_ref())))?;
        if r.get() == 0 || r.get() > MAX_RATE_BPS {
            return Err(self.err(
                v.span(),
                field,
                "a rate must be above 0 and at most 10 Tbit/s",
            ));
        }
        Ok(r.get())
    }

    /// A time in seconds between 0 and `max_s`, in nanoseconds.
    pub(super) fn secs(
        &self,
        v: &Spanned<f64>,
        field: &str,
        max_s: u32,
    ) -> Result<Nanos, ScenarioError> {
        let s = *v.get_ref();
        match secs_to_ns(s) {
            Some(ns) if ns <= u64::from(max_s) * NS_PER_S => Ok(ns),
            _ => Err(self.err(
                v.span(),
                field,
                format!("{s} is not a time between 0 and {max_s} s"),
            )),
        }
    }

    /// What the keyword `v` stands for in `table` (exact spelling).
    pub(super) fn keyword<T: Copy>(
        &self,
        v: &Spanned<String>,
        field: &str,
        table: &Keywords<T>,
    ) -> Result<T, ScenarioError> {
        table
            .iter()
            .find(|(name, _)| *name == v.get_ref().as_str())
            .map(|(_, value)| *value)
            .ok_or_else(|| {
                let names: Vec<&str> = table.iter().map(|(name, _)| *name).collect();
                self.err(
                    v.span(),
                    field,
                    format_args!("{:?} is not one of {}", v.get_ref(), names.join(", ")),
                )
            })
    }

    /// [`Ctx::keyword`] of an optional field; `default` when it is absent.
    pub(super) fn keyword_or<T: Copy>(
        &self,
        v: Option<&Spanned<String>>,
        field: &str,
        table: &Keywords<T>,
        default: T,
    ) -> Result<T, ScenarioError> {
        v.map_or(Ok(default), |v| self.keyword(v, field, table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_from_1_and_an_offset_past_the_end_is_the_last_line() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 4), 3);
        assert_eq!(line_of("a\nb\nc", 99), 3);
        assert_eq!(line_of("", 5), 1);
    }

    #[test]
    fn a_keyword_is_spelled_exactly_and_a_wrong_one_lists_the_table() {
        let cx = Ctx {
            src: "x = 1\ny = 2",
        };
        let table: &Keywords<u8> = &[("one", 1), ("two", 2)];
        let v = |s: &str| Spanned::new(6..7, s.to_string());
        assert_eq!(cx.keyword(&v("two"), "f", table), Ok(2));
        let e = cx.keyword(&v("Two"), "f", table).unwrap_err();
        assert_eq!(
            (e.line, e.field.as_str(), e.message.as_str()),
            (2, "f", "\"Two\" is not one of one, two")
        );
        assert_eq!(cx.keyword_or(None, "f", table, 7), Ok(7));
    }
}
