//! The window-scale shift of a connection whose handshake the capture does
//! not hold: what the flight and the window edges rule out, and where a
//! window-limited sender's data keeps stopping (see `EdgeEvidence` and
//! `infer_shift`).

use serde::Serialize;
use tcp_options::kind::MAX_WINDOW_SCALE;
use tcp_options::seq::seq_lt;

use crate::conn::Endpoint;
use crate::finding::Confidence;

use super::mismatch::MismatchEvidence;
use super::side::Side;

/// An interval of window-scale shifts, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ShiftInterval {
    /// Smallest shift the capture allows, on `basis`.
    pub min: u8,
    /// Largest shift the capture allows, on `basis`.
    pub max: u8,
    /// The shift the receiver *means*, read from how a Linux receiver opens
    /// its window (`bdp::linux::WindowGrowth`; medium confidence, `null`
    /// without a run that shows it).
    pub linux_growth_shift: Option<u8>,
    /// The shift at whose right edge the peer's new data kept stopping (a
    /// segment or less below it): the window the sender read, when it was
    /// window-limited (`null`: no such edge).
    pub sender_edge_shift: Option<u8>,
    /// What `min` and `max` rest on.
    pub basis: ShiftBasis,
    /// `high` for `bounds`, `medium` for `linux_growth`; for `sender_edge`
    /// `high` when the edge's size moved by two segments or more while the
    /// sender kept stopping at it, `medium` when it did not (a sender that
    /// holds its flight at one size for another reason would look the same).
    pub confidence: Confidence,
    /// The interval from the flight and the window edges alone (its lower
    /// end bounds the shift the peer reads; its upper end, from the right
    /// edge never moving left, the one the endpoint means: the same when
    /// the ends agree).
    pub bounds: ShiftBounds,
}

/// What a [`ShiftInterval`] rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShiftBasis {
    /// The flight and the window edges alone.
    Bounds,
    /// The sender stopped at the right edge of one shift's window.
    SenderEdge,
    /// The Linux growth shift, inside the bounds, assuming the two ends
    /// agree about scaling.
    LinuxGrowth,
}

/// An interval of shifts from the flight and the window edges alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ShiftBounds {
    /// Smallest shift.
    pub min: u8,
    /// Largest shift.
    pub max: u8,
}

/// Shifts 0 to 14.
const SHIFTS: usize = MAX_WINDOW_SCALE as usize + 1;
/// Fewest new-data segments ending at one shift's right edge to name it.
const EDGE_HITS: u32 = 16;

/// What one receiver's ACKs and its peer's new data say about the shift
/// the peer reads the receiver's window fields with (a capture without
/// the handshake).
///
/// For each shift `s` the furthest right edge (ACK + field << s) the
/// receiver advertised so far: a sender never sends past the edge it
/// read, and every ACK it read passed the capture point before its data
/// did (from either side of the path), so new data ending beyond the
/// furthest edge of `s` rules `s` out (sound: it needs no assumption about
/// the receiver). A window-limited sender sends up to its edge in whole
/// segments, so its new data keeps ending within a segment below the edge
/// of the shift it reads (`sender_edge`): with the capture next to the
/// sender (or with the window fixed) that is exact; next to the receiver
/// the ACKs seen run ahead of what the sender knew and the hits scatter,
/// which gives no edge rather than a wrong one.
///
/// Next to the receiver, the sender's timestamp echoes say which ACKs it
/// had read: a pure ACK the sender will record the TSval of (its sequence
/// number is one the sender has acknowledged, so Linux's `ts_recent`
/// follows it) waits in `pending` until a data segment echoes its TSval or
/// a later one, and only then moves the edges. So new data is held to the
/// edges the sender could have known, from either side of the path; any
/// other ACK (with data, without timestamps, or beyond [`PENDING_ACKS`]
/// waiting) moves them at once, which can only weaken the bound.
///
/// Data within 65,535 bytes of the sender's first sequence number seen is
/// held to no edge: the handshake's window (never scaled, at most 65,535
/// bytes from ISN + 1) may have allowed it before the sender read any
/// later field.
///
/// It also counts the receiver's ACKs whose field is 65,535: a receiver
/// that does not scale caps its field there (Linux), one that scales
/// rarely advertises exactly that ([`unscaled_cap_evidence`]).
///
/// All of this holds only for ACKs the capture shows: a capture that drops
/// records (tcpdump's "packets dropped by kernel") loses ACKs with them,
/// and the sender's data then runs past edges it read from ACKs the
/// capture missed. Such a drop shows in the sender's data as a hole (new
/// data starting beyond the highest byte seen): while one is open
/// (`gap`), what new data rules out is held back ([`Gap::held_lo`]) and
/// counts no hits. A retransmission that fills the hole shows the loss
/// was the network's, not the capture's: the held bound stands. The
/// receiver's ACK passing the hole without one, once the sender has read
/// it, shows the capture missed those bytes (and may have missed ACKs
/// with them): the held bound is dropped. Seen in the lab: a 150 MB
/// download whose capture dropped a burst of records made the data pass
/// the edges of shift 8 for a receiver at shift 7.
#[derive(Debug, Clone, Default)]
pub(crate) struct EdgeEvidence {
    /// The receiver's pure ACKs (TSval, ACK, field) the sender has not yet
    /// been seen to read, oldest first.
    pending: std::collections::VecDeque<(u32, u32, u16)>,
    /// The receiver's ACKs seen, and those with a field of 65,535.
    acks: u32,
    acks_at_cap: u32,
    edge: [u32; SHIFTS],
    /// The window field of the ACK that set each furthest edge.
    edge_field: [u16; SHIFTS],
    seen: bool,
    hits: [u32; SHIFTS],
    /// Smallest and largest field behind each shift's hits.
    hit_fields: [(u16, u16); SHIFTS],
    /// The sender's largest segment.
    segment: u64,
    /// New-data segments checked against the edges.
    segments: u32,
    /// The receiver's window growth (`bdp::linux::WindowGrowth`).
    pub(crate) growth: bdp::linux::WindowGrowth,
    /// A hole in the sender's data is open.
    gap: Option<Gap>,
}

/// The holes open in the sender's data ([`EdgeEvidence`]).
#[derive(Debug, Clone, Copy)]
struct Gap {
    /// Where the data resumed after the newest hole.
    resume: u32,
    /// Lower bound on the shift from new data sent while it was open.
    held_lo: u8,
}

/// Most receiver ACKs waiting for the sender's echo ([`EdgeEvidence`]).
const PENDING_ACKS: usize = 64;

impl EdgeEvidence {
    /// An ACK of the receiver: with `wait_for` (its TSval) it moves the
    /// edges once the sender echoes that TSval, else now.
    pub(crate) fn receiver_ack(&mut self, ack: u32, field: u16, wait_for: Option<u32>) {
        self.acks = self.acks.saturating_add(1);
        if field == u16::MAX {
            self.acks_at_cap = self.acks_at_cap.saturating_add(1);
        }
        match wait_for {
            Some(tsval) => {
                if self.pending.len() == PENDING_ACKS {
                    if let Some((_, a, f)) = self.pending.pop_front() {
                        self.on_ack(a, f);
                    }
                }
                self.pending.push_back((tsval, ack, field));
            }
            None => {
                self.read_all();
                self.on_ack(ack, field);
            }
        }
    }

    /// The sender echoed `tsecr` (`None`: its data carries no echo): the
    /// ACKs it has read move the edges.
    pub(crate) fn sender_read(&mut self, tsecr: Option<u32>) {
        let Some(e) = tsecr else {
            return self.read_all();
        };
        while let Some(&(tsval, a, f)) = self.pending.front() {
            // TSvals wrap: compare as RFC 7323 does.
            if seq_lt(e, tsval) {
                break;
            }
            self.pending.pop_front();
            self.on_ack(a, f);
        }
    }

    fn read_all(&mut self) {
        while let Some((_, a, f)) = self.pending.pop_front() {
            self.on_ack(a, f);
        }
    }

    fn on_ack(&mut self, ack: u32, field: u16) {
        // The receiver got the hole's bytes, the capture did not show them.
        if self.gap.is_some_and(|g| !seq_lt(ack, g.resume)) {
            self.gap = None;
        }
        for (s, (e, f)) in self
            .edge
            .iter_mut()
            .zip(self.edge_field.iter_mut())
            .enumerate()
        {
            let edge = ack.wrapping_add(u32::from(field) << s);
            if !self.seen || seq_lt(*e, edge) {
                (*e, *f) = (edge, field);
            }
        }
        self.seen = true;
    }

    /// A data segment `seq..end` of the sender, whose highest byte sent
    /// before it was `snd_nxt`: opens a hole when it starts beyond that,
    /// and closes the open one when it retransmits the bytes just below
    /// where the data resumed. Returns the held bound a closed hole
    /// confirms.
    pub(crate) fn sender_data(&mut self, seq: u32, end: u32, snd_nxt: Option<u32>) -> u8 {
        let Some(nxt) = snd_nxt else {
            return 0;
        };
        if seq_lt(nxt, seq) {
            let held_lo = self.gap.map_or(0, |g| g.held_lo);
            self.gap = Some(Gap {
                resume: seq,
                held_lo,
            });
            return 0;
        }
        match self.gap {
            // Retransmissions fill holes lowest first: the newest one
            // last, with the bytes just below where the data resumed.
            Some(g) if !seq_lt(nxt, end) && seq_lt(seq, g.resume) && !seq_lt(end, g.resume) => {
                self.gap = None;
                g.held_lo
            }
            _ => 0,
        }
    }

    /// A lower bound on the shift: to be applied now, or (a hole open)
    /// held until the hole closes.
    pub(crate) fn rule_out(&mut self, lo: u8) -> u8 {
        match self.gap.as_mut() {
            Some(g) => {
                g.held_lo = g.held_lo.max(lo);
                0
            }
            None => lo,
        }
    }

    /// New data ending at `end` (segments up to `segment` bytes): the
    /// smallest shift whose furthest edge it does not pass (held back
    /// while a hole is open, see [`Self::rule_out`]).
    pub(crate) fn on_data(&mut self, end: u32, segment: u64) -> u8 {
        if !self.seen {
            return 0;
        }
        // A hole open: the edges may lag the ACKs the sender read.
        let holding = self.gap.is_some();
        if !holding {
            self.segments = self.segments.saturating_add(1);
            self.segment = self.segment.max(segment);
        }
        let mut lo = 0;
        for s in 0..SHIFTS {
            let e = self.edge[s];
            if seq_lt(e, end) {
                lo = s + 1;
            } else if !holding && u64::from(e.wrapping_sub(end)) < segment {
                let f = self.edge_field[s];
                self.hit_fields[s] = if self.hits[s] == 0 {
                    (f, f)
                } else {
                    (self.hit_fields[s].0.min(f), self.hit_fields[s].1.max(f))
                };
                self.hits[s] = self.hits[s].saturating_add(1);
            }
        }
        self.rule_out(lo.min(SHIFTS - 1) as u8)
    }

    /// The shift whose edge the new data kept stopping at: at least
    /// [`EDGE_HITS`] hits and a quarter of the segments, and no other shift
    /// with half as many; with `true` when the edge's size moved by two
    /// segments or more among the hits (the stops followed the window, not
    /// a flight the sender holds for another reason, as a send buffer's
    /// that happens to lie within a segment of one shift's edge).
    fn edge_shift(&self, lo: u8) -> Option<(u8, bool)> {
        let (best, n) = self
            .hits
            .iter()
            .enumerate()
            .skip(usize::from(lo))
            .max_by_key(|(_, n)| **n)?;
        let clear = self
            .hits
            .iter()
            .enumerate()
            .skip(usize::from(lo))
            .all(|(s, m)| s == best || m * 2 <= *n);
        let (fmin, fmax) = self.hit_fields[best];
        let followed = u64::from(fmax - fmin) << best >= 2 * self.segment;
        (*n >= EDGE_HITS && n * 4 >= self.segments && clear).then_some((best as u8, followed))
    }
}

/// What the capture says about the shift the peer reads the window fields
/// of side `me` with, and whether it shows the two ends disagree.
///
/// The bounds: the peer's new data past the furthest right edge of a shift
/// (and its flight above `me`'s largest field) rules it out from below;
/// `me`'s right edge never moving left and the 1 GiB largest window (RFC
/// 7323) bound it from above. Within them, the shift at whose edge the
/// sender's data kept stopping is the one it reads (`sender_edge`);
/// without one, a Linux receiver's growth shift is the one it means, and
/// the one the peer reads when the two ends agree (`linux_growth`). The
/// growth shift below the bounds (the sender read a larger window than the
/// receiver meant) or a sender edge at another shift is evidence that they
/// do not (returned as the second value).
pub(crate) fn infer_shift(
    me: &Side,
    who: Endpoint,
) -> (Option<ShiftInterval>, Option<MismatchEvidence>) {
    let Some(f) = me.max_window_field else {
        return (None, None);
    };
    let lo = me.infer_lo;
    // 65535 << 14 is the largest window: field << s stays within 2^30.
    let by_size = (0u8..=MAX_WINDOW_SCALE)
        .rev()
        .find(|s| u64::from(f) << s <= 1 << 30)
        .unwrap_or(0);
    let hi = me.infer_hi.map_or(by_size, |h| h.min(by_size));
    // Conflicting evidence (a receiver that shrank its window): keep the
    // flight's bound, which needs no assumption about the receiver.
    let hi = if hi < lo { by_size.max(lo) } else { hi };
    let growth = me.edges.as_ref().and_then(|e| e.growth.shift());
    let edge = me
        .edges
        .as_ref()
        .and_then(|e| e.edge_shift(lo))
        .filter(|(e, _)| *e <= hi);
    if lo == 0 && hi == MAX_WINDOW_SCALE && growth.is_none() && edge.is_none() {
        return (None, None);
    }
    let bounds = ShiftBounds { min: lo, max: hi };
    let interval = |min: u8, max: u8, basis: ShiftBasis, confidence: Confidence| ShiftInterval {
        min,
        max,
        linux_growth_shift: growth,
        sender_edge_shift: edge.map(|e| e.0),
        basis,
        confidence,
        bounds,
    };
    let cap = me
        .edges
        .as_deref()
        .and_then(|e| unscaled_cap_evidence(e, lo, who));
    let found = match (edge, growth) {
        (Some((e, true)), Some(g)) if e != g => (
            Some(interval(e, e, ShiftBasis::SenderEdge, Confidence::High)),
            Some(MismatchEvidence::SenderEdgeDiffers {
                who,
                edge: e,
                growth: g,
            }),
        ),
        // An edge that never moved and a growth shift that disagree:
        // nothing sure either way.
        (Some((e, false)), Some(g)) if e != g => (
            Some(interval(lo, hi, ShiftBasis::Bounds, Confidence::High)),
            None,
        ),
        (Some((e, followed)), _) => (
            Some(interval(
                e,
                e,
                ShiftBasis::SenderEdge,
                if followed {
                    Confidence::High
                } else {
                    Confidence::Medium
                },
            )),
            None,
        ),
        (None, Some(g)) if (lo..=hi).contains(&g) => (
            Some(interval(g, g, ShiftBasis::LinuxGrowth, Confidence::Medium)),
            None,
        ),
        (None, Some(g)) if g < lo => (
            Some(interval(lo, hi, ShiftBasis::Bounds, Confidence::High)),
            Some(MismatchEvidence::FlightBeyondGrowth { who, growth: g, lo }),
        ),
        _ => (
            Some(interval(lo, hi, ShiftBasis::Bounds, Confidence::High)),
            None,
        ),
    };
    match found {
        // The growth shift assumed the ends agree; the cap shows they do not.
        (Some(i), None) if cap.is_some() => (
            Some(if i.basis == ShiftBasis::LinuxGrowth {
                interval(lo, hi, ShiftBasis::Bounds, Confidence::High)
            } else {
                i
            }),
            cap,
        ),
        f => f,
    }
}

/// Fewest receiver ACKs at 65,535 for [`unscaled_cap_evidence`].
const CAP_ACKS: u32 = 16;

/// A receiver whose window fields sit at 65,535 (on at least half of its
/// ACKs, and [`CAP_ACKS`] of them) while the sender's data goes past
/// ACK + 65,535 (`lo`, the lower bound on the shift the sender reads, is 1
/// or more): the receiver caps its fields as one that does not scale does
/// (Linux advertises at most 65,535 bytes then), and the sender reads them
/// scaled. No handshake is needed: what window scaling removed from the
/// SYN-ACK on the way leaves behind, seen from either side. A receiver
/// that scales and sits at its largest window, 65,535 << s, would look the
/// same: Linux picks its shift so that its buffer never needs the largest
/// field, other stacks may not, hence `medium`.
fn unscaled_cap_evidence(e: &EdgeEvidence, lo: u8, who: Endpoint) -> Option<MismatchEvidence> {
    (lo >= 1 && e.acks_at_cap >= CAP_ACKS && e.acks_at_cap * 2 >= e.acks).then_some(
        MismatchEvidence::UnscaledCap {
            who,
            at_cap: e.acks_at_cap,
            acks: e.acks,
            lo,
        },
    )
}
#[cfg(test)]
mod edge_tests {
    use super::EdgeEvidence;

    /// The receiver at ACK 1000 with field 100: shift 0's edge is 1100,
    /// shift 1's 1200, shift 2's 1400.
    fn evidence() -> EdgeEvidence {
        let mut e = EdgeEvidence::default();
        e.receiver_ack(1000, 100, None);
        e
    }

    #[test]
    fn data_past_an_edge_with_no_hole_rules_the_shift_out_at_once() {
        let mut e = evidence();
        assert_eq!(e.sender_data(1000, 1300, Some(1000)), 0);
        assert_eq!(e.on_data(1300, 300), 2, "past shift 1's edge at 1200");
    }

    #[test]
    fn a_hole_the_network_filled_confirms_the_held_bound() {
        let mut e = evidence();
        // 1000..1100 missing: the data resumes at 1100.
        assert_eq!(e.sender_data(1100, 1300, Some(1000)), 0);
        assert_eq!(e.on_data(1300, 200), 0, "held while the hole is open");
        // A segment within what was seen closes nothing.
        assert_eq!(e.sender_data(1200, 1300, Some(1300)), 0);
        // The retransmission up to where the data resumed: shift 1 is out.
        assert_eq!(e.sender_data(1000, 1100, Some(1300)), 2);
        assert_eq!(e.on_data(1300, 200), 2, "no hole open: applied at once");
    }

    #[test]
    fn a_hole_the_receiver_acknowledged_unseen_drops_the_held_bound() {
        let mut e = evidence();
        assert_eq!(e.sender_data(1100, 1300, Some(1000)), 0);
        assert_eq!(e.on_data(1300, 200), 0);
        // The receiver has the hole's bytes: the capture missed them, and
        // may have missed the ACKs that allowed the data.
        e.receiver_ack(1300, 100, None);
        assert_eq!(e.sender_data(1000, 1100, Some(1300)), 0, "nothing held");
        assert_eq!(e.on_data(1350, 200), 0, "within every edge of ACK 1300");
        assert_eq!(e.on_data(1450, 200), 1, "past shift 0's edge at 1400");
    }
}
