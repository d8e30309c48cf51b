//! `reverse_ect0_data`, `reverse_ce_data`, `reverse_out_of_window` (with
//! the reflector): one data byte from the server's side.
//!
//! A handshake the prober completes (its ACK advertises a window with
//! shift 7), then the reflector sends one data byte from the server's side
//! of it (`send_data`: TTL-limited copies and a full one), marked with the
//! test's DS field (`reverse_ect0_data`, `reverse_ce_data`) or past the
//! prober's unscaled window edge and its slack but inside its scaled
//! window (`reverse_out_of_window`, the campus firewall's sequence checking
//! in the server-to-client direction: a tracker that missed the scaling
//! holds the prober's window field unscaled, and lets a segment overshoot
//! its edge by at most the largest window it saw from the prober, the
//! SYN's 64,240 bytes; the byte goes half-way between twice that and the
//! scaled window). What arrives here is the far end's view; the routers'
//! quotes reach the reflector. The byte is sent twice at most (the second
//! time the full copy only). A server whose SYN-ACK carried no window
//! scale does not scale the prober's window: nothing past the unscaled
//! edge is inside it, the out-of-window twin does not run.

use std::time::{Duration, Instant};

use super::super::catalogue::{TestSpec, Unit};
use super::super::error::{ControlError, ProbeError};
use super::super::prober::handshake::{SYN_OPTIONS, TSVAL};
use super::super::prober::{Arrival, Prober};
use super::super::reflect::protocol::Craft;
use super::super::reflect::Control;
use super::super::wire::Answer;
use super::out_of_window::{window_shift, OowEvidence, ShiftSource};
use super::{FarEnd, Note, ReflectorRefusal, TestRun};
use crate::conn::Direction;

/// The twin of a data test (`ect0_data`, `ce_data`, `out_of_window`).
pub fn twin(t: &TestSpec) -> Option<TestSpec> {
    Some(TestSpec {
        name: t.twin?,
        unit: Unit::ReverseData,
        direction: Direction::ServerToClient,
        twin: None,
        ..t.clone()
    })
}

/// The prober's SYN's window, the largest a tracker saw from it.
const SYN_WINDOW: u32 = 64240;
/// The prober's shift.
const SHIFT: u8 = 7;
/// The identification of the prober's SYN and ACK.
const IDENT: u16 = 0x4000;
/// How often the quotes are asked for, while waiting.
const PASS_PAUSE: Duration = Duration::from_millis(20);

/// Runs one of the three tests.
pub fn run(
    p: &mut Prober<'_>,
    c: &mut Control,
    index: u8,
    spec: &TestSpec,
) -> Result<TestRun, ProbeError> {
    let oow = spec.drop_kind == crate::finding::Kind::OutOfWindowDropped;
    // The prober's window as a tracker that missed the scaling reads it
    // (the field) and as the server means it (shifted by 7).
    let field: u16 = if oow { 4000 } else { 502 };
    let (limit, scaled) = (2 * SYN_WINDOW, u32::from(field) << SHIFT);
    let offset = if oow { limit + (scaled - limit) / 2 } else { 0 };
    let sport = p.io.port();
    // Timestamps as Linux sends them: a SYN proxy (Linux SYNPROXY) keeps
    // window scaling and SACK only with them (it encodes them in its
    // timestamp cookie, echoed by the prober's ACK).
    let (mut run, hs) = p.handshake(
        sport,
        IDENT,
        Direction::ServerToClient,
        SYN_OPTIONS.timestamps(TSVAL, 0),
        field,
    )?;
    let Some(hs) = hs else {
        // Nothing listens, or no SYN-ACK: nothing for the reflector to send.
        if run.notes != [Note::PortClosed] {
            run.notes = vec![Note::NoSynAckToReflect];
        }
        return Ok(run);
    };
    let ack = hs.isn.wrapping_add(1);
    // The server scales the prober's window only when its own SYN-ACK
    // carried window scale (as the reflector captured it; what reaches the
    // prober may have lost it on the way, as in the campus case).
    if oow
        && c.server_synack(sport, ack)?
            .is_some_and(|s| window_shift(&s).is_none())
    {
        run.notes.push(Note::ServerUnscaled);
        p.send_rst(sport, ack)?;
        return Ok(run);
    }
    if oow {
        run.oow = Some(OowEvidence {
            synack_window: SYN_WINDOW as u16,
            synack_shift: Some(SHIFT),
            ack_window: field,
            offset,
            shift: SHIFT,
            shift_source: ShiftSource::Prober,
            unscaled_edge: SYN_WINDOW,
            scaled_edge: scaled,
        });
    }
    let ident = 0x8000 | (u16::from(index) << 8);
    let mut craft = Craft {
        port: sport,
        ack: Some(ack),
        ident,
        ttls: p.path.short_ttls().chain([64]).collect(),
        tos: Some(spec.marks.ds.value()),
        offset: Some(offset),
        ..Craft::default()
    };
    let len = p.path.len.unwrap_or(1);
    let byte = |a: &Arrival| matches!(&a.answer, Answer::Tcp(s) if s.dport() == sport && s.ident == ident && s.has_data());
    for attempt in 0..2 {
        match c.send_data(craft.clone()) {
            Ok(sent) if attempt == 0 => run.sent = sent,
            Ok(_) => {}
            Err(e @ ControlError::Refused { .. }) => {
                run.notes.push(Note::Reflector(ReflectorRefusal {
                    error: e.to_string(),
                    code: e.refusal(),
                }));
                p.send_rst(sport, ack)?;
                if let Some(o) = run.oow.as_mut() {
                    o.offset = 0;
                }
                return Ok(run);
            }
            Err(e) => return Err(e.into()),
        }
        let until = Instant::now() + p.io.timeout;
        p.io.wait(until, |inbox| inbox.iter().any(byte));
        if let Some(a) = p.io.take(byte).into_iter().next() {
            if let Answer::Tcp(s) = a.answer {
                run.answer = Some((len, s));
                break;
            }
        }
        craft.ttls = vec![64];
    }
    // The quotes of the data copies, one per hop, up to the timeout.
    let want = p.path.short_ttls().len();
    let until = Instant::now() + p.io.timeout;
    loop {
        run.quotes = c.quotes(sport, ack, ident, true)?;
        if run.quotes.len() >= want || Instant::now() >= until {
            break;
        }
        std::thread::sleep(PASS_PAUSE);
    }
    if let Some((_, s)) = &run.answer {
        run.at_end = Some(FarEnd {
            ttl: len,
            address: p.io.src,
            seen: s.clone(),
        });
    }
    p.send_rst(sport, ack)?;
    p.io.forget(sport);
    Ok(run)
}
