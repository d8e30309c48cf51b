//! Constant-bit-rate UDP sources, like iperf's `-u -b RATE`.

use super::packet::Packet;
use super::time::{Nanos, Pacer};

/// A constant-bit-rate source: packets of one length and one DS marking, evenly spaced
/// at its rate from its start time until (excluding) its stop time.
#[derive(Clone, Debug)]
pub struct CbrSource {
    len: u32,
    ds: u8,
    pacer: Pacer,
    stop: Nanos,
    next_seq: u32,
}

impl CbrSource {
    /// A source of `len`-byte packets marked `ds` at `rate_bps`, sending until `stop`.
    pub fn new(rate_bps: u64, len: u32, ds: u8, stop: Nanos) -> Self {
        CbrSource {
            len,
            ds,
            pacer: Pacer::new(rate_bps),
            stop,
            next_seq: 0,
        }
    }

    /// Emits the packet due at `now` for stream `stream`; returns it and the time of the
    /// next one, or `None` when the next one would fall at or after the stop time.
    pub fn emit(&mut self, now: Nanos, stream: u16) -> (Packet, Option<Nanos>) {
        let p = Packet {
            seq: self.next_seq,
            len: self.len,
            stream,
            ds: self.ds,
            queue: 0,
            ts_us: 0,
        };
        self.next_seq = self.next_seq.wrapping_add(1);
        let next = now.saturating_add(self.pacer.gap(p.bits()));
        (p, (next < self.stop).then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_S;

    #[test]
    fn sends_rate_times_duration() {
        // 200 Mbit/s of 1500-byte packets is 16,666.67 packets per second.
        let mut s = CbrSource::new(200_000_000, 1500, 0x20, NS_PER_S);
        let mut t = Some(0);
        let mut n = 0u64;
        while let Some(now) = t {
            let (p, next) = s.emit(now, 3);
            assert_eq!((p.stream, p.ds, p.len), (3, 0x20, 1500));
            n += 1;
            t = next;
        }
        assert_eq!(n, 16_667);
    }
}
