//! The event queue of the discrete-event engine.
//!
//! A binary heap ordered by `(time, seq)`: `seq` is a counter stamped when the event is
//! scheduled, so events at the same nanosecond run in the order they were scheduled and
//! a run is deterministic. Events are small `Copy` values; the heap only grows to the
//! number of concurrently pending events (a few per stream), never per packet.
//!
//! The output server's completion, half of all events and never more than one pending,
//! lives in a slot of its own beside the heap and takes part in the same `(time, seq)`
//! order: one heap operation per packet saved.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::time::Nanos;

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A constant-bit-rate source emits its next packet.
    Emit(u16),
    /// A TCP sender may put its next packet on its access link.
    TcpSend(u16),
    /// The ACKs of a TCP stream due at this time reach the sender.
    Ack(u16),
    /// A TCP stream's retransmission timer may have expired.
    Timer(u16),
    /// The output server finished sending the packet in service.
    ServerDone,
}

/// A scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// When it fires.
    pub time: Nanos,
    /// Tie-breaker: scheduling order.
    pub seq: u64,
    /// What it does.
    pub kind: EventKind,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The pending events, earliest first.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    server: Option<Event>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `kind` at `time`.
    pub fn schedule(&mut self, time: Nanos, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Event { time, seq, kind });
    }

    /// Schedules the output server's completion at `time` (at most one is pending: a
    /// second call replaces the first).
    #[inline]
    pub fn schedule_server(&mut self, time: Nanos) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.server = Some(Event {
            time,
            seq,
            kind: EventKind::ServerDone,
        });
    }

    /// Removes and returns the earliest event if it fires before `end`.
    #[inline]
    pub fn pop_before(&mut self, end: Nanos) -> Option<Event> {
        let server_first = match (&self.server, self.heap.peek()) {
            (Some(s), Some(h)) => s > h, // reversed order: greater is earlier
            (Some(_), None) => true,
            (None, _) => false,
        };
        let next = if server_first {
            self.server
                .filter(|e| e.time < end)
                .inspect(|_| self.server = None)
        } else {
            match self.heap.peek() {
                Some(e) if e.time < end => self.heap.pop(),
                _ => None,
            }
        };
        if next.is_some() {
            self.processed += 1;
        }
        next
    }

    /// Number of events handed out so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule_server(20);
        q.schedule(10, EventKind::Emit(1));
        q.schedule(10, EventKind::Emit(0));
        q.schedule(30, EventKind::Ack(0));
        let order: Vec<EventKind> =
            std::iter::from_fn(|| q.pop_before(30).map(|e| e.kind)).collect();
        assert_eq!(
            order,
            [
                EventKind::Emit(1),
                EventKind::Emit(0),
                EventKind::ServerDone
            ]
        );
        assert_eq!(q.processed(), 3);
    }
}
