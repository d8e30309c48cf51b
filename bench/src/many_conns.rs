//! The many-connections capture (`gen-many-conns`): the shape a port scan
//! or a busy server's SYN flood gives, about one connection per two
//! segments.
//!
//! # Traffic model
//!
//! Each connection ([`Connection::draw`], with the family, DS, layout and
//! the other mixes of [`crate::conn`]; then its server port redrawn
//! uniformly in 1..=65535, as a scan touches many ports) is one of:
//!
//! | kind | share | segments |
//! |------|-------|----------|
//! | refused (a closed port) | 0.5 | SYN, then RST\|ACK from the server (seq 0, ack ISN+1, window 0) |
//! | half-open (an open port, as a SYN scanner leaves it) | 0.25 | SYN, SYN-ACK, then RST from the client (seq ISN+1, window 0) |
//! | unanswered (a filtered port) | 0.25 | a lone SYN |
//!
//! so 2:1:1, two segments per connection on average: 200,000 segments hold
//! about 100,000 connections. The SYN and SYN-ACK carry the connection's option
//! layout ([`Connection::syn_options`]; TSval the side's timestamp base,
//! the SYN-ACK echoing the SYN's), windows 64800 or 64240 and 65160; the
//! RSTs carry no option.
//!
//! Up to `open` connections are in flight at once: each step picks one of
//! `open` slots uniformly at random and writes its connection's next
//! segment; a connection whose script is done is replaced by a new one.
//! Records are spaced 1 to 9 us apart (uniform), the first at
//! [`crate::START_US`].
//!
//! These are the rules, probabilities and ranges of the Python generator
//! this module replaces, draw for draw. `connections` in the sidecar counts
//! the connections with at least one segment in the capture.

use std::io::Write;

use rand::RngExt;
use tcp_options::Flags;

use crate::conn::{Connection, Layout, OptionBlock};
use crate::error::GenError;
use crate::frame::{self, Segment, MAX_FRAME_LEN};
use crate::record::{Pool, Recorder};
use crate::sink::CaptureSink;
use crate::Counts;

/// Share of refused connections.
pub const REFUSED: f64 = 0.5;
/// Refused plus half-open: the rest is unanswered.
pub const REFUSED_OR_HALF_OPEN: f64 = 0.75;
/// Gap between two records, microseconds, drawn uniformly.
pub const GAP_US: core::ops::Range<u64> = 1..10;
/// Server ports a scan touches.
pub const SCAN_PORTS: core::ops::RangeInclusive<u16> = 1..=65535;

/// What happens to a connection (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// SYN, RST|ACK.
    Refused,
    /// SYN, SYN-ACK, RST.
    HalfOpen,
    /// SYN.
    Unanswered,
}

impl Kind {
    /// The kind of a uniform draw in [0, 1).
    pub fn of(r: f64) -> Self {
        if r < REFUSED {
            Kind::Refused
        } else if r < REFUSED_OR_HALF_OPEN {
            Kind::HalfOpen
        } else {
            Kind::Unanswered
        }
    }

    /// Its segments.
    pub const fn segments(self) -> usize {
        match self {
            Kind::Refused => 2,
            Kind::HalfOpen => 3,
            Kind::Unanswered => 1,
        }
    }
}

/// The generator's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Segments to write.
    pub segments: u64,
    /// Connections in flight at once (slots), at least 1.
    pub open: usize,
    /// Seed of the generator.
    pub seed: u64,
}

/// A connection and how far through its script it is.
#[derive(Debug)]
struct Scan {
    c: Connection,
    kind: Kind,
    sent: usize,
}

impl Scan {
    fn new(rng: &mut crate::Rng, index: u64) -> Self {
        let mut c = Connection::draw(rng, index);
        c.server.port = rng.random_range(SCAN_PORTS);
        let kind = Kind::of(rng.random::<f64>());
        Scan { c, kind, sent: 0 }
    }

    /// Write segment number `self.sent` of the script; returns its length.
    fn next(&mut self, buf: &mut [u8]) -> Result<usize, GenError> {
        let c = &self.c;
        let strip = c.layout == Layout::LinuxNoWindowScale;
        let isn1 = c.client_isn.wrapping_add(1);
        let none = OptionBlock::new();
        let (seg, opts) = match (self.sent, self.kind) {
            (0, _) => (
                Segment::new(true, Flags::SYN, c.client_isn, 0, c.client_window, &[]),
                c.syn_options(c.ts_client, 0)?,
            ),
            (1, Kind::Refused) => (
                Segment::new(false, Flags::RST | Flags::ACK, 0, isn1, 0, &[]),
                none,
            ),
            (1, _) => (
                Segment::new(
                    false,
                    Flags::SYN | Flags::ACK,
                    c.server_isn,
                    isn1,
                    c.server_window,
                    &[],
                ),
                c.syn_options(c.ts_server, c.ts_client)?,
            ),
            _ => (Segment::new(true, Flags::RST, isn1, 0, 0, &[]), none),
        };
        let seg = Segment {
            options: opts.as_slice(),
            strip_window_scale: strip && seg.flags.contains(Flags::SYN),
            ..seg
        };
        self.sent += 1;
        frame::build(&mut self.c, &seg, buf)
    }

    fn done(&self) -> bool {
        self.sent >= self.kind.segments()
    }
}

/// Write the many-connections capture (module docs) to every sink;
/// returns the counts.
pub fn generate<W: Write>(
    params: &Params,
    sinks: &mut [CaptureSink<W>],
) -> Result<Counts, GenError> {
    let mut rng = crate::rng(params.seed);
    let mut pool = Pool::new(&mut rng, params.open, Scan::new);
    let mut rec = Recorder::new(sinks, GAP_US);
    let mut buf = [0u8; MAX_FRAME_LEN];
    while rec.counts().segments < params.segments && !pool.is_empty() {
        let i = pool.pick(&mut rng);
        let scan = pool.get_mut(i);
        if scan.sent == 0 {
            rec.count_connection();
        }
        let len = scan.next(&mut buf)?;
        let ipv6 = scan.c.is_ipv6();
        rec.record(&mut rng, &buf[..len], ipv6)?;
        if scan.done() {
            pool.replace(i, &mut rng);
        }
    }
    Ok(rec.finish())
}
