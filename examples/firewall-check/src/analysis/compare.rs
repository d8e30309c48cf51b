//! `firewall-check compare`: two captures of the same traffic, taken on the
//! two sides of a middlebox, and every field the middlebox changed.
//!
//! The steps, one submodule each, on the model every subcommand shares
//! ([`crate::decode`] decodes, [`crate::conn::tracker`] tracks
//! connections, [`crate::finding`] names what is found):
//!
//! 1. [`engine`]: read both captures together in time order (`-` is
//!    standard input for one of them), each segment decoded once and put in
//!    its connection by the shared tracker; memory follows the connections
//!    open at once and a bounded alignment window, not the captures' size
//!    (see [`engine`] for the bounds). A capture that breaks off mid-way
//!    gives what was read and a warning; only a file that is not a capture
//!    is an error.
//! 2. [`matching`]: pair connections across the captures on what survives
//!    address and port translation, sequence rewriting and handshake
//!    proxying (client ISN, SYN timestamps, data segment lengths and bytes,
//!    IPv4 identifications, addresses); decide which capture is nearer the
//!    client (TTL, then time); then align each direction packet by packet.
//! 3. [`findings`]: compare every aligned pair (DSCP, ECN, addresses and
//!    ports, sequence and acknowledgment numbers, window field, each option
//!    as on the wire, values as the receiving Linux kernel reads them) and
//!    decide on packets seen on one side only: dropped or injected by the
//!    middlebox, or missed by a capture (the receiver acknowledged their
//!    bytes on the wire of the capture that lacks them, or they fall outside
//!    that capture's time span); fold everything into one finding per
//!    connection, direction and kind, with the packets affected.
//! 4. [`impact`]: what each finding costs (throughput ceilings from `bdp` at
//!    the measured or given RTT).
//!
//! "Before" and "after" always mean before and after the middlebox in the
//! packet's direction, so the verdicts do not depend on the order in which
//! the two files are given. A router's TTL decrement is not a finding: the
//! TTL only tells which capture is nearer the client. The JSON form is
//! documented field by field in `docs/json.md`.
//!
//! ```
//! use firewall_check::analysis::compare::{compare_paths, Options};
//! let report = compare_paths(
//!     "../data/campus-inside.pcap".as_ref(),
//!     "../data/campus-outside.pcap".as_ref(),
//!     &Options::default(),
//! )?;
//! assert!(report.findings.iter().any(|f| f.kind == "wscale_stripped"));
//! # Ok::<(), firewall_check::analysis::compare::CompareError>(())
//! ```

pub mod engine;
pub mod findings;
pub mod impact;
pub mod matching;
pub mod packet;
mod render;

use std::io::{BufReader, Read};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tcp_options::kind::MAX_WINDOW_SCALE;
use thiserror::Error;

use crate::conn::tracker::{Direction, DEFAULT_CAPACITY};
use crate::finding::Kind;
use capture::CaptureError;
use engine::Input;
use findings::{dir_from_index, Val};
use impact::{Ctx, Impact};

pub use render::render_text;

/// The version of the JSON document (`schema_version`); 2 since findings'
/// `before`/`after` are structured values.
pub const SCHEMA_VERSION: u32 = 2;

/// Why a comparison could not run.
#[derive(Debug, Error)]
pub enum CompareError {
    /// A capture file could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not a capture (or unreadable from its first bytes).
    #[error("{path}: {source}")]
    Capture {
        /// The file.
        path: String,
        /// The cause.
        source: CaptureError,
    },
    /// Both captures were given as standard input.
    #[error("only one of the two captures can be read from standard input (-)")]
    BothStdin,
}

/// Settings of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Round-trip time for impacts; measured from the handshake when `None`.
    pub rtt: Option<Duration>,
    /// Most connections each capture's tracker holds open at once.
    pub max_connections: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rtt: None,
            max_connections: DEFAULT_CAPACITY,
        }
    }
}

/// One capture as the report describes it.
#[derive(Debug, Clone, Serialize)]
pub struct CaptureSummary {
    /// The name given (a path, or `-`).
    pub path: String,
    /// Packet records read.
    pub records: u64,
    /// TCP segments decoded.
    pub tcp_packets: u64,
    /// TCP connections found.
    pub connections: usize,
    /// Connections with no counterpart in the other capture (`client -> server`).
    pub unmatched_connections: Vec<String>,
    /// Connections ended early because the tracker's table was full
    /// (`--max-connections`): their rest is followed as another connection.
    pub evicted_connections: u64,
    /// What made the result partial.
    pub warnings: Vec<String>,
}

/// One side of a matched connection.
#[derive(Debug, Clone, Serialize)]
pub struct ConnSide {
    /// The capture.
    pub capture: String,
    /// The client as this capture sees it.
    pub client: String,
    /// The server as this capture sees it.
    pub server: String,
    /// TCP segments of the connection in this capture.
    pub packets: usize,
}

/// A connection seen in both captures.
#[derive(Debug, Clone, Serialize)]
pub struct ConnReport {
    /// Number, from 1, referred to by findings.
    pub id: usize,
    /// The client as the client-side capture sees it.
    pub client: String,
    /// The server as the server-side capture sees it.
    pub server: String,
    /// The capture nearer the client.
    pub client_side: ConnSide,
    /// The capture nearer the server.
    pub server_side: ConnSide,
    /// How the client side was decided: `ttl`, `time` or `assumed`.
    pub sides_by: &'static str,
    /// What the connections were matched on.
    pub matched_by: Vec<String>,
    /// Packet pairs matched across the captures.
    pub matched_packets: usize,
    /// RTT used for impacts, seconds.
    pub rtt_s: Option<f64>,
    /// Where the RTT came from: `handshake`, `given` or `unknown`.
    pub rtt_source: &'static str,
}

/// Frame numbers affected by a finding, per capture.
#[derive(Debug, Clone, Serialize)]
pub struct Frames {
    /// In the client-side capture (at most ten).
    pub client_side: Vec<u64>,
    /// In the server-side capture (at most ten).
    pub server_side: Vec<u64>,
}

/// One change the middlebox made (or one gap in a capture), once per
/// connection, direction and kind.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// What changed.
    pub kind: Kind,
    /// The kind in a few words.
    pub title: &'static str,
    /// `client_to_server` or `server_to_client`.
    pub direction: &'static str,
    /// The connection's `id`.
    pub connection: usize,
    /// Packets affected.
    pub count: u64,
    /// The first affected value before the middlebox, structured
    /// (`docs/json.md`); `null` when absent there.
    pub before: Value,
    /// The same value after it.
    pub after: Value,
    /// `before` in words, for the text report.
    #[serde(skip)]
    pub before_text: String,
    /// `after` in words.
    #[serde(skip)]
    pub after_text: String,
    /// Option kind for `option_stripped`, `option_added`, `option_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_kind: Option<u8>,
    /// For `capture_loss`: the capture that lacks the frames
    /// (`client_side` or `server_side`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_from: Option<&'static str>,
    /// For `capture_loss`: how many of `count` fall outside the time span
    /// of the capture that lacks them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_span: Option<u64>,
    /// For `nat` client to server: replies translated back by the same
    /// translation (packets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replies_translated: Option<u64>,
    /// Distinct before/after pairs among the affected packets.
    pub distinct_values: u64,
    /// What it costs.
    pub impact: Impact,
    /// The usual cause.
    pub cause: &'static str,
    /// Affected frames.
    pub packets: Frames,
}

/// An IP-level change outside the finding kinds (IP ID, DF, TTL).
#[derive(Debug, Clone, Serialize)]
pub struct Note {
    /// The connection's `id`.
    pub connection: usize,
    /// `client_to_server` or `server_to_client`.
    pub direction: &'static str,
    /// Short name: `ip_id`, `df`, `ttl`, `unaligned`.
    pub what: &'static str,
    /// Packets affected.
    pub count: u64,
    /// In words.
    pub text: String,
}

/// The result of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The two captures, in the order given.
    pub captures: [CaptureSummary; 2],
    /// Connections found in both.
    pub connections: Vec<ConnReport>,
    /// Changes made by the middlebox, and gaps in the captures.
    pub findings: Vec<Finding>,
    /// IP-level changes outside the finding kinds.
    pub notes: Vec<Note>,
}

impl Report {
    /// True when a finding is a change to the traffic (not only capture loss).
    pub fn has_tampering(&self) -> bool {
        self.findings.iter().any(|f| f.kind.is_tampering())
    }
}

/// Opens and compares two capture files (`-` is standard input, for one of them).
pub fn compare_paths(a: &Path, b: &Path, opts: &Options) -> Result<Report, CompareError> {
    let stdin = |p: &Path| p.as_os_str() == "-";
    if stdin(a) && stdin(b) {
        return Err(CompareError::BothStdin);
    }
    let open = |p: &Path| -> Result<Box<dyn Read>, CompareError> {
        if stdin(p) {
            return Ok(Box::new(std::io::stdin().lock()));
        }
        std::fs::File::open(p)
            .map(|f| Box::new(BufReader::new(f)) as Box<dyn Read>)
            .map_err(|source| CompareError::Open {
                path: p.display().to_string(),
                source,
            })
    };
    let (fa, fb) = (open(a)?, open(b)?);
    compare_readers(
        fa,
        &a.display().to_string(),
        fb,
        &b.display().to_string(),
        opts,
    )
}

/// Compares two captures read from `a` and `b`, named `name_a` and `name_b`.
pub fn compare_readers<A: Read, B: Read>(
    a: A,
    name_a: &str,
    b: B,
    name_b: &str,
    opts: &Options,
) -> Result<Report, CompareError> {
    let mut ia =
        Input::new(name_a, a, opts.max_connections).map_err(|source| CompareError::Capture {
            path: name_a.to_string(),
            source,
        })?;
    let mut ib =
        Input::new(name_b, b, opts.max_connections).map_err(|source| CompareError::Capture {
            path: name_b.to_string(),
            source,
        })?;
    let e = engine::run(&mut ia, &mut ib, opts.rtt);
    Ok(build_report(e, [&ia.summary_parts(), &ib.summary_parts()]))
}

/// Arguments of `firewall-check compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Capture taken on one side of the middlebox (pcap or pcapng; `-` for
    /// standard input).
    pub capture_a: std::path::PathBuf,
    /// Capture taken on the other side, at the same time (either order; `-`
    /// for standard input unless CAPTURE_A is).
    pub capture_b: std::path::PathBuf,
    /// Print the report as JSON (`schema_version` 2, see docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Round-trip time for the impact figures (e.g. `10ms`); measured from
    /// the handshake when absent.
    #[arg(long)]
    pub rtt: Option<String>,
    /// Most connections each capture's tracker holds open at once (the
    /// least recently active one is ended early beyond it).
    #[arg(long, default_value_t = DEFAULT_CAPACITY)]
    pub max_connections: usize,
}

/// Runs `firewall-check compare`: prints the report on stdout (text or
/// JSON). An error (a file that cannot be read, a bad `--rtt`), a capture
/// that could not be read to its end (the report of what was read is still
/// printed) or two captures with no connection in common give `Err` with the
/// message for stderr. Findings that change the traffic give
/// [`crate::Outcome::Findings`]; capture loss alone does not.
pub fn run(args: &CompareArgs) -> Result<crate::Outcome, crate::Failure> {
    use std::io::Write;
    let rtt = match args.rtt.as_deref().map(bdp::parse_duration) {
        None => None,
        Some(Ok(d)) if !d.is_zero() => Some(d),
        Some(Ok(_)) => {
            return Err(crate::Failure::Usage(
                "--rtt must be above zero".to_string(),
            ))
        }
        Some(Err(e)) => return Err(crate::Failure::Usage(format!("bad --rtt: {e}"))),
    };
    if args.max_connections == 0 {
        return Err(crate::Failure::Usage(
            "--max-connections must be at least 1".to_string(),
        ));
    }
    let opts = Options {
        rtt,
        max_connections: args.max_connections,
    };
    let report = match compare_paths(&args.capture_a, &args.capture_b, &opts) {
        Ok(r) => r,
        Err(e @ CompareError::BothStdin) => return Err(crate::Failure::Usage(e.to_string())),
        Err(e) => return Err(e.to_string().into()),
    };
    let out = if args.json {
        serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n"
    } else {
        render_text(&report)
    };
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if crate::is_broken_pipe(&e) => return Ok(crate::Outcome::Clean),
        Err(e) => return Err(format!("cannot write the report: {e}").into()),
        Ok(()) => {}
    }
    let problems: Vec<String> = report
        .captures
        .iter()
        .flat_map(|c| c.warnings.iter().map(move |w| format!("{}: {w}", c.path)))
        .collect();
    if report.connections.is_empty() {
        return Err(
            "no TCP connection was found in both captures: were they taken at the same time on the two sides of the same middlebox?"
                .to_string().into(),
        );
    }
    if !problems.is_empty() {
        return Err(problems.join("; ").into());
    }
    Ok(if report.has_tampering() {
        crate::Outcome::Findings
    } else {
        crate::Outcome::Clean
    })
}

/// What a capture's summary needs from its reader.
struct SummaryParts {
    path: String,
    records: u64,
    tcp_packets: u64,
    warnings: Vec<String>,
}

impl<R: Read> Input<R> {
    fn summary_parts(&self) -> SummaryParts {
        SummaryParts {
            path: self.name.clone(),
            records: self.records,
            tcp_packets: self.tcp_packets,
            warnings: self.warnings.clone(),
        }
    }
}

/// Orders the finished pairs (by the client side's first packet, then by
/// label: the same whatever the order of the files) and builds the report.
fn build_report(e: engine::Engine, parts: [&SummaryParts; 2]) -> Report {
    let mut done = e.done;
    done.sort_by(|x, y| {
        x.key_ts
            .cmp(&y.key_ts)
            .then_with(|| x.report.client.cmp(&y.report.client))
            .then_with(|| x.report.server.cmp(&y.report.server))
    });
    let mut out_conns = Vec::new();
    let mut out_findings = Vec::new();
    let mut out_notes = Vec::new();
    for (n, d) in done.into_iter().enumerate() {
        let mut report = d.report;
        report.id = n + 1;
        let proxied_conn = d.col.map.keys().any(|k| k.1 == Kind::HandshakeProxied);
        for (&(dir_i, kind, option_kind, missing_from), acc) in &d.col.map {
            let dir = dir_from_index(dir_i);
            let dctx = &d.dir_ctx[usize::from(dir_i)];
            out_findings.push(Finding {
                kind,
                title: kind.title(),
                direction: dir.as_str(),
                connection: report.id,
                count: acc.count,
                before: acc.before.json.clone(),
                after: acc.after.json.clone(),
                before_text: acc.before.text.clone(),
                after_text: acc.after.text.clone(),
                option_kind,
                missing_from: missing_from.map(|m| m.as_str()),
                outside_span: (kind == Kind::CaptureLoss).then_some(acc.outside_span),
                replies_translated: (kind == Kind::Nat && dir == Direction::ClientToServer)
                    .then_some(acc.replies_translated),
                distinct_values: acc.distinct,
                impact: impact_of(kind, dir, acc, &d.ctx, dctx, option_kind, missing_from),
                cause: if proxied_conn && PROXY_KINDS.contains(&kind) {
                    PROXY_CAUSE
                } else {
                    kind.cause()
                },
                packets: Frames {
                    client_side: acc.frames_client_side.clone(),
                    server_side: acc.frames_server_side.clone(),
                },
            });
        }
        for (&(dir_i, what), (count, text)) in &d.col.notes {
            out_notes.push(Note {
                connection: report.id,
                direction: dir_from_index(dir_i).as_str(),
                what,
                count: *count,
                text: text.clone(),
            });
        }
        out_conns.push(report);
    }
    let summary = |k: usize| CaptureSummary {
        path: parts[k].path.clone(),
        records: parts[k].records,
        tcp_packets: parts[k].tcp_packets,
        connections: e.connections[k],
        unmatched_connections: e.unmatched[k].clone(),
        evicted_connections: e.evicted[k],
        warnings: parts[k].warnings.clone(),
    };
    Report {
        schema_version: SCHEMA_VERSION,
        captures: [summary(0), summary(1)],
        connections: out_conns,
        findings: out_findings,
        notes: out_notes,
    }
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

/// Their cause when the handshake was proxied.
const PROXY_CAUSE: &str = "the SYN proxy that answered the handshake: it announced its own configured options (e.g. SYNPROXY --wscale/--mss) and translates sequence numbers and timestamps for the rest of the connection; its options must match the server's";

fn impact_of(
    kind: Kind,
    dir: Direction,
    acc: &findings::Acc,
    ctx: &Ctx,
    dctx: &Ctx,
    option_kind: Option<u8>,
    missing_from: Option<findings::CaptureSide>,
) -> Impact {
    let num = |v: &Val| v.num;
    match kind {
        Kind::WscaleStripped => impact::wscale_stripped(
            dir == Direction::ClientToServer,
            num(&acc.before).and_then(|s| u8::try_from(s).ok()),
            ctx,
        ),
        Kind::WscaleChanged => match (num(&acc.before), num(&acc.after)) {
            (Some(b), Some(a)) => impact::wscale_changed(
                u8::try_from(b).unwrap_or(MAX_WINDOW_SCALE),
                u8::try_from(a).unwrap_or(MAX_WINDOW_SCALE),
                if dir == Direction::ClientToServer {
                    ctx.client_max_window_field
                } else {
                    ctx.server_max_window_field
                },
                ctx,
            ),
            _ => impact::words("window scale changed", ctx),
        },
        Kind::WscaleAdded => impact::words(
            "the receiver of this SYN believes the sender scales its window although it did not offer to: the sender's window fields are multiplied by the invented shift, overrunning it",
            ctx,
        ),
        Kind::MssClamped | Kind::MssChanged => match (num(&acc.before), num(&acc.after)) {
            (Some(b), Some(a)) => impact::mss(
                u16::try_from(b).unwrap_or(u16::MAX),
                u16::try_from(a).unwrap_or(u16::MAX),
                ctx,
            ),
            _ => impact::words("MSS changed", ctx),
        },
        Kind::SackpermStripped => impact::words(
            "SACK is not negotiated: after several losses in one window the sender repairs one segment per round trip, so recovery on a long path takes many RTTs",
            ctx,
        ),
        Kind::TimestampsStripped => impact::words(
            "without timestamps there is one RTT sample per window instead of per segment, and no PAWS protection against wrapped sequence numbers (needed above about 1 Gbit/s); when stripped only from data segments after both ends negotiated them, RFC 7323 receivers may discard those segments",
            ctx,
        ),
        Kind::TimestampsChanged => impact::words(
            "RTT measurement keeps working while the translation is consistent; an inconsistent one breaks PAWS and the receiver drops segments",
            ctx,
        ),
        Kind::SeqRewritten | Kind::AckRewritten => impact::words(
            &format!(
                "offset {} (mod 2^32) on the first affected packet; no throughput cost while the translation is consistent (SACK blocks must be translated too); it hides the host's own sequence numbers",
                match (acc.before.num, acc.after.num) {
                    (Some(b), Some(a)) => (a as u32).wrapping_sub(b as u32).to_string(),
                    _ => "unknown".to_string(),
                }
            ),
            ctx,
        ),
        Kind::WindowRewritten => impact::window(
            acc.max_before.and_then(|v| u16::try_from(v).ok()).unwrap_or(0),
            acc.max_after.and_then(|v| u16::try_from(v).ok()).unwrap_or(0),
            None,
            ctx,
        ),
        Kind::DscpChanged => impact::words(
            &format!(
                "downstream routers queue these packets as {} instead of {}: {}",
                acc.after.text,
                acc.before.text,
                if acc.after.text.starts_with("CS1") || acc.after.text.starts_with("LE") {
                    "a scavenger class that gets almost nothing while other traffic fills the link (on TransPAC QBSS got about 1% of an OC-3)"
                } else if acc.after.num == Some(0) || acc.after.text.starts_with("CS0") || acc.after.text.starts_with("DF") {
                    "best effort, losing any priority or assured forwarding the sender asked for"
                } else {
                    "a different per-hop behaviour than the sender asked for"
                }
            ),
            ctx,
        ),
        Kind::EcnChanged => impact::words(
            "congestion marks are lost or invented: without ECN the path signals congestion by dropping packets instead",
            ctx,
        ),
        Kind::Nat => impact::words(
            &format!(
                "none by itself; the addresses and ports the two ends see differ{}",
                if acc.replies_translated > 0 {
                    format!(" ({} replies translated back)", acc.replies_translated)
                } else {
                    String::new()
                }
            ),
            ctx,
        ),
        Kind::CaptureLoss => impact::words(
            &format!(
                "none on the traffic: the {} capture lacks {} frame(s) that crossed its wire{}, so they could not be compared; they are not counted as dropped or injected",
                missing_from.map_or("other", |m| if m == findings::CaptureSide::ClientSide { "client-side" } else { "server-side" }),
                acc.count,
                if acc.outside_span == acc.count {
                    " before it started or after it stopped".to_string()
                } else if acc.outside_span > 0 {
                    format!(" ({} of them before it started or after it stopped; the others acknowledged by the receiver there)", acc.outside_span)
                } else {
                    " (the receiver acknowledged their bytes on that side)".to_string()
                }
            ),
            ctx,
        ),
        // Seen only by active probing; two captures never produce them.
        Kind::ProbeDropped | Kind::EcnSetupDropped | Kind::OutOfWindowDropped => {
            impact::words(kind.title(), ctx)
        }
        Kind::HandshakeProxied => impact::words(
            "the client's handshake was answered by the middlebox, not the server: the options the client learned (window scale, MSS, SACK, timestamps) are the proxy's, and any mismatch with the server's lasts for the whole connection",
            ctx,
        ),
        Kind::PacketDropped => impact::dropped(acc.count, dctx),
        Kind::PacketInjected => impact::words(
            "packets the far end never sent: injected resets end connections, injected ACKs hide loss from the sender",
            ctx,
        ),
        Kind::OptionStripped | Kind::OptionAdded | Kind::OptionChanged => impact::words(
            &format!("option kind {} altered", option_kind.map(|k| k.to_string()).unwrap_or_default()),
            ctx,
        ),
    }
}
