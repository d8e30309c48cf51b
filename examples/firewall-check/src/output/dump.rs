//! `dump`'s output: every TCP segment of a capture, as text or JSON lines
//! (the command line is [`crate::cli::dump`]).
//!
//! The text form follows `tcpdump -v`: frame number, UTC time, IP facts,
//! addresses and ports, flags, sequence numbers, window and the options in
//! tcpdump's words. The JSON form is one object per segment with exactly the
//! fields `frame`, `time`, `src`, `dst`, `sport`, `dport`, `flags`, `seq`,
//! `ack`, `window`, `dscp`, `ecn`, `options`, `options_error` (see
//! [`write_json`]).
//!
//! Segments carried in tunnels and provider encapsulations (GRE, VXLAN,
//! MPLS, PPPoE, ...: [`capture::encap`]) are dumped too, with the layers
//! they were carried in: in the text before the inner IP header, in the
//! JSON as `tunnels` (present only then). See [`crate::output::tunnel`].
//!
//! It streams: one reader buffer, one output buffer, nothing allocated per
//! packet. Frames that are not TCP are skipped and counted; frames whose
//! link, IP, tunnel or TCP header cannot be decoded are reported (a text
//! line, or a warning on the diagnostics stream for JSON) and the dump goes
//! on. When a segment was carried in a tunnel or a frame could not be
//! opened (a link type or encapsulation not decoded, a header cut or
//! malformed), the dump ends with the counts ([`Dumper::finish`]): a
//! `summary` line on the diagnostics stream for text, a `{"summary":...}`
//! object as the last line for JSON, and a one-line warning on the
//! diagnostics stream when frames could not be opened. A capture that ends
//! early or is corrupt stops the dump after everything read so far has been
//! written, and the error is returned.

use std::io::{self, Read, Write};

use tcp_options::{kind, ParsedOption, TcpOption};

use crate::decode::{decode_counted, PacketError, TcpRecord, Truncation, Unrecorded};
use crate::output::format::{write_hex, write_json_str, write_padded9, write_u64, Staged, UtcTime};
use crate::output::tunnel;
use capture::tally::Tally;
use capture::{CaptureError, CaptureReader, IpVersion, Record, RecordSource};

/// What `dump` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpFormat {
    /// tcpdump-like text.
    Text,
    /// One JSON object per line.
    Json,
}

/// Counts of a dump run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DumpStats {
    /// Packet records read.
    pub frames: u64,
    /// TCP segments written.
    pub segments: u64,
    /// Frames that looked like TCP but could not be decoded.
    pub undecodable: u64,
    /// Segments by encapsulation, frames skipped by cause.
    pub tally: Tally,
}

/// Why a dump stopped.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// The capture could not be read further (everything before was written).
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// Writing the output failed.
    #[error("write error: {0}")]
    Write(#[from] io::Error),
}

/// Dumps every TCP segment of the capture read from `input` to `out`;
/// per-frame decode problems go to `diag` in JSON mode, and so do the
/// summary and the warning of [`Dumper::finish`].
///
/// On a capture error, everything read before it has been written and
/// flushed when the error is returned.
pub fn dump<R: Read, W: Write, D: Write>(
    input: R,
    out: &mut W,
    diag: &mut D,
    format: DumpFormat,
) -> Result<DumpStats, DumpError> {
    let mut reader = CaptureReader::new(input)?;
    let mut dumper = Dumper::new(format);
    dump_source(&mut reader, out, diag, &mut dumper, Summary::Line)?;
    Ok(dumper.stats)
}

/// Where [`dump_source`] puts the capture's counts in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summary {
    /// A `{"summary":...}` line of its own, last (a file or pipe).
    Line,
    /// Left to the caller: a live capture's end line carries it
    /// (`output::tunnel::json_summary` of the returned stats).
    Caller,
}

/// [`dump`] from any [`RecordSource`]: a capture file or pipe, or a live
/// capture, through `dumper` (its `stats` hold the counts, even after an
/// error; `summary`: where the JSON counts go).
pub fn dump_source<S: RecordSource + ?Sized, W: Write, D: Write>(
    reader: &mut S,
    out: &mut W,
    diag: &mut D,
    dumper: &mut Dumper,
    summary: Summary,
) -> Result<(), DumpError> {
    let result = loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        dumper.record(&record, out, diag)?;
        // Before waiting for input, show what was written: from a pipe
        // each segment appears as it arrives; from a file this flushes
        // about once per reader buffer.
        if !reader.has_buffered_record() {
            out.flush()?;
        }
    };
    dumper.finish(out, diag, summary)?;
    out.flush()?;
    Ok(result?)
}

/// The per-record work of a dump and its end, for any source of records
/// (a capture file or pipe, a live interface).
#[derive(Debug)]
pub struct Dumper {
    format: DumpFormat,
    /// The counts so far.
    pub stats: DumpStats,
}

impl Dumper {
    /// A dump writing `format`.
    pub fn new(format: DumpFormat) -> Self {
        Dumper {
            format,
            stats: DumpStats::default(),
        }
    }

    /// Writes the segment of one record, or counts why there is none.
    pub fn record<W: Write, D: Write>(
        &mut self,
        record: &Record<'_>,
        out: &mut W,
        diag: &mut D,
    ) -> io::Result<()> {
        let stats = &mut self.stats;
        stats.frames += 1;
        match decode_counted(record, &mut stats.tally) {
            Ok(seg) => {
                stats.segments += 1;
                match self.format {
                    DumpFormat::Json => write_json(out, &seg),
                    DumpFormat::Text => write_text(out, &seg),
                }
            }
            Err(Unrecorded::Skipped(_)) => Ok(()),
            Err(Unrecorded::Bad(e)) => {
                stats.undecodable += 1;
                match self.format {
                    DumpFormat::Json => writeln!(diag, "warning: {e}"),
                    DumpFormat::Text => write_text_error(out, &e),
                }
            }
        }
    }

    /// Ends the dump: when a segment was carried in a tunnel or a frame
    /// could not be opened, the counts (a `summary:` line on `diag` for
    /// text; for JSON a `{"summary":...}` line on `out`, unless `summary`
    /// leaves them to the caller) and, when frames could not be opened, a
    /// one-line warning on `diag`. Nothing otherwise.
    pub fn finish<W: Write, D: Write>(
        &self,
        out: &mut W,
        diag: &mut D,
        summary: Summary,
    ) -> io::Result<()> {
        let tally = &self.stats.tally;
        let frames = self.stats.frames;
        if !tunnel::summary_due(tally) {
            return Ok(());
        }
        match self.format {
            DumpFormat::Json if summary == Summary::Caller => {}
            DumpFormat::Json => {
                out.write_all(b"{\"summary\":")?;
                tunnel::write_json_summary(out, frames, tally)?;
                out.write_all(b"}\n")?;
            }
            DumpFormat::Text => {
                diag.write_all(b"summary: ")?;
                tunnel::write_text_summary(diag, frames, tally)?;
                diag.write_all(b"\n")?;
            }
        }
        let mut line = Vec::new();
        if tunnel::write_text_warning(&mut line, frames, tally)? {
            diag.write_all(b"warning: ")?;
            diag.write_all(&line)?;
            diag.write_all(b"\n")?;
        }
        Ok(())
    }
}

fn write_text_error<W: Write>(out: &mut W, e: &PacketError) -> io::Result<()> {
    writeln!(out, "{e} [not decoded]")
}

/// Writes one segment as a JSON object on one line.
///
/// ```text
/// {"frame":1,"time":1591780863.720289000,"src":"192.168.1.11","dst":"209.87.249.18",
///  "sport":33779,"dport":53,"flags":["SYN"],"seq":603899916,"ack":0,"window":64240,
///  "dscp":0,"ecn":0,"options":[{"kind":2,"mss":1460},{"kind":4},
///  {"kind":8,"tsval":2044906138,"tsecr":0},{"kind":1},{"kind":3,"shift":7}],
///  "options_error":null}
/// ```
///
/// `time` is `null` for a pcapng Simple Packet Block (no timestamp).
/// `options` lists the options in wire order, NOP and EOL included, up to
/// the first strict-policy malformation; `options_error` is that
/// malformation as `{"offset","kind","reason"}` (offset in the option
/// block; `kind` `null` when the snap length cut the block between options),
/// or `null`. Options of kinds without a fixed JSON form carry `"data"` (hex
/// of the bytes after the length byte) plus decoded fields: User Timeout
/// `granularity`/`timeout`; TCP-AO `keyid`/`rnextkeyid`/`mac`; MPTCP
/// `subtype` (and `subtype_name`); Fast Open `cookie` (empty for a request)
/// and, for kind 254, `exid`; AccECN `ee0b`/`eceb`/`ee1b` where present;
/// experimental kinds `exid` (or `null`).
///
/// The line is gathered on the stack and written to `w` at once
/// (`output::format::Staged`).
pub fn write_json<W: Write + ?Sized>(w: &mut W, s: &TcpRecord<'_>) -> io::Result<()> {
    let mut line = Staged::new(w);
    json_line(&mut line, s)?;
    line.finish()
}

/// The line of [`write_json`].
#[inline(always)]
fn json_line<W: Write + ?Sized>(w: &mut W, s: &TcpRecord<'_>) -> io::Result<()> {
    w.write_all(b"{\"frame\":")?;
    write_u64(w, s.frame)?;
    w.write_all(b",\"time\":")?;
    match s.ts {
        Some(ts) => {
            let (negative, whole, frac) = ts.magnitude();
            if negative {
                w.write_all(b"-")?;
            }
            write_u64(w, whole)?;
            w.write_all(b".")?;
            write_padded9(w, frac)?;
        }
        None => w.write_all(b"null")?,
    }
    write!(
        w,
        ",\"src\":\"{}\",\"dst\":\"{}\",\"sport\":",
        s.ip.src, s.ip.dst
    )?;
    write_u64(w, u64::from(s.src_port))?;
    w.write_all(b",\"dport\":")?;
    write_u64(w, u64::from(s.dst_port))?;
    w.write_all(b",\"flags\":[")?;
    for (i, name) in s.flags.names().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        w.write_all(b"\"")?;
        w.write_all(name.as_bytes())?;
        w.write_all(b"\"")?;
    }
    w.write_all(b"],\"seq\":")?;
    write_u64(w, u64::from(s.seq))?;
    w.write_all(b",\"ack\":")?;
    write_u64(w, u64::from(s.ack))?;
    w.write_all(b",\"window\":")?;
    write_u64(w, u64::from(s.window))?;
    w.write_all(b",\"dscp\":")?;
    write_u64(w, u64::from(s.ip.dscp()))?;
    w.write_all(b",\"ecn\":")?;
    write_u64(w, u64::from(s.ip.ecn()))?;
    w.write_all(b",\"options\":[")?;
    write_options(w, s, write_json_option)?;
    w.write_all(b"],\"options_error\":")?;
    match s.options_problem() {
        None => w.write_all(b"null")?,
        Some(p) => {
            w.write_all(b"{\"offset\":")?;
            write_u64(w, p.offset as u64)?;
            w.write_all(b",\"kind\":")?;
            match p.kind {
                Some(k) => write_u64(w, u64::from(k))?,
                None => w.write_all(b"null")?,
            }
            w.write_all(b",\"reason\":\"")?;
            write_json_str(w, &p.reason)?;
            w.write_all(b"\"}")?;
        }
    }
    if !s.tunnels.is_empty() {
        w.write_all(b",\"tunnels\":")?;
        tunnel::write_json(w, &s.tunnels)?;
    }
    w.write_all(b"}\n")
}

/// The well-formed options of `s` (strict policy, up to the first
/// malformation), each written by `one`, separated by commas.
fn write_options<W: Write + ?Sized>(
    w: &mut W,
    s: &TcpRecord<'_>,
    one: impl Fn(&mut W, &ParsedOption<'_>) -> io::Result<()>,
) -> io::Result<()> {
    for (i, opt) in s.options_strict().map_while(Result::ok).enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        one(w, &opt)?;
    }
    Ok(())
}

/// Writes one option in the JSON form described at [`write_json`].
pub fn write_json_option<W: Write + ?Sized>(w: &mut W, o: &ParsedOption<'_>) -> io::Result<()> {
    match o.option {
        TcpOption::EndOfList => return w.write_all(b"{\"kind\":0}"),
        TcpOption::NoOperation => return w.write_all(b"{\"kind\":1}"),
        TcpOption::SackPermitted => return w.write_all(b"{\"kind\":4}"),
        TcpOption::MaxSegmentSize(mss) => {
            w.write_all(b"{\"kind\":2,\"mss\":")?;
            write_u64(w, u64::from(mss))?;
            return w.write_all(b"}");
        }
        TcpOption::WindowScale(shift) => {
            w.write_all(b"{\"kind\":3,\"shift\":")?;
            write_u64(w, u64::from(shift))?;
            return w.write_all(b"}");
        }
        TcpOption::Sack(blocks) => {
            w.write_all(b"{\"kind\":5,\"blocks\":[")?;
            for (i, b) in blocks.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                w.write_all(b"[")?;
                write_u64(w, u64::from(b.left))?;
                w.write_all(b",")?;
                write_u64(w, u64::from(b.right))?;
                w.write_all(b"]")?;
            }
            return w.write_all(b"]}");
        }
        TcpOption::Timestamps(ts) => {
            w.write_all(b"{\"kind\":8,\"tsval\":")?;
            write_u64(w, u64::from(ts.tsval))?;
            w.write_all(b",\"tsecr\":")?;
            write_u64(w, u64::from(ts.tsecr))?;
            return w.write_all(b"}");
        }
        _ => {}
    }
    write!(w, "{{\"kind\":{},\"data\":\"", o.kind)?;
    write_hex(w, o.data)?;
    w.write_all(b"\"")?;
    match o.option {
        TcpOption::UserTimeout(u) => write!(
            w,
            ",\"granularity\":\"{}\",\"timeout\":{}",
            if u.minutes { "minutes" } else { "seconds" },
            u.timeout
        )?,
        TcpOption::TcpAo(a) => {
            write!(
                w,
                ",\"keyid\":{},\"rnextkeyid\":{},\"mac\":\"",
                a.key_id, a.rnext_key_id
            )?;
            write_hex(w, a.mac)?;
            w.write_all(b"\"")?;
        }
        TcpOption::Mptcp(m) => {
            write!(w, ",\"subtype\":{}", m.subtype)?;
            if let Some(n) = m.subtype_name() {
                write!(w, ",\"subtype_name\":\"{n}\"")?;
            }
        }
        TcpOption::FastOpen(f) => {
            if f.kind != kind::FAST_OPEN {
                write!(w, ",\"exid\":{}", kind::EXID_FAST_OPEN)?;
            }
            w.write_all(b",\"cookie\":\"")?;
            write_hex(w, f.cookie)?;
            w.write_all(b"\"")?;
        }
        TcpOption::AccEcn(a) => {
            for (name, v) in [("ee0b", a.ee0b()), ("eceb", a.eceb()), ("ee1b", a.ee1b())] {
                if let Some(v) = v {
                    write!(w, ",\"{name}\":{v}")?;
                }
            }
        }
        TcpOption::Experimental(e) => match e.exid {
            Some(x) => write!(w, ",\"exid\":{x}")?,
            None => w.write_all(b",\"exid\":null")?,
        },
        _ => {}
    }
    w.write_all(b"}")
}

/// Writes one segment as a tcpdump-like line (gathered on the stack and
/// written to `w` at once: `output::format::Staged`).
pub fn write_text<W: Write + ?Sized>(w: &mut W, s: &TcpRecord<'_>) -> io::Result<()> {
    let mut line = Staged::new(w);
    text_line(&mut line, s)?;
    line.finish()
}

/// The line of [`write_text`].
#[inline(always)]
fn text_line<W: Write + ?Sized>(w: &mut W, s: &TcpRecord<'_>) -> io::Result<()> {
    write!(w, "{:5}  ", s.frame)?;
    match s.ts {
        Some(ts) => write!(w, "{} ", UtcTime(ts))?,
        None => w.write_all(b"(no time) ")?,
    }
    if !s.tunnels.is_empty() {
        tunnel::write_text(w, &s.tunnels)?;
    }
    match s.ip.version {
        IpVersion::V4 => {
            write!(
                w,
                "IP (tos 0x{:x}, ttl {}, id {}, flags [{}], length {}) ",
                s.ip.tos,
                s.ip.ttl,
                s.ip.ident.unwrap_or(0),
                if s.ip.df { "DF" } else { "none" },
                s.ip.header_len + s.header_len + s.payload_len
            )?;
            write!(
                w,
                "{}.{} > {}.{}: ",
                s.ip.src, s.src_port, s.ip.dst, s.dst_port
            )?;
        }
        IpVersion::V6 => {
            write!(
                w,
                "IP6 (class 0x{:x}, flowlabel 0x{:05x}, hlim {}, payload length {}) ",
                s.ip.tos,
                s.ip.flow_label.unwrap_or(0),
                s.ip.ttl,
                s.ip.header_len - 40 + s.header_len + s.payload_len
            )?;
            write!(
                w,
                "{}.{} > {}.{}: ",
                s.ip.src, s.src_port, s.ip.dst, s.dst_port
            )?;
        }
    }
    // tcp-options' Display: `[S.]`, `[none]`, as tcpdump prints flags.
    write!(w, "Flags {}, seq {}", s.flags, s.seq)?;
    if s.payload_len > 0 {
        write!(w, ":{}", s.seq.wrapping_add(s.payload_len as u32))?;
    }
    if s.flags.contains(tcp_options::Flags::ACK) {
        write!(w, ", ack {}", s.ack)?;
    }
    write!(w, ", win {}", s.window)?;
    if s.flags.contains(tcp_options::Flags::URG) {
        write!(w, ", urg {}", s.urgent)?;
    }
    if !s.options.is_empty() {
        w.write_all(b", options [")?;
        write_options(w, s, write_text_option)?;
        w.write_all(b"]")?;
    }
    write!(w, ", length {}", s.payload_len)?;
    if let Some(p) = s.options_problem() {
        write!(w, " [bad options: offset {}", p.offset)?;
        if let Some(k) = p.kind {
            write!(w, ", kind {k}")?;
        }
        write!(w, ": {}]", p.reason)?;
    }
    match s.truncation {
        Truncation::None => {}
        Truncation::Payload => write!(
            w,
            " [|tcp] (snap length: {} of {} payload bytes captured)",
            s.payload.len(),
            s.payload_len
        )?,
        Truncation::Options => w.write_all(b" [|tcp] (snap length: option block cut)")?,
    }
    w.write_all(b"\n")
}

/// Writes one option in tcpdump's words (`mss 1460`, `TS val 1 ecr 0`,
/// `sackOK`, ...): tcp-options' own `Display`.
pub fn write_text_option<W: Write + ?Sized>(w: &mut W, o: &ParsedOption<'_>) -> io::Result<()> {
    write!(w, "{o}")
}
