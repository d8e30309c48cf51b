//! Sending copies and sorting what comes back.
//!
//! Every packet the raw sockets read is decoded once ([`parse_answer`]) and
//! kept in an inbox only if it is about this run: a TCP segment from the
//! target's port to one of the run's source ports, or an ICMP error quoting
//! one of the prober's packets. Tests take their packets from the inbox by
//! source port (several tests are in flight at once), so nothing one test
//! waits for is lost while another waits.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::super::error::{ProbeError, WireError};
use super::super::net::RawIp;
use super::super::wire::{packet, parse_answer, Answer, IcmpError, IpFields, Seen, Segment};

/// A packet of this run that arrived, decoded, with the time it was read.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// When the reader read it.
    pub at: Instant,
    /// What it is.
    pub answer: Answer,
}

impl Arrival {
    /// The prober's source port it concerns: the destination port of a
    /// TCP answer, the source port of a quoted probe.
    pub fn port(&self) -> u16 {
        match &self.answer {
            Answer::Tcp(s) => s.dport(),
            Answer::Icmp(e) => e.quote.sport(),
        }
    }
}

/// The run's sockets, addresses, pacing, ports and inbox.
pub struct Io<'a> {
    raw: &'a RawIp,
    /// The prober's address.
    pub src: IpAddr,
    /// The target's address.
    pub dst: IpAddr,
    /// The target's port.
    pub dport: u16,
    /// Pause after each packet of a train.
    pub pace: Duration,
    /// How long to wait for what a round of copies brings back.
    pub timeout: Duration,
    /// The run's source ports (inclusive).
    pub ports: (u16, u16),
    next_port: u16,
    inbox: Vec<Arrival>,
}

impl<'a> Io<'a> {
    /// The run's I/O over `raw`, the source ports `ports`.
    pub fn new(
        raw: &'a RawIp,
        src: IpAddr,
        target: std::net::SocketAddr,
        ports: (u16, u16),
    ) -> Io<'a> {
        Io {
            raw,
            src,
            dst: target.ip(),
            dport: target.port(),
            pace: Duration::from_millis(5),
            timeout: Duration::from_secs(1),
            ports,
            next_port: ports.0,
            inbox: Vec::new(),
        }
    }

    /// The next unused source port of the run.
    pub fn port(&mut self) -> u16 {
        let p = self.next_port;
        self.next_port = self.next_port.wrapping_add(1);
        p
    }

    /// The packet of `seg` to the target with `ip`'s fields, as it will
    /// be sent.
    pub fn build(&self, ip: IpFields, seg: &Segment) -> Result<Seen, ProbeError> {
        let p = packet(self.src, self.dst, ip, seg)?;
        Ok(Seen::parse(&p).map_err(WireError::from)?)
    }

    /// Sends `seg` to the target as one copy with `ip`'s fields; returns
    /// the packet as sent.
    pub fn send(&self, ip: IpFields, seg: &Segment) -> Result<Seen, ProbeError> {
        let p = packet(self.src, self.dst, ip, seg)?;
        self.raw.send(self.dst, &p)?;
        Ok(Seen::parse(&p).map_err(WireError::from)?)
    }

    /// Sends, then pauses for the pacing.
    pub fn send_paced(&self, ip: IpFields, seg: &Segment) -> Result<Seen, ProbeError> {
        let s = self.send(ip, seg)?;
        std::thread::sleep(self.pace);
        Ok(s)
    }

    /// Whether `a` concerns this run.
    fn ours(&self, a: &Answer) -> bool {
        let in_range = |p: u16| (self.ports.0..=self.ports.1).contains(&p);
        match a {
            Answer::Tcp(s) => s.src == self.dst && s.sport() == self.dport && in_range(s.dport()),
            // Any quote of the prober's packets: a middlebox may have
            // changed the port it shows.
            Answer::Icmp(e) => e.quote.src == self.src,
        }
    }

    /// Reads what arrived until `deadline` or until `done` says the inbox
    /// holds what is awaited (asked after each packet, and first).
    pub fn wait(&mut self, deadline: Instant, mut done: impl FnMut(&[Arrival]) -> bool) {
        while !done(&self.inbox) {
            let Some(r) = self.raw.recv_until(deadline) else {
                return;
            };
            if let Some(answer) = parse_answer(&r.bytes).filter(|a| self.ours(a)) {
                self.inbox.push(Arrival { at: r.at, answer });
            }
        }
    }

    /// Reads what arrived for up to `d` (all of it).
    pub fn wait_for(&mut self, d: Duration) {
        self.wait(Instant::now() + d, |_| false);
    }

    /// Takes the arrivals `pred` selects out of the inbox.
    pub fn take(&mut self, mut pred: impl FnMut(&Arrival) -> bool) -> Vec<Arrival> {
        let (taken, kept) = std::mem::take(&mut self.inbox)
            .into_iter()
            .partition(|a| pred(a));
        self.inbox = kept;
        taken
    }

    /// A segment from the target to `sport` matching `pred`, waiting up
    /// to the timeout; it is taken from the inbox.
    pub fn wait_tcp(
        &mut self,
        sport: u16,
        pred: impl Fn(&Seen) -> bool,
    ) -> Option<(Instant, Seen)> {
        let hit =
            |a: &Arrival| matches!(&a.answer, Answer::Tcp(s) if s.dport() == sport && pred(s));
        self.wait(Instant::now() + self.timeout, |inbox| inbox.iter().any(hit));
        self.take(hit)
            .into_iter()
            .next()
            .and_then(|a| match a.answer {
                Answer::Tcp(s) => Some((a.at, s)),
                Answer::Icmp(_) => None,
            })
    }

    /// Forgets everything that arrived for `sport` (a finished test's
    /// stragglers).
    pub fn forget(&mut self, sport: u16) {
        self.inbox.retain(|a| a.port() != sport);
    }

    /// The ICMP errors in the inbox quoting `sport`'s segment with
    /// sequence number `seq`, taken.
    pub fn take_quotes(&mut self, sport: u16, seq: u32) -> Vec<(Instant, IcmpError)> {
        self.take(|a| matches!(&a.answer, Answer::Icmp(e) if e.quote.sport() == sport && e.quote.seq() == seq))
            .into_iter()
            .filter_map(|a| match a.answer {
                Answer::Icmp(e) => Some((a.at, e)),
                Answer::Tcp(_) => None,
            })
            .collect()
    }
}
