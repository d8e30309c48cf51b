//! Arrival order, kept only under `Saturation::WhenSaturated`: a doubly
//! linked list through the packet slots (flat slot number
//! `queue * CAP + position`) of every queued packet in global arrival
//! order, the total backlog the threshold is measured on, and the phase
//! (arrival order below the threshold, WRR at or above it, with
//! hysteresis). Since each queue is FIFO, the list's head is always the
//! head packet of its own queue, so serving in arrival order and unlinking
//! any queue's head are O(1).

use super::{Phase, Scheduler, NIL};
use crate::config::{BacklogUnit, Saturation};
use crate::packet::PacketLen;

use super::queue::wrap;

/// A slot's place in the global arrival list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Link {
    pub(super) prev: u32,
    pub(super) next: u32,
}

pub(super) const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
};

impl<P: PacketLen, const N: usize, const CAP: usize> Scheduler<P, N, CAP> {
    pub(super) fn backlog_in(&self, unit: BacklogUnit) -> u64 {
        match unit {
            BacklogUnit::Bytes => self.total_bytes,
            BacklogUnit::Packets => self.total_packets,
        }
    }

    pub(super) fn settle_phase(&mut self) {
        match self.config.saturation {
            Saturation::WhenSaturated(t) => {
                let b = self.backlog_in(t.unit);
                if b >= t.high {
                    self.phase = Phase::Wrr;
                } else if b < t.low {
                    self.phase = Phase::Fifo;
                }
            }
            Saturation::WorkConserving | Saturation::Forced => self.phase = Phase::Wrr,
        }
    }

    /// Appends slot `flat` (already holding its `prev`) to the arrival list.
    pub(super) fn link_tail(&mut self, flat: u32) {
        if self.arr_tail == NIL {
            self.arr_head = flat;
        } else {
            self.link_mut(self.arr_tail).next = flat;
        }
        self.arr_tail = flat;
    }

    pub(super) fn unlink_arrival(&mut self, queue: usize, pos: usize) {
        let link = core::mem::replace(&mut self.arrival[queue][pos], UNLINKED);
        if link.prev == NIL {
            self.arr_head = link.next;
        } else {
            self.link_mut(link.prev).next = link.next;
        }
        if link.next == NIL {
            self.arr_tail = link.prev;
        } else {
            self.link_mut(link.next).prev = link.prev;
        }
    }

    /// Starts or stops keeping the arrival list. Starting with packets
    /// queued builds it from the queues taken one packet each in turn, by
    /// queue index (their arrival order was not recorded). O(N x CAP).
    pub(super) fn set_tracking(&mut self, track: bool) {
        if track == self.track {
            return;
        }
        self.track = track;
        self.arr_head = NIL;
        self.arr_tail = NIL;
        self.total_packets = self.len() as u64;
        self.total_bytes = self.backlog_bytes();
        if !track {
            return;
        }
        for depth in 0..CAP {
            for i in 0..N {
                let q = &self.queues[i];
                if depth < q.len() {
                    let pos = wrap::<CAP>(q.head as usize + depth);
                    self.arrival[i][pos] = Link {
                        prev: self.arr_tail,
                        next: NIL,
                    };
                    // Fits: N * CAP < NIL was checked in `new`.
                    self.link_tail((i * CAP + pos) as u32);
                }
            }
        }
    }

    pub(super) fn link_mut(&mut self, flat: u32) -> &mut Link {
        let flat = flat as usize;
        &mut self.arrival[flat / CAP][flat % CAP]
    }
}
