//! The output port's scheduler: the `wrr` crate's [`wrr::Scheduler`] over
//! [`MAX_QUEUES`] queues of simulated packets, configured from a scenario.

use wrr::{
    BacklogUnit, Class, Config, Fairness, Limit, PacketLen, QueueConfig, Saturation, Scheduler,
    Threshold,
};

use super::packet::Packet;

/// Queues of the simulated port (a scenario may use fewer; the rest refuse arrivals).
pub const MAX_QUEUES: usize = 8;
/// Fixed capacity of each queue in packets (the `CAP` of the `wrr` scheduler).
pub const QUEUE_CAPACITY: usize = 2048;

impl PacketLen for Packet {
    #[inline]
    fn packet_len(&self) -> usize {
        self.len as usize
    }
}

/// How a queue is served (mirrors [`wrr::Class`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassSpec {
    /// Weighted; 0 = never served.
    Weighted(u32),
    /// Served only when every other queue is empty.
    Scavenger(u32),
    /// Strict priority.
    Priority,
}

/// When the weights apply (mirrors [`wrr::Saturation`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaturationSpec {
    /// Always WRR, work-conserving.
    WorkConserving,
    /// Arrival order until the backlog reaches this many packets, then WRR.
    WhenSaturatedPackets(u64),
    /// Arrival order until the backlog reaches this many bytes, then WRR.
    WhenSaturatedBytes(u64),
    /// WRR on every packet (`transmit-buffers`).
    Forced,
}

/// One queue of the profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueSpec {
    /// Name in reports (`best-effort`).
    pub name: String,
    /// Class and weight.
    pub class: ClassSpec,
    /// Tail-drop limit in packets.
    pub limit_packets: usize,
    /// Tail-drop limit in bytes.
    pub limit_bytes: u64,
}

/// The WRR profile of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerSpec {
    /// `Some(mtu)`: byte fairness (DRR, quantum = weight x mtu); `None`: packet fairness.
    pub fairness_mtu: Option<u32>,
    /// When the weights apply.
    pub saturation: SaturationSpec,
    /// The queues, 1 to [`MAX_QUEUES`].
    pub queues: Vec<QueueSpec>,
    /// Candidate mechanisms of the queue-0 anomaly (all off by default).
    pub hypotheses: Hypotheses,
}

/// Switches for the candidate explanations of the queue-0 anomaly (docs/qbss-queue0.md):
/// router behaviours that differ from a plain WRR, each off unless a scenario asks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hypotheses {
    /// `saturation_queue = Q`: "when saturated" judged on queue `Q`'s backlog alone
    /// (reaching the threshold turns WRR on, falling below it turns it off), instead
    /// of the whole port's.
    pub saturation_queue: Option<usize>,
    /// `queue0_outside_wrr = true`: queue 0 is served outside the WRR, alternating
    /// packet by packet with the WRR of the other queues.
    pub queue0_outside_wrr: bool,
    /// `ingress_fifo_packets = N`: a class-blind FIFO of N packets (the ATM PIC's
    /// per-VC buffer) holds the backlog ahead of the scheduler, which is fed only when
    /// the link is free, so it never sees a backlog and never applies its weights.
    pub ingress_fifo_packets: Option<usize>,
}

impl SchedulerSpec {
    /// The configuration with saturation `sat` instead of the scenario's.
    pub fn config_with(&self, sat: SaturationSpec) -> Config<MAX_QUEUES> {
        let mut c = self.clone();
        c.saturation = sat;
        c.config()
    }

    /// The `wrr` configuration: the scenario's queues, then weight-0 queues up to
    /// [`MAX_QUEUES`].
    pub fn config(&self) -> Config<MAX_QUEUES> {
        let queues = core::array::from_fn(|i| match self.queues.get(i) {
            Some(q) => QueueConfig {
                class: match q.class {
                    ClassSpec::Weighted(w) => Class::Weighted(w),
                    ClassSpec::Scavenger(w) => Class::Scavenger(w),
                    ClassSpec::Priority => Class::Priority,
                },
                limit: Limit::new(q.limit_packets, q.limit_bytes),
            },
            None => QueueConfig::weighted(0),
        });
        Config {
            queues,
            fairness: match self.fairness_mtu {
                Some(mtu) => Fairness::Bytes { mtu },
                None => Fairness::Packets,
            },
            saturation: match self.saturation {
                SaturationSpec::WorkConserving => Saturation::WorkConserving,
                SaturationSpec::Forced => Saturation::Forced,
                SaturationSpec::WhenSaturatedPackets(n) => Saturation::WhenSaturated(Threshold {
                    unit: BacklogUnit::Packets,
                    high: n,
                    low: n,
                }),
                SaturationSpec::WhenSaturatedBytes(n) => {
                    Saturation::WhenSaturated(Threshold::bytes(n))
                }
            },
        }
    }
}

/// The port: a boxed `wrr` scheduler.
pub type Port = Scheduler<Packet, MAX_QUEUES, QUEUE_CAPACITY>;

/// Builds the port's scheduler for `spec`.
pub fn build_port(spec: &SchedulerSpec) -> Result<Box<Port>, wrr::ConfigError> {
    Port::new(spec.config()).map(Box::new)
}
