//! The text report of a comparison, for a network engineer reading a terminal.

use std::fmt::Write;

use super::impact::rate;
use super::Report;

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

/// Renders `report` as text.
pub fn render_text(report: &Report) -> String {
    let mut o = String::new();
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
    }
    let _ = writeln!(
        o,
        "{} seen on both sides",
        plural(report.connections.len(), "connection")
    );
    for c in &report.connections {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "connection {}: client {}  server {}",
            c.id, c.client, c.server
        );
        let _ = writeln!(
            o,
            "  client side: {} ({} -> {}, {} packets)",
            c.client_side.capture,
            c.client_side.client,
            c.client_side.server,
            c.client_side.packets
        );
        let _ = writeln!(
            o,
            "  server side: {} ({} -> {}, {} packets)",
            c.server_side.capture,
            c.server_side.client,
            c.server_side.server,
            c.server_side.packets
        );
        wrapped(
            &mut o,
            2,
            "matched on ",
            &format!(
                "{}; {} aligned; client side told by {}; RTT {}",
                c.matched_by.join(", "),
                plural(c.matched_packets, "packet pair"),
                c.sides_by,
                match c.rtt_s {
                    Some(r) => format!("{:.1} ms ({})", r * 1e3, c.rtt_source),
                    None => "unknown (give --rtt)".to_string(),
                }
            ),
        );
        let mine: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.connection == c.id)
            .collect();
        if mine.is_empty() {
            let _ = writeln!(o, "  no changes: the middlebox passed this connection untouched (TTL decrement aside)");
        }
        for f in mine {
            let dir = if f.direction == "client_to_server" {
                "client -> server"
            } else {
                "server -> client"
            };
            let kind = match f.option_kind {
                Some(k) => format!("{} (option kind {k})", f.kind),
                None => f.kind.to_string(),
            };
            let _ = writeln!(
                o,
                "  [{dir}] {kind}: {}, {}",
                f.title,
                plural(f.count as usize, "packet")
            );
            if !(f.before_text.is_empty() && f.after_text.is_empty()) {
                let more = if f.kind.has_values() && f.distinct_values > 1 {
                    format!(" (first of {} distinct values)", f.distinct_values)
                } else {
                    String::new()
                };
                wrapped(
                    &mut o,
                    6,
                    "before: ",
                    &format!("{}  after: {}{more}", f.before_text, f.after_text),
                );
            }
            wrapped(&mut o, 6, "impact: ", &f.impact.summary);
            if let (Some(b), Some(a)) = (f.impact.ceiling_bps_before, f.impact.ceiling_bps_after) {
                let _ = writeln!(o, "      ceiling: {} -> {}", rate(b), rate(a));
            }
            wrapped(&mut o, 6, "likely cause: ", f.cause);
            let frames = |v: &[u64]| {
                let mut v = v.to_vec();
                v.sort_unstable();
                v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
            };
            let _ = writeln!(
                o,
                "      frames: client side {}  server side {}",
                if f.packets.client_side.is_empty() {
                    "-".into()
                } else {
                    frames(&f.packets.client_side)
                },
                if f.packets.server_side.is_empty() {
                    "-".into()
                } else {
                    frames(&f.packets.server_side)
                }
            );
        }
        for n in report.notes.iter().filter(|n| n.connection == c.id) {
            let dir = if n.direction == "client_to_server" {
                "client -> server"
            } else {
                "server -> client"
            };
            let _ = writeln!(o, "  note [{dir}]: {} ({} packets)", n.text, n.count);
        }
    }
    for c in [a, b] {
        if !c.unmatched_connections.is_empty() {
            let _ = writeln!(o);
            let _ = writeln!(
                o,
                "{} only in {}: {}",
                plural(c.unmatched_connections.len(), "connection"),
                c.path,
                c.unmatched_connections
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "{}", plural(report.findings.len(), "finding"));
    o
}
