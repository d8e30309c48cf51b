//! Per-second counters: what each stream received and lost, and each queue's backlog.

/// What one stream did in one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamInterval {
    /// Bytes delivered to the receiver (new data; IP packet lengths; TCP: delivered
    /// in order, as the receiving application gets them).
    pub bytes: u64,
    /// Packets delivered (new data).
    pub packets: u64,
    /// Packets dropped (policer, tail drop, or refused by a weight-0 queue).
    pub drops: u64,
}

/// A queue's backlog sampled at the end of an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Packets waiting.
    pub packets: u64,
    /// Bytes waiting.
    pub bytes: u64,
}

/// The table of per-interval counters, allocated once for the whole run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intervals {
    streams: usize,
    queues: usize,
    cells: Vec<StreamInterval>,
    backlog: Vec<Backlog>,
}

impl Intervals {
    /// Counters for `intervals` intervals of `streams` streams and `queues` queues.
    pub fn new(intervals: usize, streams: usize, queues: usize) -> Self {
        Intervals {
            streams,
            queues,
            cells: vec![StreamInterval::default(); intervals * streams],
            backlog: vec![Backlog::default(); intervals * queues],
        }
    }

    /// Number of intervals.
    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.streams).unwrap_or(0)
    }

    /// Whether there is no interval.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counters of `stream` in `interval` (for updating).
    pub fn cell_mut(&mut self, interval: usize, stream: usize) -> &mut StreamInterval {
        &mut self.cells[interval * self.streams + stream]
    }

    /// Counters of `stream` in `interval`.
    pub fn cell(&self, interval: usize, stream: usize) -> StreamInterval {
        self.cells[interval * self.streams + stream]
    }

    /// Backlog of `queue` at the end of `interval` (for updating).
    pub fn backlog_mut(&mut self, interval: usize, queue: usize) -> &mut Backlog {
        &mut self.backlog[interval * self.queues + queue]
    }

    /// Backlog of `queue` at the end of `interval`.
    pub fn backlog(&self, interval: usize, queue: usize) -> Backlog {
        self.backlog[interval * self.queues + queue]
    }

    /// Totals of `stream` over intervals `from..to`.
    pub fn total(&self, stream: usize, from: usize, to: usize) -> StreamInterval {
        (from..to.min(self.len())).fold(StreamInterval::default(), |mut a, i| {
            let c = self.cell(i, stream);
            a.bytes += c.bytes;
            a.packets += c.packets;
            a.drops += c.drops;
            a
        })
    }
}
