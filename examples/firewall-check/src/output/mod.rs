//! Text for people, JSON for scripts.
//!
//! - [`analyze`]: `analyze`'s reports, text and JSON, and the verdict's words.
//! - [`compare`]: `compare`'s report, text and JSON, and its words.
//! - [`dump`]: every segment, tcpdump-like text or JSON lines.
//! - [`finding`]: a finding's values as JSON and words, and its JSON.
//! - [`impact`]: what a finding costs, in words and as JSON.
//! - [`series`]: the time series as CSV rows and one connection's SVG plot.
//! - [`tunnel`]: the layers a segment was carried in, and the counts of
//!   segments by encapsulation and frames skipped by reason.
//! - [`format`](mod@format): numbers, rates, hex, UTC time, JSON string
//!   escaping.
//! - [`fastjson`]: `serde_json`'s compact output for per-connection
//!   documents, without escaping the derived keys.

pub mod analyze;
pub mod compare;
pub mod dump;
pub mod fastjson;
pub mod finding;
pub mod format;
pub mod impact;
pub mod series;
pub mod tunnel;
