//! The event queue of the discrete-event engine.
//!
//! A binary heap ordered by `(time, seq)`: `seq` is a counter stamped when the event is
//! scheduled, so events at the same nanosecond run in the order they were scheduled and
//! a run is deterministic. Events are small `Copy` values; the heap only grows to the
//! number of concurrently pending events (a few per stream), never per packet.

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

    /// Removes and returns the earliest event if it fires before `end`.
    pub fn pop_before(&mut self, end: Nanos) -> Option<Event> {
        match self.heap.peek() {
            Some(e) if e.time < end => {
                self.processed += 1;
                self.heap.pop()
            }
            _ => None,
        }
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
        q.schedule(20, EventKind::ServerDone);
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
