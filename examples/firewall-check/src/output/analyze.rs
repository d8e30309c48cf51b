//! `analyze`'s output: a report per connection as text, or as one JSON
//! document (`docs/json.md`), and every sentence of the verdict.
//!
//! The report types ([`crate::analysis::analyze`]) hold figures and typed
//! judgments; this module alone turns them into words: the verdict's parts
//! ([`verdict_text`]), the evidence's `detail`, a limit's `reason`, and the
//! JSON objects whose fields are not the types' own (`Serialize` here).

use std::borrow::Cow;
use std::io::{self, Write};

use bdp::BitsPerSecond;
use capture::tally::Tally;
use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;
use tcp_options::SignatureBuild;

use crate::analysis::analyze::mismatch::ScaledAfterAll;
use crate::analysis::analyze::state::{AnswerBasis, SynAnswered};
use crate::analysis::analyze::verdict::{
    AtRtt, FirstFlight, Need, Verdict, VerdictPart, WindowsRead, MAX_UNSCALED,
};
use crate::analysis::analyze::{
    AdviceItem, AnalyzeFormat, ConnectionReport, MismatchEvidence, ShiftBasis, ShiftInterval,
    SCHEMA_VERSION,
};
use crate::analysis::limit_log::{Dropped, LOG_BUDGET, LOG_EVENTS};
use crate::analysis::limits::{Limit, LimitKind, NoLimitReason, WindowEvidence, PLATEAU_ROUNDS};
use crate::conn::negotiation::{EcnMode, HandshakeKind, LinuxDrop};
use crate::conn::{Direction, Endpoint};
use crate::finding::Confidence;
use crate::output::format::{duration_text, rate_text, socket_addr, Thousands};
use crate::output::{fastjson, tunnel};

/// Bytes of report JSON gathered before they are written: the capacity of
/// the tool's own `BufWriter`, which then writes them through instead of
/// copying (the many-connections benchmark writes 190 MB of JSON: a
/// second copy of it was 5% of the run time).
pub const JSON_BLOCK: usize = 1 << 16;

/// Writes `analyze`'s reports to `out` as they come: text, or one JSON
/// document whose reports are gathered and handed over in blocks of at
/// least [`JSON_BLOCK`] bytes.
pub struct ReportWriter<'a, W: Write> {
    out: &'a mut W,
    format: AnalyzeFormat,
    json: Vec<u8>,
    written: usize,
}

impl<'a, W: Write> ReportWriter<'a, W> {
    /// Starts the output (the JSON document's head).
    pub fn new(out: &'a mut W, format: AnalyzeFormat) -> io::Result<Self> {
        if format == AnalyzeFormat::Json {
            write!(
                out,
                "{{\"schema_version\":{SCHEMA_VERSION},\"connections\":["
            )?;
        }
        Ok(ReportWriter {
            out,
            format,
            json: Vec::with_capacity(2 * JSON_BLOCK),
            written: 0,
        })
    }

    /// Writes one report; `open`: the connection had not closed (no RST,
    /// no FIN both ways) when it was reported, as a live capture's last
    /// reports are.
    pub fn report(&mut self, rep: &ConnectionReport, open: bool) -> io::Result<()> {
        match self.format {
            AnalyzeFormat::JsonLines => {
                let start = self.json.len();
                write!(
                    self.json,
                    "{{\"schema_version\":{SCHEMA_VERSION},\"type\":\"connection\",\"open\":{open},\"connection\":"
                )?;
                if let Err(e) = fastjson::write(rep, &mut self.json) {
                    self.json.truncate(start);
                    return Err(io::Error::other(e));
                }
                self.json.extend_from_slice(b"}\n");
                // Each line is handed over as it is made.
                self.write_json()?;
            }
            AnalyzeFormat::Json => {
                let start = self.json.len();
                self.json
                    .extend_from_slice(if self.written == 0 { b"\n" } else { b",\n" });
                match fastjson::write(rep, &mut self.json) {
                    Ok(()) if self.json.len() >= JSON_BLOCK => self.write_json()?,
                    Ok(()) => {}
                    Err(e) => {
                        self.json.truncate(start);
                        return Err(io::Error::other(e));
                    }
                }
            }
            AnalyzeFormat::Text => write_text(self.out, rep)?,
        }
        self.written += 1;
        Ok(())
    }

    /// Hands what is gathered to the output and flushes it: the reports so
    /// far appear before the tool waits for input.
    pub fn idle(&mut self) -> io::Result<()> {
        self.write_json()?;
        self.out.flush()
    }

    /// Ends the output (the JSON document's tail); the reports written.
    /// When a segment was carried in a tunnel or a record could not be
    /// opened ([`tunnel::summary_due`]), the capture's counts come last: a
    /// `capture:` line of text, or the document's `summary` (the same
    /// object as `dump --json`'s summary line).
    /// JSON lines have no tail: the caller writes the `end` line.
    pub fn finish(mut self, frames: u64, tally: &Tally) -> io::Result<usize> {
        self.write_json()?;
        let due = tunnel::summary_due(tally);
        match self.format {
            AnalyzeFormat::Json if due => {
                self.out.write_all(b"\n],\"summary\":")?;
                tunnel::write_json_summary(self.out, frames, tally)?;
                self.out.write_all(b"}\n")?;
            }
            AnalyzeFormat::Json => self.out.write_all(b"\n]}\n")?,
            AnalyzeFormat::Text if due => {
                self.out.write_all(b"capture: ")?;
                tunnel::write_text_summary(self.out, frames, tally)?;
                self.out.write_all(b"\n")?;
            }
            AnalyzeFormat::Text => {}
            AnalyzeFormat::JsonLines => {}
        }
        self.out.flush()?;
        Ok(self.written)
    }

    fn write_json(&mut self) -> io::Result<()> {
        if self.json.is_empty() {
            return Ok(());
        }
        let res = self.out.write_all(&self.json);
        self.json.clear();
        res
    }
}

impl Serialize for ConnectionReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Every field named (no `..`): a field added to the report does not
        // compile until it is written here too.
        let ConnectionReport {
            id,
            client,
            server,
            client_known,
            handshake_seen,
            evicted,
            continues,
            assumed_wscale,
            first_frame,
            last_frame,
            negotiated,
            rtt: _,
            rtt_source,
            directions,
            verdict,
            tunnels,
        } = self;
        let mut o = s.serialize_struct("ConnectionReport", 16)?;
        o.serialize_field("id", id)?;
        o.serialize_field("client", &socket_addr(*client))?;
        o.serialize_field("server", &socket_addr(*server))?;
        o.serialize_field("client_known", client_known)?;
        o.serialize_field("handshake_seen", handshake_seen)?;
        o.serialize_field("evicted", evicted)?;
        o.serialize_field("continues", continues)?;
        o.serialize_field("assumed_wscale", assumed_wscale)?;
        o.serialize_field("first_frame", first_frame)?;
        o.serialize_field("last_frame", last_frame)?;
        o.serialize_field("negotiated", negotiated)?;
        o.serialize_field("rtt_s", &self.rtt_s())?;
        o.serialize_field("rtt_source", rtt_source)?;
        o.serialize_field("directions", directions)?;
        o.serialize_field("verdict", &verdict_text(verdict))?;
        // Only for a connection carried in a tunnel: a plain capture's
        // document is as before.
        match tunnels {
            Some(t) => o.serialize_field("tunnels", &tunnel::CarriedInJson(t))?,
            None => o.skip_field("tunnels")?,
        }
        o.end()
    }
}

impl Serialize for Limit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Limit {
            kind,
            receive_window_fraction,
            sender_fraction,
            network_fraction,
            idle_fraction,
            busy_s,
            reason,
            window_read_inferred_bytes,
            receive_window_evidence,
            inferred_shift,
        } = self;
        let mut o = s.serialize_struct("Limit", 11)?;
        o.serialize_field("kind", kind)?;
        o.serialize_field("receive_window_fraction", receive_window_fraction)?;
        o.serialize_field("sender_fraction", sender_fraction)?;
        o.serialize_field("network_fraction", network_fraction)?;
        o.serialize_field("idle_fraction", idle_fraction)?;
        o.serialize_field("busy_s", busy_s)?;
        o.serialize_field("reason", &reason.map(no_limit_reason))?;
        o.serialize_field("window_read_inferred_bytes", window_read_inferred_bytes)?;
        o.serialize_field("receive_window_evidence", receive_window_evidence)?;
        o.serialize_field("inferred_shift", inferred_shift)?;
        o.serialize_field("confidence", &self.confidence())?;
        o.end()
    }
}

/// `{kind, confidence, detail}`, the shape of every evidence object.
fn evidence<S: Serializer>(
    s: S,
    name: &'static str,
    kind: &str,
    confidence: &str,
    detail: &str,
) -> Result<S::Ok, S::Error> {
    let mut o = s.serialize_struct(name, 3)?;
    o.serialize_field("kind", kind)?;
    o.serialize_field("confidence", confidence)?;
    o.serialize_field("detail", detail)?;
    o.end()
}

impl Serialize for WindowEvidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        evidence(
            s,
            "WindowEvidence",
            self.kind(),
            self.confidence().as_str(),
            &window_evidence_detail(self),
        )
    }
}

impl Serialize for MismatchEvidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        evidence(
            s,
            "MismatchEvidence",
            self.kind(),
            self.confidence().as_str(),
            &mismatch_detail(self),
        )
    }
}

impl Serialize for AdviceItem {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("AdviceItem", 4)?;
        o.serialize_field("setting", self.advice.setting.name())?;
        o.serialize_field("value", &self.advice.value)?;
        o.serialize_field("why", &self.advice.why.to_string())?;
        o.serialize_field("host", self.host.name())?;
        o.end()
    }
}

/// What shows the client's windows scaled after all, in words.
pub fn scaled_after_all_detail(r: &ScaledAfterAll) -> String {
    match *r {
        ScaledAfterAll::MssMultiple {
            first_field,
            shift,
            mss,
        } => format!(
            "read with its shift {shift} it is {} bytes, exactly {} segments of {mss} bytes, while the field itself is no whole number of them (a stack sizing its window in whole segments, as Windows does, scales)",
            Thousands(u64::from(first_field) << shift),
            (u64::from(first_field) << shift) / u64::from(mss.max(1))
        ),
    }
}

impl Serialize for ScaledAfterAll {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("ScaledAfterAll", 2)?;
        o.serialize_field("kind", self.kind())?;
        o.serialize_field("detail", &scaled_after_all_detail(self))?;
        o.end()
    }
}

impl Serialize for SynAnswered {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (syns, frame, basis) = match *self {
            SynAnswered::Frame {
                frame, syns, basis, ..
            } => (
                syns,
                Some(frame),
                match basis {
                    AnswerBasis::TimestampEcho => "timestamp_echo",
                    AnswerBasis::OptionsAnswered => "options_answered",
                },
            ),
            SynAnswered::Unknown { syns } => (syns, None, "unknown"),
        };
        let mut o = s.serialize_struct("SynAnswered", 3)?;
        o.serialize_field("syns", &syns)?;
        o.serialize_field("frame", &frame)?;
        o.serialize_field("basis", basis)?;
        o.end()
    }
}

/// `tcp_ao`, `md5_only` or `neither`: a signature build's name in JSON.
fn build_name(b: SignatureBuild) -> &'static str {
    match b {
        SignatureBuild::TcpAo => "tcp_ao",
        SignatureBuild::Md5Only => "md5_only",
        SignatureBuild::Neither => "neither",
    }
}

impl Serialize for LinuxDrop {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let builds: Vec<&str> = self.builds.iter().map(|b| build_name(*b)).collect();
        let mut o = s.serialize_struct("LinuxDrop", 6)?;
        o.serialize_field("segment", &self.segment)?;
        o.serialize_field("frame", &self.frame)?;
        o.serialize_field("builds", &builds)?;
        o.serialize_field("reason", &self.reason.to_string())?;
        o.serialize_field("only_without_keys", &self.only_without_keys)?;
        o.serialize_field("confidence", &self.confidence())?;
        o.end()
    }
}

/// How a judgment starts in words: nothing for a `high` one (a finding),
/// `HINT (medium confidence, not a finding): ` below.
pub fn hint_lead(c: Confidence) -> &'static str {
    match c {
        Confidence::High => "",
        Confidence::Medium => "HINT (medium confidence, not a finding): ",
        Confidence::Low => "HINT (low confidence, not a finding): ",
    }
}

/// `BROKEN: the endpoints disagree` for a `high` mismatch, a hint that
/// they may disagree below.
fn broken_lead(c: Confidence) -> &'static str {
    match c {
        Confidence::High => "BROKEN: the endpoints disagree about window scaling",
        _ => "HINT (medium confidence, not a finding): the endpoints may disagree about window scaling",
    }
}

/// `Linux 6.x drops this SYN: ...` in words.
pub fn linux_drop_text(d: &LinuxDrop) -> String {
    let seg = match d.segment {
        HandshakeKind::Syn => "SYN",
        HandshakeKind::SynAck => "SYN-ACK",
    };
    let builds: Vec<&str> = d
        .builds
        .iter()
        .map(|b| match b {
            SignatureBuild::TcpAo => "kernels built with TCP-AO",
            SignatureBuild::Md5Only => "kernels built with MD5 only",
            SignatureBuild::Neither => "neither",
        })
        .collect();
    format!(
        "{}Linux 6.x drops this {seg} (frame {}): {} ({}{})",
        hint_lead(d.confidence()),
        d.frame,
        d.reason,
        builds.join("; "),
        if d.only_without_keys {
            ", unless the receiving socket has a key for it"
        } else {
            ""
        }
    )
}

/// Why a limit is `none`, in words (fixed text is not allocated).
pub fn no_limit_reason(r: NoLimitReason) -> Cow<'static, str> {
    use crate::analysis::limits::{MIN_DATA_SEGMENTS, MIN_ROUNDS};
    match r {
        NoLimitReason::TooFewSegments(0) => {
            Cow::Borrowed("0 data segments, fewer than the 20 needed to tell")
        }
        NoLimitReason::TooFewSegments(n) => Cow::Owned(format!(
            "{n} data segments, fewer than the {MIN_DATA_SEGMENTS} needed to tell"
        )),
        NoLimitReason::RttUnknown => Cow::Borrowed("the RTT is unknown (pass --rtt)"),
        NoLimitReason::NotAllAcknowledged => {
            Cow::Borrowed("the receiver never acknowledged all the data in the capture")
        }
        NoLimitReason::TooFewRounds(n) => Cow::Owned(format!(
            "the transfer lasted {n} round trips, fewer than the {MIN_ROUNDS} needed to tell"
        )),
        NoLimitReason::NeverBusy => Cow::Borrowed("the sender was never busy"),
        NoLimitReason::LogDropped(why) => {
            let what = match why {
                Dropped::Connection => format!(
                    "the connection has more than the {LOG_EVENTS} segments kept to read its windows once the capture shows the shift"
                ),
                Dropped::Budget => format!(
                    "the connections without a handshake open at once have more than the {LOG_BUDGET} segments kept to read their windows once the capture shows the shift"
                ),
            };
            Cow::Owned(format!(
                "the window scale is unknown (the handshake is not in the capture) and {what}: pass --assume-wscale S and --rtt T"
            ))
        }
        NoLimitReason::WindowScaleUnknown(Some(r)) => Cow::Owned(format!(
            "the window scale is unknown (the handshake is not in the capture; it shows only that the {} reads the {}'s fields with a shift from {} to {}): pass --assume-wscale S",
            r.sender,
            r.sender.peer(),
            r.min,
            r.max
        )),
        NoLimitReason::WindowScaleUnknown(None) => Cow::Borrowed(
            "the window scale is unknown (the handshake is not in the capture): pass --assume-wscale S",
        ),
    }
}

/// The evidence of a window read below the one advertised, in words.
pub fn window_evidence_detail(e: &WindowEvidence) -> String {
    match *e {
        WindowEvidence::AdvertisedWindow => "the next full segment would have passed the right edge of the window the receiver advertised, as the sender reads it".to_string(),
        WindowEvidence::FlightPlateau { flight, mss } => format!(
            "the sender stopped at {flight} bytes in flight, the same byte for {PLATEAU_ROUNDS} round trips or more at a time, with no loss, ACKs arriving and no queue, while the receiver advertised at least twice that: it read a window of {flight} to {} bytes, smaller than the one advertised (a window field rewritten on the way, or a clamp at the sender)",
            flight + mss - 1
        ),
    }
}

/// The evidence of a window-scale mismatch, in words, with the figures.
pub fn mismatch_detail(e: &MismatchEvidence) -> String {
    match *e {
        MismatchEvidence::ServerScalesAnyway {
            largest_field,
            synack_window,
        } => format!(
            "the SYN-ACK seen here carries no window scale, yet the server's window fields after it are scaled (largest {largest_field} after a SYN-ACK window of {synack_window}): the server scales, so its option was removed between the server and this capture point"
        ),
        MismatchEvidence::ClientUnscaled {
            shift,
            first_field,
            largest_field,
            syn_window,
            window_sized,
        } => {
            let mut detail = format!(
                "the client's window fields after the handshake stay at unscaled sizes (first {first_field}, largest {largest_field}, after a SYN window of {syn_window}): read with the shift {shift} it offered they would mean {} bytes, so the client does not scale and never saw the SYN-ACK's window scale",
                Thousands(MismatchEvidence::client_largest_scaled(shift, largest_field))
            );
            if let Some(w) = window_sized {
                detail.push_str(&format!(
                    "; {} of its {} data segments were no larger than the server's window field read as bytes (largest field {}): the client sends into what it reads as a window of a few dozen bytes",
                    w.segments, w.data_segments, w.server_largest_field
                ));
            }
            detail
        }
        MismatchEvidence::SenderEdgeDiffers { who, edge, growth } => format!(
            "no handshake seen: the {}'s new data kept stopping at the right edge of the {who}'s windows read with shift {edge}, while the {who}'s window grows as a Linux receiver's at shift {growth}: the {} reads the {who}'s window fields with another shift than the {who} means",
            who.peer(),
            who.peer()
        ),
        MismatchEvidence::FlightBeyondGrowth { who, growth, lo } => format!(
            "no handshake seen: the {who}'s window grows as a Linux receiver's at shift {growth}, yet the {}'s data went past the right edge that shift gives (it needs shift {lo} or more): the {} reads the {who}'s window fields with a larger shift than the {who} means",
            who.peer(),
            who.peer()
        ),
        MismatchEvidence::UnscaledCap {
            who,
            at_cap,
            acks,
            lo,
        } => format!(
            "no handshake seen: {at_cap} of the {who}'s {acks} ACKs advertise 65,535, the largest window of a receiver that does not scale, yet the {}'s data went past ACK + 65,535 (it reads the {who}'s window fields with shift {lo} or more): the {who} means no scaling while the {} reads its fields scaled, as when window scaling is removed from the SYN-ACK on the way",
            who.peer(),
            who.peer()
        ),
    }
}

/// The verdict in plain words: its parts joined by `; ` (one part is that
/// part: a fixed text is not allocated).
pub fn verdict_text(v: &Verdict) -> Cow<'static, str> {
    let mut parts: Vec<Cow<'static, str>> = v.0.iter().map(part_text).collect();
    match parts.len() {
        1 => parts.swap_remove(0),
        _ => Cow::Owned(parts.join("; ")),
    }
}

/// "... would need N bytes (shift S)".
fn need_text(n: &Need) -> String {
    let shift = match n.shift {
        Some(s) => format!("shift {s}"),
        None => "more than window scaling allows".to_string(),
    };
    format!(
        "{} would need {} bytes ({shift})",
        n.target,
        Thousands(n.bytes)
    )
}

/// A rate, or `?` where unknown.
fn rate_or_unknown(bps: Option<u64>) -> String {
    bps.map_or("?".to_string(), rate_text)
}

/// "at RTT that caps WHAT throughput at C; T would need ..." or why not.
fn at_rtt_text(a: &AtRtt, what: &str) -> String {
    match a.rtt {
        Some(rtt) => {
            let mut s = format!(
                "at {} that caps {what} throughput at {}",
                duration_text(rtt),
                rate_or_unknown(a.ceiling)
            );
            if let Some(need) = &a.need {
                s.push_str("; ");
                s.push_str(&need_text(need));
            }
            s
        }
        None => "the RTT is unknown (pass --rtt to compute the ceiling)".to_string(),
    }
}

/// What the capture shows of one endpoint's shift.
fn inferred_text(who: Endpoint, i: &ShiftInterval) -> String {
    let peer = who.peer();
    let mut t = if i.min == i.max {
        format!("the {who}'s shift is {}", i.min)
    } else {
        format!("the {who}'s shift is {} to {}", i.min, i.max)
    };
    t.push_str(&match i.basis {
        ShiftBasis::SenderEdge => format!(
            " (the {peer}'s data kept stopping at the right edge of that shift's window: {} confidence)",
            i.confidence
        ),
        ShiftBasis::LinuxGrowth => format!(
            " (its window grows as a Linux receiver's at shift {}, inside {} to {} from the bytes in flight and the window edges, assuming both ends agree about scaling: medium confidence)",
            i.min, i.bounds.min, i.bounds.max
        ),
        ShiftBasis::Bounds => match i.linux_growth_shift {
            Some(g) => format!(
                " (from the bytes in flight and the window edges; its window grows as a Linux receiver's at shift {g})"
            ),
            None => " (from the bytes in flight and the window edges)".to_string(),
        },
    });
    t
}

/// "; the capture shows X achieved, because its first flight ..." where
/// the first flight beat the ceiling.
fn first_flight_text(f: &Option<FirstFlight>) -> String {
    match f {
        Some(f) => format!(
            "; the capture shows {} achieved, because its first flight went out under the SYN-ACK's own window of {} bytes, which is never scaled",
            rate_text(f.achieved),
            Thousands(u64::from(f.synack_window))
        ),
        None => String::new(),
    }
}

/// ", a client-to-server ceiling of C" and the first flight beyond it.
fn ceiling_text(ceiling: Option<u64>, first_flight: &Option<FirstFlight>) -> String {
    match ceiling {
        Some(c) => format!(
            ", a client-to-server ceiling of {}{}",
            rate_text(c),
            first_flight_text(first_flight)
        ),
        None => String::new(),
    }
}

/// One part of the verdict in words.
fn part_text(p: &VerdictPart) -> Cow<'static, str> {
    match p {
        VerdictPart::HandshakeNotSeen => Cow::Borrowed(
            "handshake not seen (the capture starts mid-connection): window scaling is unknown",
        ),
        VerdictPart::SynAckNotSeen => {
            Cow::Borrowed("SYN-ACK not seen: what the client negotiated is unknown")
        }
        VerdictPart::SynNotSeen => {
            Cow::Borrowed("SYN not seen: what the server negotiated is unknown")
        }
        VerdictPart::SynAnswerUnknown { syns } => Cow::Owned(format!(
            "the client sent {syns} SYNs with different options and the capture does not show which one the SYN-ACK answers (its TSecr echoes none of their TSvals, and more than one offered what it answers): window scaling is unknown"
        )),
        VerdictPart::UnscaledRuledOut(r) => Cow::Owned(format!(
            "the client's first window field after the handshake is at least half its SYN window, which alone would suggest it does not scale, but {}: read as scaled",
            scaled_after_all_detail(r)
        )),
        VerdictPart::AnsweredUnoffered => Cow::Borrowed(
            "the server sent window scale although the client did not offer it (RFC 7323 forbids this): scaling is off",
        ),
        VerdictPart::Windows(w) => windows_text(*w),
        p => Cow::Owned(handshake_part_text(p).unwrap_or_else(|| direction_part_text(p))),
    }
}

/// How the windows of a connection without its handshake are read.
fn windows_text(w: WindowsRead) -> Cow<'static, str> {
    match w {
        WindowsRead::Assumed(a) => Cow::Owned(format!(
            "windows read with the assumed shift {a} (--assume-wscale)"
        )),
        WindowsRead::PinnedForLimits => Cow::Borrowed(
            "window sizes and ceilings are not interpreted (pass --assume-wscale S to assume a shift), the limits read the windows with the shift the capture pins",
        ),
        WindowsRead::NotInterpreted => Cow::Borrowed(
            "windows are not interpreted (pass --assume-wscale S to assume a shift)",
        ),
    }
}

/// The parts about the handshake and the connection; `None` for the
/// per-direction ones.
fn handshake_part_text(p: &VerdictPart) -> Option<String> {
    Some(match p {
        VerdictPart::Continues { id, capacity } => format!(
            "continues connection {id}, which was pushed out of the full connection table (--max-connections {capacity}): its handshake is reported there; here window scaling is unknown"
        ),
        VerdictPart::InferredShifts(found) => found
            .iter()
            .map(|(who, i)| inferred_text(*who, i))
            .collect::<Vec<_>>()
            .join(", "),
        VerdictPart::SeemsToDisagree(e) => format!(
            "the endpoints seem to disagree about window scaling ({} confidence): {}",
            e.confidence(),
            mismatch_detail(e)
        ),
        VerdictPart::UnansweredAchievedMore {
            rtt,
            ceiling,
            achieved,
            accepted_beyond,
        } => format!(
            "window scaling was offered by the client but not answered: the client advertises at most {} bytes, which {} would cap server-to-client throughput at {}, yet the capture shows {} achieved: the server sent beyond the window the client advertised{}",
            Thousands(MAX_UNSCALED),
            rtt.map_or("at the RTT".to_string(), |r| format!("at {}", duration_text(r))),
            rate_or_unknown(*ceiling),
            rate_or_unknown(*achieved),
            match accepted_beyond {
                Some(b) => format!(
                    " ({} bytes), and the client accepted them (Linux keeps a receive window larger than the 65,535 bytes it can advertise unscaled)",
                    Thousands(*b)
                ),
                None => String::new(),
            }
        ),
        VerdictPart::Need(n) => need_text(n),
        VerdictPart::UnansweredCapped(a) => format!(
            "window scaling was offered by the client but not answered: the client's receive window is capped at {} bytes; {}",
            Thousands(MAX_UNSCALED),
            at_rtt_text(a, "server-to-client")
        ),
        VerdictPart::ServerScalesAnyway {
            largest_field,
            synack_window,
            client_reads,
            ceiling,
            first_flight,
            server_reads,
        } => {
            let confidence = MismatchEvidence::ServerScalesAnyway {
                largest_field: *largest_field,
                synack_window: *synack_window,
            }
            .confidence();
            let mut line = format!(
                "{}: the server's windows after the handshake look scaled (largest field {largest_field} after a SYN-ACK window of {synack_window}), so something between the server and this capture point removed its window-scale option; the client reads those fields unscaled (at most {} bytes{})",
                broken_lead(confidence),
                Thousands(*client_reads),
                ceiling_text(*ceiling, first_flight)
            );
            if let Some((shift, bytes)) = server_reads {
                line.push_str(&format!(
                    ", while the server reads the client's unscaled fields with shift {shift} (up to {} bytes, more than the client offers)",
                    Thousands(*bytes)
                ));
            }
            line
        }
        VerdictPart::ServerWindowCappedToo => format!(
            "the server's receive window is capped at {} bytes as well (client-to-server)",
            Thousands(MAX_UNSCALED)
        ),
        VerdictPart::NotOffered(a) => format!(
            "window scaling was not offered by the client: both receive windows are capped at {} bytes; {}",
            Thousands(MAX_UNSCALED),
            at_rtt_text(a, "each direction's")
        ),
        VerdictPart::ClientUnscaled {
            client,
            server,
            evidence,
            client_reads,
            ceiling,
            first_flight,
            server_believes,
        } => format!(
            "{}: the SYN-ACK seen here answers the client's offer (client shift {client}, server shift {server}), but {}; {}the window-scale option was removed between this capture point and the client: the client reads the server's fields unscaled (at most {} bytes{}), and the server reads the client's unscaled fields with shift {client}, believing it offers up to {} bytes",
            broken_lead(evidence.as_ref().map_or(Confidence::High, MismatchEvidence::confidence)),
            evidence
                .as_ref()
                .map_or("the client does not scale".to_string(), mismatch_detail),
            match evidence.as_ref().map(MismatchEvidence::confidence) {
                Some(Confidence::High) | None => "",
                Some(_) => "if so, ",
            },
            Thousands(*client_reads),
            ceiling_text(*ceiling, first_flight),
            Thousands(*server_believes)
        ),
        VerdictPart::ScalingOn { client, server } => {
            format!("window scaling on (client shift {client}, server shift {server})")
        }
        VerdictPart::LinuxDrop(d) => linux_drop_text(d),
        VerdictPart::Evicted { capacity } => format!(
            "evicted: the connection table was full (--max-connections {capacity}), so the rest of this connection is reported separately as its continuation"
        ),
        _ => return None,
    })
}

/// What limited a sender, as the verdict names it.
fn limited_by_text(l: &Limit) -> &'static str {
    match l.kind {
        LimitKind::ReceiveWindow => "the receive window as the sender read it",
        LimitKind::Sender if l.idle_fraction.is_some_and(|i| i > 0.5) => {
            "the sender: its application left it idle"
        }
        LimitKind::Sender => "the sender itself (its send buffer)",
        LimitKind::Network => "the network (the congestion window)",
        LimitKind::None => "too little data to tell",
    }
}

/// The per-direction parts.
fn direction_part_text(p: &VerdictPart) -> String {
    let receiver = |d: &Direction| d.receiving();
    match p {
        VerdictPart::LimitedBy { direction, limit } => format!(
            "{} was {}limited by {}: receive window {:.0}%, sender {:.0}%, network {:.0}% of the sender's busy time{}{}",
            direction.hyphenated(),
            if limit.confidence() == Some(Confidence::High) {
                ""
            } else {
                "most likely "
            },
            limited_by_text(limit),
            limit.receive_window_fraction.unwrap_or(0.0) * 100.0,
            limit.sender_fraction.unwrap_or(0.0) * 100.0,
            limit.network_fraction.unwrap_or(0.0) * 100.0,
            limit
                .idle_fraction
                .filter(|i| *i >= 0.05)
                .map_or(String::new(), |i| format!(", idle {:.0}% of the transfer", i * 100.0)),
            match limit.confidence() {
                Some(Confidence::High) | None => "",
                Some(_) => " (a hint, medium confidence: one capture point does not see the sender's socket, where a send buffer, a congestion window and loss can look alike; the sender's TCP_INFO decides)",
            }
        ),
        VerdictPart::WindowReadBelow {
            direction,
            window,
            ceiling,
            advertised,
            evidence,
        } => format!(
            "{}: {}the sender read a window of about {} bytes{} although the {} advertised up to {} (a window field rewritten on the way would do this, and no setting of the two hosts would lift it; {} confidence): {}",
            direction.hyphenated(),
            match evidence.confidence() {
                Confidence::High => "",
                _ => "HINT (not a finding: a sender holding its flight for another reason, a writer pausing between chunks, a send buffer or a congestion-control cap, looks the same): ",
            },
            Thousands(*window),
            ceiling.map_or(String::new(), |c| format!(" (a ceiling of {} at the RTT)", rate_text(c))),
            receiver(direction),
            advertised.map_or("more".to_string(), |m| format!("{} bytes", Thousands(m))),
            evidence.confidence(),
            window_evidence_detail(evidence)
        ),
        VerdictPart::BeyondWindow {
            direction,
            bytes,
            accepted,
        } => format!(
            "{}: {} bytes were sent beyond the window the {} advertised; {}",
            direction.hyphenated(),
            Thousands(*bytes),
            receiver(direction),
            if *accepted {
                "the receiver acknowledged them (it accepted more than it advertised): the sender read the window larger than the receiver meant it"
            } else {
                "the receiver did not acknowledge them: the sender misread the window"
            }
        ),
        VerdictPart::Settings {
            direction,
            target,
            advice,
        } => settings_text(*direction, *target, advice),
        VerdictPart::WindowLimited {
            direction,
            achieved,
            ceiling,
            advertised,
            need,
            confidence,
        } => {
            let mut line = format!(
                "{}{} was window-limited: achieved {} against a ceiling of {} (the {} advertised at most {} bytes)",
                confidence.map_or("", hint_lead),
                direction.hyphenated(),
                rate_or_unknown(*achieved),
                rate_or_unknown(*ceiling),
                receiver(direction),
                Thousands(*advertised)
            );
            if let Some(n) = need {
                line.push_str(&format!("; {}", need_text(n)));
            }
            line
        }
        // The handshake parts are written by `handshake_part_text`.
        _ => String::new(),
    }
}

/// "DIRECTION: to reach T on Linux, set on the HOST: ...".
fn settings_text(direction: Direction, target: BitsPerSecond, advice: &[AdviceItem]) -> String {
    let items: Vec<String> = advice
        .iter()
        .map(|a| {
            let a = a.advice;
            if a.value > 1 {
                format!("{} at least {}", a.setting.name(), Thousands(a.value))
            } else {
                format!("{} = {}", a.setting.name(), a.value)
            }
        })
        .collect();
    format!(
        "{}: to reach {target} on Linux, set on the {}: {}",
        direction.hyphenated(),
        advice.first().map_or("receiver", |a| a.host.name()),
        items.join(", ")
    )
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("unknown".to_string(), |v| v.to_string())
}

/// A direction's limit as the text report's line names it.
fn limit_line(l: &Limit) -> String {
    let kind = match (l.kind, l.reason) {
        (LimitKind::None, Some(why)) => format!("none ({})", no_limit_reason(why)),
        (LimitKind::ReceiveWindow, _) => "receive window".to_string(),
        (LimitKind::Sender, _) => "sender".to_string(),
        (LimitKind::Network, _) => "network".to_string(),
        (LimitKind::None, None) => "none".to_string(),
    };
    kind + &l.inferred_shift.map_or(String::new(), |s| {
        format!(" (windows read with shift {s}, inferred from the capture)")
    })
}

/// Writes one connection report as readable text.
pub fn write_text<W: Write + ?Sized>(w: &mut W, r: &ConnectionReport) -> io::Result<()> {
    writeln!(
        w,
        "connection {} -> {}{} (frames {}-{})",
        socket_addr(r.client),
        socket_addr(r.server),
        if r.client_known {
            ""
        } else {
            " (client guessed: no handshake)"
        },
        r.first_frame,
        r.last_frame
    )?;
    if let Some(t) = &r.tunnels {
        tunnel::write_carried_text(w, t, "  ")?;
    }
    let n = &r.negotiated;
    let ws = |v: Option<u8>| v.map_or("none".to_string(), |s| s.to_string());
    writeln!(
        w,
        "  handshake {}; MSS client {} server {}; wscale offered client {} server {}; scaling on: client {} server {}{}; SACK {}; timestamps {}; ECN {}",
        if r.handshake_seen { "seen" } else { "not seen" },
        opt(n.mss.client),
        opt(n.mss.server),
        ws(n.wscale_offered.client),
        ws(n.wscale_offered.server),
        opt(n.wscale_on.client),
        opt(n.wscale_on.server),
        if n.wscale_mismatch { " (MISMATCH)" } else { "" },
        n.sack,
        n.timestamps,
        match n.ecn {
            Some(EcnMode::Classic) => "classic",
            Some(EcnMode::Accecn) => "AccECN",
            None => "off",
        }
    )?;
    writeln!(
        w,
        "  RTT {}",
        match (r.rtt, r.rtt_source) {
            (Some(rtt), Some(src)) => format!("{} ({})", duration_text(rtt), src.as_str()),
            _ => "unknown".to_string(),
        }
    )?;
    for (name, d) in [
        ("client->server", &r.directions.client_to_server),
        ("server->client", &r.directions.server_to_client),
    ] {
        writeln!(
            w,
            "  {name}: {} packets, {} bytes, {} retransmissions; max window {}; ceiling {}; achieved {}; window-limited {}; limit {}",
            d.packets,
            Thousands(d.bytes),
            d.retransmissions,
            d.max_window_bytes.map_or("unknown".to_string(), |b| format!("{} bytes", Thousands(b))),
            d.ceiling_bps.map_or("unknown".to_string(), rate_text),
            d.throughput_bps.map_or("n/a".to_string(), rate_text),
            opt(d.window_limited),
            limit_line(&d.limit)
        )?;
        if d.capture_missed_bytes > 0 {
            writeln!(
                w,
                "    the capture missed at least {} bytes the receiver acknowledged (capture loss, not the network's; achieved includes them)",
                Thousands(d.capture_missed_bytes)
            )?;
        }
    }
    writeln!(w, "  verdict: {}", verdict_text(&r.verdict))?;
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::limits::{ShiftRange, MIN_DATA_SEGMENTS};
    use std::time::Duration;

    #[test]
    fn the_no_data_reason_is_the_rules_wording_for_zero_and_not_allocated() {
        let r = no_limit_reason(NoLimitReason::TooFewSegments(0));
        assert!(matches!(r, Cow::Borrowed(_)));
        assert_eq!(
            r,
            format!("0 data segments, fewer than the {MIN_DATA_SEGMENTS} needed to tell")
        );
        assert_eq!(
            no_limit_reason(NoLimitReason::TooFewSegments(7)),
            format!("7 data segments, fewer than the {MIN_DATA_SEGMENTS} needed to tell")
        );
    }

    #[test]
    fn reasons_say_how_to_get_the_limit_anyway() {
        for why in [Dropped::Connection, Dropped::Budget] {
            let r = no_limit_reason(NoLimitReason::LogDropped(why));
            assert!(r.contains("--assume-wscale S and --rtt T"), "{r}");
        }
        let r = no_limit_reason(NoLimitReason::WindowScaleUnknown(Some(ShiftRange {
            sender: Endpoint::Server,
            min: 2,
            max: 9,
        })));
        assert!(
            r.contains("the server reads the client's fields with a shift from 2 to 9"),
            "{r}"
        );
    }

    #[test]
    fn evidence_names_the_receiver_and_its_peer() {
        let e = MismatchEvidence::UnscaledCap {
            who: Endpoint::Client,
            at_cap: 20,
            acks: 30,
            lo: 3,
        };
        let d = mismatch_detail(&e);
        assert!(
            d.starts_with("no handshake seen: 20 of the client's 30 ACKs"),
            "{d}"
        );
        assert!(d.contains("yet the server's data went past"), "{d}");
        assert_eq!(
            (e.kind(), e.confidence().as_str()),
            ("unscaled_cap", "medium")
        );
    }

    #[test]
    fn a_one_part_verdict_is_that_part_and_parts_are_joined() {
        let one = Verdict(vec![VerdictPart::SynNotSeen]);
        assert!(matches!(verdict_text(&one), Cow::Borrowed(_)));
        let two = Verdict(vec![
            VerdictPart::ScalingOn {
                client: 7,
                server: 9,
            },
            VerdictPart::Evicted { capacity: 10 },
        ]);
        let t = verdict_text(&two);
        assert!(
            t.starts_with("window scaling on (client shift 7, server shift 9); evicted:"),
            "{t}"
        );
    }

    #[test]
    fn the_unknown_rtt_is_said_instead_of_a_ceiling() {
        let a = AtRtt {
            rtt: None,
            ceiling: None,
            need: None,
        };
        assert_eq!(
            at_rtt_text(&a, "x"),
            "the RTT is unknown (pass --rtt to compute the ceiling)"
        );
        let a = AtRtt {
            rtt: Some(Duration::from_millis(10)),
            ceiling: Some(52_428_000),
            need: Need::at(BitsPerSecond::new(1_000_000_000), Duration::from_millis(10)),
        };
        // The campus incident (DESIGN.md, incident 1): 1 Gbit/s at 10 ms
        // needs 1,250,000 bytes, shift 5.
        assert_eq!(
            at_rtt_text(&a, "each direction's"),
            "at 10 ms that caps each direction's throughput at 52.4 Mbit/s; 1 Gbit/s would need 1,250,000 bytes (shift 5)"
        );
    }
}
