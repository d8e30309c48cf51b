//! Deficit round robin: which queue sends next in the `Wrr` phase. The
//! priority queue first, then one DRR step over the weighted tier, then over
//! the scavenger tier. A step grants the head a quantum and passes the turn
//! when the head's deficit cannot cover its head packet; by the invariant in
//! the module documentation's "Cost" section it examines at most two queues.

use super::lists::{PRIORITY, SCAVENGER, WEIGHTED};
use super::queue::{len_of, wrap};
use super::{Phase, Scheduler, NIL};
use crate::config::{Class, Fairness};
use crate::packet::PacketLen;

/// Cost unit of a quantum: the MTU in byte mode, 1 in packet mode.
pub(super) const fn unit_of(fairness: Fairness) -> u64 {
    match fairness {
        Fairness::Bytes { mtu: 0 } | Fairness::Packets => 1,
        Fairness::Bytes { mtu } => mtu as u64,
    }
}

/// `max(weight, 1) x unit` (weight-0 queues only drain leftovers), 0 for priority.
pub(super) const fn quantum_of(class: Class, unit: u64) -> u64 {
    match class.weight() {
        Some(0) => unit,
        // At most (2^32 - 1) x (2^32 - 1): no overflow in 64 bits.
        Some(w) => w as u64 * unit,
        None => 0,
    }
}

impl<P: PacketLen, const N: usize, const CAP: usize> Scheduler<P, N, CAP> {
    /// Sends the next packet in the `Wrr` phase: the priority queue's head
    /// if it has one, else one deficit-round-robin step over the weighted
    /// tier, else over the scavenger tier.
    #[inline(always)]
    pub(super) fn serve_wrr<const TRACK: bool>(&mut self) -> Option<(usize, P)> {
        if self.tiers[PRIORITY] != NIL {
            let queue = self.tiers[PRIORITY] as usize;
            return Some((queue, self.pop_head::<TRACK>(queue, true)?));
        }
        if self.tiers[WEIGHTED] != NIL {
            return self.drr_step::<TRACK>(WEIGHTED);
        }
        if self.tiers[SCAVENGER] != NIL {
            return self.drr_step::<TRACK>(SCAVENGER);
        }
        None
    }

    /// One deficit-round-robin step over a non-empty tier: finds the queue
    /// whose deficit covers its head packet, charges it and sends that
    /// packet, reading the packet's slot once.
    #[inline(always)]
    pub(super) fn drr_step<const TRACK: bool>(&mut self, tier: usize) -> Option<(usize, P)> {
        let (byte_mode, mtu) = (self.byte_mode, self.mtu);
        let mut h = self.tiers[tier] as usize;
        loop {
            #[cfg(test)]
            {
                self.examined += 1;
            }
            let q = self.queues.get_mut(h)?;
            let pos = wrap::<CAP>(q.head as usize);
            // In packet mode a turn is decided without reading the packet.
            // A listed queue is never empty; `?` only keeps a broken
            // invariant from looping. A cost is at most the MTU (see "Cost").
            let cost = if byte_mode {
                len_of(self.slots[h][pos].as_ref()?).min(mtu)
            } else {
                1
            };
            if q.deficit >= cost {
                q.deficit -= cost;
                let packet = self.take_head::<TRACK>(h, pos, true)?;
                return Some((h, packet));
            }
            // Every listed queue has quantum >= 1, so this terminates.
            q.deficit = q.deficit.saturating_add(q.quantum);
            h = q.act_next as usize;
            // The turn passes (stored only here: a send keeps the head).
            self.tiers[tier] = h as u32;
        }
    }

    /// The queue the next dequeue serves, without changing anything: what
    /// `dequeue_tracked` and `serve_wrr` would choose.
    pub(super) fn next_queue(&self) -> Option<usize> {
        if self.track && self.phase == Phase::Fifo {
            return (self.arr_head != NIL).then_some(self.arr_head as usize / CAP);
        }
        for tier in [PRIORITY, WEIGHTED, SCAVENGER] {
            if self.tiers[tier] != NIL {
                return Some(if tier == PRIORITY {
                    self.tiers[tier] as usize
                } else {
                    self.drr_choice(tier)
                });
            }
        }
        None
    }

    /// The queue a DRR step over a non-empty `tier` would send from. The
    /// step walks the list, granting each queue that cannot cover its head
    /// packet; every quantum covers the largest cost, so if no queue covers
    /// its packet on the first pass the head does on the second. By the
    /// invariant of "Cost" the walk stops at the second queue.
    fn drr_choice(&self, tier: usize) -> usize {
        let head = self.tiers[tier] as usize;
        let mut h = head;
        for _ in 0..N {
            let Some(q) = self.queues.get(h) else { break };
            let cost = if self.byte_mode {
                match self.slots[h][wrap::<CAP>(q.head as usize)].as_ref() {
                    Some(p) => len_of(p).min(self.mtu),
                    None => break,
                }
            } else {
                1
            };
            if q.deficit >= cost {
                return h;
            }
            h = q.act_next as usize;
            if h == head {
                break;
            }
        }
        head
    }
}
