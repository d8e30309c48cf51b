//! What both generators' loops share: the pool of connections open at
//! once ([`Pool`]: a random one makes the next record, and one that ends
//! is replaced by a new one), and the records' clock and counts
//! ([`Recorder`]: each record a random gap after the one before, the first
//! at [`crate::START_US`], the same frame to every sink).

use std::io::Write;
use std::ops::Range;

use rand::RngExt;

use crate::error::GenError;
use crate::sink::CaptureSink;
use crate::{Counts, Rng, START_US};

/// The connections open at once, each made by `make` from the generator
/// and its index (0, 1, 2, ... in the order they are made).
pub struct Pool<T> {
    slots: Vec<T>,
    next_index: u64,
    make: fn(&mut Rng, u64) -> T,
}

impl<T> Pool<T> {
    /// `open` connections, made in order.
    pub fn new(rng: &mut Rng, open: usize, make: fn(&mut Rng, u64) -> T) -> Self {
        let mut pool = Pool {
            slots: Vec::with_capacity(open),
            next_index: 0,
            make,
        };
        for _ in 0..open {
            let c = pool.next(rng);
            pool.slots.push(c);
        }
        pool
    }

    fn next(&mut self, rng: &mut Rng) -> T {
        let c = (self.make)(rng, self.next_index);
        self.next_index += 1;
        c
    }

    /// Whether no connection is open (a pool of none).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The index of a connection drawn uniformly; the pool must not be
    /// empty.
    pub fn pick(&self, rng: &mut Rng) -> usize {
        rng.random_range(0..self.slots.len())
    }

    /// The connection at `i` ([`Pool::pick`]).
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        &mut self.slots[i]
    }

    /// The connection at `i` has ended: a new one takes its place.
    pub fn replace(&mut self, i: usize, rng: &mut Rng) {
        self.slots[i] = self.next(rng);
    }
}

/// The records' clock and counts, and the sinks they go to.
pub struct Recorder<'s, W: Write> {
    sinks: &'s mut [CaptureSink<W>],
    gap_us: Range<u64>,
    t_us: u64,
    counts: Counts,
}

impl<'s, W: Write> Recorder<'s, W> {
    /// Records to `sinks`, each `gap_us` (drawn uniformly) after the one
    /// before.
    pub fn new(sinks: &'s mut [CaptureSink<W>], gap_us: Range<u64>) -> Self {
        Recorder {
            sinks,
            gap_us,
            t_us: START_US,
            counts: Counts::default(),
        }
    }

    /// The time of the last record (of the first to come, before any).
    pub fn t_us(&self) -> u64 {
        self.t_us
    }

    /// The counts so far.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// The bytes the first sink has written, if there is one.
    pub fn first_sink_bytes(&self) -> Option<u64> {
        self.sinks.first().map(CaptureSink::bytes)
    }

    /// One more connection has a segment in the capture.
    pub fn count_connection(&mut self) {
        self.counts.connections += 1;
    }

    /// Advances the clock by a gap, writes `frame` to every sink at that
    /// time, and counts it as a segment over IPv6 or IPv4.
    pub fn record(&mut self, rng: &mut Rng, frame: &[u8], ipv6: bool) -> Result<(), GenError> {
        self.t_us += rng.random_range(self.gap_us.clone());
        for s in self.sinks.iter_mut() {
            s.write(self.t_us, frame)?;
        }
        self.counts.segments += 1;
        if ipv6 {
            self.counts.ipv6_segments += 1;
        } else {
            self.counts.ipv4_segments += 1;
        }
        Ok(())
    }

    /// The counts.
    pub fn finish(self) -> Counts {
        self.counts
    }
}
