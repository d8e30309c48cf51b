//! A direction's samples thinned to a fixed budget as they arrive, each
//! kept point carrying how long the sender spent in each phase since the
//! previous kept point.

use crate::analysis::limits::SenderPhase;
use crate::analysis::series::SeriesSample;

use super::MAX_PLOT_POINTS;

/// Phases the plot tells apart, as indices of [`Point::phase_s`].
pub(super) const RWND: usize = 0;
pub(super) const IDLE: usize = 1;
pub(super) const NETWORK: usize = 2;
pub(super) const SENDER: usize = 3;
pub(super) const BUSY: usize = 4;
/// How many phases the plot tells apart.
pub(super) const PHASES: usize = 5;

fn phase_index(limit: Option<SenderPhase>) -> Option<usize> {
    Some(match limit? {
        SenderPhase::ReceiveWindow => RWND,
        SenderPhase::Idle => IDLE,
        SenderPhase::Network => NETWORK,
        SenderPhase::Sender => SENDER,
        SenderPhase::Busy => BUSY,
    })
}

/// One kept point of a direction.
#[derive(Debug, Clone, Copy)]
pub(super) struct Point {
    pub(super) t: f64,
    pub(super) seq_end: u64,
    pub(super) ack: u64,
    pub(super) window: Option<u64>,
    pub(super) window_read: Option<u64>,
    pub(super) in_flight: u64,
    pub(super) throughput_bps: Option<u64>,
    /// Seconds spent in each phase since the previous kept point.
    pub(super) phase_s: [f64; PHASES],
}

impl Point {
    /// The phase that covered most of the interval before this point.
    pub(super) fn phase(&self) -> Option<usize> {
        let (i, v) =
            self.phase_s
                .iter()
                .enumerate()
                .fold((0, 0.0), |b, (i, v)| if *v > b.1 { (i, *v) } else { b });
        (v > 0.0).then_some(i)
    }
}

/// A direction's points, thinned to a fixed budget as they arrive.
#[derive(Debug, Default)]
pub(super) struct Thinned {
    points: Vec<Point>,
    /// Keep one sample in `stride`.
    stride: u64,
    /// Samples seen.
    pub(super) seen: u64,
    /// Phase time since the last kept point.
    pending: [f64; PHASES],
    last_t: Option<f64>,
    /// The previous sample's phase: the one from it to this sample.
    last_limit: Option<SenderPhase>,
    /// The latest sample, kept at the end if thinning skipped it.
    last: Option<Point>,
}

impl Thinned {
    pub(super) const CAP: usize = MAX_PLOT_POINTS / 2;

    pub(super) fn push(&mut self, s: &SeriesSample) {
        let dt = self.last_t.map_or(0.0, |t| (s.time_s - t).max(0.0));
        self.last_t = Some(s.time_s);
        // A sample's phase runs from it to the next one.
        let before = std::mem::replace(&mut self.last_limit, s.limit);
        if let Some(i) = phase_index(before) {
            self.pending[i] += dt;
        }
        let p = Point {
            t: s.time_s,
            seq_end: s.seq_end,
            ack: s.ack,
            window: s.window_bytes,
            window_read: s.window_read_bytes,
            in_flight: s.in_flight_bytes,
            throughput_bps: s.throughput_bps,
            phase_s: self.pending,
        };
        self.stride = self.stride.max(1);
        if self.seen.is_multiple_of(self.stride) {
            self.points.push(p);
            self.pending = [0.0; PHASES];
            self.last = None;
        } else {
            self.last = Some(p);
        }
        self.seen += 1;
        if self.points.len() >= Self::CAP {
            self.halve();
        }
    }

    /// Keeps every second point, the first included; a dropped point's
    /// phase time goes to the next kept one (or the pending time); from
    /// then on, one sample in twice as many is kept.
    fn halve(&mut self) {
        let old = std::mem::take(&mut self.points);
        let mut carry = [0.0; PHASES];
        let mut dropped_last = None;
        for (i, mut p) in old.into_iter().enumerate() {
            for (a, b) in p.phase_s.iter_mut().zip(carry) {
                *a += b;
            }
            if i % 2 == 0 {
                carry = [0.0; PHASES];
                self.points.push(p);
            } else {
                carry = p.phase_s;
                dropped_last = Some(p);
            }
        }
        for (a, b) in self.pending.iter_mut().zip(carry) {
            *a += b;
        }
        // The latest sample stays the plot's end.
        if self.last.is_none() {
            if let Some(mut p) = dropped_last.filter(|p| Some(p.t) == self.last_t) {
                p.phase_s = self.pending;
                self.last = Some(p);
            }
        }
        self.stride *= 2;
    }

    /// The kept points, the latest sample included.
    pub(super) fn finish(&self) -> Vec<Point> {
        let mut v = self.points.clone();
        if let Some(p) = self.last {
            v.push(p);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::Direction;

    fn sample(i: u64) -> SeriesSample {
        SeriesSample {
            connection: 1,
            direction: Direction::ServerToClient,
            time_s: i as f64 * 1e-3,
            seq_end: i * 1448,
            ack: i * 1000,
            window_bytes: Some(65_535),
            window_read_bytes: Some(65_535),
            in_flight_bytes: i * 448,
            throughput_bps: Some(i),
            rtt_s: Some(0.01),
            rtt_estimate_s: Some(0.01),
            round: 0,
            // One millisecond in three limited by the window, the rest busy.
            limit: Some(if i.is_multiple_of(3) {
                SenderPhase::ReceiveWindow
            } else {
                SenderPhase::Busy
            }),
        }
    }

    #[test]
    fn thinning_keeps_the_budget_the_ends_and_the_phase_time() {
        for n in [
            1u64,
            5,
            Thinned::CAP as u64 - 1,
            3 * Thinned::CAP as u64 + 17,
            250_000,
        ] {
            let mut t = Thinned::default();
            for i in 0..n {
                t.push(&sample(i));
            }
            let pts = t.finish();
            assert!(pts.len() <= Thinned::CAP + 1, "{n}: {} points", pts.len());
            assert!(
                n < 2 || pts.len() >= (Thinned::CAP / 2).min(n as usize),
                "{n}: {}",
                pts.len()
            );
            assert_eq!(pts[0].t, 0.0, "{n}: first sample kept");
            let last = (n - 1) as f64 * 1e-3;
            assert_eq!(pts.last().unwrap().t, last, "{n}: last sample kept");
            assert!(pts.windows(2).all(|w| w[0].t < w[1].t), "{n}: in order");
            // Every interval's phase time is carried by exactly one kept point.
            let total: [f64; PHASES] = pts.iter().fold([0.0; PHASES], |mut a, p| {
                for (x, y) in a.iter_mut().zip(p.phase_s) {
                    *x += y;
                }
                a
            });
            // Sample i's phase covers the millisecond from it to sample i + 1.
            let rwnd = (0..n - 1).filter(|i| i % 3 == 0).count() as f64 * 1e-3;
            let busy = (0..n - 1).filter(|i| i % 3 != 0).count() as f64 * 1e-3;
            assert!((total[RWND] - rwnd).abs() < 1e-6, "{n}: {total:?}");
            assert!((total[BUSY] - busy).abs() < 1e-6, "{n}: {total:?}");
            assert_eq!(total[IDLE], 0.0);
        }
    }
}
