//! The simulated packet: a small `Copy` value, so the engine allocates nothing per packet.

/// One simulated IP packet.
///
/// Sixteen bytes, `Copy`: the scheduler's fixed-capacity queues hold these by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Sequence number within its stream (a TCP stream's packet index; a UDP stream's counter).
    pub seq: u32,
    /// IP packet length in bytes (header included).
    pub len: u32,
    /// Index of the stream in the scenario.
    pub stream: u16,
    /// The DS field (the old TOS byte) the source marked.
    pub ds: u8,
    /// Output queue the classifier chose.
    pub queue: u8,
    /// Send time in microseconds: the TCP timestamp option's TSval (RFC 7323), echoed
    /// by the receiver so the sender measures the RTT of the segment that advanced it.
    pub ts_us: u32,
}

impl Packet {
    /// Length in bits.
    pub fn bits(&self) -> u64 {
        u64::from(self.len) * 8
    }
}
