//! `fastopen_data`: TCP Fast Open (RFC 7413) with data in the SYN.
//!
//! First a SYN with a cookie request (from a port of its own), whose
//! SYN-ACK carries the server's cookie (section 4.1.1); then, like every
//! SYN test (TTL-limited copies and a full one), a SYN with that cookie and
//! [`FASTOPEN_DATA`]. A server that takes the data acknowledges it in its
//! SYN-ACK (section 4.2.2); no SYN-ACK at all while the cookie request got
//! one means the path drops SYNs carrying data (section 6: middleboxes
//! that do), a `probe_dropped`. No cookie: the test does not run.

use dscp::DsField;
use tcp_options::{FastOpen, Flags, LinuxOptions, OptionsBuilder, TcpOption};

use super::super::catalogue::{Marks, TestSpec, Unit};
use super::super::error::ProbeError;
use super::super::evaluate::{Detail, Outcome};
use super::super::prober::{ident, random_u32, Flight, Prober};
use super::super::reflect::Control;
use super::super::wire::{options, IpFields, Seen, Segment};
use super::{Note, TestRun};
use crate::conn::Direction;
use crate::finding::Kind;

/// The data of the SYN: 64 bytes, so that the SYN is longer than any SYN
/// without data (at most 40 + 20 + 40 = 100 bytes over IPv6), which is how
/// the lab's `tfo_drop_fwd` rule tells them apart.
pub const FASTOPEN_DATA: &[u8; 64] =
    b"firewall-check probe: data in a SYN with a Fast Open cookie....\n";

/// The options of both SYNs besides Fast Open.
const BASE: OptionsBuilder<'static> = OptionsBuilder::new()
    .mss(1460)
    .sack_permitted()
    .window_scale(7);

/// The test.
pub fn spec() -> TestSpec {
    TestSpec {
        name: "fastopen_data",
        what: "Fast Open (RFC 7413): a cookie request, then a SYN with the server's cookie and 64 bytes of data",
        unit: Unit::FastOpenData,
        direction: Direction::ClientToServer,
        marks: Marks::plain(),
        drop_kind: Kind::ProbeDropped,
        twin: Some("synack_fastopen_data"),
    }
}

/// The server's Fast Open cookie in a SYN-ACK.
fn cookie(synack: &Seen) -> Option<Vec<u8>> {
    LinuxOptions::new(synack.options()?).find_map(|o| match o.option {
        TcpOption::FastOpen(FastOpen { cookie, .. }) if !cookie.is_empty() => Some(cookie.to_vec()),
        _ => None,
    })
}

/// Runs the test (with the reflector, its capture at the target too).
pub fn run(
    p: &mut Prober<'_>,
    index: u8,
    spec: &TestSpec,
    control: Option<&mut Control>,
) -> Result<TestRun, ProbeError> {
    let req_port = p.io.port();
    let seq = random_u32();
    let request = Segment {
        seq,
        flags: Flags::SYN,
        window: 64240,
        options: options(BASE.fast_open(&[]))?,
        ..Segment::new(req_port, p.io.dport)
    };
    let ip = IpFields::new(DsField::new(0), 64, ident(index, 0));
    let not_run = |p: &Prober<'_>, note: Note| -> Result<TestRun, ProbeError> {
        let mut run = TestRun::new(p.io.build(ip, &request)?, Direction::ClientToServer);
        run.notes.push(note);
        Ok(run)
    };
    if p.path.len.is_none() {
        return not_run(p, Note::NoPath);
    }
    p.io.send(ip, &request)?;
    let synack = match p.wait_synack(req_port, seq) {
        Ok(s) => s,
        Err(Note::PortClosed) => return not_run(p, Note::PortClosed),
        Err(_) => return not_run(p, Note::CookieRequestUnanswered),
    };
    p.send_rst(req_port, seq.wrapping_add(1))?;
    let Some(cookie) = cookie(&synack) else {
        return not_run(p, Note::NoCookie);
    };
    let seg = Segment {
        window: spec.marks.window,
        options: options(BASE.fast_open(&cookie))?,
        payload: FASTOPEN_DATA.to_vec(),
        ..Segment::new(0, 0)
    };
    let mut flights = [Flight::new(p, index, spec.marks.ds, seg)?];
    p.sweep(&mut flights)?;
    let [f] = flights;
    let mut run = f.run;
    if let Some(c) = control {
        p.capture_forward(c, vec![&mut run])?;
    }
    Ok(run)
}

/// What became of the data, for the test's detail.
pub fn judge(run: &TestRun, result: Outcome, detail: &mut Vec<Detail>) {
    if !run.notes.is_empty() {
        return;
    }
    let n = run.sent.payload().map_or(0, <[u8]>::len);
    let seq = run.sent.seq();
    let at_target = run
        .at_end
        .as_ref()
        .is_some_and(|o| o.seen.payload().is_some_and(|d| d.len() == n));
    let acked = seq.wrapping_add(1).wrapping_add(n as u32);
    detail.push(match &run.answer {
        Some((_, a)) if a.ack() == Some(acked) => Detail::FastOpenDataAcked { bytes: n },
        Some(_) if at_target => Detail::FastOpenDataNotTaken { bytes: n },
        Some(_) => Detail::FastOpenDataNotAcked,
        None if result == Outcome::Dropped => Detail::FastOpenDataDropped { bytes: n },
        None => return,
    });
}
