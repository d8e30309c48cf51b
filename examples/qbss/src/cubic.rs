//! CUBIC congestion control as Linux runs it (`net/ipv4/tcp_cubic.c`), counted in
//! whole packets like the rest of [`super::tcp`].
//!
//! The parameters are Linux's defaults (module parameters of `tcp_cubic`):
//!
//! * **Multiplicative decrease**: on loss `ssthresh = max(cwnd x 717/1024, 2)`
//!   (beta = 0.7, RFC 9438 section 4.6); recovery ends at `ssthresh`.
//! * **Fast convergence** (RFC 9438 section 4.7): a loss below the previous maximum
//!   remembers `W_max = cwnd x (1024 + 717) / 2048` instead of `cwnd`, so a flow that
//!   keeps losing below its old peak gives room to newcomers.
//! * **Window growth** in congestion avoidance: `W(t) = W_max + C (t - K)^3` with
//!   `C = 410/1024` (Linux's `bic_scale` 41 x 10 over 1024, i.e. 0.4) and
//!   `K = cbrt((W_max - cwnd) / C)`, where `t` is the time since the epoch began (the
//!   first ACK in congestion avoidance after a reduction) plus the flow's minimum RTT,
//!   as Linux adds `delay_min`. Each ACK sets the packets to be acknowledged per one
//!   packet of growth, `cnt = cwnd / (W(t) - cwnd)` (`100 x cwnd` when the target is
//!   not above `cwnd`), at most 20 (5% per round trip) while no loss has set `W_max`,
//!   and at least 2 (the window grows at most 1.5x per round trip).
//! * **TCP-friendly region** (RFC 9438 section 4.3, as Linux computes it): a Reno
//!   window estimate grows by one packet every `cwnd x 15 / 8` packets acknowledged
//!   (15 = Linux's `beta_scale`, `8 (1024 + 717) / 3 / (1024 - 717)` in integers);
//!   while it is above `cwnd`, `cnt` is at most `cwnd / (estimate - cwnd)`.
//! * **HyStart** (Linux's `hystart = 1`, both detectors, low window 16): slow start ends
//!   (`ssthresh = cwnd`) when, in one round trip (from the ACK that passes the previous
//!   round's last packet), ACKs arriving at most 2 ms apart span more than half of
//!   `delay_min` plus Linux's ACK-delay allowance (`min(1 ms, 4 x 64 KB / pacing rate)`,
//!   the pacing rate being `2 x cwnd x MSS / srtt` in slow start; the halving applies
//!   because a CUBIC socket without the `fq` qdisc is not paced), or when the smallest
//!   of the round's RTT samples after the first 8 exceeds `delay_min` by more than
//!   `delay_min / 8` clamped to 4..16 ms. RTT samples in the first second of an epoch
//!   after a reduction do not update `delay_min`, as in Linux.
//! * **Timeout**: `ssthresh` as on a loss, then every CUBIC variable is reset
//!   (`W_max = 0`) and HyStart is armed again, as Linux's `TCP_CA_Loss` state does.
//!
//! Simplifications, each below the resolution of one-second figures: Linux
//! recomputes `cnt` at most once per jiffy and caches it while `cwnd` is unchanged for
//! `HZ/32`; this model recomputes it on every ACK, with `t` in nanoseconds instead of
//! jiffies. Proportional rate reduction during recovery is not modelled (the window is
//! `ssthresh` at once, as for Reno in [`super::tcp`]).

use super::time::{Nanos, NS_PER_S};

/// CUBIC's beta, scaled by 1024 (Linux `beta = 717`).
pub const BETA_1024: u64 = 717;
/// CUBIC's C in packets per second cubed (Linux: `bic_scale` 41 x 10 / 1024).
pub const C: f64 = 410.0 / 1024.0;
/// Linux's `beta_scale`: the Reno-estimate growth constant, `8 (1024 + beta) / 3 / (1024 - beta)`.
pub const BETA_SCALE: u64 = 8 * (1024 + BETA_1024) / 3 / (1024 - BETA_1024);
/// HyStart starts watching at this window (Linux `hystart_low_window`).
pub const HYSTART_LOW_WINDOW: u32 = 16;
/// Largest gap between ACKs of one train (Linux `hystart_ack_delta_us`).
pub const HYSTART_ACK_DELTA: Nanos = 2_000_000;
/// RTT samples a round needs before the delay detector may fire (`HYSTART_MIN_SAMPLES`).
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// Bounds of the delay detector's threshold (`hystart_delay_min`, `hystart_delay_max`).
pub const HYSTART_DELAY_MIN: Nanos = 4_000_000;
/// See [`HYSTART_DELAY_MIN`].
pub const HYSTART_DELAY_MAX: Nanos = 16_000_000;
/// The GSO size Linux's ACK-delay allowance is computed from (`GSO_MAX_SIZE`).
pub const GSO_MAX_SIZE: u64 = 65_536;

/// The state CUBIC keeps per connection (Linux's `struct bictcp`).
#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// Packets acknowledged per one packet of growth.
    cnt: u32,
    /// `W_max`: the window before the last reduction (0: none yet).
    last_max_cwnd: u32,
    /// The plateau of the current epoch.
    origin: u32,
    /// `K` in seconds.
    k_s: f64,
    /// Smallest RTT seen (0: none).
    delay_min: Nanos,
    /// Start of the epoch (`None`: the next congestion-avoidance ACK starts one).
    epoch_start: Option<Nanos>,
    /// Packets acknowledged in this epoch, for the Reno estimate.
    ack_cnt: u64,
    /// The Reno estimate of the window.
    tcp_cwnd: u32,
    // HyStart.
    found: bool,
    round_start: Nanos,
    last_ack: Nanos,
    end_seq: u32,
    curr_rtt: Nanos,
    sample_cnt: u32,
}

impl Cubic {
    /// A fresh connection's state (HyStart armed; `snd_nxt` is the first sequence number).
    pub fn new(now: Nanos, snd_nxt: u32) -> Self {
        let mut c = Cubic::default();
        c.hystart_reset(now, snd_nxt);
        c
    }

    fn hystart_reset(&mut self, now: Nanos, snd_nxt: u32) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = Nanos::MAX;
        self.sample_cnt = 0;
    }

    /// The window before the last reduction (`W_max`; 0 before any).
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// Whether HyStart has ended slow start in this slow-start phase.
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    /// Linux's `pkts_acked`: an ACK of new data with RTT sample `rtt` arrived at `now`.
    /// In slow start, HyStart may lower `ssthresh` to `cwnd`.
    #[allow(clippy::too_many_arguments)]
    pub fn on_rtt_sample(
        &mut self,
        now: Nanos,
        rtt: Nanos,
        cwnd: u32,
        ssthresh: &mut u32,
        snd_una: u32,
        snd_nxt: u32,
        mss: u32,
        srtt: Nanos,
    ) {
        let rtt = rtt.max(1000);
        if self
            .epoch_start
            .is_some_and(|e| now.saturating_sub(e) < NS_PER_S)
        {
            return;
        }
        if self.delay_min == 0 || rtt < self.delay_min {
            self.delay_min = rtt;
        }
        if self.found || cwnd >= *ssthresh {
            return;
        }
        if snd_una > self.end_seq {
            self.hystart_reset(now, snd_nxt);
        }
        if cwnd < HYSTART_LOW_WINDOW {
            return;
        }
        // ACK train.
        if now.saturating_sub(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            let threshold = (self.delay_min + self.ack_delay(cwnd, mss, srtt)) / 2;
            if now.saturating_sub(self.round_start) > threshold {
                self.found = true;
                *ssthresh = cwnd;
            }
        }
        // Delay increase.
        self.curr_rtt = self.curr_rtt.min(rtt);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let slack = (self.delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
            if self.curr_rtt > self.delay_min + slack {
                self.found = true;
                *ssthresh = cwnd;
            }
        }
    }

    /// Linux's `hystart_ack_delay`: `min(1 ms, 4 x GSO_MAX_SIZE / pacing rate)`, the
    /// pacing rate being twice `cwnd x mss / srtt` in slow start.
    fn ack_delay(&self, cwnd: u32, mss: u32, srtt: Nanos) -> Nanos {
        let rate = 2.0 * f64::from(cwnd) * f64::from(mss) / (srtt.max(1) as f64 / 1e9);
        if rate <= 0.0 {
            return 0;
        }
        let d = (4 * GSO_MAX_SIZE) as f64 / rate * 1e9;
        (d as Nanos).min(1_000_000)
    }

    /// Linux's `ssthresh` hook on a loss at window `cwnd`: remembers `W_max` (with fast
    /// convergence), ends the epoch and returns the new `ssthresh`.
    pub fn on_loss(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            (u64::from(cwnd) * (1024 + BETA_1024) / 2048) as u32
        } else {
            cwnd
        };
        ((u64::from(cwnd) * BETA_1024 / 1024) as u32).max(2)
    }

    /// A retransmission timeout (after [`on_loss`](Self::on_loss) gave `ssthresh`):
    /// everything is forgotten, HyStart is armed again.
    pub fn on_timeout(&mut self, now: Nanos, snd_nxt: u32) {
        *self = Cubic::new(now, snd_nxt);
    }

    /// Congestion avoidance: `acked` packets were acknowledged at `now` with the window
    /// at `cwnd`; returns `cnt`, the packets to acknowledge per one packet of growth.
    pub fn update(&mut self, now: Nanos, cwnd: u32, acked: u32) -> u32 {
        let cwnd = cwnd.max(1);
        self.ack_cnt += u64::from(acked);
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = u64::from(acked);
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k_s = 0.0;
                    self.origin = cwnd;
                } else {
                    self.k_s = (f64::from(self.last_max_cwnd - cwnd) / C).cbrt();
                    self.origin = self.last_max_cwnd;
                }
                now
            }
        };
        let t = (now - epoch + self.delay_min) as f64 / 1e9;
        let target = f64::from(self.origin) + C * (t - self.k_s).powi(3);
        let target = target.max(0.0).floor() as u64;
        let mut cnt = if target > u64::from(cwnd) {
            (u64::from(cwnd) / (target - u64::from(cwnd))) as u32
        } else {
            100 * cwnd
        };
        if self.last_max_cwnd == 0 && cnt > 20 {
            cnt = 20;
        }
        // TCP-friendly region: the Reno estimate.
        let delta = (u64::from(cwnd) * BETA_SCALE) >> 3;
        if delta > 0 {
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            cnt = cnt.min(max_cnt);
        }
        self.cnt = cnt.max(2);
        self.cnt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_constants() {
        // tcp_cubic.c: beta 717 (0.7 x 1024), beta_scale 15, bic_scale 41 (C = 0.4).
        assert_eq!(BETA_SCALE, 15);
        assert!((C - 0.4).abs() < 0.001);
    }

    #[test]
    fn loss_cuts_to_0_7_and_fast_convergence_lowers_w_max() {
        let mut c = Cubic::new(0, 0);
        assert_eq!(c.on_loss(1000), 700);
        assert_eq!(c.w_max(), 1000);
        // A second loss below W_max: W_max = 800 x (1 + 0.7) / 2 = 680.
        assert_eq!(c.on_loss(800), 560);
        assert_eq!(c.w_max(), 680);
    }

    #[test]
    fn window_returns_to_w_max_after_k_seconds() {
        // RFC 9438 eq. 2: K = cbrt(W_max (1 - beta) / C); from 700 after a loss at 1000,
        // K = cbrt(300 / 0.4) = 9.09 s. Grow per the returned cnt with one ACK per
        // packet, 100 ms RTT, and check the window is near W_max after K.
        let mut c = Cubic::new(0, 0);
        let mut cwnd = c.on_loss(1000);
        let rtt: Nanos = 100_000_000;
        let mut ssthresh = cwnd;
        c.on_rtt_sample(0, rtt, cwnd, &mut ssthresh, 0, 0, 1448, rtt);
        let mut now = 0;
        let mut cnt_acc = 0u32;
        while now < 9_090_000_000 - rtt {
            // One round trip: cwnd ACKs spread over the RTT.
            let n = cwnd;
            for i in 0..n {
                let t = now + rtt * u64::from(i) / u64::from(n);
                let cnt = c.update(t, cwnd, 1);
                cnt_acc += 1;
                if cnt_acc >= cnt {
                    cnt_acc = 0;
                    cwnd += 1;
                }
            }
            now += rtt;
        }
        assert!((960..=1000).contains(&cwnd), "{cwnd}");
        // Concave then convex: the plateau is flat, so the window is still near
        // W_max one more second later.
        assert!(c.update(now + NS_PER_S, cwnd, 1) > 20);
    }

    #[test]
    fn hystart_ack_train_ends_slow_start() {
        // 100 ms RTT, ACKs 100 us apart: a train of more than (100 + 1) / 2 ms ends slow
        // start, which needs a window of more than about 505 packets.
        let mut c = Cubic::new(0, 0);
        let rtt: Nanos = 100_000_000;
        let mut ssthresh = u32::MAX;
        let cwnd = 600;
        let mut ended_at = None;
        for i in 0..cwnd {
            let now = rtt + u64::from(i) * 100_000;
            c.on_rtt_sample(now, rtt, cwnd, &mut ssthresh, i + 1, cwnd, 1448, rtt);
            if c.hystart_found() && ended_at.is_none() {
                ended_at = Some(i);
            }
        }
        let i = ended_at.expect("the train ends slow start");
        assert!((500..=512).contains(&i), "{i}");
        assert_eq!(ssthresh, cwnd);
    }

    #[test]
    fn hystart_delay_increase_ends_slow_start() {
        // RTT 40 ms, then a round whose samples are all 46 ms (> 40 + max(5, 4) ms).
        let mut c = Cubic::new(0, 0);
        let mut ssthresh = u32::MAX;
        let base: Nanos = 40_000_000;
        // ACKs 3 ms apart: never a train.
        for i in 0..20u32 {
            c.on_rtt_sample(
                u64::from(i) * 3_000_000,
                base,
                20,
                &mut ssthresh,
                i + 1,
                40,
                1448,
                base,
            );
        }
        assert!(!c.hystart_found());
        for i in 0..20u32 {
            let now = 200_000_000 + u64::from(i) * 3_000_000;
            c.on_rtt_sample(now, 46_000_000, 20, &mut ssthresh, 41 + i, 80, 1448, base);
        }
        assert!(c.hystart_found());
        assert_eq!(ssthresh, 20);
    }
}
