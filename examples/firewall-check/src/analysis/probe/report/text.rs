//! The text report: the path, one line per finding (where, which way,
//! what changed, what it costs), each test's result, the notes.

use std::fmt::Write;

use serde_json::Value;

use super::{shown_json, Finding, HopRef, Report};
use crate::output::format::duration_text;

impl Report {
    /// The text report.
    pub fn text(&self) -> String {
        let mut s = format!("probe {}", self.target);
        if let Some(r) = self.rtt {
            let _ = write!(s, ", RTT {}", duration_text(r));
        }
        s += "\npath:";
        for h in &self.path {
            let _ = write!(s, " {}:{}", h.ttl, h.address);
        }
        s += "\n";
        if self.findings.is_empty() {
            s += "no findings: nothing on the path changed the probes\n";
        }
        for f in &self.findings {
            s += &finding_line(f);
        }
        s += "tests:\n";
        for t in &self.tests {
            let _ = writeln!(
                s,
                "  {:<18} {:<10} {}",
                t.name,
                t.result.as_str(),
                super::detail::joined(&t.detail)
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }
}

/// `hop 3 (198.18.43.2), after hop 2 (198.18.42.2)`.
fn place(hop: Option<HopRef>, after: Option<HopRef>) -> String {
    match (hop, after) {
        (Some(h), Some(a)) => format!(
            "hop {} ({}), after hop {} ({})",
            h.ttl, h.address, a.ttl, a.address
        ),
        (Some(h), None) => format!("hop {} ({})", h.ttl, h.address),
        (None, Some(a)) => format!("after hop {} ({})", a.ttl, a.address),
        (None, None) => "somewhere on the path".into(),
    }
}

/// One finding's line.
fn finding_line(f: &Finding) -> String {
    let opt = f
        .option_kind
        .map_or(String::new(), |k| format!(" (kind {k})"));
    format!(
        "{}, {}: {}{opt}: {} -> {}; {}\n",
        place(f.hop, f.after_hop),
        f.direction.as_str().replace('_', " "),
        f.kind.title(),
        plain(&shown_json(&f.before)),
        plain(&shown_json(&f.after)),
        f.impact.summary
    )
}

/// A finding's `before` or `after` in words.
fn plain(v: &Value) -> String {
    if let Some(ends) = crate::finding::nat_ends_text(v) {
        return ends;
    }
    match v {
        Value::Null => "not seen".into(),
        Value::String(s) => s.clone(),
        Value::Object(m) if m.contains_key("name") => {
            format!(
                "{} ({})",
                plain(&m["name"]),
                m.get("value").map_or(String::new(), plain)
            )
        }
        Value::Object(m) if m.contains_key("bytes_past_ack") => format!(
            "one byte {} bytes past the acknowledged point (unscaled window edge {}, scaled edge {}: field {} shift {} from the {})",
            m["bytes_past_ack"],
            m["unscaled_edge"],
            m["scaled_edge"],
            m["window_field"],
            m["shift"],
            plain(&m["shift_from"])
        ),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k} {}", plain(v)))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}
