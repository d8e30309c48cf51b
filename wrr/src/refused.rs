//! A refused packet, handed back to the caller.

/// Why [`Scheduler::enqueue`](crate::Scheduler::enqueue) refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum RefuseReason {
    /// The queue index is past the last queue.
    #[error("no such queue")]
    NoSuchQueue,
    /// The queue has weight 0: it is never served, so it takes nothing.
    #[error("queue has weight 0 and is never served")]
    NotServed,
    /// Byte fairness: the packet is longer than the configured MTU.
    #[error("packet of {len} bytes exceeds the mtu of {mtu} bytes")]
    ExceedsMtu {
        /// Length of the refused packet.
        len: u64,
        /// The configured MTU.
        mtu: u32,
    },
    /// The queue's fixed capacity (`CAP`) is used up.
    #[error("queue is at its capacity of {capacity} packets")]
    Full {
        /// The capacity.
        capacity: usize,
    },
    /// The queue's packet limit is reached.
    #[error("queue is at its limit of {limit} packets")]
    PacketLimit {
        /// The configured limit.
        limit: usize,
    },
    /// Accepting the packet would exceed the queue's byte limit.
    #[error("{len} more bytes would exceed the queue's limit of {limit} bytes ({backlog} queued)")]
    ByteLimit {
        /// Length of the refused packet.
        len: u64,
        /// Bytes already queued.
        backlog: u64,
        /// The configured limit.
        limit: u64,
    },
}

/// A packet the scheduler did not take, given back with the reason. Nothing
/// offered to the scheduler is ever lost silently.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("queue {queue} refused a packet: {reason}")]
pub struct Refused<P> {
    /// The packet, back to its owner.
    pub packet: P,
    /// The queue it was offered to.
    pub queue: usize,
    /// Why it was refused.
    pub reason: RefuseReason,
}

impl<P> Refused<P> {
    /// Takes the packet back.
    pub fn into_packet(self) -> P {
        self.packet
    }
}
