//! The active lists: one circular doubly linked list of queue indices per
//! tier (priority, weighted, scavenger), threaded through the queue
//! headers' `act_prev`/`act_next`. A list holds exactly the backlogged
//! queues of its tier, in round order; its head (`tiers[t]`) is the queue
//! whose turn it is. Joining appends at the tail, leaving unlinks in O(1).
//! A reconfiguration rebuilds the lists from the old round order.

use super::{Scheduler, NIL};
use crate::config::Class;
use crate::packet::PacketLen;

/// The active lists, in order of precedence: the priority queue (a list of
/// at most one), the weighted tier, the scavenger tier.
pub(super) const PRIORITY: usize = 0;

pub(super) const WEIGHTED: usize = 1;

pub(super) const SCAVENGER: usize = 2;

pub(super) const TIERS: usize = 3;

/// Active list of a class.
pub(super) const fn tier_of(class: Class) -> u8 {
    (match class {
        Class::Priority => PRIORITY,
        Class::Weighted(_) => WEIGHTED,
        Class::Scavenger(_) => SCAVENGER,
    }) as u8
}

impl<P: PacketLen, const N: usize, const CAP: usize> Scheduler<P, N, CAP> {
    #[inline(always)]
    pub(super) fn push_tail(&mut self, tier: u8, queue: usize) {
        let tier = usize::from(tier);
        let qi = queue as u32;
        let head = self.tiers[tier];
        if head == NIL {
            self.tiers[tier] = qi;
            let q = &mut self.queues[queue];
            q.act_prev = qi;
            q.act_next = qi;
        } else {
            let tail = self.queues[head as usize].act_prev;
            self.queues[tail as usize].act_next = qi;
            self.queues[head as usize].act_prev = qi;
            let q = &mut self.queues[queue];
            q.act_prev = tail;
            q.act_next = head;
        }
    }

    #[inline(always)]
    pub(super) fn unlist(&mut self, tier: u8, queue: usize) {
        let tier = usize::from(tier);
        let q = &mut self.queues[queue];
        // The queue's own links go stale: only listed queues' are read.
        let (prev, next) = (q.act_prev, q.act_next);
        if next == queue as u32 {
            self.tiers[tier] = NIL;
        } else {
            self.queues[prev as usize].act_next = next;
            self.queues[next as usize].act_prev = prev;
            if self.tiers[tier] == queue as u32 {
                self.tiers[tier] = next;
            }
        }
    }
}
