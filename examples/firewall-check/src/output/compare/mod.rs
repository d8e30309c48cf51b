//! `compare`'s report for people ([`render_text`], in [`text`]) and for
//! scripts ([`report_json`]: the document `docs/json.md` describes field by
//! field, `schema_version` [`SCHEMA_VERSION`]), and the names and words of
//! its typed parts.

pub mod text;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::analysis::compare::{
    CaptureSummary, ConnEnds, ConnReport, ConnSide, MatchedOn, Note, NoteDetail, NoteWhat, Report,
    RttSource, SidesBy, SCHEMA_VERSION,
};
use crate::finding::{Compared, FieldValue, Finding, TunnelPoint};
use crate::output::finding::{capture_side_name, cause_text, value_json};
use crate::output::tunnel;

pub use text::render_text;

/// The report as JSON, pretty-printed, with a final newline.
pub fn report_json(report: &Report) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(report)? + "\n")
}

/// [`report_json`] of two live captures: `live` holds, per capture, how
/// it ended and what the kernel dropped (`cli::live::LiveEnd::json`).
pub fn report_json_live(report: &Report, live: &[serde_json::Value]) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(&WithLive { report, live })? + "\n")
}

/// The report with its live captures' ends.
struct WithLive<'a> {
    report: &'a Report,
    live: &'a [serde_json::Value],
}

impl Serialize for WithLive<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        report_fields(self.report, Some(self.live), s)
    }
}

fn report_fields<S: Serializer>(
    r: &Report,
    live: Option<&[serde_json::Value]>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut st = s.serialize_struct("Report", 6)?;
    st.serialize_field("schema_version", &SCHEMA_VERSION)?;
    st.serialize_field("captures", &r.captures)?;
    if let Some(live) = live {
        st.serialize_field("live", live)?;
    }
    st.serialize_field("connections", &r.connections)?;
    st.serialize_field("findings", &r.findings)?;
    st.serialize_field("notes", &r.notes)?;
    st.end()
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        report_fields(self, None, s)
    }
}

impl Serialize for CaptureSummary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let unmatched: Vec<String> = self.unmatched_connections.iter().map(ends_text).collect();
        let warnings: Vec<String> = self.warnings.iter().map(ToString::to_string).collect();
        let mut st = s.serialize_struct("CaptureSummary", 8)?;
        st.serialize_field("path", &self.path)?;
        st.serialize_field("records", &self.records)?;
        st.serialize_field("tcp_packets", &self.tcp_packets)?;
        st.serialize_field("connections", &self.connections)?;
        st.serialize_field("unmatched_connections", &unmatched)?;
        st.serialize_field("evicted_connections", &self.evicted_connections)?;
        st.serialize_field("warnings", &warnings)?;
        // Only when a segment was tunneled or a record could not be
        // opened: a plain capture's object is as before.
        if tunnel::summary_due(&self.tally) {
            let counts = tunnel::SummaryJson {
                frames: self.records,
                tally: &self.tally,
            };
            st.serialize_field("summary", &counts)?;
        } else {
            st.skip_field("summary")?;
        }
        st.end()
    }
}

impl Serialize for ConnSide {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ConnSide", 5)?;
        st.serialize_field("capture", &self.capture)?;
        st.serialize_field("client", &self.client.to_string())?;
        st.serialize_field("server", &self.server.to_string())?;
        st.serialize_field("packets", &self.packets)?;
        match &self.tunnels {
            Some(t) => st.serialize_field("tunnels", &tunnel::CarriedInJson(t))?,
            None => st.skip_field("tunnels")?,
        }
        st.end()
    }
}

impl Serialize for ConnReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let matched_by: Vec<String> = self
            .matched_by
            .iter()
            .map(|m| matched_on_text(*m))
            .collect();
        let mut st = s.serialize_struct("ConnReport", 10)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("client", &self.client.to_string())?;
        st.serialize_field("server", &self.server.to_string())?;
        st.serialize_field("client_side", &self.client_side)?;
        st.serialize_field("server_side", &self.server_side)?;
        st.serialize_field("sides_by", sides_by_name(self.sides_by))?;
        st.serialize_field("matched_by", &matched_by)?;
        st.serialize_field("matched_packets", &self.matched_packets)?;
        st.serialize_field("rtt_s", &self.rtt.map(|r| r.value.as_secs_f64()))?;
        st.serialize_field("rtt_source", rtt_source_name(self.rtt.map(|r| r.source)))?;
        st.end()
    }
}

impl Serialize for Note {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Note", 5)?;
        st.serialize_field("connection", &self.connection)?;
        st.serialize_field("direction", self.direction.as_str())?;
        st.serialize_field("what", note_name(self.detail.what()))?;
        st.serialize_field("count", &self.count)?;
        st.serialize_field("text", &note_text(&self.detail))?;
        st.end()
    }
}

/// A finding of `compare` (`c` its evidence), in the order `docs/json.md`
/// gives: `kind`, `title`, `direction`, `connection`, `count`, `before`,
/// `after`, then `option_kind`, `missing_from`, `outside_span` and
/// `replies_translated` where they apply, `distinct_values`, `impact`,
/// `cause`, `packets`; for the `tunnel_*` kinds `confidence` and `tunnel`
/// last.
pub fn serialize_finding<S: Serializer>(
    f: &Finding,
    c: &Compared,
    s: S,
) -> Result<S::Ok, S::Error> {
    let optional = [
        c.option_kind.is_some(),
        c.missing_from.is_some(),
        c.outside_span.is_some(),
        c.replies_translated.is_some(),
    ];
    let tunnel = c.tunnel.as_ref().filter(|_| f.kind.is_tunnel());
    let n = 11 + optional.iter().filter(|o| **o).count() + 2 * usize::from(tunnel.is_some());
    let mut st = s.serialize_struct("Finding", n)?;
    st.serialize_field("kind", &f.kind)?;
    st.serialize_field("title", f.kind.title())?;
    st.serialize_field("direction", f.direction.as_str())?;
    st.serialize_field("connection", &c.connection)?;
    st.serialize_field("count", &c.count)?;
    st.serialize_field("before", &value_json(&c.before))?;
    st.serialize_field("after", &value_json(&c.after))?;
    if let Some(k) = c.option_kind {
        st.serialize_field("option_kind", &k)?;
    }
    if let Some(m) = c.missing_from {
        st.serialize_field("missing_from", capture_side_name(m))?;
    }
    if let Some(n) = c.outside_span {
        st.serialize_field("outside_span", &n)?;
    }
    if let Some(n) = c.replies_translated {
        st.serialize_field("replies_translated", &n)?;
    }
    st.serialize_field("distinct_values", &c.distinct_values)?;
    st.serialize_field("impact", &f.impact)?;
    st.serialize_field("cause", cause_text(f.kind, c.cause))?;
    st.serialize_field("packets", &c.frames)?;
    if let Some(t) = tunnel {
        st.serialize_field("confidence", f.confidence.as_str())?;
        st.serialize_field("tunnel", &tunnel_json(t))?;
    }
    st.end()
}

/// The encapsulation point of a `tunnel_*` finding: `action`,
/// `encapsulation`, `overhead_bytes`, and where they apply
/// `mss_matches_overhead`, `outer_ecn` and `rfc6040` (an ECN value, `null`
/// for RFC 6040's drop).
pub fn tunnel_json(t: &TunnelPoint) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    m.insert("action".into(), t.action.as_str().into());
    m.insert("encapsulation".into(), t.encapsulation.id().into());
    m.insert("overhead_bytes".into(), t.overhead.into());
    if let Some(b) = t.mss_matches_overhead {
        m.insert("mss_matches_overhead".into(), b.into());
    }
    if let Some(e) = t.outer_ecn {
        m.insert("outer_ecn".into(), value_json(&FieldValue::Ecn(e)));
    }
    if let Some(r) = t.rfc6040 {
        m.insert(
            "rfc6040".into(),
            r.map_or(serde_json::Value::Null, |e| value_json(&FieldValue::Ecn(e))),
        );
    }
    serde_json::Value::Object(m)
}

/// `client -> server`.
pub fn ends_text(e: &ConnEnds) -> String {
    format!("{} -> {}", e.client, e.server)
}

/// `ttl`, `time` or `assumed`.
pub fn sides_by_name(s: SidesBy) -> &'static str {
    match s {
        SidesBy::Ttl => "ttl",
        SidesBy::Time => "time",
        SidesBy::Assumed => "assumed",
    }
}

/// `given`, `handshake` ([`RttSource::as_str`]), or `unknown` without an
/// RTT.
pub fn rtt_source_name(s: Option<RttSource>) -> &'static str {
    s.map_or("unknown", RttSource::as_str)
}

/// A piece of matching evidence in words.
pub fn matched_on_text(m: MatchedOn) -> String {
    match m {
        MatchedOn::ClientIsn => "client initial sequence number".to_string(),
        MatchedOn::SynTsval => "SYN timestamp value".to_string(),
        MatchedOn::SynAckTsval => "SYN-ACK timestamp value".to_string(),
        MatchedOn::DataSegments(n) => format!("{n} data segments (length and first bytes)"),
        MatchedOn::IpIdentifications(n) => format!("{n} IP identifications"),
        MatchedOn::SameAddresses => "same addresses and ports".to_string(),
    }
}

/// The note's name in JSON (`what`).
pub fn note_name(w: NoteWhat) -> &'static str {
    match w {
        NoteWhat::Df => "df",
        NoteWhat::IpId => "ip_id",
        NoteWhat::Ttl => "ttl",
        NoteWhat::Unaligned => "unaligned",
    }
}

/// The note in words, with its first example.
pub fn note_text(d: &NoteDetail) -> String {
    match *d {
        NoteDetail::Df { set } => format!(
            "Don't Fragment {} by the middlebox",
            if set { "set" } else { "cleared" }
        ),
        NoteDetail::IpId { before, after } => {
            format!("IPv4 identification rewritten (e.g. {before} -> {after})")
        }
        NoteDetail::Ttl {
            change,
            usual,
            before,
            after,
        } => format!(
            "TTL/hop limit changed by {change} instead of the usual {usual} (e.g. {before} -> {after})"
        ),
        NoteDetail::Unaligned => "packets not compared: the two captures' sequence numbers could not be aligned in this direction (no SYN in both, no unambiguous data segment or acknowledgment)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_ordered_as_their_names_sort() {
        // The report's order of a connection's notes was the order of
        // their names; the typed key keeps it.
        let all = [
            NoteWhat::Df,
            NoteWhat::IpId,
            NoteWhat::Ttl,
            NoteWhat::Unaligned,
        ];
        for w in all.windows(2) {
            assert!(w[0] < w[1] && note_name(w[0]) < note_name(w[1]));
        }
    }
}
