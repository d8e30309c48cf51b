//! `ttl`: the path walk, a bare SYN with TTL 1, 2, ... until the target
//! answers.
//!
//! Each copy goes out on a source port of its own, so the target's answer
//! (sent to the copy's port, acknowledging the copy's sequence number)
//! says exactly which TTL reached it: the path's length is the lowest TTL
//! that drew an answer, whatever order the answer and the routers' ICMP
//! errors arrive in. (The walk once took the length from the highest TTL
//! quoted within 100 ms of the answer: a quote that came later, from a slow
//! router or a reader thread the scheduler held back, made the target hop 1
//! and every later test's copies skip the routers.) The copies go in
//! batches of four TTLs; once the target answers, a TTL below it that drew
//! nothing is sent once more. A target that answers no TTL up to
//! `--max-ttl` gets a full copy (TTL 64), twice at most: if it answers, it
//! is further than `--max-ttl`, its distance unknown.
//!
//! The routers that quote a copy make the path; each quote is compared with
//! the copy it quotes (the judgment of [`super::super::evaluate`]), and
//! each hop must have quoted TTL 1 (each decrements TTL by one). The
//! target's answer also shows whether something on the path answered in
//! its place (a SYN proxy: [`super::super::evaluate`]'s `handshake_proxied`)
//! and whether anything listens on the port (an RST: [`Note::PortClosed`]).

use std::time::Instant;

use tcp_options::Flags;

use super::super::catalogue::{Marks, TestSpec, Unit};
use super::super::error::ProbeError;
use super::super::evaluate::Detail;
use super::super::prober::{ident, random_u32, Arrival, Prober};
use super::super::wire::{Answer, IcmpError, IcmpKind, IpFields, Seen, Segment};
use super::{Note, TestRun};
use crate::conn::Direction;
use crate::finding::Kind;

/// The test.
pub fn spec() -> TestSpec {
    TestSpec {
        name: "ttl",
        what: "a bare SYN: the path, and each hop's TTL decrement",
        unit: Unit::Path,
        direction: Direction::ClientToServer,
        marks: Marks::plain(),
        drop_kind: Kind::ProbeDropped,
        twin: None,
    }
}

/// TTLs sent together before waiting.
const BATCH: u8 = 4;

/// The TTL of the walk's full copies.
const FULL_TTL: u8 = 64;

/// One copy of the walk.
struct Copy {
    /// Its TTL (the full copy's: `--max-ttl` + 1, the end of the probed
    /// hops).
    ttl: u8,
    seg: Segment,
    sent: Seen,
    at: Instant,
    answer: Option<(Instant, Seen)>,
    quote: Option<IcmpError>,
}

/// The walk so far.
struct Walk<'s> {
    index: u8,
    spec: &'s TestSpec,
    copies: Vec<Copy>,
    unreachable: Option<IcmpError>,
}

impl Walk<'_> {
    /// The lowest TTL whose copy drew an answer.
    fn answered(&self) -> Option<u8> {
        self.copies
            .iter()
            .filter(|c| c.answer.is_some())
            .map(|c| c.ttl)
            .min()
    }

    /// An answer, and a quote from every TTL below it.
    fn complete(&self) -> bool {
        self.answered().is_some_and(|len| {
            (1..len).all(|t| self.copies.iter().any(|c| c.ttl == t && c.quote.is_some()))
        })
    }

    /// Sends the copy for `ttl` (with IP TTL `ip_ttl`): a new one on its
    /// own port the first time, the same again later if it drew nothing.
    fn send(&mut self, p: &mut Prober<'_>, ttl: u8, ip_ttl: u8) -> Result<(), ProbeError> {
        let ip = IpFields::new(self.spec.marks.ds, ip_ttl, ident(self.index, ip_ttl));
        if let Some(c) = self.copies.iter_mut().find(|c| c.ttl == ttl) {
            if c.answer.is_none() && c.quote.is_none() {
                c.at = Instant::now();
                p.io.send_paced(ip, &c.seg)?;
            }
            return Ok(());
        }
        let seg = Segment {
            seq: random_u32(),
            flags: Flags::SYN | self.spec.marks.flags,
            window: self.spec.marks.window,
            ..Segment::new(p.io.port(), p.io.dport)
        };
        let at = Instant::now();
        let sent = p.io.send_paced(ip, &seg)?;
        self.copies.push(Copy {
            ttl,
            seg,
            sent,
            at,
            answer: None,
            quote: None,
        });
        Ok(())
    }

    /// Sorts one arrival to its copy.
    fn sort(&mut self, a: Arrival) {
        let Some(c) = self.copies.iter_mut().find(|c| c.seg.sport == a.port()) else {
            return;
        };
        match a.answer {
            Answer::Tcp(s) => {
                let answers = s.ack() == Some(c.seg.seq.wrapping_add(1))
                    && s.flags()
                        .is_some_and(|f| f.intersects(Flags::SYN | Flags::RST));
                if answers && c.answer.is_none() {
                    c.answer = Some((a.at, s));
                }
            }
            Answer::Icmp(e) if e.quote.seq() != c.seg.seq => {}
            Answer::Icmp(e) if e.kind == IcmpKind::TimeExceeded => {
                c.quote.get_or_insert(e);
            }
            Answer::Icmp(e) => {
                self.unreachable.get_or_insert(e);
            }
        }
    }

    /// Reads until `until` or until the walk is complete.
    fn collect(&mut self, p: &mut Prober<'_>, until: Instant) {
        loop {
            let ports: Vec<u16> = self.copies.iter().map(|c| c.seg.sport).collect();
            let mine = |a: &Arrival| ports.contains(&a.port());
            for a in p.io.take(mine) {
                self.sort(a);
            }
            if self.complete() || Instant::now() >= until {
                return;
            }
            p.io.wait(until, |inbox| inbox.iter().any(mine));
        }
    }
}

/// Runs the walk; sets the prober's path.
pub fn run(p: &mut Prober<'_>, index: u8, spec: &TestSpec) -> Result<TestRun, ProbeError> {
    let mut w = Walk {
        index,
        spec,
        copies: Vec::new(),
        unreachable: None,
    };
    for _round in 0..2 {
        let mut first = 1u8;
        loop {
            // Once the target answered, only the TTLs below it.
            let last = w.answered().map_or(p.max_ttl, |l| l - 1);
            if first > last {
                break;
            }
            let end = first.saturating_add(BATCH - 1).min(last);
            for ttl in first..=end {
                w.send(p, ttl, ttl)?;
            }
            w.collect(p, Instant::now() + p.io.timeout);
            first = end.saturating_add(1);
            if end == u8::MAX {
                break;
            }
        }
        if w.complete() {
            break;
        }
    }
    let full = p.max_ttl.saturating_add(1);
    let beyond = w.answered().is_none();
    if beyond {
        for _ in 0..2 {
            w.send(p, full, FULL_TTL)?;
            w.collect(p, Instant::now() + p.io.timeout);
            if w.answered().is_some() {
                break;
            }
        }
    }
    finish(p, w, beyond)
}

/// The walk's run, the prober's path; closes the connections the
/// answers opened (at the sequence number the server expects).
fn finish(p: &mut Prober<'_>, w: Walk<'_>, beyond: bool) -> Result<TestRun, ProbeError> {
    let len = w.answered();
    let reached = len
        .and_then(|l| w.copies.iter().position(|c| c.ttl == l))
        .unwrap_or(0);
    let Some(first) = w.copies.get(reached) else {
        return Err(ProbeError::Internal("the path walk sent no copy"));
    };
    let mut run = TestRun::new(first.sent.clone(), Direction::ClientToServer);
    run.unreachable = w.unreachable;
    for c in &w.copies {
        if let Some(q) = c.quote.clone().filter(|_| len.is_none_or(|l| c.ttl < l)) {
            run.copies.push((c.ttl, c.sent.clone()));
            run.add_quote(c.ttl, q);
        }
        if let Some((_, s)) = &c.answer {
            if s.has(Flags::SYN) {
                p.send_rst(s.dport(), s.ack().unwrap_or(0))?;
            }
        }
    }
    if let (Some(l), Some(c)) = (len, w.copies.get(reached)) {
        if let Some((arrived, seen)) = &c.answer {
            p.path.rtt = Some(arrived.saturating_duration_since(c.at));
            if seen.has(Flags::RST) {
                run.notes.push(Note::PortClosed);
            }
            run.answer = Some((l, seen.clone()));
        }
        p.path.len = Some(l);
        p.path.beyond = beyond;
        p.path.hops = run.quotes.iter().map(|(t, e)| (*t, e.from)).collect();
    }
    Ok(run)
}

/// Each hop must have quoted TTL 1: each decrements it by one.
pub fn judge(run: &TestRun, detail: &mut Vec<Detail>) {
    let bad: Vec<Detail> = run
        .quotes
        .iter()
        .filter(|(_, e)| e.quote.ttl != 1)
        .map(|(t, e)| Detail::QuotedTtl {
            hop: *t,
            ttl: e.quote.ttl,
        })
        .collect();
    if bad.is_empty() && !run.quotes.is_empty() {
        detail.push(Detail::TtlDecrement);
    } else {
        detail.extend(bad);
    }
}
