//! The shift a Linux receiver means, read from how it opens its window.
//!
//! # What the kernel does
//!
//! A Linux receiver advertises `min(free space, rcv_ssthresh)`; with window
//! scaling on, `__tcp_select_window()` (`net/ipv4/tcp_output.c`) rounds
//! that *up* to a multiple of `1 << rcv_wscale` ("advertise enough space so
//! that it won't get scaled away") and `tcp_select_window()` sends it
//! shifted right by `rcv_wscale`. While the window opens,
//! `tcp_grow_window()` (`net/ipv4/tcp_input.c`, called from
//! `tcp_event_data_recv()` for each segment of 128 bytes or more received)
//! raises `rcv_ssthresh` by `max(incr, 2 * skb->len)` with `incr` at most
//! twice the advertised MSS: for full segments (or GRO's coalesced ones),
//! 2 bytes of window per byte received. The receiver acknowledges every segment or two, so each such
//! ACK that advances by `acked` bytes moves the window field by about
//! `2 * acked >> shift` (rounded up at each step: the field is the ceiling
//! of the window over `1 << shift`).
//!
//! # The rule
//!
//! [`WindowGrowth`] is fed every ACK of one receiver (how far it advanced,
//! the window field before and after, the sender's full segment size). A
//! *run* is a stretch of ACKs that each advance and never lower the field,
//! from one that raises it, ending at an ACK that advances by nothing or lowers the field, or after
//! more than [`GROWTH_MAX_STALL`] bytes acknowledged without the field
//! moving (a window at shift 14 grows a unit every 8,192 bytes acked, so
//! a longer stall is a window that stopped growing: its clamp, or a full
//! buffer), or as soon as the bytes acknowledged without the field moving
//! would have grown it by two units at the run's rate so far (at shift 10
//! a stall of two segments: the clamp, where a later unit of rounding
//! would otherwise carry the stall into the run). The run's first growing ACK and the stalled ACKs after it are
//! left out (growth may have started part-way through it); so is every
//! growing ACK up to the first clean one (defined below), since a field
//! moved by an ACK of three segments or a short one says nothing of where
//! growth began (the lab's slow-app4 client, under load: a three-segment
//! ACK moving the field by 1, a stall, then a two-segment ACK moving it by
//! 3 where growth gives 6, once the window opened part-way through it);
//! and so are its
//! last growing ACK and the stalled ACKs after that (growth stops short of
//! the clamp there). Over the rest, the
//! ACKs of exactly one or two full segments ("clean"; a short segment grows
//! the window by more than 2 bytes per byte) give the bytes acknowledged
//! `a` and the field growth `f` in units. The run shows shift `s` when
//!
//! - it has at least [`GROWTH_MIN_ACKS`] clean ACKs, at least half of its
//!   ACKs;
//! - the field grew by at least [`GROWTH_MIN_UNITS`] units over them (the
//!   rounding at each end is below one unit, so below 2/64 of the growth);
//! - the one-segment ACKs' field steps are at most 2 apart, and so are the
//!   two-segment ACKs' (rounding moves a step by one, a stall inside the
//!   run by one more; a window growing by the free space, as autotuning or
//!   an application draining a full buffer makes it, comes in jumps
//!   instead). A clean ACK whose step would put its class further apart
//!   ends the run before it and is left out, as a run's first growing ACK
//!   is: `tcp_grow_window()` grows only while `rcv_ssthresh` is below
//!   `tcp_space()`, so a receiver whose application reads late grows by
//!   one segment of a two-segment ACK (the lab's window-rewrite4 client
//!   under load: 440 one-segment steps of 2 or 3 and two-segment steps of
//!   6, then one of 3 just before its clamp); the growth before such a
//!   step still shows the shift;
//! - `f << s` is within [`GROWTH_TOLERANCE_PER_MILLE`] / 1000 (3.5 %) of
//!   `2 * a`: 2 bytes per byte at that shift. Integer arithmetic, shifts
//!   0 to 14 tried in turn; the tolerance is below a factor of 2, so at
//!   most one shift passes.
//!
//! [`WindowGrowth::shift`] answers from the longest run (by bytes
//! acknowledged) that shows a shift; when two runs show different shifts
//! it answers `None`: conflicting evidence tells nothing. It assumes a
//! Linux receiver (other stacks open their windows differently and may by
//! chance look like one), so it is evidence, not proof.
//!
//! ```
//! use bdp::linux::WindowGrowth;
//!
//! // A receiver at shift 7 acknowledging one 1,448-byte segment at a time:
//! // its window grows by 2,896 bytes, the field by 22 or 23 units.
//! let mut g = WindowGrowth::new();
//! let mut window: u64 = 14_480;
//! let mut field = window.div_ceil(128) as u16;
//! for _ in 0..40 {
//!     window += 2 * 1448;
//!     let next = window.div_ceil(128) as u16;
//!     g.ack(1448, field, next, 1448);
//!     field = next;
//! }
//! assert_eq!(g.shift(), Some(7));
//! ```

use crate::window::MAX_WINDOW_SCALE;

/// Fewest clean ACKs (one or two full segments) for a run to show a shift.
pub const GROWTH_MIN_ACKS: u32 = 16;
/// Fewest units of field growth over a run's clean ACKs.
pub const GROWTH_MIN_UNITS: u64 = 64;
/// How far (per mille) `field growth << shift` may be from twice the bytes
/// acknowledged: 35, about `2^0.05`.
pub const GROWTH_TOLERANCE_PER_MILLE: u64 = 35;
/// Most bytes acknowledged without the field moving inside a run: a window
/// at the largest shift, 14, grows one unit (16,384 bytes) per 8,192 bytes.
pub const GROWTH_MAX_STALL: u64 = 1 << (MAX_WINDOW_SCALE - 1);

/// Sums over a stretch of ACKs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sums {
    acks: u32,
    clean: u32,
    acked: u64,
    units: u64,
    /// Field steps of the one-segment and the two-segment ACKs: how
    /// many, smallest, largest.
    steps: [Steps; 2],
}

/// The field steps of one class of clean ACKs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Steps {
    count: u32,
    min: u64,
    max: u64,
}

impl Steps {
    const ZERO: Steps = Steps {
        count: 0,
        min: 0,
        max: 0,
    };
    fn add(&mut self, o: &Steps) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *o;
            return;
        }
        self.count = self.count.saturating_add(o.count);
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }
}

impl Sums {
    const ZERO: Sums = Sums {
        acks: 0,
        clean: 0,
        acked: 0,
        units: 0,
        steps: [Steps::ZERO; 2],
    };
    fn add(&mut self, o: &Sums) {
        for (a, b) in self.steps.iter_mut().zip(o.steps.iter()) {
            a.add(b);
        }
        self.acks = self.acks.saturating_add(o.acks);
        self.clean = self.clean.saturating_add(o.clean);
        self.acked = self.acked.saturating_add(o.acked);
        self.units = self.units.saturating_add(o.units);
    }

    fn push(&mut self, acked: u64, units: u64, segment: u64) {
        let one = Sums {
            acks: 1,
            ..Sums::default()
        };
        self.add(&one);
        if segment > 0 && (acked == segment || acked == 2 * segment) {
            self.clean = self.clean.saturating_add(1);
            self.acked = self.acked.saturating_add(acked);
            self.units = self.units.saturating_add(units);
            self.steps[usize::from(acked != segment)].add(&Steps {
                count: 1,
                min: units,
                max: units,
            });
        }
    }

    /// Whether the field steps of `o` keep this run's steps of each class
    /// at most 2 apart (module docs).
    fn steps_fit(&self, o: &Sums) -> bool {
        self.steps.iter().zip(o.steps.iter()).all(|(a, b)| {
            let mut m = *a;
            m.add(b);
            m.max <= m.min.saturating_add(2)
        })
    }

    /// The shift these sums show (module docs), if any.
    fn shift(&self) -> Option<u8> {
        if self.clean < GROWTH_MIN_ACKS
            || u64::from(self.clean) * 2 < u64::from(self.acks)
            || self.units < GROWTH_MIN_UNITS
            || self
                .steps
                .iter()
                .any(|st| st.max > st.min.saturating_add(2))
        {
            return None;
        }
        let twice = u128::from(self.acked) * 2;
        (0..=MAX_WINDOW_SCALE).find(|s| {
            let grown = u128::from(self.units) << s;
            grown.abs_diff(twice) * 1000 <= twice * u128::from(GROWTH_TOLERANCE_PER_MILLE)
        })
    }
}

/// Reads the shift a Linux receiver means from its window growth (module
/// docs). Fixed size, no allocation; feed it every ACK of the receiver in
/// order with [`WindowGrowth::ack`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowGrowth {
    /// The open run up to (not including) its last growing ACK.
    run: Sums,
    /// The open run's last growing ACK and the stalled ACKs after it.
    pending: Sums,
    /// Bytes acknowledged since the last growing ACK.
    stall: u64,
    /// The run's first clean growing ACK is behind (it, and any growing
    /// ACK before it, are left out).
    started: bool,
    /// The growing ACK that opened `pending` was of one or two full
    /// segments.
    pending_clean: bool,
    /// The longest finished run showing a shift.
    best: Sums,
    /// Finished runs showed different shifts.
    conflict: bool,
}

impl WindowGrowth {
    /// No ACK seen.
    pub const fn new() -> Self {
        WindowGrowth {
            run: Sums::ZERO,
            pending: Sums::ZERO,
            stall: 0,
            started: false,
            pending_clean: false,
            best: Sums::ZERO,
            conflict: false,
        }
    }

    /// One ACK of the receiver: it advanced the acknowledgment number by
    /// `advanced` bytes (the difference of two ACK numbers, modulo 2^32:
    /// 0 or 2^31 and above is no advance), its window field went from
    /// `field_before` to `field_after`, and the sender's full segment is
    /// `segment` bytes (its largest payload so far; 0 when unknown).
    pub fn ack(&mut self, advanced: u32, field_before: u16, field_after: u16, segment: u32) {
        if advanced == 0 || advanced >= 1 << 31 || field_after < field_before {
            self.close();
            return;
        }
        let (acked, units) = (u64::from(advanced), u64::from(field_after - field_before));
        if units == 0 && self.pending.acks == 0 {
            // No growing ACK yet: the run has not started.
            return;
        }
        if units == 0 {
            self.stall = self.stall.saturating_add(acked);
            // A stall at least two units long at the run's own rate so
            // far: the window stopped growing (its clamp), even where a
            // unit of rounding follows.
            let stopped = self.run.acked > 0
                && u128::from(self.stall) * u128::from(self.run.units)
                    >= 2 * u128::from(self.run.acked);
            if self.stall > GROWTH_MAX_STALL || stopped {
                self.close();
                return;
            }
        } else {
            // The previous growing ACK was not the last: it and the
            // stalled ACKs after it belong to the run, unless it was the
            // first (growth may have started part-way through it).
            let (p, p_clean) = (self.pending, self.pending_clean);
            if self.started && !self.run.steps_fit(&p) {
                // A step out of line with the run's: growth held back for
                // part of the ACK (or a jump). The run ends before it, and
                // it is left out as a first growing ACK would be.
                self.close();
            }
            if self.started {
                self.run.add(&p);
            }
            self.started = self.started || (p.acks > 0 && p_clean);
            self.pending = Sums::default();
            self.pending_clean = segment > 0 && (advanced == segment || advanced == 2 * segment);
            self.stall = 0;
        }
        self.pending.push(acked, units, u64::from(segment));
    }

    /// Ends the open run, keeping the longest one that shows a shift.
    fn close(&mut self) {
        let run = core::mem::take(&mut self.run);
        self.pending = Sums::default();
        self.stall = 0;
        self.started = false;
        self.pending_clean = false;
        self.best = self.better(self.best, run);
    }

    /// Of two runs the longer that shows a shift, noting a conflict.
    fn better(&mut self, a: Sums, b: Sums) -> Sums {
        match (a.shift(), b.shift()) {
            (Some(x), Some(y)) if x != y => {
                self.conflict = true;
                a
            }
            (Some(_), Some(_)) if b.acked > a.acked => b,
            (Some(_), _) => a,
            (None, Some(_)) => b,
            (None, None) => a,
        }
    }

    /// The shift the receiver's growth shows so far (the open run
    /// included, without its last growing ACK), `None` without a run that
    /// shows one or when runs disagree.
    pub fn shift(&self) -> Option<u8> {
        let mut copy = *self;
        let best = copy.better(self.best, self.run);
        if copy.conflict {
            return None;
        }
        best.shift()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Linux-like receiver at `shift`: window grows 2 bytes per byte of
    /// full segments, the field is its ceiling over `1 << shift`.
    fn linux(g: &mut WindowGrowth, shift: u8, mss: u32, start: u64, acks: &[u32]) -> u64 {
        let mut window = start;
        let cap = 65_535u64 << shift;
        let field = |w: u64| w.min(cap).div_ceil(1 << shift) as u16;
        for &n in acks {
            let before = field(window);
            window += 2 * u64::from(n * mss);
            g.ack(n * mss, before, field(window), mss);
        }
        window
    }

    #[test]
    fn reads_shift_10_from_one_and_two_segment_acks() {
        let mut g = WindowGrowth::new();
        let pattern: [u32; 40] = core::array::from_fn(|i| 1 + (i % 3 == 0) as u32);
        linux(&mut g, 10, 1448, 14_480, &pattern);
        assert_eq!(g.shift(), Some(10));
    }

    #[test]
    fn a_flat_window_before_the_run_is_not_part_of_it() {
        // As the lab's tbf4 client showed: two-segment ACKs leaving the
        // field at 80, then growth at shift 10 (steps of 2 and 3).
        let mut g = WindowGrowth::new();
        for _ in 0..2 {
            g.ack(2896, 80, 80, 1448);
        }
        linux(&mut g, 10, 1448, 80 << 10, &[1; 40]);
        assert_eq!(g.shift(), Some(10));
    }

    #[test]
    fn a_first_step_cut_short_is_left_out() {
        // As the lab's slow-app4 client showed: growth starts with one
        // unit over two segments, stalls, then goes on at shift 10.
        let mut g = WindowGrowth::new();
        g.ack(5792, 200, 201, 1448);
        g.ack(2896, 201, 201, 1448);
        g.ack(2896, 201, 207, 1448);
        linux(&mut g, 10, 1448, 207 << 10, &[1; 40]);
        assert_eq!(g.shift(), Some(10));
    }

    #[test]
    fn growing_acks_before_the_first_clean_one_are_left_out() {
        // The lab's slow-app4 client on a loaded host (10 ms path, the
        // server writing 16 KiB at a time): a three-segment ACK moves the
        // field 80 -> 81, four segments and a short one leave it, a
        // two-segment ACK moves it by 3 (growth began part-way through it),
        // then growth at shift 10 (steps of 2 and 3, and 6 for two
        // segments). Counting the step of 3 among the two-segment ones put
        // them 3 apart and hid the shift.
        let mut g = WindowGrowth::new();
        g.ack(4344, 80, 81, 1448);
        g.ack(4800, 81, 81, 1448);
        g.ack(2896, 81, 84, 1448);
        let w = linux(&mut g, 10, 1448, 84 << 10, &[1; 30]);
        linux(&mut g, 10, 1448, w, &[2, 1, 1, 1, 2, 1, 1, 1, 1]);
        assert_eq!(g.shift(), Some(10));
    }

    #[test]
    fn a_clamp_followed_by_a_unit_of_rounding_ends_the_run() {
        // The same client at its clamp: growth at shift 10, then two, three
        // and a short segment acknowledged with the field still, one unit
        // more, and the field still for good. The stall inside the run
        // (a two-segment ACK moving the field by 0, next to steps of 6)
        // had hidden the shift.
        let mut g = WindowGrowth::new();
        let pattern: [u32; 40] = core::array::from_fn(|i| 1 + (i % 10 == 4) as u32);
        let window = linux(&mut g, 10, 1448, 200 << 10, &pattern);
        let f = window.div_ceil(1 << 10) as u16;
        for (acked, units) in [
            (2896, 0),
            (4344, 0),
            (456, 0),
            (1448, 1),
            (4344, 0),
            (4344, 0),
            (5792, 0),
        ] {
            g.ack(acked, f, f + units, 1448);
        }
        assert_eq!(g.shift(), Some(10));
    }

    #[test]
    fn a_step_held_back_ends_the_run_and_keeps_its_shift() {
        // The lab's window-rewrite4 client on a loaded host (a transfer
        // at 40 ms, its field rewritten on the way): growth at shift 10
        // from field 80, one-segment steps of 2 and 3 and two-segment
        // steps of 6, then a two-segment ACK moving the field by 3 (its
        // second segment grew nothing: the application had not read the
        // buffer), one more step to the clamp, and the field still. The
        // one step of 3 among the two-segment ones hid the whole run.
        let mut g = WindowGrowth::new();
        let pattern: [u32; 440] = core::array::from_fn(|i| 1 + (i % 60 == 30) as u32);
        let window = linux(&mut g, 10, 1448, 80 << 10, &pattern);
        let f = window.div_ceil(1 << 10) as u16;
        g.ack(2896, f, f + 3, 1448);
        g.ack(1448, f + 3, f + 6, 1448);
        for _ in 0..100 {
            g.ack(2896, f + 6, f + 6, 1448);
        }
        assert_eq!(g.shift(), Some(10));
    }

    #[test]
    fn a_step_out_of_line_does_not_make_a_shift_of_its_own() {
        // The counter-case: steps of 2 and 3 for 10 ACKs, a jump of 9, 10
        // more of 2 and 3: neither piece is long enough to show a shift.
        let mut g = WindowGrowth::new();
        let mut f = 100u16;
        for i in 0..21 {
            let step = if i == 10 { 9 } else { 2 + (i % 2) as u16 };
            g.ack(1448, f, f + step, 1448);
            f += step;
        }
        assert_eq!(g.shift(), None);
    }

    #[test]
    fn too_short_a_run_tells_nothing() {
        let mut g = WindowGrowth::new();
        linux(&mut g, 10, 1448, 14_480, &[1; 15]);
        assert_eq!(g.shift(), None);
    }

    #[test]
    fn reads_shift_14_through_acks_that_leave_the_field_alone() {
        // 2,896 bytes per ACK at shift 14: the field moves once every 5 or 6 ACKs.
        let mut g = WindowGrowth::new();
        linux(&mut g, 14, 1448, 14_480, &[1; 800]);
        assert_eq!(g.shift(), Some(14));
    }

    #[test]
    fn a_flat_window_ends_the_run_and_keeps_its_shift() {
        let mut g = WindowGrowth::new();
        linux(&mut g, 9, 1448, 14_480, &[1; 40]);
        for _ in 0..100 {
            g.ack(1448, 500, 500, 1448);
        }
        assert_eq!(g.shift(), Some(9));
    }

    #[test]
    fn runs_at_two_shifts_give_none() {
        let mut g = WindowGrowth::new();
        linux(&mut g, 9, 1448, 14_480, &[1; 40]);
        g.ack(0, 100, 100, 1448);
        linux(&mut g, 10, 1448, 14_480, &[1; 40]);
        assert_eq!(g.shift(), None);
    }

    #[test]
    fn growth_in_jumps_is_not_linux_growth() {
        // Steps of 1 and 9 units alternating: the right mean for shift 9
        // (1448 * 2 / 512 = 5.66) is not enough.
        let mut g = WindowGrowth::new();
        let mut f = 100u16;
        for i in 0..60 {
            let step = if i % 2 == 0 { 2 } else { 9 };
            g.ack(1448, f, f + step, 1448);
            f += step;
        }
        assert_eq!(g.shift(), None);
    }
}
