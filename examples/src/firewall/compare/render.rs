//! The text report of a comparison, for a network engineer reading a terminal.

use std::fmt::Write;

use super::impact::rate;
use super::Report;

/// Renders `report` as text.
pub fn render_text(report: &Report) -> String {
    let mut o = String::new();
    let [a, b] = &report.captures;
    let _ = writeln!(
        o,
        "compared {} ({} TCP packets, {} connections) with {} ({} TCP packets, {} connections)",
        a.path, a.tcp_packets, a.connections, b.path, b.tcp_packets, b.connections
    );
    for c in [a, b] {
        for w in &c.warnings {
            let _ = writeln!(o, "warning: {}: {w}", c.path);
        }
    }
    let _ = writeln!(
        o,
        "{} connection(s) seen on both sides",
        report.connections.len()
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
        let _ = writeln!(
            o,
            "  matched on {}; {} packet pairs aligned; sides told by {}; RTT {}",
            c.matched_by.join(", "),
            c.matched_packets,
            c.sides_by,
            match c.rtt_s {
                Some(r) => format!("{:.1} ms ({})", r * 1e3, c.rtt_source),
                None => "unknown (give --rtt)".to_string(),
            }
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
            let _ = writeln!(o, "  [{dir}] {kind}: {} packet(s)", f.count);
            if !(f.before.is_empty() && f.after.is_empty()) {
                let value_kind = matches!(
                    f.kind,
                    "window_rewritten"
                        | "dscp_changed"
                        | "ecn_changed"
                        | "mss_clamped"
                        | "mss_changed"
                        | "wscale_changed"
                        | "option_changed"
                );
                let more = if value_kind && f.distinct_values > 1 {
                    format!(" (first of {} distinct values)", f.distinct_values)
                } else {
                    String::new()
                };
                let _ = writeln!(o, "      before: {}  after: {}{more}", f.before, f.after);
            }
            let _ = writeln!(o, "      impact: {}", f.impact.summary);
            if let (Some(b), Some(a)) = (f.impact.ceiling_bps_before, f.impact.ceiling_bps_after) {
                let _ = writeln!(o, "      ceiling: {} -> {}", rate(b), rate(a));
            }
            let _ = writeln!(o, "      likely cause: {}", f.cause);
            let frames = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
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
                "{} connection(s) only in {}: {}",
                c.unmatched_connections.len(),
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
    let _ = writeln!(o, "{} finding(s)", report.findings.len());
    o
}
