//! `firewall-check compare`: two captures of the same traffic, taken on the
//! two sides of a middlebox, and every field the middlebox changed.
//!
//! The steps, one submodule each:
//!
//! 1. [`packet`]: load each capture (pcap or pcapng, through
//!    [`crate::capture`]) into TCP segments with the fields a middlebox may
//!    touch. A capture that breaks off mid-way gives what was read and a
//!    warning; only a file that is not a capture is an error.
//! 2. [`conn`]: split each capture into connections and directions.
//! 3. [`matching`]: pair connections across the captures on what survives
//!    address and port translation, sequence rewriting and handshake proxying
//!    (client ISN, SYN timestamps, data segment lengths and bytes, IPv4
//!    identifications, addresses); decide which capture is nearer the client
//!    (TTL, then time); then align each direction packet by packet.
//! 4. [`findings`]: compare every aligned pair (DSCP, ECN, addresses and
//!    ports, sequence and acknowledgment numbers, window field, each option)
//!    and report packets seen on one side only; fold everything into one
//!    finding per connection, direction and kind, with the packets affected.
//! 5. [`impact`]: what each finding costs (throughput ceilings from `bdp` at
//!    the measured or given RTT) and its usual cause in vendor terms.
//!
//! "Before" and "after" always mean before and after the middlebox in the
//! packet's direction, so the verdicts do not depend on the order in which the
//! two files are given. A router's TTL decrement is not a finding: the TTL
//! only tells which capture is nearer the client.
//!
//! ```no_run
//! use examples::firewall::compare::{compare_paths, Options};
//! let report = compare_paths(
//!     "examples/data/campus-inside.pcap".as_ref(),
//!     "examples/data/campus-outside.pcap".as_ref(),
//!     &Options::default(),
//! )?;
//! assert!(report.findings.iter().any(|f| f.kind == "wscale_stripped"));
//! # Ok::<(), examples::firewall::compare::CompareError>(())
//! ```

pub mod conn;
pub mod findings;
pub mod impact;
pub mod matching;
pub mod packet;
mod render;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use thiserror::Error;

use crate::capture::CaptureError;
use conn::{connections, endpoint_str, Conn, Direction};
use findings::{compare_pair, Collector, DirCtx, Val, KINDS};
use impact::{Ctx, Impact};
use matching::{align, client_side_is_a, dir_of, pair_connections, seq_offset};
use packet::{load, Loaded, Packet, ACK, SYN};

pub use render::render_text;

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
}

/// Settings of a comparison.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Round-trip time for impacts; measured from the handshake when `None`.
    pub rtt: Option<Duration>,
}

/// One capture as the report describes it.
#[derive(Debug, Clone, Serialize)]
pub struct CaptureSummary {
    /// The name given (a path).
    pub path: String,
    /// Packet records read.
    pub records: u64,
    /// TCP segments decoded.
    pub tcp_packets: usize,
    /// TCP connections found.
    pub connections: usize,
    /// Connections with no counterpart in the other capture (`client -> server`).
    pub unmatched_connections: Vec<String>,
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

/// One change the middlebox made, once per connection, direction and kind.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// What changed (one of [`findings::KINDS`]).
    pub kind: &'static str,
    /// `client_to_server` or `server_to_client`.
    pub direction: &'static str,
    /// The connection's `id`.
    pub connection: usize,
    /// Packets affected.
    pub count: u64,
    /// The first affected value before the middlebox.
    pub before: String,
    /// The same value after it.
    pub after: String,
    /// Option kind for `option_stripped`, `option_added`, `option_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_kind: Option<u8>,
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
    /// Short name: `ip_id`, `df`, `ttl`.
    pub what: &'static str,
    /// Packets affected.
    pub count: u64,
    /// In words.
    pub text: String,
}

/// The result of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The two captures, in the order given.
    pub captures: [CaptureSummary; 2],
    /// Connections found in both.
    pub connections: Vec<ConnReport>,
    /// Changes made by the middlebox.
    pub findings: Vec<Finding>,
    /// IP-level changes outside the finding kinds.
    pub notes: Vec<Note>,
}

/// Opens and compares two capture files.
pub fn compare_paths(a: &Path, b: &Path, opts: &Options) -> Result<Report, CompareError> {
    let open = |p: &Path| {
        File::open(p)
            .map(BufReader::new)
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
    let la = load(a).map_err(|source| CompareError::Capture {
        path: name_a.to_string(),
        source,
    })?;
    let lb = load(b).map_err(|source| CompareError::Capture {
        path: name_b.to_string(),
        source,
    })?;
    Ok(compare_loaded(name_a, &la, name_b, &lb, opts))
}

/// Arguments of `firewall-check compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Capture taken on one side of the middlebox (pcap or pcapng).
    pub capture_a: std::path::PathBuf,
    /// Capture taken on the other side, at the same time (either order).
    pub capture_b: std::path::PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Round-trip time for the impact figures (e.g. `10ms`); measured from
    /// the handshake when absent.
    #[arg(long)]
    pub rtt: Option<String>,
}

/// Runs `firewall-check compare`: prints the report on stdout (text or
/// JSON). An error (a file that cannot be read, a bad `--rtt`), a capture
/// that could not be read to its end (the report of what was read is still
/// printed) or two captures with no connection in common give `Err` with the
/// message for stderr.
pub fn run(args: &CompareArgs) -> Result<super::Outcome, super::Failure> {
    use std::io::Write;
    let rtt = match args.rtt.as_deref().map(bdp::parse_duration) {
        None => None,
        Some(Ok(d)) if !d.is_zero() => Some(d),
        Some(Ok(_)) => {
            return Err(super::Failure::Usage(
                "--rtt must be above zero".to_string(),
            ))
        }
        Some(Err(e)) => return Err(super::Failure::Usage(format!("bad --rtt: {e}"))),
    };
    let report = compare_paths(&args.capture_a, &args.capture_b, &Options { rtt })
        .map_err(|e| e.to_string())?;
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
        Err(e) if super::is_broken_pipe(&e) => return Ok(super::Outcome::Clean),
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
    Ok(if report.findings.is_empty() {
        super::Outcome::Clean
    } else {
        super::Outcome::Findings
    })
}

/// Handshake RTT in one capture: client's SYN to the ACK that completes the handshake.
fn handshake_rtt(c: &Conn, pk: &[Packet], flipped: bool) -> Option<Duration> {
    let c2s = dir_of(c, Direction::ClientToServer, flipped);
    let s2c = dir_of(c, Direction::ServerToClient, flipped);
    let syn = c2s.iter().map(|&i| &pk[i]).find(|p| p.is_syn())?;
    let synack = s2c.iter().map(|&i| &pk[i]).find(|p| p.is_syn_ack())?;
    let t_sa = synack.ts_ns?;
    let ack = c2s
        .iter()
        .map(|&i| &pk[i])
        .find(|p| p.has(ACK) && !p.has(SYN) && p.ts_ns.is_some_and(|t| t >= t_sa))?;
    let ns = ack.ts_ns? - syn.ts_ns?;
    if ns <= 0 {
        return None;
    }
    u64::try_from(ns).ok().map(Duration::from_nanos)
}

/// Everything about one side of a matched connection.
struct SideView<'a> {
    name: &'a str,
    conn: &'a Conn,
    pk: &'a [Packet],
    flipped: bool,
}

impl SideView<'_> {
    fn list(&self, d: Direction) -> Vec<&Packet> {
        dir_of(self.conn, d, self.flipped)
            .iter()
            .map(|&i| &self.pk[i])
            .collect()
    }
    fn endpoints(&self) -> (String, String) {
        if self.flipped {
            (
                endpoint_str(self.conn.server),
                endpoint_str(self.conn.client),
            )
        } else {
            (
                endpoint_str(self.conn.client),
                endpoint_str(self.conn.server),
            )
        }
    }
    fn side(&self) -> ConnSide {
        let (client, server) = self.endpoints();
        ConnSide {
            capture: self.name.to_string(),
            client,
            server,
            packets: self.conn.len(),
        }
    }
}

/// Compares two loaded captures (see the module docs).
pub fn compare_loaded(
    name_a: &str,
    la: &Loaded,
    name_b: &str,
    lb: &Loaded,
    opts: &Options,
) -> Report {
    let ca = connections(&la.packets);
    let cb = connections(&lb.packets);
    let pairs = pair_connections(&ca, &la.packets, &cb, &lb.packets);
    let mut conns = Vec::new();
    let mut staged: Vec<(ConnReport, Collector, Ctx, [Ctx; 2])> = Vec::new();
    for pair in &pairs {
        let x = &ca[pair.a];
        let y = &cb[pair.b];
        let (side_a, sides_by) = client_side_is_a(x, &la.packets, y, &lb.packets, pair.b_flipped);
        let va = SideView {
            name: name_a,
            conn: x,
            pk: &la.packets,
            flipped: false,
        };
        let vb = SideView {
            name: name_b,
            conn: y,
            pk: &lb.packets,
            flipped: pair.b_flipped,
        };
        let (cs, ss) = if side_a.unwrap_or(true) {
            (va, vb)
        } else {
            (vb, va)
        };
        let measured = [
            handshake_rtt(cs.conn, cs.pk, cs.flipped),
            handshake_rtt(ss.conn, ss.pk, ss.flipped),
        ]
        .into_iter()
        .flatten()
        .max();
        let (rtt, rtt_source) = match (opts.rtt, measured) {
            (Some(r), _) => (Some(r), "given"),
            (None, Some(r)) => (Some(r), "handshake"),
            (None, None) => (None, "unknown"),
        };
        // before / after per direction
        let lists = |d: Direction| -> (Vec<&Packet>, Vec<&Packet>) {
            match d {
                Direction::ClientToServer => (cs.list(d), ss.list(d)),
                Direction::ServerToClient => (ss.list(d), cs.list(d)),
            }
        };
        let (c2s_b, c2s_a) = lists(Direction::ClientToServer);
        let (s2c_b, s2c_a) = lists(Direction::ServerToClient);
        let off_c2s = seq_offset(&c2s_b, &c2s_a);
        let off_s2c = seq_offset(&s2c_b, &s2c_a);
        // A SYN proxy answers the client itself: the server's ISN differs
        // between the sides and the SYN the server receives is the proxy's own.
        let proxied = {
            let syn_cli = c2s_b.iter().find(|p| p.is_syn());
            let syn_srv = c2s_a.iter().find(|p| p.is_syn());
            let sa_srv = s2c_b.iter().find(|p| p.is_syn_ack());
            let sa_cli = s2c_a.iter().find(|p| p.is_syn_ack());
            match (syn_cli, syn_srv, sa_srv, sa_cli) {
                (Some(c), Some(s), Some(_), Some(_)) => {
                    off_s2c != 0
                        && (c.window != s.window
                            || s.timestamps().is_some_and(|t| t.1 != 0)
                            || c.ident.is_some() && s.ident == Some(0) && c.ident != Some(0))
                }
                _ => false,
            }
        };
        let mut col = Collector::default();
        let mut matched_total = 0;
        let mut dir_ctx = [Ctx::default(), Ctx::default()];
        for (k, d) in Direction::BOTH.into_iter().enumerate() {
            let (before, after) = if k == 0 {
                (&c2s_b, &c2s_a)
            } else {
                (&s2c_b, &s2c_a)
            };
            let off_seq = if k == 0 { off_c2s } else { off_s2c };
            let off_rev = if k == 0 { off_s2c } else { off_c2s };
            let cx = DirCtx {
                dir: d,
                before_is_client_side: k == 0,
                ack_offset: off_rev.wrapping_neg(),
                proxied,
            };
            let al = align(before, after, off_seq, off_rev.wrapping_neg());
            matched_total += al.matched.len();
            let first_data = al
                .matched
                .iter()
                .find(|&&(i, _)| before[i].payload_len > 0)
                .map(|&(i, _)| i);
            // TTL: the usual decrement between the sides is routing; a
            // packet that loses a different number of hops was rewritten
            // (or originated) by the middlebox. Proxy-built handshake
            // packets are left out.
            let hops: Vec<(usize, usize, i16)> = al
                .matched
                .iter()
                .filter(|&&(i, j)| {
                    let proxy_built = before[i].has(SYN)
                        || after[j].has(SYN)
                        || (before[i].payload_len == 0 && first_data.is_none_or(|f| i < f));
                    !(proxied && proxy_built)
                })
                .map(|&(i, j)| (i, j, i16::from(before[i].ttl) - i16::from(after[j].ttl)))
                .collect();
            let mut freq: std::collections::BTreeMap<i16, usize> =
                std::collections::BTreeMap::new();
            for h in &hops {
                *freq.entry(h.2).or_insert(0) += 1;
            }
            if let Some((&usual, _)) = freq.iter().max_by_key(|(_, n)| **n) {
                for &(i, j, h) in &hops {
                    if h != usual {
                        col.note(
                            d,
                            "ttl",
                            format!(
                                "TTL/hop limit changed by {h} instead of the usual {usual} (e.g. {} -> {})",
                                before[i].ttl, after[j].ttl
                            ),
                        );
                    }
                }
            }
            for &(i, j) in &al.matched {
                compare_pair(&mut col, &cx, before[i], after[j]);
            }
            // Unmatched packets count only between the first and last match:
            // outside it the two captures simply did not run at the same time.
            let first_data_b = al
                .matched
                .iter()
                .find(|&&(i, _)| before[i].payload_len > 0)
                .map(|&(i, j)| (i, j));
            let range_b = al
                .matched
                .first()
                .map(|m| m.0)
                .zip(al.matched.last().map(|m| m.0));
            let mut range_a = (usize::MAX, 0usize);
            for &(_, j) in &al.matched {
                range_a = (range_a.0.min(j), range_a.1.max(j));
            }
            let frame_of = |p: &Packet, before_side: bool| -> (Option<u64>, Option<u64>) {
                if before_side == cx.before_is_client_side {
                    (Some(p.frame), None)
                } else {
                    (None, Some(p.frame))
                }
            };
            let handshake_phase = |idx: usize, p: &Packet, first: Option<usize>| {
                proxied && p.payload_len == 0 && first.is_none_or(|f| idx < f)
            };
            for &i in &al.only_before {
                let p = before[i];
                let in_range = range_b.is_some_and(|(lo, hi)| i > lo && i < hi);
                if handshake_phase(i, p, first_data_b.map(|f| f.0)) {
                    let (fc, fs) = frame_of(p, true);
                    col.add(d, "handshake_proxied", None, Val::t(""), Val::t(""), fc, fs);
                } else if in_range {
                    let (fc, fs) = frame_of(p, true);
                    col.add(
                        d,
                        "packet_dropped",
                        None,
                        Val::t(describe(p)),
                        Val::t("missing"),
                        fc,
                        fs,
                    );
                }
            }
            for &j in &al.only_after {
                let q = after[j];
                let in_range = range_a.0 != usize::MAX && j > range_a.0 && j < range_a.1;
                if handshake_phase(j, q, first_data_b.map(|f| f.1)) {
                    let (fc, fs) = frame_of(q, false);
                    col.add(d, "handshake_proxied", None, Val::t(""), Val::t(""), fc, fs);
                } else if in_range {
                    let (fc, fs) = frame_of(q, false);
                    col.add(
                        d,
                        "packet_injected",
                        None,
                        Val::t("missing"),
                        Val::t(describe(q)),
                        fc,
                        fs,
                    );
                }
            }
            // Facts for impacts: the largest window field after the handshake
            // as the receiver of this direction saw it.
            dir_ctx[k] = Ctx {
                rtt,
                v6: before.first().is_some_and(|p| p.v6),
                packets_in_direction: before.len() as u64,
                max_payload: before.iter().map(|p| p.payload_len).max().unwrap_or(0),
                ..Ctx::default()
            };
        }
        let max_field = |v: &[&Packet]| v.iter().filter(|p| !p.has(SYN)).map(|p| p.window).max();
        let ctx = Ctx {
            rtt,
            client_shift: c2s_b.iter().find(|p| p.is_syn()).and_then(|p| p.wscale()),
            server_max_window_field: max_field(&s2c_a),
            client_max_window_field: max_field(&c2s_a),
            v6: c2s_b.first().is_some_and(|p| p.v6),
            ..Ctx::default()
        };
        if proxied {
            // The proxy's own SYN-ACK stands for the whole handshake.
            let sa_srv = s2c_b.iter().find(|p| p.is_syn_ack());
            let sa_cli = s2c_a.iter().find(|p| p.is_syn_ack());
            if let (Some(s), Some(c)) = (sa_srv, sa_cli) {
                let hs = |p: &Packet| {
                    format!(
                        "SYN-ACK ISN {} window {}{}{}",
                        p.seq,
                        p.window,
                        p.mss().map(|m| format!(" mss {m}")).unwrap_or_default(),
                        p.wscale()
                            .map(|w| format!(" wscale {w}"))
                            .unwrap_or_default()
                    )
                };
                col.add(
                    Direction::ServerToClient,
                    "handshake_proxied",
                    None,
                    Val::t(format!("server {}", hs(s))),
                    Val::t(format!("middlebox {}", hs(c))),
                    Some(c.frame),
                    Some(s.frame),
                );
                // The first entry of the finding describes the SYN-ACKs.
                if let Some(acc) = col.map.get_mut(&(
                    Direction::ServerToClient,
                    findings::kind_index("handshake_proxied"),
                    None,
                )) {
                    acc.before = Val::t(format!("server {}", hs(s)));
                    acc.after = Val::t(format!("middlebox {}", hs(c)));
                }
            }
        }
        let report = ConnReport {
            id: 0,
            client: cs.endpoints().0,
            server: ss.endpoints().1,
            client_side: cs.side(),
            server_side: ss.side(),
            sides_by,
            matched_by: pair.evidence.clone(),
            matched_packets: matched_total,
            rtt_s: rtt.map(|r| r.as_secs_f64()),
            rtt_source,
        };
        let key_ts = cs
            .list(Direction::ClientToServer)
            .first()
            .and_then(|p| p.ts_ns);
        staged.push((report, col, ctx, dir_ctx));
        conns.push(key_ts);
    }
    // Order connections by the client side's first packet, then by label: the
    // same whatever the order of the files.
    let mut order: Vec<usize> = (0..staged.len()).collect();
    order.sort_by(|&i, &j| {
        conns[i]
            .cmp(&conns[j])
            .then_with(|| staged[i].0.client.cmp(&staged[j].0.client))
            .then_with(|| staged[i].0.server.cmp(&staged[j].0.server))
    });
    let mut out_conns = Vec::new();
    let mut out_findings = Vec::new();
    let mut out_notes = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        let (report0, col, ctx, dir_ctx) = &staged[i];
        let mut report = report0.clone();
        let proxied_conn = col
            .map
            .keys()
            .any(|k| k.1 == findings::kind_index("handshake_proxied"));
        report.id = n + 1;
        for ((dir, kind_i, option_kind), acc) in &col.map {
            let kind = KINDS.get(*kind_i).copied().unwrap_or("option_changed");
            let dctx = &dir_ctx[usize::from(*dir == Direction::ServerToClient)];
            let imp = impact_of(kind, *dir, acc, ctx, dctx, *option_kind);
            out_findings.push(Finding {
                kind,
                direction: dir.as_str(),
                connection: report.id,
                count: acc.count,
                before: acc.before.text.clone(),
                after: acc.after.text.clone(),
                option_kind: *option_kind,
                distinct_values: acc.distinct,
                impact: imp,
                cause: if proxied_conn && PROXY_KINDS.contains(&kind) {
                    PROXY_CAUSE
                } else {
                    impact::cause(kind)
                },
                packets: Frames {
                    client_side: acc.frames_client_side.clone(),
                    server_side: acc.frames_server_side.clone(),
                },
            });
        }
        for ((dir, what), (count, text)) in &col.notes {
            out_notes.push(Note {
                connection: report.id,
                direction: dir.as_str(),
                what,
                count: *count,
                text: text.clone(),
            });
        }
        out_conns.push(report);
    }
    let matched_a: std::collections::HashSet<usize> = pairs.iter().map(|p| p.a).collect();
    let matched_b: std::collections::HashSet<usize> = pairs.iter().map(|p| p.b).collect();
    let summary =
        |name: &str, l: &Loaded, cs: &[Conn], matched: &std::collections::HashSet<usize>| {
            CaptureSummary {
                path: name.to_string(),
                records: l.records,
                tcp_packets: l.packets.len(),
                connections: cs.len(),
                unmatched_connections: cs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !matched.contains(i))
                    .map(|(_, c)| c.label())
                    .collect(),
                warnings: l.warnings.clone(),
            }
        };
    Report {
        captures: [
            summary(name_a, la, &ca, &matched_a),
            summary(name_b, lb, &cb, &matched_b),
        ],
        connections: out_conns,
        findings: out_findings,
        notes: out_notes,
    }
}

/// Kinds a SYN proxy causes by itself once it has answered the handshake.
const PROXY_KINDS: [&str; 8] = [
    "wscale_changed",
    "mss_changed",
    "mss_clamped",
    "seq_rewritten",
    "ack_rewritten",
    "timestamps_changed",
    "option_changed",
    "option_added",
];

/// Their cause when the handshake was proxied.
const PROXY_CAUSE: &str = "the SYN proxy that answered the handshake: it announced its own configured options (e.g. SYNPROXY --wscale/--mss) and translates sequence numbers and timestamps for the rest of the connection; its options must match the server's";

/// A packet in a few words, for dropped and injected ones.
fn describe(p: &Packet) -> String {
    let mut f = String::new();
    for (bit, c) in [
        (SYN, 'S'),
        (packet::FIN, 'F'),
        (packet::RST, 'R'),
        (tcp_options::Flags::PSH, 'P'),
        (ACK, '.'),
    ] {
        if p.has(bit) {
            f.push(c);
        }
    }
    format!("[{f}] seq {} len {}", p.seq, p.payload_len)
}

fn impact_of(
    kind: &str,
    dir: Direction,
    acc: &findings::Acc,
    ctx: &Ctx,
    dctx: &Ctx,
    option_kind: Option<u8>,
) -> Impact {
    let num = |v: &Val| v.num;
    match kind {
        "wscale_stripped" => impact::wscale_stripped(
            dir == Direction::ClientToServer,
            num(&acc.before).and_then(|s| u8::try_from(s).ok()),
            ctx,
        ),
        "wscale_changed" => match (num(&acc.before), num(&acc.after)) {
            (Some(b), Some(a)) => impact::wscale_changed(
                u8::try_from(b).unwrap_or(14),
                u8::try_from(a).unwrap_or(14),
                if dir == Direction::ClientToServer {
                    ctx.client_max_window_field
                } else {
                    ctx.server_max_window_field
                },
                ctx,
            ),
            _ => impact::words("window scale changed", ctx),
        },
        "wscale_added" => impact::words(
            "the receiver of this SYN believes the sender scales its window although it did not offer to: the sender's window fields are multiplied by the invented shift, overrunning it",
            ctx,
        ),
        "mss_clamped" | "mss_changed" => match (num(&acc.before), num(&acc.after)) {
            (Some(b), Some(a)) => impact::mss(
                u16::try_from(b).unwrap_or(u16::MAX),
                u16::try_from(a).unwrap_or(u16::MAX),
                ctx,
            ),
            _ => impact::words("MSS changed", ctx),
        },
        "sackperm_stripped" => impact::words(
            "SACK is not negotiated: after several losses in one window the sender repairs one segment per round trip, so recovery on a long path takes many RTTs",
            ctx,
        ),
        "timestamps_stripped" => impact::words(
            "without timestamps there is one RTT sample per window instead of per segment, and no PAWS protection against wrapped sequence numbers (needed above about 1 Gbit/s); when stripped only from data segments after both ends negotiated them, RFC 7323 receivers may discard those segments",
            ctx,
        ),
        "timestamps_changed" => impact::words(
            "RTT measurement keeps working while the translation is consistent; an inconsistent one breaks PAWS and the receiver drops segments",
            ctx,
        ),
        "seq_rewritten" | "ack_rewritten" => impact::words(
            &format!(
                "offset {} (mod 2^32) on the first affected packet; no throughput cost while the translation is consistent (SACK blocks must be translated too); it hides the host's own sequence numbers",
                match (acc.before.num, acc.after.num) {
                    (Some(b), Some(a)) => (a as u32).wrapping_sub(b as u32).to_string(),
                    _ => "unknown".to_string(),
                }
            ),
            ctx,
        ),
        "window_rewritten" => impact::window(
            acc.max_before.and_then(|v| u16::try_from(v).ok()).unwrap_or(0),
            acc.max_after.and_then(|v| u16::try_from(v).ok()).unwrap_or(0),
            None,
            ctx,
        ),
        "dscp_changed" => impact::words(
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
        "ecn_changed" => impact::words(
            "congestion marks are lost or invented: without ECN the path signals congestion by dropping packets instead",
            ctx,
        ),
        "nat" => impact::words("none by itself; the addresses and ports the two ends see differ", ctx),
        "handshake_proxied" => impact::words(
            "the client's handshake was answered by the middlebox, not the server: the options the client learned (window scale, MSS, SACK, timestamps) are the proxy's, and any mismatch with the server's lasts for the whole connection",
            ctx,
        ),
        "packet_dropped" => impact::dropped(acc.count, dctx),
        "packet_injected" => impact::words(
            "packets the far end never sent: injected resets end connections, injected ACKs hide loss from the sender",
            ctx,
        ),
        _ => impact::words(
            &format!("option kind {} altered", option_kind.map(|k| k.to_string()).unwrap_or_default()),
            ctx,
        ),
    }
}
