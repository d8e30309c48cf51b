//! Deficit round robin: which queue sends next in the `Wrr` phase. The
//! priority queue first, then one DRR step over the weighted tier, then over
//! the scavenger tier. A step grants the head a quantum and passes the turn
//! when the head's deficit cannot cover its head packet; by the invariant in
//! the module documentation's "Cost" section it examines at most two queues.

use super::lists::{PRIORITY, SCAVENGER, WEIGHTED};
use super::queue::{len_of, wrap};
use super::{Scheduler, NIL};
use crate::config::{Class, Fairness};
use crate::packet::PacketLen;

/// Cost unit of a quantum: the MTU in byte mode, 1 in packet mode.
pub(super) fn unit_of(fairness: Fairness) -> u64 {
    match fairness {
        Fairness::Bytes { mtu } => u64::from(mtu).max(1),
        Fairness::Packets => 1,
    }
}

/// `max(weight, 1) x unit` (weight-0 queues only drain leftovers), 0 for priority.
pub(super) fn quantum_of(class: Class, unit: u64) -> u64 {
    match class.weight() {
        Some(w) => u64::from(w.max(1)) * unit,
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
}
