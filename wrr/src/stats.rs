//! Per-queue counters.

/// Counters of one queue (or, from
/// [`Scheduler::totals`](crate::Scheduler::totals), of all queues).
///
/// Packet and byte counters saturate at `u64::MAX` instead of wrapping
/// (at 100 Gbit/s a byte counter takes 46 years to get there).
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

// Packet counters grow by one per operation: 2^64 operations cannot
// happen, so they are plain additions. Byte counters grow by lengths that a
// `PacketLen` implementation chooses, so they saturate. Backlogs are bounded
// by the queue's capacity and byte limit, checked before an arrival.
impl QueueStats {
    #[inline]
    pub(crate) fn on_enqueue(&mut self, len: u64) {
        self.enqueued_packets += 1;
        self.enqueued_bytes = self.enqueued_bytes.saturating_add(len);
        self.backlog_packets += 1;
        self.backlog_bytes += len;
        // Branches rather than `max`: a new peak is rare, so the common
        // case reads the peak and stores nothing.
        if self.backlog_packets > self.peak_backlog_packets {
            self.peak_backlog_packets = self.backlog_packets;
        }
        if self.backlog_bytes > self.peak_backlog_bytes {
            self.peak_backlog_bytes = self.backlog_bytes;
        }
    }

    #[inline]
    pub(crate) fn on_sent(&mut self, len: u64) {
        self.dequeued_packets += 1;
        self.dequeued_bytes = self.dequeued_bytes.saturating_add(len);
    }

    #[inline]
    pub(crate) fn on_drop(&mut self, len: u64) {
        self.dropped_packets += 1;
        self.dropped_bytes = self.dropped_bytes.saturating_add(len);
    }

    #[inline]
    pub(crate) fn clear(&mut self) {
        *self = QueueStats {
            backlog_packets: self.backlog_packets,
            backlog_bytes: self.backlog_bytes,
            peak_backlog_packets: self.backlog_packets,
            peak_backlog_bytes: self.backlog_bytes,
            ..QueueStats::default()
        };
    }
}
