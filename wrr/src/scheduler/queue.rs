//! Queue state: one queue's header (ring indices, round links, deficit,
//! quantum, the two admission gates and the byte backlog, in one cache
//! line), where its packets sit in the slot array, and the two things that
//! change it: an arrival (admission against the gates, the cold path that
//! tells a refusal from a new peak, the refusal itself) and taking the head
//! packet out (sent or dropped), which unlists a queue that empties.
//!
//! The algorithm these pieces implement is described in the
//! [module documentation](super).

use super::lists::tier_of;
use super::{Phase, Scheduler, NIL};
use crate::config::{Class, Limit, Saturation};
use crate::packet::PacketLen;
use crate::refused::{RefuseReason, Refused};

use super::arrival::Link;

/// The state of one FIFO queue that every packet touches: ring indices,
/// round links, deficit and limits, in one cache line (`align(64)`). Its
/// packets live in the scheduler's slot array, its counters in the counter
/// arrays; its class and limits live in the configuration, only what the
/// fast path reads is copied here. Headers sit in one dense array, so the
/// queue a packet needs is found with a shift, not a multiplication, and 64
/// queues' headers take 4 KiB.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(super) struct Queue {
    /// Slot of the head packet, `< CAP` (`N x CAP < 2^32` is checked in `new`).
    pub(super) head: u32,
    /// Where the head goes back to when the queue empties (see `home_slot`).
    pub(super) home: u32,
    /// Packets queued, `<= CAP`.
    pub(super) len: u32,
    /// Arrivals while `len < gate_packets` are admitted and set no new
    /// peak: min(packets admitted, peak backlog) (see `set_gates`).
    pub(super) gate_packets: u32,
    pub(super) act_prev: u32,
    pub(super) act_next: u32,
    /// Active list of the class (`tier_of(class)`).
    pub(super) tier: u8,
    pub(super) deficit: u64,
    pub(super) quantum: u64,
    /// The byte twin of `gate_packets`: min(byte limit, peak byte backlog).
    pub(super) gate_bytes: u64,
    /// Bytes queued.
    pub(super) bytes: u64,
}

impl Queue {
    /// Packets queued.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// A placeholder for array initialisation (a weighted queue of quantum
    /// 0 at slot 0); `Scheduler::new` overwrites every one.
    pub(super) const EMPTY: Queue = Queue::new(Class::Weighted(0), 0, 0);

    /// An empty queue; its gates stay closed (peaks 0) until `set_gates`.
    pub(super) const fn new(class: Class, quantum: u64, home: u32) -> Self {
        Queue {
            head: home,
            home,
            len: 0,
            bytes: 0,
            gate_packets: 0,
            act_prev: NIL,
            act_next: NIL,
            gate_bytes: 0,
            tier: tier_of(class),
            deficit: 0,
            quantum,
        }
    }
}

pub(super) fn len_of<P: PacketLen>(packet: &P) -> u64 {
    u64::try_from(packet.packet_len()).unwrap_or(u64::MAX)
}

/// Slot number `i < 2 x CAP` brought into `0..CAP`. For a power-of-two
/// `CAP` this is a mask, which also proves the index in bounds.
#[inline(always)]
pub(super) const fn wrap<const CAP: usize>(i: usize) -> usize {
    if CAP.is_power_of_two() {
        i & (CAP - 1)
    } else if i >= CAP {
        i - CAP
    } else {
        i
    }
}

/// The home slot of queue `i`: where its ring starts, and restarts each
/// time it empties. Rings are `CAP` slots apart, often a power of two bytes,
/// so equal positions in every ring would fall in the same few L1 cache
/// sets; moving each queue's home one cache line further than the previous
/// queue's spreads the rings' busy lines over the sets. Fits in `u32`: it
/// is below `CAP`.
pub(super) const fn home_slot<P, const CAP: usize>(i: usize) -> u32 {
    let size = core::mem::size_of::<Option<P>>();
    let per_line = if size == 0 {
        64
    } else if size >= 64 {
        1
    } else {
        64 / size
    };
    let cap = if CAP == 0 { 1 } else { CAP };
    (i.wrapping_mul(per_line) % cap) as u32
}

/// Packets a queue may hold: 0 when its class refuses arrivals.
/// Fits in `u32`: `N x CAP < 2^32` is checked in `new`.
pub(super) fn admit_of(class: Class, limit: Limit, cap: usize) -> u32 {
    if class.refuses_arrivals() {
        0
    } else {
        u32::try_from(limit.packets.min(cap)).unwrap_or(u32::MAX)
    }
}

impl<P: PacketLen, const N: usize, const CAP: usize> Scheduler<P, N, CAP> {
    #[inline(always)]
    pub(super) fn enqueue_in<const TRACK: bool>(
        &mut self,
        queue: usize,
        packet: P,
    ) -> Result<(), Refused<P>> {
        let len = len_of(&packet);
        let max_len = self.max_len;
        let Some(q) = self.queues.get(queue) else {
            return Err(self.refuse(queue, packet, len));
        };
        // Under both gates: admitted, and no new peak to record. One set
        // of comparisons serves the limits and the peak counters.
        let under_gates = q.len < q.gate_packets
            && len <= max_len
            && matches!(q.bytes.checked_add(len), Some(b) if b <= q.gate_bytes);
        if !under_gates {
            return self.enqueue_at_gate::<TRACK>(queue, packet, len);
        }
        self.accept::<TRACK>(queue, packet, len);
        Ok(())
    }

    /// An arrival at a gate: either a refusal or a new peak backlog.
    #[cold]
    #[inline(never)]
    pub(super) fn enqueue_at_gate<const TRACK: bool>(
        &mut self,
        queue: usize,
        packet: P,
        len: u64,
    ) -> Result<(), Refused<P>> {
        let qc = self.config.queues[queue];
        let q = &self.queues[queue];
        let admitted = q.len < admit_of(qc.class, qc.limit, CAP)
            && len <= self.max_len
            && matches!(q.bytes.checked_add(len), Some(b) if b <= qc.limit.bytes);
        if !admitted {
            return Err(self.refuse(queue, packet, len));
        }
        self.accept::<TRACK>(queue, packet, len);
        let q = &self.queues[queue];
        let hot = &mut self.hot[queue];
        hot.peak_packets = hot.peak_packets.max(q.len);
        hot.peak_bytes = hot.peak_bytes.max(q.bytes);
        self.set_gates(queue);
        Ok(())
    }

    /// Stores an admitted packet at the tail of `queue`.
    #[inline(always)]
    pub(super) fn accept<const TRACK: bool>(&mut self, queue: usize, packet: P, len: u64) {
        let q = &mut self.queues[queue];
        let n = q.len;
        let pos = wrap::<CAP>(q.head as usize + n as usize);
        self.slots[queue][pos] = Some(packet);
        // No overflow: the byte backlog was checked against the limit,
        // the packet count against the capacity.
        q.len += 1;
        q.bytes += len;
        self.hot[queue].accepted.add(len);
        if n == 0 {
            q.deficit = q.quantum;
            let tier = q.tier;
            self.push_tail(tier, queue);
        }
        if TRACK {
            self.total_packets += 1;
            self.total_bytes = self.total_bytes.saturating_add(len);
            self.arrival[queue][pos] = Link {
                prev: self.arr_tail,
                next: NIL,
            };
            // Fits: N * CAP < NIL was checked in `new`.
            self.link_tail((queue * CAP + pos) as u32);
            if self.phase == Phase::Fifo {
                if let Saturation::WhenSaturated(t) = self.config.saturation {
                    if self.backlog_in(t.unit) >= t.high {
                        self.phase = Phase::Wrr;
                    }
                }
            }
        }
    }

    /// Sets `queue`'s gates from its limits and peaks: below both, an
    /// arrival is admitted and sets no new peak.
    pub(super) fn set_gates(&mut self, queue: usize) {
        let qc = self.config.queues[queue];
        let hot = &self.hot[queue];
        let q = &mut self.queues[queue];
        q.gate_packets = admit_of(qc.class, qc.limit, CAP).min(hot.peak_packets);
        q.gate_bytes = qc.limit.bytes.min(hot.peak_bytes);
    }

    /// The slow path of a refusal: find the reason, count the drop.
    #[cold]
    #[inline(never)]
    pub(super) fn refuse(&mut self, queue: usize, packet: P, len: u64) -> Refused<P> {
        let byte_mode = self.byte_mode;
        let mtu = self.mtu;
        let Some(q) = self.queues.get_mut(queue) else {
            self.unknown.add(len);
            return Refused {
                packet,
                queue,
                reason: RefuseReason::NoSuchQueue,
            };
        };
        let limit = self.config.queues[queue].limit;
        let reason = if self.config.queues[queue].class.refuses_arrivals() {
            RefuseReason::NotServed
        } else if byte_mode && len > mtu {
            RefuseReason::ExceedsMtu {
                len,
                mtu: u32::try_from(mtu).unwrap_or(u32::MAX),
            }
        } else if q.len() >= CAP {
            RefuseReason::Full { capacity: CAP }
        } else if q.len() >= limit.packets {
            RefuseReason::PacketLimit {
                limit: limit.packets,
            }
        } else {
            RefuseReason::ByteLimit {
                len,
                backlog: q.bytes,
                limit: limit.bytes,
            }
        };
        self.rare[queue].refused.add(len);
        Refused {
            packet,
            queue,
            reason,
        }
    }

    /// Takes the head packet of `queue` out, counting it as sent or
    /// dropped (see `take_head`). `None` if the queue is empty.
    #[inline(always)]
    pub(super) fn pop_head<const TRACK: bool>(&mut self, queue: usize, sent: bool) -> Option<P> {
        let q = &self.queues[queue];
        if q.len == 0 {
            return None;
        }
        let pos = wrap::<CAP>(q.head as usize);
        self.take_head::<TRACK>(queue, pos, sent)
    }

    /// Takes the head packet (at `pos`) of `queue` out of the queue, the arrival list (if `TRACK`) and, if the
    /// queue empties, its active list; counts it as sent or dropped;
    /// updates totals and phase.
    #[inline(always)]
    pub(super) fn take_head<const TRACK: bool>(
        &mut self,
        queue: usize,
        pos: usize,
        sent: bool,
    ) -> Option<P> {
        let packet = self.slots[queue][pos].take()?;
        let len = len_of(&packet);
        let q = &mut self.queues[queue];
        q.head = wrap::<CAP>(pos + 1) as u32;
        // Sent packets are counted by difference (see `stats`): only a
        // head drop writes a counter.
        if !sent {
            self.rare[queue].head_dropped.add(len);
        }
        q.len -= 1;
        if q.len == 0 {
            // An empty queue restarts at its home slot, so a queue that
            // keeps emptying stays in a cache line or two instead of
            // walking its whole ring.
            q.head = q.home;
            // Reset rather than decremented: the byte backlog stays exact
            // even if a `PacketLen` changed its mind.
            q.bytes = 0;
            q.deficit = 0;
            // A backlogged queue is always on its tier's active list.
            let tier = q.tier;
            self.unlist(tier, queue);
        } else {
            q.bytes = q.bytes.saturating_sub(len);
        }
        if TRACK {
            self.total_packets -= 1;
            self.total_bytes = if self.total_packets == 0 {
                0
            } else {
                self.total_bytes.saturating_sub(len)
            };
            self.unlink_arrival(queue, pos);
            if self.phase == Phase::Wrr {
                if let Saturation::WhenSaturated(t) = self.config.saturation {
                    if self.backlog_in(t.unit) < t.low {
                        self.phase = Phase::Fifo;
                    }
                }
            }
        }
        Some(packet)
    }
}
