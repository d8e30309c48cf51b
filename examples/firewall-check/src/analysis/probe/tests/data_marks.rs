//! `ect0_data`, `ce_data`: ECN marks on data, after a real handshake.
//!
//! One data byte with the DS field's ECN set to ECT(0) or CE, sent with
//! TTL 1 to the hop before the target and once in full; the server's ACK
//! of it is the answer, the routers' quotes (and the reflector's capture)
//! show its ECN field on the way. Retransmitted as a TCP would, each wait
//! twice the one before (RFC 6298 backoff), three times at most. Behind a
//! SYN proxy the byte goes only once the proxy has opened the window its
//! SYN-ACK kept shut ([`Prober::await_open_window`]): a segment that
//! reaches Linux SYNPROXY before the server has answered the proxy is
//! taken for the handshake's ACK and dropped.

use std::time::{Duration, Instant};

use dscp::{DsField, Dscp, Ecn};
use tcp_options::Flags;

use super::super::catalogue::{Marks, TestSpec, Unit};
use super::super::error::ProbeError;
use super::super::prober::handshake::SYN_OPTIONS;
use super::super::prober::{ident, Prober};
use super::super::reflect::Control;
use super::super::wire::{IpFields, Segment};
use super::{collect_data_answers, data_complete, FarEnd, TestRun};
use crate::conn::Direction;
use crate::finding::Kind;

/// The two tests.
pub fn specs() -> [TestSpec; 2] {
    let t = |name, what, ecn, twin| TestSpec {
        name,
        what,
        unit: Unit::DataMark,
        direction: Direction::ClientToServer,
        marks: Marks {
            ds: DsField::from_parts(Dscp::CS0, ecn),
            ..Marks::plain()
        },
        drop_kind: Kind::ProbeDropped,
        twin: Some(twin),
    };
    [
        t(
            "ect0_data",
            "after a handshake, one data byte marked ECT(0)",
            Ecn::Ect0,
            "reverse_ect0_data",
        ),
        t(
            "ce_data",
            "after a handshake, one data byte marked CE",
            Ecn::Ce,
            "reverse_ce_data",
        ),
    ]
}

/// The window field of the prober's ACK (shift 7: 64,256 bytes).
const WINDOW: u16 = 502;

/// How long the reflector's capture of the byte is waited for.
const CAPTURE_WAIT: Duration = Duration::from_secs(1);

/// Runs one of the two tests.
pub fn run(
    p: &mut Prober<'_>,
    index: u8,
    spec: &TestSpec,
    control: Option<&mut Control>,
) -> Result<TestRun, ProbeError> {
    let sport = p.io.port();
    let len = p.path.len.unwrap_or(1);
    let (mut run, hs) = p.handshake(
        sport,
        ident(index, 0),
        Direction::ClientToServer,
        SYN_OPTIONS,
        WINDOW,
    )?;
    let Some(hs) = hs else { return Ok(run) };
    let seg = Segment {
        flags: Flags::PSH | Flags::ACK,
        payload: vec![b'E'],
        ..hs.ack
    };
    let ds = spec.marks.ds;
    run.sent = p.io.build(IpFields::new(ds, 64, ident(index, 0)), &seg)?;
    let next = hs.isn.wrapping_add(2);
    for attempt in 0..3u32 {
        for ttl in p.path.short_ttls().filter(|t| !run.has_quote(*t)) {
            p.io.send_paced(IpFields::new(ds, ttl, ident(index, ttl)), &seg)?;
        }
        if run.answer.is_none() {
            p.io.send(IpFields::new(ds, 64, ident(index, 0)), &seg)?;
        }
        let until = Instant::now() + p.io.timeout * (1 << attempt);
        collect_data_answers(p, &mut run, sport, seg.seq, until, |s| {
            s.ack() == Some(next)
        });
        if data_complete(p, &run) {
            break;
        }
    }
    if let Some(c) = control {
        let until = Instant::now() + CAPTURE_WAIT;
        loop {
            let seen = c.arrived(sport, |s| s.seq() == seg.seq && s.has_data())?;
            if let Some(seen) = seen {
                run.at_end = Some(FarEnd {
                    ttl: len,
                    address: p.io.dst,
                    seen,
                });
                break;
            }
            if run.answer.is_none() || Instant::now() >= until {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    p.send_rst(sport, next)?;
    p.io.forget(sport);
    Ok(run)
}
