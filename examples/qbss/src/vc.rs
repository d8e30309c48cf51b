//! The virtual-circuit stage: a policer (token bucket that drops) or a shaper.
//!
//! * **Policed**: a token bucket of `burst` bytes filling at the VC rate sits in front
//!   of the classifier. A packet that finds enough tokens for its wire size passes and
//!   spends them; any other packet is dropped (counted as a drop of its stream).
//! * **Shaped**: the VC paces what leaves the router: the output server takes packets
//!   from the scheduler at the VC rate instead of the link's, so the scheduler's queues
//!   are the VC's buffer. That is how a router's ATM interface holds a VC to its peak
//!   cell rate: the cells never exceed the contract, so the switch behind it never polices.
//!
//! Both count the packet's size on the wire of the link (cells for ATM), as an ATM
//! policer or shaper counts cells.

use super::time::{Nanos, NS_PER_S};

/// How a VC holds traffic to its rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VcKind {
    /// Token bucket in front of the classifier; excess dropped.
    Policed,
    /// The output server runs at the VC rate; excess waits in the scheduler's queues.
    Shaped,
}

/// A token-bucket policer. Tokens are kept in bit-nanoseconds (bits x 10^9) so
/// refilling at any integer rate is exact.
#[derive(Clone, Debug)]
pub struct Policer {
    rate_bps: u128,
    depth: u128,
    tokens: u128,
    last: Nanos,
}

impl Policer {
    /// A full bucket of `burst_bytes` filling at `rate_bps`.
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Self {
        let depth = u128::from(burst_bytes) * 8 * u128::from(NS_PER_S);
        Policer {
            rate_bps: u128::from(rate_bps),
            depth,
            tokens: depth,
            last: 0,
        }
    }

    /// Whether a packet of `wire_bytes` arriving at `now` conforms (and spends tokens).
    pub fn conform(&mut self, now: Nanos, wire_bytes: u64) -> bool {
        let elapsed = u128::from(now.saturating_sub(self.last));
        self.last = self.last.max(now);
        self.tokens = self
            .tokens
            .saturating_add(elapsed.saturating_mul(self.rate_bps))
            .min(self.depth);
        let need = u128::from(wire_bytes) * 8 * u128::from(NS_PER_S);
        if self.tokens >= need {
            self.tokens -= need;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_the_rate_and_drops_the_excess() {
        // 20 Mbit/s offered (one 1500-byte packet every 600 us) to a 10 Mbit/s policer.
        let mut p = Policer::new(10_000_000, 3000);
        let passed = (0..10_000u64)
            .filter(|i| p.conform(i * 600_000, 1500))
            .count();
        // 6 s at 10 Mbit/s = 5000 packets, plus the initial burst of 2.
        assert!((5000..=5002).contains(&passed), "{passed}");
    }
}
