//! Many SYN tests at once.
//!
//! Each test is a [`Flight`]: one SYN on a source port of its own, sent
//! with TTL 1 to the hop before the target (the routers quote those) and
//! once with TTL 64 (the target answers it). A sweep sends every flight's
//! copies (one to each hop, then the pause `--pace-ms`: each hop, and the
//! target, gets one packet per pause at most), then reads what comes back, sorting it to the flights by
//! port, until each flight has its answer (or an ICMP unreachable) and a
//! quote from every router that answered the path walk, or until the
//! timeout. What is still missing is sent once more and waited for once
//! more. So a sweep of many tests waits about as long as one test did:
//! the waits overlap, and a test whose probe is dropped costs two timeouts
//! for the whole sweep, not two each.
//!
//! Rounds go on while they bring quotes: a Linux router answers at most 6
//! expired packets to one host at once, then one a second (IPv4's
//! `icmp_ratelimit`, 1000 ms, `XRLIM_BURST_FACTOR` 6; IPv6's, scaled by
//! the route's prefix length), so on a path of such routers each round
//! gets about one quote per router, and each hop is sent only as many
//! copies a round as it answered the round before, and one more. A sweep
//! there takes about a second per test, as long as the routers take to
//! answer every copy; it stops at the first round that brings nothing.

use std::time::Instant;

use dscp::DsField;
use tcp_options::Flags;

use super::super::error::ProbeError;
use super::super::tests::TestRun;
use super::super::wire::{Answer, IcmpKind, IpFields, Segment};
use super::{ident, random_u32, ttl_of, Arrival, Prober};
use crate::conn::Direction;

/// The TTL of the copies meant to reach the target.
pub const FULL_TTL: u8 = 64;

/// One SYN test in a sweep.
#[derive(Debug, Clone)]
pub struct Flight {
    /// The test's index (in the copies' identification).
    pub index: u8,
    /// The DS field of its copies.
    pub ds: DsField,
    /// The SYN (its own source port and sequence number).
    pub seg: Segment,
    /// What came back.
    pub run: TestRun,
}

impl Flight {
    /// A SYN from a new port with a new sequence number: flags `flags`
    /// besides SYN, window `window`, option block `options`, data
    /// `payload`.
    pub fn new(
        p: &mut Prober<'_>,
        index: u8,
        ds: DsField,
        seg: Segment,
    ) -> Result<Flight, ProbeError> {
        let seg = Segment {
            sport: p.io.port(),
            dport: p.io.dport,
            seq: random_u32(),
            flags: Flags::SYN | seg.flags,
            ..seg
        };
        let sent =
            p.io.build(IpFields::new(ds, FULL_TTL, ident(index, 0)), &seg)?;
        Ok(Flight {
            index,
            ds,
            seg,
            run: TestRun::new(sent, Direction::ClientToServer),
        })
    }

    /// Whether the copy with this TTL brought back what it can.
    fn has(&self, ttl: u8) -> bool {
        if ttl == FULL_TTL {
            self.run.answer.is_some() || self.run.unreachable.is_some()
        } else {
            self.run.has_quote(ttl)
        }
    }

    /// Sorts one arrival for this flight's port.
    fn sort(&mut self, a: Arrival, len: u8, max_ttl: u8) {
        match a.answer {
            Answer::Tcp(s) => {
                let next = self.seg.seq.wrapping_add(1);
                let ours = s
                    .flags()
                    .is_some_and(|f| f.intersects(Flags::SYN | Flags::RST))
                    && (s.ack() == Some(next)
                        || s.ack() == Some(next.wrapping_add(self.seg.payload.len() as u32)));
                if ours && self.run.answer.is_none() {
                    self.run.answer = Some((len, s));
                }
            }
            Answer::Icmp(e) if e.kind == IcmpKind::TimeExceeded => {
                // By its identification. One that names no copy of this
                // flight is this flight's only if it quotes its sequence
                // number (a middlebox rewrote the identification): then
                // the TTL is the first one not yet quoted. (A quote of
                // another run's copy to a source port this run reuses
                // names neither.)
                let ttl = match ttl_of(self.index, e.quote.ident) {
                    Some(t) => t,
                    None if e.quote.seq() == self.seg.seq => {
                        (1..=max_ttl).find(|t| !self.run.has_quote(*t)).unwrap_or(1)
                    }
                    None => return,
                };
                self.run.add_quote(ttl, e);
            }
            Answer::Icmp(e) => {
                self.run.unreachable.get_or_insert(e);
            }
        }
    }
}

/// How many flights hop `ttl` quoted.
fn quoted(flights: &[Flight], ttl: u8) -> usize {
    flights.iter().filter(|f| f.run.has_quote(ttl)).count()
}

impl Prober<'_> {
    /// Sends every flight's copies and collects what comes back (module
    /// docs). Without a path nothing is sent. Each SYN-ACK is answered
    /// with our RST.
    pub fn sweep(&mut self, flights: &mut [Flight]) -> Result<(), ProbeError> {
        let Some(len) = self.path.len else {
            return Ok(());
        };
        let hops: Vec<u8> = self.path.short_ttls().collect();
        // Copies each hop gets per round: all that are missing in the
        // first two, then as many as it answered in the last one and one
        // more (a router that limits its ICMP rate answers a few a second:
        // copies past its rate only wait for nothing).
        let mut quota: Vec<usize> = vec![usize::MAX; hops.len()];
        let mut reset = vec![false; flights.len()];
        for round in 0.. {
            let before: Vec<usize> = hops.iter().map(|t| quoted(flights, *t)).collect();
            let answers = flights.iter().filter(|f| f.has(FULL_TTL)).count();
            self.send_round(flights, &hops, &quota)?;
            self.collect(flights, len, Instant::now() + self.io.timeout);
            self.reset_answered(flights, &mut reset)?;
            if flights.iter().all(|f| self.complete(f)) {
                break;
            }
            let gained: Vec<usize> = hops
                .iter()
                .zip(&before)
                .map(|(t, b)| quoted(flights, *t) - b)
                .collect();
            let new_answers = flights.iter().filter(|f| f.has(FULL_TTL)).count() - answers;
            // Past the second round, only while rounds bring something.
            if round >= 1 && new_answers == 0 && gained.iter().all(|g| *g == 0) {
                break;
            }
            if round >= 1 {
                quota = gained.iter().map(|g| g + 1).collect();
            }
        }
        Ok(())
    }

    /// One round: each flight's missing copies, at most `quota` per hop
    /// (by position in `hops`), the full copy whenever its answer is
    /// missing; one copy to each hop, then the pause: each hop (and the
    /// target) sees a packet every pace at most.
    fn send_round(
        &self,
        flights: &[Flight],
        hops: &[u8],
        quota: &[usize],
    ) -> Result<(), ProbeError> {
        let mut left = quota.to_vec();
        for f in flights {
            let mut sent = false;
            for (i, &ttl) in hops.iter().enumerate() {
                if !f.has(ttl) && left[i] > 0 {
                    left[i] -= 1;
                    self.io
                        .send(IpFields::new(f.ds, ttl, ident(f.index, ttl)), &f.seg)?;
                    sent = true;
                }
            }
            if !f.has(FULL_TTL) {
                let ip = IpFields::new(f.ds, FULL_TTL, ident(f.index, FULL_TTL));
                self.io.send(ip, &f.seg)?;
                sent = true;
            }
            if sent {
                std::thread::sleep(self.io.pace);
            }
        }
        Ok(())
    }

    /// Ends with our RST each connection a SYN-ACK opened (once).
    fn reset_answered(&self, flights: &[Flight], reset: &mut [bool]) -> Result<(), ProbeError> {
        for (f, done) in flights.iter().zip(reset.iter_mut()) {
            if let (Some((_, s)), false) = (&f.run.answer, *done) {
                if s.has(Flags::SYN) {
                    self.send_rst(f.seg.sport, s.ack().unwrap_or(f.seg.seq.wrapping_add(1)))?;
                }
                *done = true;
            }
        }
        Ok(())
    }

    /// A flight has its answer (or unreachable) and a quote from each
    /// router that answered the path walk.
    fn complete(&self, f: &Flight) -> bool {
        f.has(FULL_TTL)
            && self
                .path
                .short_ttls()
                .filter(|t| self.path.answers(*t))
                .all(|t| f.has(t))
    }

    /// Reads until every flight is complete or `until`.
    fn collect(&mut self, flights: &mut [Flight], len: u8, until: Instant) {
        let max_ttl = self.max_ttl;
        loop {
            let keys: Vec<(u16, u32)> = flights.iter().map(|f| (f.seg.sport, f.seg.seq)).collect();
            let which = |a: &Arrival| -> Option<usize> {
                keys.iter()
                    .position(|(port, _)| *port == a.port())
                    .or_else(|| match &a.answer {
                        // A quote whose port a middlebox changed: by its
                        // sequence number.
                        Answer::Icmp(e) => keys.iter().position(|(_, seq)| *seq == e.quote.seq()),
                        Answer::Tcp(_) => None,
                    })
            };
            for a in self.io.take(|a| which(a).is_some()) {
                if let Some(i) = which(&a) {
                    flights[i].sort(a, len, max_ttl);
                }
            }
            if flights.iter().all(|f| self.complete(f)) || Instant::now() >= until {
                return;
            }
            self.io
                .wait(until, |inbox| inbox.iter().any(|a| which(a).is_some()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::probe::wire::{packet, IcmpError, Seen};
    use std::net::{IpAddr, Ipv4Addr};

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 2));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 44, 2));
    const R1: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 41, 1));

    fn seg(seq: u32) -> Segment {
        Segment {
            seq,
            flags: Flags::SYN,
            window: 64240,
            ..Segment::new(40001, 5201)
        }
    }

    /// A router's quote of the copy `seg` with identification `ident`.
    fn quote(seg: &Segment, ds: u8, ident: u16) -> Arrival {
        let p = packet(A, B, IpFields::new(DsField::new(ds), 1, ident), seg).unwrap();
        Arrival {
            at: Instant::now(),
            answer: Answer::Icmp(IcmpError {
                from: R1,
                kind: IcmpKind::TimeExceeded,
                code: 0,
                quote: Seen::parse(&p).unwrap(),
                extensions: false,
            }),
        }
    }

    /// A quote to this flight's port is this flight's when its
    /// identification names one of the flight's copies, or when it quotes
    /// the flight's sequence number (a middlebox rewrote the
    /// identification); a quote of another run's copy to the same port
    /// (another identification, another sequence number, another DS field)
    /// is not: it would have been a DSCP change that never happened.
    #[test]
    fn a_quote_of_another_run_s_copy_is_not_taken() {
        let sent = seg(1000);
        let mut f = Flight {
            index: 0x25,
            ds: DsField::new(0),
            seg: sent.clone(),
            run: TestRun::new(
                Seen::parse(
                    &packet(A, B, IpFields::new(DsField::new(0), 64, 0x2500), &sent).unwrap(),
                )
                .unwrap(),
                crate::conn::Direction::ClientToServer,
            ),
        };
        // Another run: another sequence number, DSCP 46, its own index.
        f.sort(quote(&seg(77), 46 << 2, 0x1101), 4, 16);
        assert!(f.run.quotes.is_empty());
        // This flight's copy for TTL 2.
        f.sort(quote(&sent, 0, ident(0x25, 2)), 4, 16);
        assert!(f.run.has_quote(2));
        // Its identification rewritten: by the sequence number, the first
        // TTL not yet quoted.
        f.sort(quote(&sent, 0, 0xbeef), 4, 16);
        assert!(f.run.has_quote(1));
        assert_eq!(f.run.quotes.len(), 2);
    }
}
