//! The scheduler: weighted round robin / deficit round robin over `N`
//! fixed-capacity FIFO queues, with a strict-priority queue, a scavenger tier
//! and "only when saturated" arrival-order service.
//!
//! # State
//!
//! * Each queue is a ring of `CAP` packet slots (`Option<P>`) and a
//!   one-cache-line header: the ring's head, home slot and length, its
//!   byte backlog, round links, deficit, and copies of what the fast path
//!   needs from its configuration (tier, quantum, and the limits folded
//!   with the peaks into two gates, see Enqueue). Headers sit in one dense
//!   array; rings, arrival links, the counters an arrival changes
//!   (accepted packets and bytes, peaks) and the rarely written ones
//!   (refusals, head drops, the baselines of [`Scheduler::clear_stats`])
//!   each in an array of their own.
//! * Two *active lists*, one for the weighted tier and one for the scavenger
//!   tier: circular doubly linked lists of queue indices threaded through the
//!   queues themselves (`act_prev`/`act_next`). A list holds exactly the
//!   backlogged queues of its tier, in round order; its head is the queue
//!   whose turn it is. A third list holds the priority queue while it is
//!   backlogged.
//! * The *arrival list*, kept only under `WhenSaturated`: a doubly linked
//!   list threaded through the packet slots (flat slot number
//!   `queue * CAP + position`) holding every queued packet in global arrival
//!   order. Since each queue is FIFO, the oldest packet overall is always at
//!   the head of its own queue, so the list head names the queue to serve in
//!   arrival order, and any queue's head packet can be unlinked from the
//!   middle of the list in O(1). Other modes keep no arrival record (a
//!   stamp per packet would cost every packet), so a reconfiguration that
//!   switches to `WhenSaturated` with packets queued builds the list from
//!   the queues taken one packet each in turn, by queue index: order within
//!   a queue is kept, order across queues is not known.
//! * The phase: `Fifo` (arrival order) or `Wrr`, and, under
//!   `WhenSaturated` only, the total backlog the threshold is measured on.
//!
//! Memory is about `N x CAP x (size_of::<Option<P>>() + 8)` bytes plus
//! 200 bytes per queue, all inside the value: for 64 queues of 128
//! `u32` lengths, about 140 KiB (put a large scheduler in a `static` or a
//! `Box` rather than on a small stack).
//!
//! # Enqueue
//!
//! The packet is refused, and handed back, if the queue has weight 0, if it
//! is longer than the MTU in byte mode, or if the queue is at its capacity,
//! packet limit or byte limit (tail drop). Otherwise it is stored at the
//! queue's tail (and, under `WhenSaturated`, at the arrival list's tail).
//! A queue that was empty joins the tail of its tier's active list with
//! `deficit = quantum`. With `WhenSaturated`, a backlog now at or above the
//! high mark switches to WRR.
//!
//! The limits and the peak-backlog counters are checked together: each
//! queue keeps two *gates*, `min(packets admitted, peak packets)` and
//! `min(byte limit, peak bytes)`. An arrival that leaves the queue under
//! both is admitted and sets no new peak, so the common case is three
//! comparisons (with the MTU). Only an arrival at a gate takes the slow
//! path, which tells a refusal from a new peak and moves the gates. Peaks
//! only rise between clears, so that path is rare in a steady state.
//!
//! # Dequeue
//!
//! In the `Fifo` phase the head of the arrival list is sent, whatever its
//! class. In the `Wrr` phase: the priority queue if it holds a packet; else
//! one deficit-round-robin step over the weighted tier; if that tier is empty,
//! one step over the scavenger tier.
//!
//! A DRR step looks at the head queue `h` of the active list and the cost
//! `c` of its head packet (its length in byte mode, 1 in packet mode):
//!
//! * if `deficit[h] >= c`: send it, `deficit[h] -= c`; `h` stays at the head
//!   so it goes on sending within its turn;
//! * otherwise `deficit[h] += quantum[h]` (a *grant*) and the head moves on
//!   to the next queue, which is examined in the same way.
//!
//! A queue that empties (by any path) leaves its active list and its deficit
//! is reset to 0, so an idle queue saves no credit; when it is backlogged
//! again it rejoins at the tail with one fresh quantum. `quantum = weight x mtu`
//! in byte mode (DRR), `quantum = weight` in packet mode (classic WRR: one
//! round serves up to `weight` packets of the queue).
//!
//! With `WhenSaturated`, a departure that leaves the backlog below the low
//! mark switches back to the `Fifo` phase. Deficits are not touched by `Fifo`
//! service, and active lists are kept up to date in both phases, so a phase
//! switch costs nothing.
//!
//! # Cost: O(1)
//!
//! Every accepted packet costs at most `M` (the MTU in byte mode, 1 in packet
//! mode) and every quantum is at least `M` (weights are at least 1), so a
//! queue that has just received a grant, or just joined, can always send.
//! That is the invariant: *every listed queue except its tier's head has a
//! deficit of at least `M`*. A joining queue enters with a quantum; a head
//! that passes the turn has just been granted one; a new head is a queue
//! that was behind it. A dequeue therefore examines at most two queues (the
//! head, and if the head cannot send, the next one, which can), whatever
//! `N`, the weights and the packet sizes. [`Scheduler::reconfigure`]
//! re-establishes the invariant for the new `M` and the new tiers (a unit
//! test counts the queues examined after every kind of reconfiguration). Enqueue touches one queue and the tails of two lists.
//! To keep that true without exception, a packet is charged
//! `min(len, MTU)`: a packet queued before a [`Scheduler::reconfigure`]
//! lowered the MTU, or one whose `PacketLen` grew while it waited, is
//! charged the MTU (its full length would take `len / quantum` rounds).
//! Weight-0 queues that still hold packets after a reconfiguration are
//! drained with weight 1.
//!
//! # Fairness bound (proved here, checked by the `share_bound` proptests)
//!
//! Let `Q_i` be queue `i`'s quantum and `M` the largest cost, `M <= Q_i`.
//! The deficit only grows by a grant, and a grant happens only when
//! `deficit < c <= M`; a joining queue starts at `Q_i`. So at all times
//! `0 <= deficit_i < Q_i + M`.
//!
//! Take an interval in which queues `i` and `j` of the same tier are both
//! continuously backlogged, the scheduler stays in the `Wrr` phase and is not
//! reconfigured. Let `g_i` be the grants `i` receives and `S_i` the cost it is
//! served (bytes or packets). Then `S_i = d_i(start) + g_i Q_i - d_i(end)`,
//! hence `(g_i - 1) Q_i - M < S_i < (g_i + 1) Q_i + M`. The head of an active
//! list only advances by a grant (or past a queue that empties, which `j`
//! does not), so between two grants to `i` queue `j` receives exactly one:
//! `|g_i - g_j| <= 1`. Therefore
//!
//! ```text
//! | S_i / Q_i  -  S_j / Q_j |  <  3 + M / Q_i + M / Q_j  <=  5
//! ```
//!
//! In byte mode (`Q = w x mtu`, `M = mtu`) that is
//! `|S_i / w_i - S_j / w_j| < mtu x (3 + 1/w_i + 1/w_j)` bytes per unit of
//! weight; in packet mode `|S_i / w_i - S_j / w_j| < 3 + 1/w_i + 1/w_j`
//! packets per unit of weight. Summing over the backlogged queues `B` with
//! `T = sum S_j`: `|S_i - T Q_i / sum Q_j| < Q_i x max_j (3 + M/Q_i + M/Q_j)`,
//! a deviation from the weight share of a few quanta, however long the
//! interval. (Shreedhar and Varghese's DRR paper states the classic form of
//! this bound for equal quanta.)

use crate::config::{BacklogUnit, Class, Config, ConfigError, Fairness, Limit, Saturation};
use crate::packet::PacketLen;
use crate::refused::{RefuseReason, Refused};
use crate::stats::{Count, HotCounters, QueueCounters, QueueStats, RareCounters};

/// "No index" in the 32-bit links.
const NIL: u32 = u32::MAX;

/// The active lists, in order of precedence: the priority queue (a list of
/// at most one), the weighted tier, the scavenger tier.
const PRIORITY: usize = 0;
const WEIGHTED: usize = 1;
const SCAVENGER: usize = 2;
const TIERS: usize = 3;

/// Which rule the next dequeue follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Global arrival order across all queues (`WhenSaturated`, below the threshold).
    Fifo,
    /// Priority, then weighted round robin, then scavenger.
    Wrr,
}

/// A slot's place in the global arrival list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Link {
    prev: u32,
    next: u32,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
};

/// The state of one FIFO queue that every packet touches: ring indices,
/// round links, deficit and limits, in one cache line (`align(64)`). Its
/// packets live in the scheduler's slot array, its counters in the counter
/// arrays; its class and limits live in the configuration, only what the
/// fast path reads is copied here. Headers sit in one dense array, so the
/// queue a packet needs is found with a shift, not a multiplication, and 64
/// queues' headers take 4 KiB.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct Queue {
    /// Slot of the head packet, `< CAP` (`N x CAP < 2^32` is checked in `new`).
    head: u32,
    /// Where the head goes back to when the queue empties (see `home_slot`).
    home: u32,
    /// Packets queued, `<= CAP`.
    len: u32,
    /// Arrivals while `len < gate_packets` are admitted and set no new
    /// peak: min(packets admitted, peak backlog) (see `set_gates`).
    gate_packets: u32,
    act_prev: u32,
    act_next: u32,
    /// Active list of the class (`tier_of(class)`).
    tier: u8,
    deficit: u64,
    quantum: u64,
    /// The byte twin of `gate_packets`: min(byte limit, peak byte backlog).
    gate_bytes: u64,
    /// Bytes queued.
    bytes: u64,
}

impl Queue {
    /// Packets queued.
    #[inline(always)]
    fn len(&self) -> usize {
        self.len as usize
    }

    /// An empty queue; its gates stay closed (peaks 0) until `set_gates`.
    fn new(class: Class, quantum: u64, home: u32) -> Self {
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

/// Active list of a class.
const fn tier_of(class: Class) -> u8 {
    (match class {
        Class::Priority => PRIORITY,
        Class::Weighted(_) => WEIGHTED,
        Class::Scavenger(_) => SCAVENGER,
    }) as u8
}

fn len_of<P: PacketLen>(packet: &P) -> u64 {
    u64::try_from(packet.packet_len()).unwrap_or(u64::MAX)
}

/// A weighted-round-robin / deficit-round-robin scheduler over `N` queues of
/// at most `CAP` packets each, holding packets of type `P`.
///
/// No allocation: the whole state lives in the value (about
/// `N x CAP x (size_of::<Option<P>>() + 8)` bytes plus 200 bytes per queue).
/// See the [module documentation](self) for the algorithm and its bound.
#[derive(Clone, Debug)]
pub struct Scheduler<P, const N: usize, const CAP: usize> {
    queues: [Queue; N],
    /// Queue `i`'s ring: packet `k` of the queue (from its head) is in
    /// `slots[i][(head + k) % CAP]`.
    slots: [[Option<P>; CAP]; N],
    /// Each slot's place in the arrival list (used only while tracking).
    arrival: [[Link; CAP]; N],
    /// The counters an arrival changes (32 bytes a queue, two queues a line).
    hot: [HotCounters; N],
    rare: [RareCounters; N],
    tiers: [u32; TIERS],
    arr_head: u32,
    arr_tail: u32,
    track: bool,
    /// Total backlog over all queues, kept only while `track` (the
    /// threshold of `WhenSaturated` is measured on it).
    total_packets: u64,
    total_bytes: u64,
    /// Refusals for queue indices past the last.
    unknown: Count,
    byte_mode: bool,
    mtu: u64,
    /// Longest packet admitted: the MTU in byte mode, else `u64::MAX`.
    max_len: u64,
    phase: Phase,
    config: Config<N>,
    /// Queues examined by DRR steps (unit tests of the O(1) promise only).
    #[cfg(test)]
    examined: u32,
}

impl<P: PacketLen, const N: usize, const CAP: usize> Scheduler<P, N, CAP> {
    /// A scheduler with empty queues, configured by `config`.
    ///
    /// Fails if the configuration is invalid ([`Config::validate`]) or if
    /// `N x CAP` slots do not fit in 32-bit slot numbers.
    pub fn new(config: Config<N>) -> Result<Self, ConfigError> {
        config.validate()?;
        match N.checked_mul(CAP) {
            Some(slots) if slots < NIL as usize => {}
            _ => {
                return Err(ConfigError::TooManySlots {
                    queues: N,
                    capacity: CAP,
                })
            }
        }
        let unit = unit_of(config.fairness);
        let mut s = Scheduler {
            queues: core::array::from_fn(|i| {
                let qc = config.queues[i];
                let home = home_slot::<P, CAP>(i);
                Queue::new(qc.class, quantum_of(qc.class, unit), home)
            }),
            slots: core::array::from_fn(|_| core::array::from_fn(|_| None)),
            arrival: [[UNLINKED; CAP]; N],
            hot: [HotCounters::default(); N],
            rare: [RareCounters::default(); N],
            tiers: [NIL; TIERS],
            arr_head: NIL,
            arr_tail: NIL,
            track: false,
            total_packets: 0,
            total_bytes: 0,
            unknown: Count::default(),
            byte_mode: false,
            mtu: u64::MAX,
            max_len: u64::MAX,
            phase: Phase::Fifo,
            config,
            #[cfg(test)]
            examined: 0,
        };
        s.apply_globals();
        s.settle_phase();
        Ok(s)
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config<N> {
        &self.config
    }

    /// Number of queues (`N`).
    pub const fn queue_count(&self) -> usize {
        N
    }

    /// Capacity of each queue in packets (`CAP`).
    pub const fn capacity(&self) -> usize {
        CAP
    }

    /// Offers `packet` to queue `queue`.
    ///
    /// On refusal the packet comes back in the error with the reason, and
    /// the queue's drop counters grow (refusals for a queue index past the
    /// last are counted in [`Scheduler::unknown_queue_stats`]). O(1).
    #[inline(always)]
    pub fn enqueue(&mut self, queue: usize, packet: P) -> Result<(), Refused<P>> {
        if self.track {
            self.enqueue_tracked(queue, packet)
        } else {
            self.enqueue_in::<false>(queue, packet)
        }
    }

    /// Enqueue under `WhenSaturated` (arrival list and phase kept up to
    /// date), out of line so that the other modes stay small enough to inline.
    #[inline(never)]
    fn enqueue_tracked(&mut self, queue: usize, packet: P) -> Result<(), Refused<P>> {
        self.enqueue_in::<true>(queue, packet)
    }

    #[inline(always)]
    fn enqueue_in<const TRACK: bool>(&mut self, queue: usize, packet: P) -> Result<(), Refused<P>> {
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
    fn enqueue_at_gate<const TRACK: bool>(
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
    fn accept<const TRACK: bool>(&mut self, queue: usize, packet: P, len: u64) {
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
    fn set_gates(&mut self, queue: usize) {
        let qc = self.config.queues[queue];
        let hot = &self.hot[queue];
        let q = &mut self.queues[queue];
        q.gate_packets = admit_of(qc.class, qc.limit, CAP).min(hot.peak_packets);
        q.gate_bytes = qc.limit.bytes.min(hot.peak_bytes);
    }

    /// The slow path of a refusal: find the reason, count the drop.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self, queue: usize, packet: P, len: u64) -> Refused<P> {
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

    /// The next packet to send, or `None` when every queue is empty. O(1).
    #[inline(always)]
    pub fn dequeue(&mut self) -> Option<P> {
        self.dequeue_indexed().map(|(_, p)| p)
    }

    /// The next packet to send with the index of the queue it came from.
    #[inline(always)]
    pub fn dequeue_indexed(&mut self) -> Option<(usize, P)> {
        if self.track {
            return self.dequeue_tracked();
        }
        // Without tracking the phase is always `Wrr`.
        self.serve_wrr::<false>()
    }

    /// Dequeue under `WhenSaturated`, out of line (see `enqueue_tracked`).
    #[inline(never)]
    fn dequeue_tracked(&mut self) -> Option<(usize, P)> {
        match self.phase {
            Phase::Fifo => {
                if self.arr_head == NIL {
                    return None;
                }
                let queue = self.arr_head as usize / CAP;
                let packet = self.pop_head::<true>(queue, true)?;
                Some((queue, packet))
            }
            Phase::Wrr => self.serve_wrr::<true>(),
        }
    }

    /// Removes the packet at the head of `queue` without sending it, counting
    /// it as dropped (head drop, for an AQM or a flush). `None` if the queue
    /// is empty or does not exist. O(1).
    pub fn drop_head(&mut self, queue: usize) -> Option<P> {
        if queue >= N {
            return None;
        }
        if self.track {
            self.pop_head::<true>(queue, false)
        } else {
            self.pop_head::<false>(queue, false)
        }
    }

    /// Replaces the configuration, keeping every queued packet.
    ///
    /// O(N) (O(N x CAP) when it switches `WhenSaturated` on). Counters are
    /// kept. Backlogged queues keep their place in the round and their
    /// deficit, unless the fairness mode or MTU changed: then every
    /// backlogged queue starts a fresh turn with one quantum, as a queue
    /// that joins (packets longer than a lowered MTU are charged the MTU).
    /// A queue whose class changed tier joins the end of its new tier with
    /// one quantum. After any reconfiguration a dequeue still examines at
    /// most two queues (see "Cost" in the [module documentation](self)). A
    /// queue over a lowered limit keeps its packets and refuses arrivals
    /// until it is back under. A weight-0 queue that still holds packets is
    /// drained with weight 1. The phase is re-evaluated.
    ///
    /// Arrival order is recorded only under `WhenSaturated` (a stamp per
    /// packet would cost every packet in the other modes). Switching it on
    /// with packets queued puts them in arrival order one per queue in turn,
    /// by queue index, each queue keeping its own order; later arrivals
    /// follow in true arrival order.
    pub fn reconfigure(&mut self, config: Config<N>) -> Result<(), ConfigError> {
        config.validate()?;
        let fairness_changed = config.fairness != self.config.fairness;
        // Old round order, tier by tier.
        let mut order = [NIL; N];
        let mut k = 0;
        for tier in [PRIORITY, WEIGHTED, SCAVENGER] {
            let head = self.tiers[tier];
            let mut cur = head;
            let mut steps = 0;
            while cur != NIL && steps < N && k < N {
                order[k] = cur;
                k += 1;
                steps += 1;
                cur = self.queues[cur as usize].act_next;
                if cur == head {
                    break;
                }
            }
        }
        self.tiers = [NIL; TIERS];
        let unit = unit_of(config.fairness);
        let mut moved = [false; N];
        for ((q, qc), moved) in self
            .queues
            .iter_mut()
            .zip(config.queues.iter())
            .zip(moved.iter_mut())
        {
            let tier = tier_of(qc.class);
            *moved = tier != q.tier;
            q.act_prev = NIL;
            q.act_next = NIL;
            q.tier = tier;
            q.quantum = quantum_of(qc.class, unit);
        }
        self.config = config;
        self.apply_globals();
        for q in 0..N {
            self.set_gates(q);
        }
        // Queues that stay in their tier keep their place in the round; a
        // queue that changed tier joins the end of its new one. Every
        // backlogged queue was listed, so `order` holds each of them once;
        // the last loop only guards that invariant.
        let mut listed = [false; N];
        for pass_moved in [false, true] {
            for &q in &order[..k] {
                let q = q as usize;
                if self.queues[q].len() > 0 && !listed[q] && moved[q] == pass_moved {
                    listed[q] = true;
                    self.push_tail(self.queues[q].tier, q);
                }
            }
        }
        for q in 0..N {
            if self.queues[q].len() > 0 && !listed[q] {
                moved[q] = true;
                self.push_tail(self.queues[q].tier, q);
            }
        }
        // Deficits: what keeps a dequeue at two queues examined is that
        // every listed queue but its tier's head can send its head packet
        // (deficit >= the largest cost). A new fairness mode or MTU, or a
        // new tier, starts the queue on a fresh quantum, as a joining
        // queue; any other queue behind the head that cannot cover the
        // largest cost gets one too.
        for tier in [WEIGHTED, SCAVENGER] {
            let head = self.tiers[tier];
            let mut cur = head;
            for _ in 0..N {
                if cur == NIL {
                    break;
                }
                let i = cur as usize;
                let q = &mut self.queues[i];
                if fairness_changed || moved[i] || (cur != head && q.deficit < unit) {
                    q.deficit = q.quantum;
                }
                cur = q.act_next;
                if cur == head {
                    break;
                }
            }
        }
        self.settle_phase();
        Ok(())
    }

    /// Changes the class (weight) of one queue; see [`Scheduler::reconfigure`].
    pub fn set_class(&mut self, queue: usize, class: Class) -> Result<(), ConfigError> {
        let mut config = self.config;
        config
            .queues
            .get_mut(queue)
            .ok_or(ConfigError::NoSuchQueue { queue, queues: N })?
            .class = class;
        self.reconfigure(config)
    }

    /// Changes the limits of one queue. Packets already queued stay. O(1).
    pub fn set_limit(&mut self, queue: usize, limit: Limit) -> Result<(), ConfigError> {
        self.config
            .queues
            .get_mut(queue)
            .ok_or(ConfigError::NoSuchQueue { queue, queues: N })?
            .limit = limit;
        self.set_gates(queue);
        Ok(())
    }

    /// Whether the next dequeue follows arrival order or WRR.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Packets queued over all queues. O(N): a sum over the queues (the
    /// fast paths keep no total unless `WhenSaturated` needs one).
    pub fn len(&self) -> usize {
        self.queues.iter().map(Queue::len).sum()
    }

    /// Whether every queue is empty. O(1).
    pub fn is_empty(&self) -> bool {
        // Every queue that holds a packet is on one of the active lists.
        self.tiers.iter().all(|&t| t == NIL)
    }

    /// Bytes queued over all queues. O(N), as [`Scheduler::len`].
    pub fn backlog_bytes(&self) -> u64 {
        self.queues
            .iter()
            .fold(0u64, |sum, q| sum.saturating_add(q.bytes))
    }

    /// Packets queued in `queue` (0 for a queue that does not exist).
    pub fn queue_len(&self, queue: usize) -> usize {
        self.queues.get(queue).map_or(0, |q| q.len())
    }

    /// Bytes queued in `queue` (0 for a queue that does not exist).
    pub fn queue_bytes(&self, queue: usize) -> u64 {
        self.queues.get(queue).map_or(0, |q| q.bytes)
    }

    /// The packet at the head of `queue`, if any.
    pub fn peek(&self, queue: usize) -> Option<&P> {
        let q = self.queues.get(queue)?;
        if q.len() == 0 {
            return None;
        }
        self.slots[queue][wrap::<CAP>(q.head as usize)].as_ref()
    }

    /// Counters of `queue`, `None` for a queue that does not exist. O(1).
    ///
    /// Returned by value: a departure writes no counter, the packets and
    /// bytes sent are derived here (see the `stats` module).
    pub fn stats(&self, queue: usize) -> Option<QueueStats> {
        (queue < N).then(|| self.counters(queue).stats())
    }

    /// Counters summed over all queues (refusals for unknown queue indices
    /// included). O(N).
    ///
    /// The peak fields are the sums of the per-queue peaks: an upper bound
    /// on the most the scheduler held at once, which it does not track
    /// (queues may peak at different times).
    pub fn totals(&self) -> QueueStats {
        let mut t = self.unknown_queue_stats();
        for queue in 0..N {
            t.add(&self.counters(queue).stats());
        }
        t
    }

    /// Refusals of packets offered to a queue index past the last.
    pub fn unknown_queue_stats(&self) -> QueueStats {
        QueueStats {
            dropped_packets: self.unknown.packets,
            dropped_bytes: self.unknown.bytes,
            ..QueueStats::default()
        }
    }

    /// Zeroes every counter; the peaks restart from the current backlog.
    pub fn clear_stats(&mut self) {
        for queue in 0..N {
            (self.hot[queue], self.rare[queue]) = self.counters(queue).cleared();
            self.set_gates(queue);
        }
        self.unknown = Count::default();
    }

    /// The current deficit of `queue`, in bytes or packets (for tests and
    /// tracing; 0 for a queue that does not exist).
    pub fn deficit(&self, queue: usize) -> u64 {
        self.queues.get(queue).map_or(0, |q| q.deficit)
    }

    // ---- internals -------------------------------------------------------

    /// Everything counted about `queue < N`.
    fn counters(&self, queue: usize) -> QueueCounters<'_> {
        let q = &self.queues[queue];
        QueueCounters {
            hot: &self.hot[queue],
            rare: &self.rare[queue],
            backlog: Count {
                packets: u64::from(q.len),
                bytes: q.bytes,
            },
        }
    }

    fn apply_globals(&mut self) {
        match self.config.fairness {
            Fairness::Bytes { mtu } => {
                self.byte_mode = true;
                self.mtu = u64::from(mtu);
            }
            Fairness::Packets => {
                self.byte_mode = false;
                self.mtu = u64::MAX;
            }
        }
        self.max_len = self.mtu;
        let track = matches!(self.config.saturation, Saturation::WhenSaturated(_));
        self.set_tracking(track);
    }

    fn backlog_in(&self, unit: BacklogUnit) -> u64 {
        match unit {
            BacklogUnit::Bytes => self.total_bytes,
            BacklogUnit::Packets => self.total_packets,
        }
    }

    fn settle_phase(&mut self) {
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
    fn link_tail(&mut self, flat: u32) {
        if self.arr_tail == NIL {
            self.arr_head = flat;
        } else {
            self.link_mut(self.arr_tail).next = flat;
        }
        self.arr_tail = flat;
    }

    fn unlink_arrival(&mut self, queue: usize, pos: usize) {
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
    fn set_tracking(&mut self, track: bool) {
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

    fn link_mut(&mut self, flat: u32) -> &mut Link {
        let flat = flat as usize;
        &mut self.arrival[flat / CAP][flat % CAP]
    }

    #[inline(always)]
    fn push_tail(&mut self, tier: u8, queue: usize) {
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
    fn unlist(&mut self, tier: u8, queue: usize) {
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

    /// Sends the next packet in the `Wrr` phase: the priority queue's head
    /// if it has one, else one deficit-round-robin step over the weighted
    /// tier, else over the scavenger tier.
    #[inline(always)]
    fn serve_wrr<const TRACK: bool>(&mut self) -> Option<(usize, P)> {
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
    fn drr_step<const TRACK: bool>(&mut self, tier: usize) -> Option<(usize, P)> {
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

    /// Takes the head packet of `queue` out, counting it as sent or
    /// dropped (see `take_head`). `None` if the queue is empty.
    #[inline(always)]
    fn pop_head<const TRACK: bool>(&mut self, queue: usize, sent: bool) -> Option<P> {
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
    fn take_head<const TRACK: bool>(&mut self, queue: usize, pos: usize, sent: bool) -> Option<P> {
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

/// Slot number `i < 2 x CAP` brought into `0..CAP`. For a power-of-two
/// `CAP` this is a mask, which also proves the index in bounds.
#[inline(always)]
const fn wrap<const CAP: usize>(i: usize) -> usize {
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
fn home_slot<P, const CAP: usize>(i: usize) -> u32 {
    let per_line = (64 / core::mem::size_of::<Option<P>>().max(1)).max(1);
    (i.wrapping_mul(per_line) % CAP.max(1)) as u32
}

/// Packets a queue may hold: 0 when its class refuses arrivals.
/// Fits in `u32`: `N x CAP < 2^32` is checked in `new`.
fn admit_of(class: Class, limit: Limit, cap: usize) -> u32 {
    if class.refuses_arrivals() {
        0
    } else {
        u32::try_from(limit.packets.min(cap)).unwrap_or(u32::MAX)
    }
}

/// Cost unit of a quantum: the MTU in byte mode, 1 in packet mode.
fn unit_of(fairness: Fairness) -> u64 {
    match fairness {
        Fairness::Bytes { mtu } => u64::from(mtu).max(1),
        Fairness::Packets => 1,
    }
}

/// `max(weight, 1) x unit` (weight-0 queues only drain leftovers), 0 for priority.
fn quantum_of(class: Class, unit: u64) -> u64 {
    match class.weight() {
        Some(w) => u64::from(w.max(1)) * unit,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{QueueConfig, Threshold};

    type S = Scheduler<u32, 8, 32>;

    /// A small deterministic generator (xorshift) for the random walks.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Dequeues once and returns how many queues the DRR step examined.
    fn examined_by_dequeue(s: &mut S) -> (Option<(usize, u32)>, u32) {
        s.examined = 0;
        let out = s.dequeue_indexed();
        (out, s.examined)
    }

    /// Dequeues everything, checking each dequeue examined at most two queues.
    fn drain_checked(s: &mut S, what: &str) {
        let mut left = s.len();
        while left > 0 {
            let (out, examined) = examined_by_dequeue(s);
            assert!(out.is_some(), "{what}: a backlogged scheduler sent nothing");
            assert!(
                examined <= 2,
                "{what}: a dequeue examined {examined} queues"
            );
            left -= 1;
        }
        assert!(s.is_empty());
    }

    fn bytes(mtu: u32) -> Fairness {
        Fairness::Bytes { mtu }
    }

    fn config(classes: [Class; 8], fairness: Fairness, saturation: Saturation) -> Config<8> {
        Config {
            queues: classes.map(|class| QueueConfig {
                class,
                limit: Limit::NONE,
            }),
            fairness,
            saturation,
        }
    }

    const W: fn(u32) -> Class = Class::Weighted;

    /// Backlogs every queue with mixed sizes and sends a few packets, so
    /// that heads sit mid-turn with partial deficits.
    fn loaded(c: Config<8>) -> S {
        let mut s = S::new(c).unwrap();
        for round in 0..20u32 {
            for q in 0..8 {
                let len = [1500, 64, 700, 1499, 1][(round as usize + q) % 5];
                let _ = s.enqueue(q, len);
            }
        }
        for _ in 0..13 {
            let (_, examined) = examined_by_dequeue(&mut s);
            assert!(examined <= 2);
        }
        s
    }

    #[test]
    fn every_kind_of_reconfiguration_keeps_dequeue_at_two_queues() {
        let base = config(
            [W(1), W(2), W(3), W(1), W(5), W(1), W(2), W(1)],
            bytes(1500),
            Saturation::WorkConserving,
        );
        let mut kinds: [(&str, Config<8>); 13] = [("", base); 13];
        kinds[0] = (
            "new weights",
            config(
                [W(7), W(1), W(1), W(9), W(1), W(3), W(1), W(2)],
                bytes(1500),
                Saturation::WorkConserving,
            ),
        );
        kinds[1] = (
            "MTU raised",
            config(
                base.queues.map(|q| q.class),
                bytes(9000),
                Saturation::WorkConserving,
            ),
        );
        kinds[2] = (
            "MTU lowered",
            config(
                base.queues.map(|q| q.class),
                bytes(100),
                Saturation::WorkConserving,
            ),
        );
        kinds[3] = (
            "bytes to packets",
            config(
                base.queues.map(|q| q.class),
                Fairness::Packets,
                Saturation::WorkConserving,
            ),
        );
        kinds[4] = (
            "to scavenger",
            config(
                [
                    W(1),
                    Class::Scavenger(2),
                    W(3),
                    Class::Scavenger(1),
                    W(5),
                    W(1),
                    Class::Scavenger(4),
                    W(1),
                ],
                bytes(1500),
                Saturation::WorkConserving,
            ),
        );
        kinds[5] = (
            "to priority",
            config(
                [W(1), W(2), Class::Priority, W(1), W(5), W(1), W(2), W(1)],
                bytes(1500),
                Saturation::WorkConserving,
            ),
        );
        kinds[6] = (
            "weights to 0",
            config(
                [W(0), W(2), W(0), W(1), W(0), W(1), W(0), W(1)],
                bytes(1500),
                Saturation::WorkConserving,
            ),
        );
        kinds[7] = (
            "forced",
            config(
                base.queues.map(|q| q.class),
                bytes(1500),
                Saturation::Forced,
            ),
        );
        kinds[8] = (
            "when saturated, above",
            config(
                base.queues.map(|q| q.class),
                bytes(1500),
                Saturation::WhenSaturated(Threshold::packets(1)),
            ),
        );
        kinds[9] = (
            "when saturated, below",
            config(
                base.queues.map(|q| q.class),
                bytes(1500),
                Saturation::WhenSaturated(Threshold::packets(1000).with_low(10)),
            ),
        );
        kinds[10] = ("limits", base.with_limit_all(Limit::new(3, 2000)));
        kinds[11] = (
            "all scavenger, packets",
            config(
                [Class::Scavenger(1); 8],
                Fairness::Packets,
                Saturation::WorkConserving,
            ),
        );
        kinds[12] = ("unchanged", base);
        for (what, to) in kinds {
            let mut s = loaded(base);
            s.reconfigure(to).unwrap();
            drain_checked(&mut s, what);
            // And from the new configuration back to the base one.
            let mut s = loaded(to);
            s.reconfigure(base).unwrap();
            drain_checked(&mut s, what);
        }
    }

    #[test]
    fn packets_to_bytes_and_scavenger_to_weighted() {
        let from = config(
            [
                Class::Scavenger(1),
                Class::Scavenger(3),
                Class::Priority,
                W(1),
                W(1),
                W(1),
                W(1),
                W(1),
            ],
            Fairness::Packets,
            Saturation::WorkConserving,
        );
        let to = config(
            [W(1), W(3), W(2), W(1), W(1), W(1), W(1), W(1)],
            bytes(1500),
            Saturation::WorkConserving,
        );
        let mut s = loaded(from);
        s.reconfigure(to).unwrap();
        drain_checked(
            &mut s,
            "packets to bytes, scavenger and priority to weighted",
        );
    }

    #[test]
    fn random_reconfigurations_between_operations() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut s = S::new(config([W(1); 8], bytes(1500), Saturation::WorkConserving)).unwrap();
        let mut mtu = 1500u32;
        for step in 0..20_000 {
            match rng.below(10) {
                0 => {
                    let mut classes = [W(1); 8];
                    let priority = rng.below(16) as usize;
                    for (i, c) in classes.iter_mut().enumerate() {
                        let w = rng.below(5) as u32;
                        *c = if i == priority {
                            Class::Priority
                        } else if rng.below(3) == 0 {
                            Class::Scavenger(w)
                        } else {
                            W(w)
                        };
                    }
                    let fairness = if rng.below(3) == 0 {
                        Fairness::Packets
                    } else {
                        mtu = [64, 1500, 9000, 100][rng.below(4) as usize];
                        bytes(mtu)
                    };
                    let saturation = match rng.below(3) {
                        0 => Saturation::WorkConserving,
                        1 => Saturation::Forced,
                        _ => Saturation::WhenSaturated(Threshold::packets(rng.below(40))),
                    };
                    s.reconfigure(config(classes, fairness, saturation))
                        .unwrap();
                }
                1..=5 => {
                    let q = rng.below(8) as usize;
                    let _ = s.enqueue(q, 1 + rng.below(u64::from(mtu)) as u32);
                }
                6 => {
                    let _ = s.drop_head(rng.below(8) as usize);
                }
                _ => {
                    let had = !s.is_empty();
                    let (out, examined) = examined_by_dequeue(&mut s);
                    assert_eq!(out.is_some(), had, "step {step}");
                    assert!(
                        examined <= 2,
                        "step {step}: a dequeue examined {examined} queues"
                    );
                }
            }
        }
    }
}
