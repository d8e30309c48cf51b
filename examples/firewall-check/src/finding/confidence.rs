//! How sure a judgment is.

use serde::{Serialize, Serializer};

/// How sure a finding or an inference is, with one meaning per level:
///
/// - [`Confidence::High`]: the packets show it and nothing else that a
///   real stack or middlebox is known to do would show the same; the
///   figures are far from any threshold.
/// - [`Confidence::Medium`]: the packets point to it, but a known other
///   behaviour (named where the judgment is made) could look the same, or
///   the figures are near a threshold.
/// - [`Confidence::Low`]: a hint only; the capture cannot decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
    /// A hint only.
    Low,
    /// Likely, with a named other explanation.
    Medium,
    /// Certain from the packets.
    High,
}

impl Confidence {
    /// `high`, `medium` or `low`, the names in JSON and text.
    pub const fn as_str(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

impl std::fmt::Display for Confidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Confidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
