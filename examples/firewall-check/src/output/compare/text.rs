//! The text report of a comparison, for a network engineer reading a
//! terminal: the captures, then each connection with its findings and
//! notes, the connections seen in one capture only, and the count of
//! findings.

use std::fmt::Write;

use super::{ends_text, matched_on_text, note_text, rtt_source_name, sides_by_name};
use crate::analysis::compare::{CaptureSummary, ConnReport, Note, Report};
use crate::conn::Direction;
use crate::finding::{Compared, FieldValue, Finding, TunnelAction, TunnelPoint};
use crate::output::finding::{cause_text, value_text};
use crate::output::format::{duration_text, rate_text as rate};
use crate::output::impact::impact_text;
use crate::output::tunnel;

/// Width the long lines are wrapped to.
const WIDTH: usize = 100;

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("{n} {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// Writes `label` then `text` wrapped at [`WIDTH`] (`textwrap`, words never
/// broken), continuation lines indented under the text.
fn wrapped(o: &mut String, indent: usize, label: &str, text: &str) {
    let first = format!("{}{label}", " ".repeat(indent));
    let rest = " ".repeat(indent + label.len());
    let opts = textwrap::Options::new(WIDTH)
        .initial_indent(&first)
        .subsequent_indent(&rest)
        .break_words(false);
    for line in textwrap::wrap(text, opts) {
        let _ = writeln!(o, "{line}");
    }
}

/// `client -> server` or `server -> client`.
fn arrow(d: Direction) -> &'static str {
    match d {
        Direction::ClientToServer => "client -> server",
        Direction::ServerToClient => "server -> client",
    }
}

/// Renders `report` as text.
pub fn render_text(report: &Report) -> String {
    let mut o = String::new();
    captures(&mut o, report);
    for c in &report.connections {
        connection(&mut o, report, c);
    }
    for c in &report.captures {
        unmatched(&mut o, c);
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "{}", plural(report.findings.len(), "finding"));
    o
}

/// The two captures, what made them partial, and the connections in both.
fn captures(o: &mut String, report: &Report) {
    let [a, b] = &report.captures;
    let _ = writeln!(
        o,
        "compared {} ({}, {}) with {} ({}, {})",
        a.path,
        plural(a.tcp_packets as usize, "TCP packet"),
        plural(a.connections, "connection"),
        b.path,
        plural(b.tcp_packets as usize, "TCP packet"),
        plural(b.connections, "connection")
    );
    for c in [a, b] {
        if c.evicted_connections > 0 {
            let _ = writeln!(
                o,
                "note: {}: {} ended early by a full connection table (--max-connections); each rest is compared as another connection",
                c.path,
                plural(c.evicted_connections as usize, "connection")
            );
        }
        for w in &c.warnings {
            let _ = writeln!(o, "warning: {}: {w}", c.path);
        }
        if tunnel::summary_due(&c.tally) {
            let mut words = Vec::new();
            let _ = tunnel::write_text_summary(&mut words, c.records, &c.tally);
            let _ = writeln!(
                o,
                "capture: {}: {}",
                c.path,
                String::from_utf8_lossy(&words)
            );
            words.clear();
            if let Ok(true) = tunnel::write_text_warning(&mut words, c.records, &c.tally) {
                let _ = writeln!(
                    o,
                    "warning: {}: {}",
                    c.path,
                    String::from_utf8_lossy(&words)
                );
            }
        }
    }
    let _ = writeln!(
        o,
        "{} seen on both sides",
        plural(report.connections.len(), "connection")
    );
}

/// One connection: its two views, how it was matched, its findings and
/// notes.
fn connection(o: &mut String, report: &Report, c: &ConnReport) {
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "connection {}: client {}  server {}",
        c.id, c.client, c.server
    );
    for (label, side) in [("client", &c.client_side), ("server", &c.server_side)] {
        let _ = writeln!(
            o,
            "  {label} side: {} ({} -> {}, {} packets)",
            side.capture, side.client, side.server, side.packets
        );
        if let Some(t) = &side.tunnels {
            let mut words = Vec::new();
            let _ = tunnel::write_carried_text(&mut words, t, "    ");
            o.push_str(&String::from_utf8_lossy(&words));
        }
    }
    let matched_by: Vec<String> = c.matched_by.iter().map(|m| matched_on_text(*m)).collect();
    wrapped(
        o,
        2,
        "matched on ",
        &format!(
            "{}; {} aligned; client side told by {}; RTT {}",
            matched_by.join(", "),
            plural(c.matched_packets, "packet pair"),
            sides_by_name(c.sides_by),
            match c.rtt {
                Some(r) => format!(
                    "{} ({})",
                    duration_text(r.value),
                    rtt_source_name(Some(r.source))
                ),
                None => "unknown (give --rtt)".to_string(),
            }
        ),
    );
    let mine: Vec<(&Finding, &Compared)> = report
        .findings
        .iter()
        .filter_map(|f| f.compared().map(|e| (f, e)))
        .filter(|(_, e)| e.connection == c.id)
        .collect();
    if mine.is_empty() {
        let _ = writeln!(
            o,
            "  no changes: the middlebox passed this connection untouched (TTL decrement aside)"
        );
    }
    for (f, e) in mine {
        finding(o, f, e);
    }
    for n in report.notes.iter().filter(|n| n.connection == c.id) {
        note(o, n);
    }
}

/// One finding: kind and title, values, impact, cause, frames.
fn finding(o: &mut String, f: &Finding, e: &Compared) {
    let kind = match e.option_kind {
        Some(k) => format!("{} (option kind {k})", f.kind),
        None => f.kind.to_string(),
    };
    let _ = writeln!(
        o,
        "  [{}] {kind}: {}, {}",
        arrow(f.direction),
        f.kind.title(),
        plural(e.count as usize, "packet")
    );
    let (before, after) = (value_text(&e.before), value_text(&e.after));
    if !(before.is_empty() && after.is_empty()) {
        let more = if f.kind.has_values() && e.distinct_values > 1 {
            format!(" (first of {} distinct values)", e.distinct_values)
        } else {
            String::new()
        };
        wrapped(o, 6, "before: ", &format!("{before}  after: {after}{more}"));
    }
    wrapped(o, 6, "impact: ", &impact_text(&f.impact));
    if let (Some(b), Some(a)) = (f.impact.ceiling_bps_before, f.impact.ceiling_bps_after) {
        let _ = writeln!(o, "      ceiling: {} -> {}", rate(b), rate(a));
    }
    if let Some(t) = e.tunnel.as_ref().filter(|_| f.kind.is_tunnel()) {
        wrapped(o, 6, "tunnel: ", &tunnel_point_text(t));
        let _ = writeln!(o, "      confidence: {}", f.confidence);
    }
    wrapped(o, 6, "likely cause: ", cause_text(f.kind, e.cause));
    let frames = |v: &[u64]| {
        if v.is_empty() {
            return "-".to_string();
        }
        let mut v = v.to_vec();
        v.sort_unstable();
        v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
    };
    let _ = writeln!(
        o,
        "      frames: client side {}  server side {}",
        frames(&e.frames.client_side),
        frames(&e.frames.server_side)
    );
}

/// The encapsulation point of a tunnel finding: `encapsulation into GRE
/// (24 bytes of outer headers); the MSS fell by exactly that`.
fn tunnel_point_text(t: &TunnelPoint) -> String {
    let dir = match t.action {
        TunnelAction::Encapsulation => "into",
        TunnelAction::Decapsulation => "out of",
    };
    let mut s = format!(
        "{} {dir} {} ({} bytes of outer headers)",
        t.action.as_str(),
        tunnel::kind_name(t.encapsulation),
        t.overhead
    );
    match t.mss_matches_overhead {
        Some(true) => s.push_str("; the MSS fell by exactly that"),
        Some(false) => s.push_str("; the MSS fell by another amount"),
        None => {}
    }
    if let Some(e) = t.outer_ecn {
        let _ = write!(s, "; outer ECN {}", value_text(&FieldValue::Ecn(e)));
    }
    if let Some(r) = t.rfc6040 {
        let want = r.map_or("drop".to_string(), |e| value_text(&FieldValue::Ecn(e)));
        let _ = write!(s, "; RFC 6040 gives {want}");
    }
    s
}

/// One note.
fn note(o: &mut String, n: &Note) {
    let _ = writeln!(
        o,
        "  note [{}]: {} ({} packets)",
        arrow(n.direction),
        note_text(&n.detail),
        n.count
    );
}

/// The connections seen in capture `c` only (the first ten).
fn unmatched(o: &mut String, c: &CaptureSummary) {
    if c.unmatched_connections.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{} only in {}: {}",
        plural(c.unmatched_connections.len(), "connection"),
        c.path,
        c.unmatched_connections
            .iter()
            .take(10)
            .map(ends_text)
            .collect::<Vec<_>>()
            .join("; ")
    );
}
