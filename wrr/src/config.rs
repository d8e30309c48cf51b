//! Scheduler configuration: per-queue class and limits, fairness unit and
//! saturation semantics.

/// How a queue is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// A weighted queue: while backlogged it gets `weight` shares of the
    /// weighted tier.
    ///
    /// Weight 0 means *never served*, as the Juniper WRR profile of the
    /// TransPAC QBSS story ("queue 2, weight 0: receives no servicing"):
    /// arrivals are refused with [`RefuseReason::NotServed`](crate::RefuseReason::NotServed)
    /// and counted as drops.
    Weighted(u32),
    /// A scavenger (less-than-best-effort, RFC 8622 LE) queue: served only
    /// when every weighted and priority queue is empty. Several scavenger
    /// queues share the scavenger tier by their weights; weight 0 refuses
    /// arrivals as for [`Class::Weighted`].
    Scavenger(u32),
    /// The strict-priority queue: served ahead of every other queue whenever
    /// it holds a packet (it can starve the others). At most one per
    /// scheduler.
    Priority,
}

impl Class {
    /// The weight of a weighted or scavenger queue, `None` for the priority queue.
    pub const fn weight(self) -> Option<u32> {
        match self {
            Class::Weighted(w) | Class::Scavenger(w) => Some(w),
            Class::Priority => None,
        }
    }

    /// Whether arrivals to a queue of this class are refused (weight 0).
    pub const fn refuses_arrivals(self) -> bool {
        matches!(self, Class::Weighted(0) | Class::Scavenger(0))
    }
}

/// Per-queue tail-drop limits. A packet is refused when accepting it would
/// make the queue hold more than `packets` packets or more than `bytes` bytes.
/// The queue's fixed capacity (the `CAP` parameter of
/// [`Scheduler`](crate::Scheduler)) applies on top of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limit {
    /// Most packets the queue may hold.
    pub packets: usize,
    /// Most bytes the queue may hold.
    pub bytes: u64,
}

impl Limit {
    /// No limit beyond the queue's capacity.
    pub const NONE: Limit = Limit {
        packets: usize::MAX,
        bytes: u64::MAX,
    };

    /// A limit in both packets and bytes.
    pub const fn new(packets: usize, bytes: u64) -> Self {
        Limit { packets, bytes }
    }

    /// A limit in packets only.
    pub const fn packets(packets: usize) -> Self {
        Limit {
            packets,
            bytes: u64::MAX,
        }
    }

    /// A limit in bytes only.
    pub const fn bytes(bytes: u64) -> Self {
        Limit {
            packets: usize::MAX,
            bytes,
        }
    }
}

impl Default for Limit {
    fn default() -> Self {
        Limit::NONE
    }
}

/// Configuration of one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueueConfig {
    /// How the queue is served.
    pub class: Class,
    /// Tail-drop limits.
    pub limit: Limit,
}

impl QueueConfig {
    /// A weighted queue without limits.
    pub const fn weighted(weight: u32) -> Self {
        QueueConfig {
            class: Class::Weighted(weight),
            limit: Limit::NONE,
        }
    }
}

/// What the weights share out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fairness {
    /// Bytes: deficit round robin, quantum = weight x `mtu` bytes. Packets
    /// longer than `mtu` are refused
    /// ([`RefuseReason::ExceedsMtu`](crate::RefuseReason::ExceedsMtu)),
    /// which is what keeps dequeue O(1).
    Bytes {
        /// Largest packet accepted, in bytes; must be at least 1.
        mtu: u32,
    },
    /// Packets: classic weighted round robin, `weight` packets per round
    /// whatever their size.
    Packets,
}

/// Unit of a backlog threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BacklogUnit {
    /// Total queued bytes over all queues.
    Bytes,
    /// Total queued packets over all queues.
    Packets,
}

/// The backlog level at which "only when saturated" scheduling switches
/// between arrival order and WRR, with hysteresis.
///
/// The scheduler switches from arrival order to WRR when, after an arrival,
/// the total backlog is `>= high`; it switches back when, after a departure,
/// the backlog is `< low`. `low <= high` is required; `low == high` (the
/// default of [`Threshold::bytes`] and [`Threshold::packets`]) is the plain
/// "WRR while at or above the threshold" rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Threshold {
    /// What the backlog is measured in.
    pub unit: BacklogUnit,
    /// Backlog at or above which WRR starts.
    pub high: u64,
    /// Backlog below which arrival order resumes.
    pub low: u64,
}

impl Threshold {
    /// A threshold in bytes, without hysteresis (`low == high`).
    pub const fn bytes(high: u64) -> Self {
        Threshold {
            unit: BacklogUnit::Bytes,
            high,
            low: high,
        }
    }

    /// A threshold in packets, without hysteresis (`low == high`).
    pub const fn packets(high: u64) -> Self {
        Threshold {
            unit: BacklogUnit::Packets,
            high,
            low: high,
        }
    }

    /// The same threshold with a separate low-water mark.
    pub const fn with_low(self, low: u64) -> Self {
        Threshold { low, ..self }
    }
}

/// When the weights apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Saturation {
    /// Work-conserving WRR on every dequeue: the weights matter only while
    /// several queues are backlogged; a queue alone gets the whole link.
    WorkConserving,
    /// "Only when saturated", as the Juniper M5 of the QBSS story behaved:
    /// below the threshold every queue is served in global arrival order (one
    /// FIFO across queues, the classes are ignored), at or above it WRR (see
    /// [`Threshold`] for the hysteresis).
    WhenSaturated(Threshold),
    /// Forced WRR on every packet, the router's hidden `transmit-buffers`
    /// knob. The dequeue order is the same as [`Saturation::WorkConserving`]
    /// (and as `WhenSaturated` with a threshold of 0): a scheduler without a
    /// clock cannot be less work-conserving than that. The variant exists so
    /// that a model's configuration says which router setting it stands for.
    Forced,
}

/// A whole scheduler configuration for `N` queues.
///
/// The fields are public; [`Scheduler::new`](crate::Scheduler::new) and
/// [`Scheduler::reconfigure`](crate::Scheduler::reconfigure) check them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config<const N: usize> {
    /// Class and limits of each queue.
    pub queues: [QueueConfig; N],
    /// What the weights share out.
    pub fairness: Fairness,
    /// When the weights apply.
    pub saturation: Saturation,
}

impl<const N: usize> Config<N> {
    /// Weighted queues with the given weights, no limits.
    ///
    /// A `const fn`, like [`Scheduler::new`](crate::Scheduler::new), so a
    /// scheduler can be built at compile time (in a `static`).
    pub const fn new(weights: [u32; N], fairness: Fairness, saturation: Saturation) -> Self {
        let mut queues = [QueueConfig::weighted(0); N];
        let mut i = 0;
        while i < N {
            queues[i] = QueueConfig::weighted(weights[i]);
            i += 1;
        }
        Config {
            queues,
            fairness,
            saturation,
        }
    }

    /// The same configuration with every queue limited to `limit`.
    pub const fn with_limit_all(mut self, limit: Limit) -> Self {
        let mut i = 0;
        while i < N {
            self.queues[i].limit = limit;
            i += 1;
        }
        self
    }

    /// Checks the configuration (as the scheduler does).
    pub const fn validate(&self) -> Result<(), ConfigError> {
        if let Fairness::Bytes { mtu: 0 } = self.fairness {
            return Err(ConfigError::ZeroMtu);
        }
        if let Saturation::WhenSaturated(t) = self.saturation {
            if t.low > t.high {
                return Err(ConfigError::LowAboveHigh {
                    low: t.low,
                    high: t.high,
                });
            }
        }
        let mut first = None;
        let mut i = 0;
        while i < N {
            if matches!(self.queues[i].class, Class::Priority) {
                match first {
                    None => first = Some(i),
                    Some(first) => return Err(ConfigError::SecondPriority { first, second: i }),
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// Index of the priority queue, if any.
    pub fn priority_queue(&self) -> Option<usize> {
        self.queues.iter().position(|q| q.class == Class::Priority)
    }
}

/// A configuration the scheduler cannot run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ConfigError {
    /// `Fairness::Bytes { mtu: 0 }`: no packet could ever be sent.
    #[error("byte fairness needs an mtu of at least 1 byte, got 0")]
    ZeroMtu,
    /// The saturation threshold's low-water mark is above its high-water mark.
    #[error("saturation threshold low mark {low} is above high mark {high}")]
    LowAboveHigh {
        /// The low mark given.
        low: u64,
        /// The high mark given.
        high: u64,
    },
    /// Two queues are configured as strict priority.
    #[error("queues {first} and {second} are both strict priority; at most one may be")]
    SecondPriority {
        /// The first priority queue.
        first: usize,
        /// The second one.
        second: usize,
    },
    /// A queue index past the last queue.
    #[error("queue {queue} does not exist (the scheduler has {queues} queues)")]
    NoSuchQueue {
        /// The index given.
        queue: usize,
        /// Number of queues.
        queues: usize,
    },
    /// `N x CAP` packet slots cannot be numbered in 32 bits.
    #[error("{queues} queues of {capacity} packets are too many slots (at most 2^32 - 2)")]
    TooManySlots {
        /// Number of queues (`N`).
        queues: usize,
        /// Capacity of each (`CAP`).
        capacity: usize,
    },
}
