//! The bytes a capture missed: data the receiver acknowledged that the
//! capture never showed.
//!
//! A sender's data that starts beyond the highest sequence number the
//! capture has shown skips a range: a *hole*. Two things make one. The
//! network lost the bytes before the capture point; then the sender
//! retransmits them, the capture shows the retransmission and the hole
//! fills before the receiver acknowledges past it. Or the capture itself
//! lost them (tcpdump's "packets dropped by kernel", a snap of a busy
//! link): the receiver had them, and its cumulative ACK passes the hole
//! while it is still open. At one capture point data passes before the
//! ACK that covers it, so once the ACK has passed, the bytes still missing
//! can no longer arrive: they are counted as missed.
//!
//! The count is a lower bound. Only cumulative ACKs count (a SACK block
//! over a hole is not taken as proof); at most [`HOLES`] holes are
//! followed at once (the bytes of one that does not fit are not counted);
//! and bytes past the last ACK the capture shows are unknown.

use tcp_options::seq::seq_lt;

/// Holes followed at once per direction.
pub const HOLES: usize = 8;

/// A hole further than this from the data before it is not one (a
/// sequence number from another connection, or garbage).
const MAX_HOLE: u32 = 1 << 30;

/// The holes in one direction's data and the bytes the receiver
/// acknowledged in them.
#[derive(Debug, Clone, Default)]
pub struct Missed {
    /// Open holes, `[start, end)` in sequence space, `len` of them.
    holes: [(u32, u32); HOLES],
    len: usize,
    /// Bytes in holes the receiver's ACKs passed: missed by the capture.
    bytes: u64,
    /// Ranges not followed because [`HOLES`] were open already.
    untracked: u64,
}

impl Missed {
    /// Bytes the receiver acknowledged that the capture never showed (at
    /// least).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Holes (or parts of holes) not followed for want of room.
    pub fn untracked(&self) -> u64 {
        self.untracked
    }

    /// The holes still open, oldest first.
    pub fn open(&self) -> &[(u32, u32)] {
        &self.holes[..self.len]
    }

    fn push(&mut self, start: u32, end: u32) {
        if self.len < HOLES {
            self.holes[self.len] = (start, end);
            self.len += 1;
        } else {
            self.untracked += 1;
        }
    }

    fn remove(&mut self, i: usize) {
        self.holes.copy_within(i + 1..self.len, i);
        self.len -= 1;
    }

    /// Data `[seq, end)` the capture shows, `nxt` one past the highest
    /// sequence number it had shown before: a start beyond `nxt` opens a
    /// hole, and bytes inside open holes fill them.
    pub fn data(&mut self, seq: u32, end: u32, nxt: u32) {
        let mut i = 0;
        while i < self.len {
            let (s, e) = self.holes[i];
            // Overlap of [seq, end) with [s, e).
            let lo = if seq_lt(s, seq) { seq } else { s };
            let hi = if seq_lt(end, e) { end } else { e };
            if !seq_lt(lo, hi) {
                i += 1;
                continue;
            }
            match (lo == s, hi == e) {
                (true, true) => {
                    self.remove(i);
                    continue;
                }
                (true, false) => self.holes[i].0 = hi,
                (false, true) => self.holes[i].1 = lo,
                (false, false) => {
                    self.holes[i].1 = lo;
                    self.push(hi, e);
                }
            }
            i += 1;
        }
        if seq_lt(nxt, seq) && seq.wrapping_sub(nxt) < MAX_HOLE {
            self.push(nxt, seq);
        }
    }

    /// The receiver's cumulative ACK: what it passed in the open holes is
    /// missed.
    pub fn ack(&mut self, ack: u32) {
        let mut i = 0;
        while i < self.len {
            let (s, e) = self.holes[i];
            if !seq_lt(s, ack) || ack.wrapping_sub(s) >= MAX_HOLE {
                i += 1;
                continue;
            }
            if seq_lt(ack, e) {
                self.bytes += u64::from(ack.wrapping_sub(s));
                self.holes[i].0 = ack;
                i += 1;
            } else {
                self.bytes += u64::from(e.wrapping_sub(s));
                self.remove(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hole_the_ack_passes_is_missed() {
        let mut m = Missed::default();
        m.data(1000, 2000, 1000);
        m.data(3000, 4000, 2000); // [2000, 3000) skipped
        assert_eq!(m.open(), [(2000, 3000)]);
        m.ack(2500); // half of it acknowledged
        assert_eq!((m.bytes(), m.open()), (500, &[(2500, 3000)][..]));
        m.ack(4000);
        assert_eq!((m.bytes(), m.open()), (1000, &[][..]));
        // Later ACKs count nothing twice.
        m.ack(4000);
        assert_eq!(m.bytes(), 1000);
    }

    #[test]
    fn a_hole_filled_before_the_ack_is_not() {
        // The network's loss: the retransmission fills the hole.
        let mut m = Missed::default();
        m.data(3000, 4000, 2000);
        m.data(2000, 2500, 4000);
        m.data(2500, 3000, 4000);
        assert!(m.open().is_empty());
        m.ack(4000);
        assert_eq!(m.bytes(), 0);
        // Filled in the middle: two holes, both counted when passed.
        m.data(6000, 7000, 4000); // [4000, 6000)
        m.data(4500, 5000, 7000);
        assert_eq!(m.open(), [(4000, 4500), (5000, 6000)]);
        m.ack(7000);
        assert_eq!(m.bytes(), 500 + 1000);
    }

    #[test]
    fn wraps_around_sequence_space() {
        let mut m = Missed::default();
        let top = u32::MAX - 99; // 100 bytes below the wrap
        m.data(top, top.wrapping_add(50), top);
        m.data(
            top.wrapping_add(150),
            top.wrapping_add(200),
            top.wrapping_add(50),
        );
        assert_eq!(m.open(), [(top.wrapping_add(50), top.wrapping_add(150))]);
        m.ack(top.wrapping_add(200));
        assert_eq!(m.bytes(), 100);
    }

    #[test]
    fn bounded_and_a_lower_bound() {
        let mut m = Missed::default();
        let mut nxt = 0u32;
        for k in 0..(HOLES as u32 + 3) {
            let seq = nxt + 100;
            m.data(seq, seq + 100, nxt);
            nxt = seq + 100;
            assert!(m.open().len() <= HOLES, "{k}");
        }
        assert_eq!((m.open().len(), m.untracked()), (HOLES, 3));
        m.ack(nxt);
        assert_eq!(m.bytes(), 100 * HOLES as u64);
    }

    proptest::proptest! {
        /// A stream of segments from any ISN (wrap included), some not
        /// captured, ACKs at random points: once the last byte is
        /// acknowledged, the count is every uncaptured byte that later
        /// captured data skipped over (a run at the end opens no hole),
        /// exactly while at most HOLES holes opened, at most otherwise.
        #[test]
        fn counts_every_acknowledged_byte_the_capture_skipped(
            isn in proptest::prelude::any::<u32>(),
            segs in proptest::collection::vec((1u32..3000, proptest::prelude::any::<bool>(), 0u8..4), 1..60),
        ) {
            let mut m = Missed::default();
            let (mut seq, mut nxt) = (isn, isn);
            let (mut expected, mut run, mut holes) = (0u64, 0u64, 0usize);
            for (len, captured, ack_now) in segs {
                if captured {
                    m.data(seq, seq.wrapping_add(len), nxt);
                    if run > 0 {
                        expected += run;
                        holes += 1;
                        run = 0;
                    }
                    nxt = seq.wrapping_add(len);
                } else {
                    run += u64::from(len);
                }
                seq = seq.wrapping_add(len);
                if ack_now == 0 {
                    m.ack(seq);
                }
                proptest::prop_assert!(m.open().len() <= HOLES);
            }
            m.ack(seq);
            if holes <= HOLES {
                proptest::prop_assert_eq!(m.bytes(), expected);
            } else {
                proptest::prop_assert!(m.bytes() <= expected);
            }
        }
    }

    #[test]
    fn garbage_is_no_hole_and_old_acks_pass_nothing() {
        let mut m = Missed::default();
        m.data(0x8000_0000, 0x8000_0100, 0); // 2 GB ahead: not a hole
        assert!(m.open().is_empty());
        m.data(3000, 4000, 2000);
        m.ack(1000); // behind the hole
        m.ack(2000u32.wrapping_add(MAX_HOLE).wrapping_add(5)); // far ahead
        assert_eq!((m.bytes(), m.open().len()), (0, 1));
    }
}
