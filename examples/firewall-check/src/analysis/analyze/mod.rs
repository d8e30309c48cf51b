//! `firewall-check analyze`: per connection, what each endpoint's kernel
//! negotiated, what limited each direction, and what the window allowed.
//!
//! # What is measured, per connection
//!
//! - The handshake ([`crate::conn::negotiation`]): the client's SYN and the
//!   server's SYN-ACK option blocks (40 bytes at most each), each read by
//!   `tcp-options`' Linux model as the receiving kernel parses it, into what
//!   each endpoint believes: MSS, window scaling and shifts, SACK,
//!   timestamps; handshake segments a Linux kernel drops for their signature
//!   options, per kernel build; ECN (classic or AccECN) from the flags.
//! - Per direction: segments, payload bytes, retransmissions (payload that
//!   does not advance the highest sequence sent), and the largest receive
//!   window the *receiver* advertised, read as the *sender* interprets it
//!   but never more than the receiver means it.
//! - The RTT: `--rtt` when given; otherwise the handshake (SYN to the
//!   client's ACK of the SYN-ACK, which is one full round trip from any
//!   capture point on the path); otherwise timestamp echoes: for each side,
//!   the smallest delay between a TSval passing the capture point and the
//!   peer's segment echoing it; the two half-paths add up to the RTT.
//! - The ceiling of each direction: the receiver's largest window over the
//!   RTT (`bdp::ceiling`); the achieved throughput: payload bytes that
//!   advanced the sequence, over the time from the first data segment to one
//!   RTT after the last (the last flight still has to be delivered and
//!   acknowledged; without an RTT, to the last data segment).
//! - What limited the sender ([`crate::analysis::limits`]): its busy time split into
//!   receive window, sender and network as Linux's `TCP_INFO` splits it;
//!   data sent beyond the window the receiver advertised; for a window or
//!   buffer limit, the Linux settings that lift it (`bdp::linux`).
//! - Window-limited: the limit is the receive window and the achieved
//!   throughput does not exceed the ceiling. With too little data for the
//!   time split, the older test: a window's worth in flight on at least 10 %
//!   of the data segments, or 70 % to 120 % of the ceiling achieved.
//!
//! # Mid-stream captures
//!
//! Without the handshake the shifts are unknown: the report infers, for
//! each endpoint, the shift its peer reads its window fields with
//! (`wscale_inferred`, see [`shift`]): bounds that need no
//! assumption (data past the furthest right edge of a shift rules it out;
//! the right edge never moving left and the 1 GiB window bound it from
//! above, as a receiver that never shrinks its window, Linux's default,
//! guarantees), then one value where the capture shows it: the edge a
//! window-limited sender keeps stopping at, or else the shift a Linux
//! receiver's window growth shows (`bdp::linux::WindowGrowth`), on the
//! stated assumption that both ends agree. Next to the receiver, the
//! sender's timestamp echoes say which ACKs it had read (`shift::EdgeEvidence`).
//! A receiver whose fields sit at 65,535 while its peer's data goes past
//! them means no scaling while the peer reads them scaled: the ends
//! disagree (window scaling removed from the SYN-ACK), seen from either
//! side. Windows stay unscaled rather than guessed, unless
//! `--assume-wscale S` asks to read every window field with shift S; the
//! limit of a direction whose receiver's shift the capture pins to one
//! value is computed with it, by replaying the trackers' input logged from
//! the first data segment ([`crate::analysis::limit_log`]) with the RTT the timestamps
//! show (`limit.inferred_shift`).
//!
//! # The broken state
//!
//! The endpoints disagree about window scaling when its option was removed
//! on the way; [`mismatch`] says how that shows from either side, with how
//! sure it is.
//!
//! # Where each part lives
//!
//! - [`state`]: the per-connection state and how a segment moves it, with
//!   `side` (each direction's counters) and `limit_feed` (the limit
//!   trackers' input);
//! - [`shift`] and [`mismatch`]: what the capture says of the shifts;
//! - [`report`](mod@report): the finished connection's figures;
//! - [`verdict`]: what they mean, as typed parts (the words are
//!   `crate::output::analyze`'s).
//!
//! Memory: one fixed-size state per open connection (see [`crate::conn::tracker`]:
//! closed connections leave the table a few thousand frames after their
//! last segment), plus a few hundred bytes of limit trackers and TSval
//! rings once it carries data; reports are written as connections finish,
//! in order of first appearance. Per segment: one hash lookup, one walk of
//! the option block for timestamps, a few comparisons per limit tracker;
//! the handshake is negotiated when the SYN or SYN-ACK arrives.

use std::io::{self, Read, Write};
use std::time::Duration;

use bdp::BitsPerSecond;
use rustc_hash::FxHashMap;

use crate::analysis::limit_log;
use crate::conn::tracker::{ConnTracker, Connection, DEFAULT_CAPACITY};
use crate::conn::Direction;
use crate::decode::decode_counted;
use crate::output::analyze::ReportWriter;
use capture::reader::DEFAULT_BUFFER_CAPACITY;
use capture::tally::Tally;
use capture::{CaptureError, CaptureReader, Next, RecordSource, Timestamp};

mod limit_feed;
pub mod mismatch;
pub mod report;
pub mod shift;
mod side;
pub mod state;
pub mod verdict;

pub use crate::finding::impact::RttSource;
pub use mismatch::MismatchEvidence;
pub use report::{
    report, AdviceItem, CarriedIn, ConnectionReport, DirectionReport, Directions, Negotiated,
    PerEndpoint,
};
pub use shift::{ShiftBasis, ShiftBounds, ShiftInterval};
pub use state::ConnState;
pub use verdict::{Verdict, VerdictPart};

/// Default target rate for the verdict: 1 Gbit/s (the campus path of DESIGN.md incident 1).
pub const DEFAULT_TARGET_RATE: BitsPerSecond = BitsPerSecond::new(1_000_000_000);

/// Version of `analyze --json`'s document (`docs/json.md`): 2 added
/// `schema_version` itself, `id`, `evicted`, `continues`,
/// `negotiated.wscale_clamped_from`, `wscale_mismatch_evidence`,
/// `linux_drops`, and made `negotiated.ecn` a mode (`classic`, `accecn`,
/// `null`) instead of a boolean.
pub const SCHEMA_VERSION: u32 = 2;

/// Settings of an analysis.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Use this RTT instead of measuring it.
    pub rtt: Option<Duration>,
    /// The rate the verdict says what window would be needed for.
    pub target_rate: BitsPerSecond,
    /// Read window fields of connections without a handshake with this shift.
    pub assume_wscale: Option<u8>,
    /// For one connection without a handshake, where `assume_wscale` is not
    /// given: the shift each direction's sender (client to server, server
    /// to client) reads the receiver's window fields with. `series` sets it
    /// per connection from a first pass over a capture file ([`learn`]:
    /// what `analyze` infers); `[None, None]` otherwise.
    pub learned_wscale: [Option<u8>; 2],
    /// Cap on open connections.
    pub capacity: usize,
    /// Capture reader buffer in bytes (records above half of it are refused).
    pub buffer_capacity: usize,
    /// The analysis feeds a time series ([`crate::analysis::series`]): the
    /// limit trackers keep their rounds for it, and as no report is built,
    /// their input is not logged for a replay.
    pub time_series: bool,
    /// The records come from a live capture: each connection is reported
    /// once it has closed and been quiet for [`LIVE_LINGER`] (or at the
    /// end), not in order of first appearance.
    pub live: bool,
}

/// On a live capture, how long a closed connection stays open for its last
/// ACK and late retransmissions before it is reported.
pub const LIVE_LINGER: Duration = Duration::from_secs(1);
/// On a live capture, how often closed connections are looked at while
/// packets arrive or the interface is quiet.
pub const LIVE_TICK: Duration = Duration::from_millis(250);

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rtt: None,
            target_rate: DEFAULT_TARGET_RATE,
            assume_wscale: None,
            learned_wscale: [None, None],
            capacity: DEFAULT_CAPACITY,
            buffer_capacity: DEFAULT_BUFFER_CAPACITY,
            time_series: false,
            live: false,
        }
    }
}

impl Settings {
    /// The shift direction `d`'s sender reads the receiver's window fields
    /// with when the handshake is not seen: the assumed one, or the learned one.
    pub fn assumed_shift(&self, d: Direction) -> Option<u8> {
        self.assume_wscale.or(self.learned_wscale[d.index()])
    }
}

/// Why an analysis stopped.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The capture could not be read further (connections seen so far were reported).
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// Writing the output failed.
    #[error("write error: {0}")]
    Write(#[from] io::Error),
}

/// Output format of `analyze`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalyzeFormat {
    /// Readable text.
    Text,
    /// `{"connections": [...]}`.
    Json,
    /// One line per connection as it is reported (a live capture's
    /// `--json`): `{"type": "connection", ...}`.
    JsonLines,
}

/// What an analysis reported.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AnalyzeSummary {
    /// Connections reported.
    pub connections: usize,
    /// Connections with a finding: a broken negotiation, a SYN Linux drops,
    /// or a window-limited direction.
    pub findings: usize,
    /// The capture's records read.
    pub frames: u64,
    /// Its segments per encapsulation, and the records that gave none by
    /// reason.
    pub tally: Tally,
}

/// What the analysis loop read: records, and segments and skips counted.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    /// Records read.
    pub frames: u64,
    /// Segments per encapsulation, records without one by cause.
    pub tally: Tally,
}

/// The analysis loop, one home for `analyze` and [`learn`]: every segment,
/// plain or carried in tunnels (counted in `counts`, with the records that
/// gave none by reason), through the connection table and its connection's state (the limit logs
/// held to their budget, [`limit_log`]), `finished` for each connection
/// once it and every earlier-started one have finished (see
/// [`crate::conn::tracker`]), and `idle` whenever no record is buffered, before
/// the reader waits for input. An error from `idle` (the output closed)
/// stops at once and is returned as `Err`; a capture error stops the
/// reading, the connections seen so far are still finished, and it comes
/// back as `Ok(Err(..))`.
pub(crate) fn each_connection<S: RecordSource + ?Sized, C>(
    reader: &mut S,
    settings: &Settings,
    ctx: &mut C,
    counts: &mut Counts,
    mut finished: impl FnMut(&Connection<ConnState>, &mut C),
    mut idle: impl FnMut(&mut C) -> io::Result<()>,
) -> io::Result<Result<(), AnalyzeError>> {
    let mut tracker: ConnTracker<ConnState> = ConnTracker::new(settings.capacity);
    tracker.set_ordered(!settings.live);
    // Segments in the limit logs of the open connections.
    let mut logged = 0usize;
    // Live: when closed connections were last looked at (wall clock, which
    // a live capture's timestamps follow).
    let mut looked = std::time::Instant::now();
    let result = loop {
        // A file waits for its next record; a live capture comes back when
        // the interface is quiet, to report the connections that closed.
        let wait = if settings.live {
            LIVE_TICK
        } else {
            Duration::MAX
        };
        let record = match reader.next_within(wait) {
            Ok(Next::Record(r)) => Some(r),
            Ok(Next::Idle) => None,
            Ok(Next::End) => break Ok(()),
            Err(e) => break Err(e.into()),
        };
        if settings.live && looked.elapsed() >= LIVE_TICK {
            looked = std::time::Instant::now();
            tracker.expire_by_time(Timestamp::now(), LIVE_LINGER);
            if tracker.has_finished() {
                tracker.drain_boxed(|c| {
                    logged = logged.saturating_sub(c.state.log_len());
                    finished(&c, ctx);
                });
                idle(ctx)?;
            }
        }
        let Some(record) = record else {
            continue;
        };
        counts.frames += 1;
        let Ok(rec) = decode_counted(&record, &mut counts.tally) else {
            continue;
        };
        let (conn, dir) = tracker.track(&rec, ConnState::default);
        let before = conn.state.log_len();
        conn.state.update(&rec, dir, settings);
        // The log grew, or was dropped at its own bound (then it is empty).
        logged = logged.saturating_sub(before) + conn.state.log_len();
        if logged > limit_log::LOG_BUDGET {
            if let Some(l) = conn.state.limit_log.as_mut() {
                logged = logged.saturating_sub(l.drop_events(limit_log::Dropped::Budget));
            }
        }
        if tracker.has_finished() {
            tracker.drain_boxed(|c| {
                logged = logged.saturating_sub(c.state.log_len());
                finished(&c, ctx);
            });
        }
        if !reader.has_buffered_record() {
            idle(ctx)?;
        }
    };
    for c in tracker.finish_boxed() {
        finished(&c, ctx);
    }
    Ok(result)
}

/// What a first pass over a capture learns for `series` ([`learn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Learned {
    /// Per direction (client to server, server to client): the shift its
    /// sender reads the receiver's window fields with, as `analyze` infers
    /// it (`limit.inferred_shift`).
    pub wscale: [Option<u8>; 2],
    /// The RTT `analyze` reports for the connection.
    pub rtt: Option<Duration>,
}

/// Most connections [`learn`] remembers (about 40 bytes each); those
/// beyond are not learned, and `series` labels their rows only with
/// `--assume-wscale` and `--rtt`.
pub const LEARN_MAX: usize = 1 << 20;

/// A first pass for `series` over a capture file: for each connection
/// without a handshake that `want` selects (by the id reports use, from 1),
/// the shifts and the RTT `analyze` reports for it (keyed by the tracker's
/// id, from 0); a time series streams, and cannot know them when the rows
/// are written. A capture error ends the pass with what was learned before
/// it (the second pass reports the error).
pub fn learn<R: Read>(
    input: R,
    settings: &Settings,
    mut want: impl FnMut(u64) -> bool,
) -> FxHashMap<u64, Learned> {
    let Ok(mut reader) = CaptureReader::with_capacity(input, settings.buffer_capacity) else {
        return FxHashMap::default();
    };
    let mut out: FxHashMap<u64, Learned> = FxHashMap::default();
    let keep = |c: &Connection<ConnState>, out: &mut FxHashMap<u64, Learned>| {
        let handshake = c.state.handshake_seen();
        if handshake || out.len() >= LEARN_MAX || !want(c.id + 1) {
            return;
        }
        let r = report(c, settings);
        let l = Learned {
            wscale: [
                r.directions.client_to_server.limit.inferred_shift,
                r.directions.server_to_client.limit.inferred_shift,
            ],
            rtt: c.state.measured_rtt().map(|(d, _)| d),
        };
        if l != Learned::default() {
            out.insert(c.id, l);
        }
    };
    let mut counts = Counts::default();
    let _ = each_connection(&mut reader, settings, &mut out, &mut counts, keep, |_| {
        Ok(())
    });
    out
}

/// Analyses the capture from `input`, writing a report per connection to
/// `out` in order of first appearance, each as soon as it and every
/// earlier-started connection have finished (closed and idle, evicted, or at
/// the end; see [`crate::conn::tracker`] for the bounded exception). On a
/// capture error the connections seen so far are still reported, the output
/// is closed properly, and the error returned.
pub fn analyze<R: Read, W: Write>(
    input: R,
    out: &mut W,
    format: AnalyzeFormat,
    settings: &Settings,
) -> Result<AnalyzeSummary, AnalyzeError> {
    let mut reader = CaptureReader::with_capacity(input, settings.buffer_capacity)?;
    analyze_source(&mut reader, out, format, settings)
}

/// [`analyze`] from any [`RecordSource`]: a capture file or pipe, or a live
/// capture (with [`Settings::live`]; [`AnalyzeFormat::JsonLines`] then
/// writes each connection as a line when it is reported).
pub fn analyze_source<S: RecordSource + ?Sized, W: Write>(
    reader: &mut S,
    out: &mut W,
    format: AnalyzeFormat,
    settings: &Settings,
) -> Result<AnalyzeSummary, AnalyzeError> {
    let mut writer = ReportWriter::new(out, format)?;
    let mut findings = 0usize;
    let mut write_err: Option<io::Error> = None;
    let emit = |conn: &Connection<ConnState>, w: &mut ReportWriter<'_, W>| {
        if write_err.is_some() {
            return;
        }
        let rep = report(conn, settings);
        if rep.has_findings() {
            findings += 1;
        }
        if let Err(e) = w.report(&rep, !conn.is_closed()) {
            write_err = Some(e);
        }
    };
    // Reports written so far appear before the tool waits for input.
    let mut counts = Counts::default();
    let result = each_connection(
        reader,
        settings,
        &mut writer,
        &mut counts,
        emit,
        ReportWriter::idle,
    )?;
    if let Some(e) = write_err {
        return Err(e.into());
    }
    let connections = writer.finish(counts.frames, &counts.tally)?;
    result?;
    Ok(AnalyzeSummary {
        connections,
        findings,
        frames: counts.frames,
        tally: counts.tally,
    })
}
