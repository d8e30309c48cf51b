//! Text for people, JSON for scripts.
//!
//! - [`analyze`]: `analyze`'s reports, text and JSON, and the verdict's words.
//! - [`dump`]: every segment, tcpdump-like text or JSON lines.
//! - [`finding`]: a finding's values as JSON and words.
//! - [`series`]: the time series as CSV rows and one connection's SVG plot.
//! - [`format`](mod@format): allocation-free numbers, hex, UTC time, JSON
//!   string escaping.
//! - [`fastjson`]: `serde_json`'s compact output for per-connection
//!   documents, without escaping the derived keys.

pub mod analyze;
pub mod dump;
pub mod fastjson;
pub mod finding;
pub mod format;
pub mod series;
