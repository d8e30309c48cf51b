//! The result of a comparison, typed: the two captures, the connections
//! seen in both, the findings ([`Finding`] with [`Compared`] evidence) and
//! the notes. Its words and its JSON are the output stage's
//! (`crate::output::compare`).

use std::net::SocketAddr;
use std::time::Duration;

use thiserror::Error;

use super::engine::{Done, Engine};
use super::findings::{dir_from_index, Acc, NoteDetail};
use super::impact::{impact_of, Folded};
use crate::conn::tracker::CarriedIn;
use crate::conn::tracker::Direction;
use crate::finding::{Cause, Compared, Confidence, Evidence, Finding, Kind};
use capture::tally::Tally;
use capture::CaptureError;

pub use crate::finding::impact::RttSource;

/// What made one capture's part of the result partial.
#[derive(Debug, Error)]
pub enum CaptureWarning {
    /// The capture could not be read to its end: what came before is used.
    #[error("{error}; using the {records} packet records before it")]
    CutShort {
        /// Why it broke off.
        error: CaptureError,
        /// Packet records read before.
        records: u64,
    },
    /// Records that could not be decoded were skipped.
    #[error("{0} packet record(s) could not be decoded and were skipped")]
    Undecodable(u64),
}

/// A connection's two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnEnds {
    /// The client (the SYN sender).
    pub client: SocketAddr,
    /// The server.
    pub server: SocketAddr,
}

/// One capture as the report describes it.
#[derive(Debug)]
pub struct CaptureSummary {
    /// The name given (a path, or `-`).
    pub path: String,
    /// Packet records read.
    pub records: u64,
    /// TCP segments decoded.
    pub tcp_packets: u64,
    /// TCP connections found.
    pub connections: usize,
    /// Segments per encapsulation, and records without one by cause.
    pub tally: Tally,
    /// Connections with no counterpart in the other capture, in the order
    /// they ended.
    pub unmatched_connections: Vec<ConnEnds>,
    /// Connections ended early because the tracker's table was full
    /// (`--max-connections`): their rest is followed as another connection.
    pub evicted_connections: u64,
    /// What made the result partial.
    pub warnings: Vec<CaptureWarning>,
}

/// One side of a matched connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnSide {
    /// The capture's name.
    pub capture: String,
    /// The client as this capture sees it.
    pub client: SocketAddr,
    /// The server as this capture sees it.
    pub server: SocketAddr,
    /// TCP segments of the connection in this capture.
    pub packets: usize,
    /// The tunnels the connection was carried in, as this capture saw it
    /// (`None` on a plain link).
    pub tunnels: Option<CarriedIn>,
}

/// How the capture nearer the client was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SidesBy {
    /// Packets lose hops crossing the middlebox: the TTL / hop limit.
    Ttl,
    /// The client's first packet is seen first on its side.
    Time,
    /// Neither: the first capture given is taken as the client side.
    Assumed,
}

/// The RTT the impacts use, and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rtt {
    /// The round-trip time.
    pub value: Duration,
    /// Where it comes from.
    pub source: RttSource,
}

/// A piece of evidence that paired two captures' connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchedOn {
    /// The same client initial sequence number.
    ClientIsn,
    /// The same SYN timestamp value.
    SynTsval,
    /// The same SYN-ACK timestamp value.
    SynAckTsval,
    /// Data segments with the same length and first bytes, how many.
    DataSegments(u32),
    /// IP identifications in common, how many.
    IpIdentifications(u32),
    /// The same addresses and ports.
    SameAddresses,
}

/// A connection seen in both captures.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnReport {
    /// Number, from 1, referred to by findings.
    pub id: usize,
    /// The client as the client-side capture sees it.
    pub client: SocketAddr,
    /// The server as the server-side capture sees it.
    pub server: SocketAddr,
    /// The capture nearer the client.
    pub client_side: ConnSide,
    /// The capture nearer the server.
    pub server_side: ConnSide,
    /// How the client side was decided.
    pub sides_by: SidesBy,
    /// What the connections were matched on.
    pub matched_by: Vec<MatchedOn>,
    /// Packet pairs matched across the captures.
    pub matched_packets: usize,
    /// The RTT used for impacts; `None` when unknown.
    pub rtt: Option<Rtt>,
}

/// An IP-level change outside the finding kinds (IP ID, DF, TTL), or
/// packets that could not be aligned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The connection's `id`.
    pub connection: usize,
    /// The direction of the packets.
    pub direction: Direction,
    /// Packets affected.
    pub count: u64,
    /// What it is, with its first example.
    pub detail: NoteDetail,
}

/// The result of a comparison.
#[derive(Debug)]
pub struct Report {
    /// The two captures, in the order given.
    pub captures: [CaptureSummary; 2],
    /// Connections found in both.
    pub connections: Vec<ConnReport>,
    /// Changes made by the middlebox, and gaps in the captures; each with
    /// [`Evidence::Compared`].
    pub findings: Vec<Finding>,
    /// IP-level changes outside the finding kinds.
    pub notes: Vec<Note>,
}

impl Report {
    /// True when a finding is a change to the traffic (not only capture
    /// loss) and sure.
    pub fn has_tampering(&self) -> bool {
        self.findings.iter().any(Finding::is_sure_tampering)
    }
}

/// What a capture's summary takes from its reader.
pub struct SummaryParts {
    /// The name given.
    pub path: String,
    /// Packet records read.
    pub records: u64,
    /// TCP segments decoded.
    pub tcp_packets: u64,
    /// Segments per encapsulation, and records without one by cause.
    pub tally: Tally,
    /// What made it partial.
    pub warnings: Vec<CaptureWarning>,
}

/// Kinds a SYN proxy causes by itself once it has answered the handshake.
const PROXY_KINDS: [Kind; 8] = [
    Kind::WscaleChanged,
    Kind::MssChanged,
    Kind::MssClamped,
    Kind::SeqRewritten,
    Kind::AckRewritten,
    Kind::TimestampsChanged,
    Kind::OptionChanged,
    Kind::OptionAdded,
];

/// Orders the finished pairs (by the client side's first packet, then by
/// the ends: the same whatever the order of the files) and builds the
/// report.
pub fn build_report(e: Engine, parts: [SummaryParts; 2]) -> Report {
    let mut done = e.done;
    // Ties (captures without times) are ordered as the ends' text sorts,
    // the order the report has always had.
    done.sort_by(|x, y| {
        x.key_ts
            .cmp(&y.key_ts)
            .then_with(|| {
                x.report
                    .client
                    .to_string()
                    .cmp(&y.report.client.to_string())
            })
            .then_with(|| {
                x.report
                    .server
                    .to_string()
                    .cmp(&y.report.server.to_string())
            })
    });
    let mut connections = Vec::new();
    let mut findings = Vec::new();
    let mut notes = Vec::new();
    for (n, d) in done.into_iter().enumerate() {
        let id = n + 1;
        findings.extend(findings_of(&d, id));
        for (&(dir_i, _), &(count, detail)) in &d.col.notes {
            notes.push(Note {
                connection: id,
                direction: dir_from_index(dir_i),
                count,
                detail,
            });
        }
        connections.push(ConnReport { id, ..d.report });
    }
    let [pa, pb] = parts;
    let [ua, ub] = e.unmatched;
    let summary = |k: usize, p: SummaryParts, unmatched: Vec<ConnEnds>| CaptureSummary {
        path: p.path,
        records: p.records,
        tcp_packets: p.tcp_packets,
        tally: p.tally,
        connections: e.connections[k],
        unmatched_connections: unmatched,
        evicted_connections: e.evicted[k],
        warnings: p.warnings,
    };
    Report {
        captures: [summary(0, pa, ua), summary(1, pb, ub)],
        connections,
        findings,
        notes,
    }
}

/// How sure a finding is. Every compare finding rests on both captures'
/// packets, and is [`Confidence::High`], except the tunnel kinds whose
/// packets another behaviour could give:
///
/// - `tunnel_dscp_copied` when every affected packet had one inner DSCP
///   (a tunnel whose fixed outer DSCP is that value shows the same):
///   medium; with two or more inner DSCPs each copied, high;
/// - `tunnel_dscp_not_copied`, `tunnel_ecn_not_copied`,
///   `tunnel_ecn_nonstandard`: medium, as a router on the underlay
///   between the box and the capture may have re-marked the outer header
///   (or, at decapsulation, the outer header may have changed after the
///   capture).
pub fn confidence_of(kind: Kind, acc: &Acc) -> Confidence {
    match kind {
        Kind::TunnelDscpCopied if acc.distinct >= 2 => Confidence::High,
        Kind::TunnelDscpCopied
        | Kind::TunnelDscpNotCopied
        | Kind::TunnelEcnNotCopied
        | Kind::TunnelEcnNonstandard => Confidence::Medium,
        _ => Confidence::High,
    }
}

/// The findings of finished pair `d`, connection `id`, in key order.
fn findings_of(d: &Done, id: usize) -> impl Iterator<Item = Finding> + '_ {
    let proxied_conn = d.col.map.keys().any(|k| k.1 == Kind::HandshakeProxied);
    d.col
        .map
        .iter()
        .map(move |(&(dir_i, kind, option_kind, missing_from), acc)| {
            let direction = dir_from_index(dir_i);
            let impact = impact_of(
                Folded {
                    kind,
                    dir: direction,
                    acc,
                    option_kind,
                    missing_from,
                },
                &d.ctx,
                &d.dir_ctx[usize::from(dir_i)],
            );
            let evidence = Compared {
                connection: id,
                count: acc.count,
                before: acc.before.clone(),
                after: acc.after.clone(),
                distinct_values: acc.distinct,
                option_kind,
                missing_from,
                outside_span: (kind == Kind::CaptureLoss).then_some(acc.outside_span),
                replies_translated: (kind == Kind::Nat && direction == Direction::ClientToServer)
                    .then_some(acc.replies_translated),
                frames: acc.frames.clone(),
                tunnel: acc.tunnel.clone(),
                cause: if proxied_conn && PROXY_KINDS.contains(&kind) {
                    Cause::SynProxy
                } else {
                    Cause::Usual
                },
            };
            Finding {
                kind,
                direction,
                confidence: confidence_of(kind, acc),

                evidence: Evidence::Compared(evidence),
                impact,
            }
        })
}
