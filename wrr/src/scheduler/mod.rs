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
//! # Memory
//!
//! Everything is inside the value. Per queue: 200 bytes (a 64-byte header,
//! 32 bytes of arrival counters, 80 of rare counters, 24 of configuration),
//! plus per packet slot `size_of::<Option<P>>()` and an 8-byte arrival
//! link; plus about 130 bytes of globals, the total rounded up to a
//! multiple of 64:
//!
//! | queues x slots, `P` | per queue | total |
//! |---------------------|----------:|------:|
//! | 4 x 64, `u32`       | 1,224 B   | 5,056 B |
//! | 8 x 2048, `u32`     | 32,968 B  | 263,872 B |
//! | 64 x 128, `u32`     | 2,248 B   | 144,000 B (141 KiB) |
//!
//! A large scheduler does not belong on a small stack: [`Scheduler::new`]
//! is a `const fn`, so it can be evaluated at compile time into a `static`
//! (behind a `Mutex` or a critical-section cell), which never builds the
//! value on a stack. (`Box::new(Scheduler::new(..)?)` may build it on the
//! stack first in an unoptimised build.)
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

mod arrival;
mod drr;
mod lists;
mod queue;
#[cfg(test)]
mod tests;

use crate::config::{Class, Config, ConfigError, Fairness, Limit, Saturation};
use crate::packet::PacketLen;
use crate::refused::Refused;
use crate::stats::{Count, HotCounters, QueueCounters, QueueStats, RareCounters};

use arrival::{Link, UNLINKED};
use drr::{quantum_of, unit_of};
use lists::{tier_of, PRIORITY, SCAVENGER, TIERS, WEIGHTED};
use queue::{home_slot, wrap, Queue};

/// "No index" in the 32-bit links.
const NIL: u32 = u32::MAX;

/// Which rule the next dequeue follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Global arrival order across all queues (`WhenSaturated`, below the threshold).
    Fifo,
    /// Priority, then weighted round robin, then scavenger.
    Wrr,
}

/// A weighted-round-robin / deficit-round-robin scheduler over `N` queues of
/// at most `CAP` packets each, holding packets of type `P`.
///
/// No allocation: the whole state lives in the value, 200 bytes per queue
/// plus `size_of::<Option<P>>() + 8` per packet slot (see
/// [Memory](self#memory)). See the [module documentation](self) for the
/// algorithm and its bound.
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
    pub const fn new(config: Config<N>) -> Result<Self, ConfigError> {
        if let Err(e) = config.validate() {
            return Err(e);
        }
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
        let mut queues = [Queue::EMPTY; N];
        let mut i = 0;
        while i < N {
            let class = config.queues[i].class;
            queues[i] = Queue::new(class, quantum_of(class, unit), home_slot::<P, CAP>(i));
            i += 1;
        }
        let (byte_mode, mtu) = match config.fairness {
            Fairness::Bytes { mtu } => (true, mtu as u64),
            Fairness::Packets => (false, u64::MAX),
        };
        // Empty queues: the backlog is 0, so only a threshold of 0 starts
        // in the `Wrr` phase (as `settle_phase` would decide).
        let (track, phase) = match config.saturation {
            Saturation::WhenSaturated(t) if t.high > 0 => (true, Phase::Fifo),
            Saturation::WhenSaturated(_) => (true, Phase::Wrr),
            Saturation::WorkConserving | Saturation::Forced => (false, Phase::Wrr),
        };
        Ok(Scheduler {
            queues,
            slots: [const { [const { None }; CAP] }; N],
            arrival: [[UNLINKED; CAP]; N],
            hot: [HotCounters::ZERO; N],
            rare: [RareCounters::ZERO; N],
            tiers: [NIL; TIERS],
            arr_head: NIL,
            arr_tail: NIL,
            track,
            total_packets: 0,
            total_bytes: 0,
            unknown: Count::ZERO,
            byte_mode,
            mtu,
            max_len: mtu,
            phase,
            config,
            #[cfg(test)]
            examined: 0,
        })
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

    /// The packet the next [`dequeue`](Scheduler::dequeue) would send, with
    /// its queue, without sending it or changing any state. `None` when
    /// every queue is empty. O(1): it examines at most two queues, as a
    /// dequeue does.
    ///
    /// ```
    /// use wrr::{Config, Fairness, Saturation, Scheduler};
    ///
    /// let c = Config::new([2, 1], Fairness::Packets, Saturation::WorkConserving);
    /// let mut s: Scheduler<u32, 2, 8> = Scheduler::new(c)?;
    /// s.enqueue(1, 100).unwrap();
    /// s.enqueue(0, 200).unwrap();
    /// assert_eq!(s.peek(), Some((1, &100)));
    /// assert_eq!(s.dequeue_indexed(), Some((1, 100)));
    /// # Ok::<(), wrr::ConfigError>(())
    /// ```
    pub fn peek(&self) -> Option<(usize, &P)> {
        let queue = self.next_queue()?;
        Some((queue, self.peek_queue(queue)?))
    }

    /// Sends the next packet only if `send` accepts it: a shaper on top
    /// (is there enough credit for this packet?) or a hierarchy (does the
    /// parent take it now?) looks at the packet the scheduler chose and
    /// says yes or no. On no, nothing changes and `None` is returned; on
    /// yes this is [`dequeue_indexed`](Scheduler::dequeue_indexed), which
    /// sends exactly the packet `send` saw. O(1).
    ///
    /// ```
    /// use wrr::{Config, Fairness, Saturation, Scheduler};
    ///
    /// let c = Config::new([1, 1], Fairness::Bytes { mtu: 1500 }, Saturation::WorkConserving);
    /// let mut s: Scheduler<u32, 2, 8> = Scheduler::new(c)?;
    /// s.enqueue(0, 1500).unwrap();
    /// s.enqueue(1, 64).unwrap();
    /// let mut tokens = 1000; // a token bucket with 1000 bytes of credit
    /// assert_eq!(s.dequeue_if(|&len| len <= tokens), None); // 1500 must wait
    /// tokens += 500;
    /// assert_eq!(s.dequeue_if(|&len| len <= tokens), Some((0, 1500)));
    /// # Ok::<(), wrr::ConfigError>(())
    /// ```
    pub fn dequeue_if(&mut self, send: impl FnOnce(&P) -> bool) -> Option<(usize, P)> {
        let (_, packet) = self.peek()?;
        if !send(packet) {
            return None;
        }
        self.dequeue_indexed()
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

    /// The packet at the head of `queue`, if any (not necessarily the next
    /// one sent: see [`Scheduler::peek`]).
    pub fn peek_queue(&self, queue: usize) -> Option<&P> {
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
}
