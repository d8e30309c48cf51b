//! `out_of_window`: the campus firewall's "TCP sequence checking", a
//! window tracker that missed the window scaling.
//!
//! A real handshake offering window scale 7, one byte in the window, then
//! in-window flights (acknowledged, at most 8 of 60,000 bytes) until the
//! server's scaled window reaches past twice the unscaled one, then one
//! byte half-way between (TTL-limited copies and a full one). The server
//! acknowledges any segment it gets (a duplicate ACK for one out of order
//! or out of its window; with SACK naming the byte, so a window update
//! cannot pass for it); none means the path dropped it
//! (`out_of_window_dropped`).
//!
//! Why "past twice the unscaled window": a tracker that missed the scaling
//! holds the window fields unscaled, its edge the largest of them past the
//! acknowledged point, and Linux conntrack lets a segment overshoot it by
//! up to the largest window it has seen (the same unscaled fields). The
//! byte must go beyond both and stay inside the real, scaled window.
//!
//! Why each flight goes out highest segment first: conntrack's largest
//! window also grows, by the part of a segment that starts at or before
//! its edge and ends past it (`tcp_in_window`,
//! net/netfilter/nf_conntrack_proto_tcp.c). Sent in order, every segment of
//! a flight does that once the server has acknowledged the ones before it
//! by the time it crosses the box: on a loaded host, ACK after ACK, the
//! tracker's slack grew past the byte and it passed (the IPv6 campus
//! flake). Highest first, until the lowest arrives the server only repeats
//! its acknowledgment (with SACK, which moves the tracker's edge past the
//! flight), every other segment starts past the edge, and only the lowest
//! can straddle it: the slack grows by at most one segment per pass,
//! counted in the limit.
//!
//! The server's window-scale shift comes from the reflector (what the
//! server sent), else from the SYN-ACK as received, else it is inferred
//! from the first ACK's window field ([`infer_shift`]: the SYN-ACK's window
//! is never scaled, the first ACK's is the same window, scaled).

use std::time::{Duration, Instant};

use dscp::DsField;
use tcp_options::{Flags, LinuxOptions, TcpOption};

use super::super::catalogue::{Marks, TestSpec, Unit};
use super::super::error::ProbeError;
use super::super::evaluate::Detail;
use super::super::prober::handshake::SYN_OPTIONS;
use super::super::prober::{ident, Arrival, Handshake, Prober};
use super::super::reflect::Control;
use super::super::wire::{Answer, IpFields, Seen, Segment};
use super::{collect_data_answers, data_complete, Note, TestRun};
use crate::conn::Direction;
use crate::finding::Kind;

/// The test.
pub fn spec() -> TestSpec {
    TestSpec {
        name: "out_of_window",
        what: "after a handshake with window scaling, one byte beyond the unscaled window edge (inside the scaled window)",
        unit: Unit::OutOfWindow,
        direction: Direction::ClientToServer,
        marks: Marks::plain(),
        drop_kind: Kind::OutOfWindowDropped,
        twin: Some("reverse_out_of_window"),
    }
}

/// Where the server's window-scale shift came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShiftSource {
    /// What the reflector captured the server sending.
    Reflector,
    /// The SYN-ACK as received.
    SynAck,
    /// Inferred from the first ACK's window field.
    Inferred,
    /// The prober's own window (server-to-client).
    Prober,
}

/// What the out-of-window test saw before its segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OowEvidence {
    /// The window field of the SYN-ACK as received.
    pub synack_window: u16,
    /// The window-scale shift of the SYN-ACK as received.
    pub synack_shift: Option<u8>,
    /// The window field of the server's ACK of the in-window data.
    pub ack_window: u16,
    /// How far past the acknowledged point the segment was, bytes (0:
    /// not sent).
    pub offset: u32,
    /// The server's window-scale shift used.
    pub shift: u8,
    /// Where the shift came from.
    pub shift_source: ShiftSource,
    /// The unscaled window edge past the acknowledged point, bytes.
    pub unscaled_edge: u32,
    /// The scaled window edge past the acknowledged point, bytes.
    pub scaled_edge: u32,
}

/// The window-scale shift of a SYN or SYN-ACK (`None`: no option).
pub fn window_shift(s: &Seen) -> Option<u8> {
    LinuxOptions::new(s.options()?).find_map(|o| match o.option {
        TcpOption::WindowScale(w) => Some(w),
        _ => None,
    })
}

/// Whether `s` offers SACK.
fn sack_permitted(s: &Seen) -> bool {
    s.options()
        .is_some_and(|o| LinuxOptions::new(o).any(|o| matches!(o.option, TcpOption::SackPermitted)))
}

/// Whether a SACK block of `s` covers sequence number `seq`.
pub fn sack_covers(s: &Seen, seq: u32) -> bool {
    s.options().is_some_and(|o| {
        LinuxOptions::new(o).any(|o| match o.option {
            TcpOption::Sack(blocks) => blocks
                .iter()
                .any(|b| seq.wrapping_sub(b.left) < b.right.wrapping_sub(b.left)),
            _ => false,
        })
    })
}

/// The shift that makes `window_field << shift` closest to the SYN-ACK's
/// (unscaled) window: a receiver's first ACK advertises the same window,
/// scaled. 0 when the field did not shrink (no scaling).
pub fn infer_shift(synack_window: u16, window_field: u16) -> u8 {
    if window_field == 0 || u32::from(window_field) * 2 > u32::from(synack_window) {
        return 0;
    }
    (0..=14u8)
        .min_by_key(|s| (i64::from(window_field) << s).abs_diff(i64::from(synack_window)))
        .unwrap_or(0)
}

/// The window field of the prober's ACK (shift 7: 64,256 bytes).
const WINDOW: u16 = 502;
/// Bytes per data segment.
const MSS: u32 = 1400;
/// Bytes per flight at most.
const FLIGHT: u32 = 60_000;
/// Flights at most.
const FLIGHTS: u32 = 8;
/// Margin past the limit the scaled window must reach, bytes.
const MARGIN: u32 = 16_000;
/// How long a window update is waited for after a flight.
const WINDOW_WAIT: Duration = Duration::from_secs(1);

/// The connection as the test drives it.
struct Conn {
    sport: u16,
    index: u8,
    /// The data segment template.
    seg: Segment,
    /// The highest acknowledgment so far.
    acked: u32,
    /// The window field that came with it.
    window: u16,
}

/// Runs the test.
pub fn run(
    p: &mut Prober<'_>,
    index: u8,
    _spec: &TestSpec,
    control: Option<&mut Control>,
) -> Result<TestRun, ProbeError> {
    let sport = p.io.port();
    let (mut run, hs) = p.handshake(
        sport,
        ident(index, 0),
        Direction::ClientToServer,
        SYN_OPTIONS,
        WINDOW,
    )?;
    let Some(hs) = hs else { return Ok(run) };
    let Handshake { isn, synack, ack } = hs;
    let mut conn = Conn {
        sport,
        index,
        seg: Segment {
            flags: Flags::PSH | Flags::ACK,
            payload: vec![b'A'],
            ..ack
        },
        acked: isn.wrapping_add(2),
        window: 0,
    };
    p.io.send(
        IpFields::new(DsField::new(0), 64, ident(index, 0)),
        &conn.seg,
    )?;
    let next = conn.acked;
    let Some((_, first)) = p.io.wait_tcp(sport, |s| s.ack() == Some(next)) else {
        run.notes.push(Note::InWindowByteUnacked);
        p.send_rst(sport, next)?;
        return Ok(run);
    };
    conn.window = first.window().unwrap_or(0);
    let synack_window = synack.window().unwrap_or(0);
    let (shift, source) = server_shift(&synack, conn.window, sport, isn, control)?;
    // The tracker's limit: its unscaled edge plus its slack.
    let unscaled = u32::from(synack_window).max(u32::from(conn.window));
    let mut limit = 2 * unscaled;
    let sent = grow(p, &mut conn, shift, &mut limit, &mut run)?;
    let scaled = u32::from(conn.window) << shift.min(14);
    let mut evidence = OowEvidence {
        synack_window,
        synack_shift: window_shift(&synack),
        ack_window: conn.window,
        offset: 0,
        shift,
        shift_source: source,
        unscaled_edge: unscaled,
        scaled_edge: scaled,
    };
    if !run.notes.is_empty() {
        run.oow = Some(evidence);
        return Ok(run);
    }
    if scaled <= limit + 2 {
        run.notes.push(Note::WindowDidNotGrow {
            scaled,
            field: conn.window,
            shift,
            source,
            limit,
            sent,
        });
        run.oow = Some(evidence);
        p.send_rst(sport, conn.acked)?;
        return Ok(run);
    }
    evidence.offset = limit + (scaled - limit) / 2;
    let offset = evidence.offset;
    run.oow = Some(evidence);
    beyond_edge(p, &mut conn, offset, sack_permitted(&synack), &mut run)?;
    p.io.forget(sport);
    Ok(run)
}

/// The server's shift: what the reflector saw the server send, else the
/// SYN-ACK's as received, else inferred from the first ACK's window.
fn server_shift(
    synack: &Seen,
    first_window: u16,
    sport: u16,
    isn: u32,
    control: Option<&mut Control>,
) -> Result<(u8, ShiftSource), ProbeError> {
    let reflected = match control {
        Some(c) => c
            .awaited_synack(sport, isn.wrapping_add(1))?
            .map(|s| window_shift(&s)),
        None => None,
    };
    Ok(match (reflected, window_shift(synack)) {
        (Some(r), _) => (r.unwrap_or(0), ShiftSource::Reflector),
        (None, Some(x)) => (x, ShiftSource::SynAck),
        (None, None) => (
            infer_shift(synack.window().unwrap_or(0), first_window),
            ShiftSource::Inferred,
        ),
    })
}

/// Grows the server's window with acknowledged in-window flights until
/// its scaled edge passes `limit` (with a margin); returns the bytes sent.
/// A flight not acknowledged ends the test (a note).
fn grow(
    p: &mut Prober<'_>,
    conn: &mut Conn,
    shift: u8,
    limit: &mut u32,
    run: &mut TestRun,
) -> Result<u32, ProbeError> {
    let mut sent = 0u32;
    let mut rounds = 0;
    let scaled = |w: u16| u32::from(w) << shift.min(14);
    while scaled(conn.window) <= *limit + MARGIN && rounds < FLIGHTS && shift > 0 {
        rounds += 1;
        let before = conn.window;
        let room = scaled(conn.window).min(FLIGHT) / MSS * MSS;
        let want = conn.acked.wrapping_add(room);
        sent += room;
        // Go-back-N from the highest acknowledgment, four times at most: a
        // loaded host may lose a segment of the flight.
        let mut tries = 0;
        while conn.acked != want {
            tries += 1;
            if tries > 4 {
                run.notes.push(Note::FlightUnacked { bytes: room });
                p.send_rst(conn.sport, want)?;
                return Ok(sent);
            }
            flight(p, conn, want)?;
            // The lowest segment may straddle the tracker's edge.
            *limit += MSS;
            wait_acks(p, conn, want);
        }
        // The window shrank: the server's application has not read yet
        // (a loaded host's server may read late; a fixed 20 ms left the
        // window shut now and then, and the test "did not grow past twice
        // the unscaled window"): its window update, or a second.
        let (enough, now) = (*limit + MARGIN, conn.window);
        if now < before && scaled(now) <= enough {
            await_window(p, conn, |w| scaled(w) > enough || w > now);
        }
    }
    Ok(sent)
}

/// Reads the server's segments to the connection until a window field
/// `opened` accepts comes (at the acknowledged point) or a second passes.
fn await_window(p: &mut Prober<'_>, conn: &mut Conn, opened: impl Fn(u16) -> bool) {
    let until = Instant::now() + WINDOW_WAIT;
    let (sport, acked) = (conn.sport, conn.acked);
    let update = |a: &Arrival| matches!(&a.answer, Answer::Tcp(s) if s.dport() == sport && s.ack() == Some(acked) && s.window().is_some_and(&opened));
    p.io.wait(until, |inbox| inbox.iter().any(update));
    if let Some(Answer::Tcp(s)) = p.io.take(update).pop().map(|a| a.answer) {
        conn.window = s.window().unwrap_or(conn.window);
    }
}
/// Sends the bytes from the highest acknowledgment to `want`, highest
/// segment first (module docs).
fn flight(p: &mut Prober<'_>, conn: &mut Conn, want: u32) -> Result<(), ProbeError> {
    let segments = want.wrapping_sub(conn.acked).div_ceil(MSS);
    let ip = IpFields::new(DsField::new(0), 64, ident(conn.index, 0));
    for k in (0..segments).rev() {
        let seg = Segment {
            seq: conn.acked.wrapping_add(k * MSS),
            payload: vec![b'g'; MSS as usize],
            ..conn.seg.clone()
        };
        p.io.send(ip, &seg)?;
    }
    Ok(())
}

/// Reads the server's acknowledgments of a flight until `want` is
/// acknowledged or a second (at least the timeout) passes.
fn wait_acks(p: &mut Prober<'_>, conn: &mut Conn, want: u32) {
    let until = Instant::now() + p.io.timeout.max(Duration::from_secs(1));
    let sport = conn.sport;
    let mine = |a: &Arrival| matches!(&a.answer, Answer::Tcp(s) if s.dport() == sport);
    while conn.acked != want {
        for a in p.io.take(mine) {
            let Answer::Tcp(s) = a.answer else { continue };
            let Some(ack) = s.ack() else { continue };
            // An acknowledgment inside (acked, want].
            let ahead = ack.wrapping_sub(conn.acked);
            if ahead > 0 && ahead <= want.wrapping_sub(conn.acked) {
                conn.acked = ack;
                conn.window = s.window().unwrap_or(0);
            }
        }
        if conn.acked == want || Instant::now() >= until {
            return;
        }
        p.io.wait(until, |inbox| inbox.iter().any(mine));
    }
}

/// Sends the byte `offset` past the acknowledged point (TTL-limited
/// copies and a full one, twice at most) and reads the server's duplicate
/// acknowledgment (covering it in a SACK block when SACK was agreed) and
/// the routers' quotes.
fn beyond_edge(
    p: &mut Prober<'_>,
    conn: &mut Conn,
    offset: u32,
    sack: bool,
    run: &mut TestRun,
) -> Result<(), ProbeError> {
    let next = conn.acked;
    let seg = Segment {
        seq: next.wrapping_add(offset),
        payload: vec![b'B'],
        ..conn.seg.clone()
    };
    let full = IpFields::new(DsField::new(0), 64, ident(conn.index, 0));
    run.sent = p.io.build(full, &seg)?;
    let sport = conn.sport;
    for attempt in 0..2 {
        for ttl in p.path.short_ttls().filter(|t| !run.has_quote(*t)) {
            p.io.send_paced(
                IpFields::new(DsField::new(0), ttl, ident(conn.index, ttl)),
                &seg,
            )?;
        }
        if run.answer.is_none() {
            p.io.send(full, &seg)?;
        }
        let until = Instant::now() + p.io.timeout;
        collect_data_answers(p, run, sport, seg.seq, until, |s| {
            s.ack() == Some(next) && (!sack || sack_covers(s, seg.seq))
        });
        if run.answer.is_some() && (attempt > 0 || data_complete(p, run)) {
            break;
        }
    }
    p.send_rst(sport, next)?;
    Ok(())
}

/// What the byte's fate says, for the test's detail.
pub fn judge(run: &TestRun, detail: &mut Vec<Detail>) {
    if let (Some(o), Some(_)) = (&run.oow, &run.answer) {
        detail.push(match run.direction {
            Direction::ServerToClient => Detail::ServerByteArrived(o.clone()),
            Direction::ClientToServer => Detail::ByteAcked(o.clone()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_inferred_from_the_first_ack() {
        // Linux: SYN-ACK window 64240 unscaled, first ACK 63 << 10 = 64512.
        assert_eq!(infer_shift(64240, 63), 10);
        // 502 << 7 = 64256.
        assert_eq!(infer_shift(64240, 502), 7);
        // No scaling: the field stays about the same.
        assert_eq!(infer_shift(64240, 64240), 0);
        assert_eq!(infer_shift(64240, 0), 0);
    }
}
