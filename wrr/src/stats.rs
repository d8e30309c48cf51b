//! Per-queue counters: what the API reports ([`QueueStats`]) and what a
//! queue stores to produce it.
//!
//! A queue stores, on its fast path, only what an arrival changes: packets
//! and bytes accepted since it was created (and, rarely, a new peak). Its
//! backlog is its own length. A departure writes no counter at all: the
//! packets and bytes sent are *derived*,
//!
//! ```text
//! sent = accepted - backlog - dropped from the head
//! ```
//!
//! and head drops and refusals are rare, so they live in [`RareCounters`].
//! Clearing the counters records a baseline instead of zeroing the running
//! totals the derivation needs. All arithmetic is modulo 2^64, so the
//! derivation stays exact after a wrap.

/// Counters of one queue (or, from
/// [`Scheduler::totals`](crate::Scheduler::totals), of all queues).
///
/// Packet and byte counters count modulo 2^64, as SNMP's `Counter64` does
/// (at 100 Gbit/s a byte counter takes 46 years to wrap); differences
/// between two readings are therefore exact across a wrap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueStats {
    /// Packets accepted.
    pub enqueued_packets: u64,
    /// Bytes accepted.
    pub enqueued_bytes: u64,
    /// Packets sent (dequeued).
    pub dequeued_packets: u64,
    /// Bytes sent (dequeued).
    pub dequeued_bytes: u64,
    /// Packets refused at arrival or dropped from the head.
    pub dropped_packets: u64,
    /// Bytes refused at arrival or dropped from the head.
    pub dropped_bytes: u64,
    /// Packets queued now.
    pub backlog_packets: u64,
    /// Bytes queued now.
    pub backlog_bytes: u64,
    /// Most packets queued at once since the counters were cleared.
    pub peak_backlog_packets: u64,
    /// Most bytes queued at once since the counters were cleared.
    pub peak_backlog_bytes: u64,
}

/// A packets-and-bytes pair, modulo 2^64.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Count {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
}

impl Count {
    /// Nothing counted.
    pub(crate) const ZERO: Count = Count {
        packets: 0,
        bytes: 0,
    };

    #[inline(always)]
    pub(crate) fn add(&mut self, len: u64) {
        self.packets = self.packets.wrapping_add(1);
        self.bytes = self.bytes.wrapping_add(len);
    }

    #[inline(always)]
    fn minus(self, other: Count) -> Count {
        Count {
            packets: self.packets.wrapping_sub(other.packets),
            bytes: self.bytes.wrapping_sub(other.bytes),
        }
    }
}

/// What a queue counts on arrival: packets and bytes accepted (on every
/// arrival) and the peak backlog (only when an arrival reaches the queue's
/// gate, see the scheduler's Enqueue section). The backlog itself is the
/// queue's length, kept by the queue.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
pub(crate) struct HotCounters {
    /// Accepted since the queue was created.
    pub(crate) accepted: Count,
    pub(crate) peak_bytes: u64,
    pub(crate) peak_packets: u32,
}

impl HotCounters {
    /// Nothing counted yet.
    pub(crate) const ZERO: HotCounters = HotCounters {
        accepted: Count::ZERO,
        peak_bytes: 0,
        peak_packets: 0,
    };
}

/// The counters that change only on a refusal, a head drop or a clear.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RareCounters {
    /// Refused at arrival since the last clear.
    pub(crate) refused: Count,
    /// Dropped from the head since the queue was created.
    pub(crate) head_dropped: Count,
    /// `accepted`, `sent` and `head_dropped` at the last clear.
    base_accepted: Count,
    base_sent: Count,
    base_head_dropped: Count,
}

impl RareCounters {
    /// Nothing counted yet.
    pub(crate) const ZERO: RareCounters = RareCounters {
        refused: Count::ZERO,
        head_dropped: Count::ZERO,
        base_accepted: Count::ZERO,
        base_sent: Count::ZERO,
        base_head_dropped: Count::ZERO,
    };
}

/// Everything a queue knows about its traffic, borrowed for one report.
pub(crate) struct QueueCounters<'a> {
    pub(crate) hot: &'a HotCounters,
    pub(crate) rare: &'a RareCounters,
    pub(crate) backlog: Count,
}

impl QueueCounters<'_> {
    /// Packets and bytes sent since the queue was created.
    fn sent(&self) -> Count {
        self.hot
            .accepted
            .minus(self.backlog)
            .minus(self.rare.head_dropped)
    }

    /// The report.
    pub(crate) fn stats(&self) -> QueueStats {
        let enqueued = self.hot.accepted.minus(self.rare.base_accepted);
        let dequeued = self.sent().minus(self.rare.base_sent);
        let head = self.rare.head_dropped.minus(self.rare.base_head_dropped);
        QueueStats {
            enqueued_packets: enqueued.packets,
            enqueued_bytes: enqueued.bytes,
            dequeued_packets: dequeued.packets,
            dequeued_bytes: dequeued.bytes,
            dropped_packets: self.rare.refused.packets.wrapping_add(head.packets),
            dropped_bytes: self.rare.refused.bytes.wrapping_add(head.bytes),
            backlog_packets: self.backlog.packets,
            backlog_bytes: self.backlog.bytes,
            peak_backlog_packets: u64::from(self.hot.peak_packets),
            peak_backlog_bytes: self.hot.peak_bytes,
        }
    }

    /// The baseline that makes every counter read 0 (peaks restart from
    /// the backlog).
    pub(crate) fn cleared(&self) -> (HotCounters, RareCounters) {
        let hot = HotCounters {
            accepted: self.hot.accepted,
            peak_bytes: self.backlog.bytes,
            // The backlog never exceeds the queue's capacity, < 2^32.
            peak_packets: u32::try_from(self.backlog.packets).unwrap_or(u32::MAX),
        };
        let rare = RareCounters {
            refused: Count::default(),
            head_dropped: self.rare.head_dropped,
            base_accepted: self.hot.accepted,
            base_sent: self.sent(),
            base_head_dropped: self.rare.head_dropped,
        };
        (hot, rare)
    }
}

impl QueueStats {
    /// Adds `other` field by field: flows modulo 2^64, backlogs and peaks
    /// saturating.
    pub(crate) fn add(&mut self, other: &QueueStats) {
        self.enqueued_packets = self.enqueued_packets.wrapping_add(other.enqueued_packets);
        self.enqueued_bytes = self.enqueued_bytes.wrapping_add(other.enqueued_bytes);
        self.dequeued_packets = self.dequeued_packets.wrapping_add(other.dequeued_packets);
        self.dequeued_bytes = self.dequeued_bytes.wrapping_add(other.dequeued_bytes);
        self.dropped_packets = self.dropped_packets.wrapping_add(other.dropped_packets);
        self.dropped_bytes = self.dropped_bytes.wrapping_add(other.dropped_bytes);
        self.backlog_packets = self.backlog_packets.saturating_add(other.backlog_packets);
        self.backlog_bytes = self.backlog_bytes.saturating_add(other.backlog_bytes);
        self.peak_backlog_packets = self
            .peak_backlog_packets
            .saturating_add(other.peak_backlog_packets);
        self.peak_backlog_bytes = self
            .peak_backlog_bytes
            .saturating_add(other.peak_backlog_bytes);
    }
}
