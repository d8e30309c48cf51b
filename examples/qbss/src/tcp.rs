//! A TCP bulk sender and its receiver, counted in whole packets.
//!
//! Two congestion controls, chosen per stream ([`Cc`]): `reno` (below: NewReno with
//! SACK, the RFC 5681 window) and `cubic` (Linux's CUBIC with HyStart, the window
//! growth and reduction of [`super::cubic`], which explains it; loss recovery, the
//! timer and the receiver are the same for both). BBR is not modelled: its rate is set
//! by its own bandwidth and RTT probes and pacing, which a window model like this one
//! cannot reproduce faithfully.
//!
//! * **Window growth** (reno): slow start from an initial window of [`INITIAL_WINDOW`] packets
//!   (RFC 6928), one packet per packet acknowledged below `ssthresh`, then one packet per
//!   window (AIMD congestion avoidance, RFC 5681).
//! * **Loss recovery**: SACK-based, after RFC 6675, the way Reno-family stacks with SACK
//!   recover. Each ACK carries the cumulative next-expected sequence number and, when the
//!   packet that triggered it arrived above a hole, that packet as its first SACK block
//!   (RFC 2018). The sender keeps a scoreboard of SACKed packets. Three duplicate ACKs
//!   start recovery: `ssthresh = cwnd = max(flight / 2, 2)` and `recover = snd_nxt - 1`
//!   (NewReno's guard, RFC 6582: one reduction per window of data). While in recovery the
//!   sender keeps `pipe` (packets it believes in the network: those sent above the highest
//!   SACKed one, plus retransmissions not yet SACKed or acknowledged) below `cwnd`, and
//!   sends the lowest un-SACKed hole below the highest SACKed packet first, then new data.
//!   Packets of one stream stay in one FIFO queue and are never reordered, so every hole
//!   below a SACKed packet is a loss. An ACK beyond `recover` ends recovery at `ssthresh`.
//! * **Lost retransmissions**: a retransmission still neither SACKed nor acknowledged
//!   `srtt x 5/4` after it was sent is taken as lost and sent again (the time-based
//!   detection of RACK, RFC 8985, with a reordering window of `srtt / 4`; Linux finds
//!   lost retransmissions this way instead of waiting for the retransmission timer).
//! * **Timeout**: RFC 6298 estimator with Linux's floor (`srtt + max(4 rttvar, 200 ms)`,
//!   60 s maximum, doubled on each back-off); on expiry the window drops to one packet and sending resumes from
//!   the first unacknowledged packet, skipping what the scoreboard shows as received.
//! * **RTT samples**: the receiver echoes the timestamp (RFC 7323) of the last packet that
//!   advanced its cumulative ACK, and the sender samples on every ACK of new data, so a
//!   sample never spans a repaired hole.
//!
//! The receiver acknowledges every packet (no delayed ACKs) and remembers out-of-order
//! packets in a bitmap the size of the receive window, allocated once. Losses come only
//! from the router (tail drops, a weight-0 queue, the VC policer); ACKs travel back after
//! the stream's base RTT and are never lost, so they clock the sender exactly as the
//! bottleneck delivers.

use super::cubic::Cubic;
use super::packet::Packet;
use super::time::{Nanos, NS_PER_S};

/// A TCP stream's congestion control.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cc {
    /// NewReno with SACK: halve on loss, one packet per round trip.
    Reno,
    /// Linux's CUBIC with HyStart ([`super::cubic`]); Linux's default.
    #[default]
    Cubic,
}

impl Cc {
    /// The name Linux gives it (`net.ipv4.tcp_congestion_control`, `TCP_CONGESTION`).
    pub fn name(self) -> &'static str {
        match self {
            Cc::Reno => "reno",
            Cc::Cubic => "cubic",
        }
    }
}

/// TCP and IP header bytes of a data packet with the timestamp option (20 + 20 + 12).
pub const HEADER_BYTES: u32 = 52;

/// Initial congestion window in packets (RFC 6928).
pub const INITIAL_WINDOW: u32 = 10;
/// Smallest retransmission timeout (Linux `TCP_RTO_MIN`).
pub const RTO_MIN: Nanos = 200_000_000;
/// Largest retransmission timeout (RFC 6298 allows a 60 s cap).
pub const RTO_MAX: Nanos = 60 * NS_PER_S;
/// Retransmission timeout before the first RTT sample (RFC 6298).
pub const RTO_INITIAL: Nanos = NS_PER_S;
/// Duplicate ACKs that start loss recovery (RFC 5681 / RFC 6675 DupThresh).
pub const DUPACK_THRESHOLD: u32 = 3;

/// One bit per sequence number over a window of consecutive sequence numbers, as a ring.
#[derive(Clone, Debug)]
struct SeqBits {
    words: Vec<u64>,
    size: u32,
}

impl SeqBits {
    fn new(size: u32) -> Self {
        SeqBits {
            words: vec![0; (size as usize).div_ceil(64)],
            size,
        }
    }

    #[inline]
    fn at(&self, seq: u32) -> (usize, u64) {
        let i = (seq % self.size) as usize;
        (i / 64, 1u64 << (i % 64))
    }

    #[inline]
    fn get(&self, seq: u32) -> bool {
        let (w, b) = self.at(seq);
        self.words[w] & b != 0
    }

    /// Sets the bit; returns whether it was clear.
    #[inline]
    fn set(&mut self, seq: u32) -> bool {
        let (w, b) = self.at(seq);
        let was_clear = self.words[w] & b == 0;
        self.words[w] |= b;
        was_clear
    }

    /// Clears the bit; returns whether it was set.
    #[inline]
    fn clear(&mut self, seq: u32) -> bool {
        let (w, b) = self.at(seq);
        let was_set = self.words[w] & b != 0;
        self.words[w] &= !b;
        was_set
    }

    fn clear_all(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }
}

/// What the receiver sends back for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    /// Cumulative ACK: the next sequence number expected.
    pub ack: u32,
    /// Echoed timestamp (TSecr).
    pub echo: u32,
    /// First SACK block: the packet that triggered this ACK, if it is above `ack`.
    pub sack: Option<u32>,
}

/// One TCP connection: sender state, receiver state and the counters a report needs.
#[derive(Clone, Debug)]
pub struct TcpFlow {
    len: u32,
    ds: u8,
    max_window: u32,
    stop: Nanos,
    cc: Cc,
    cubic: Cubic,
    // Sender.
    snd_una: u32,
    snd_nxt: u32,
    snd_max: u32,
    cwnd: u32,
    cwnd_cnt: u32,
    ssthresh: u32,
    dupacks: u32,
    in_recovery: bool,
    recover: Option<u32>,
    sacked: SeqBits,
    sacked_count: u32,
    high_sacked: Option<u32>,
    retx: SeqBits,
    retx_count: u32,
    rexmit_next: u32,
    /// Retransmissions in the order sent, with their send times (for RACK's check).
    retx_sent: std::collections::VecDeque<(u32, Nanos)>,
    srtt: Option<Nanos>,
    rttvar: Nanos,
    rto: Nanos,
    /// When the retransmission timer expires (`None`: not armed).
    pub rto_deadline: Option<Nanos>,
    // Receiver.
    rcv_nxt: u32,
    ts_recent: u32,
    ooo: SeqBits,
    /// Retransmissions sent (recovery and timeout).
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
}

impl TcpFlow {
    /// A flow of `len`-byte packets marked `ds`, with a receive window of `max_window`
    /// packets (at least 2), sending until `stop` under congestion control `cc`.
    pub fn new(len: u32, ds: u8, max_window: u32, stop: Nanos, cc: Cc) -> Self {
        let max_window = max_window.max(2);
        TcpFlow {
            len,
            ds,
            max_window,
            stop,
            cc,
            cubic: Cubic::new(0, 0),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: INITIAL_WINDOW.min(max_window),
            cwnd_cnt: 0,
            ssthresh: max_window,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            sacked: SeqBits::new(max_window),
            sacked_count: 0,
            high_sacked: None,
            retx: SeqBits::new(max_window),
            retx_count: 0,
            rexmit_next: 0,
            retx_sent: std::collections::VecDeque::new(),
            srtt: None,
            rttvar: 0,
            rto: RTO_INITIAL,
            rto_deadline: None,
            rcv_nxt: 0,
            ts_recent: 0,
            ooo: SeqBits::new(max_window),
            retransmits: 0,
            timeouts: 0,
        }
    }

    /// The congestion window in packets.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }

    /// The receiver's next expected sequence number: packets `0..rcv_nxt()` have been
    /// delivered in order to the application.
    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }

    /// The slow-start threshold in packets.
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    /// The congestion control.
    pub fn cc(&self) -> Cc {
        self.cc
    }

    /// Whether the flow is in loss recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn flight(&self) -> u32 {
        self.snd_nxt - self.snd_una
    }

    /// RFC 6675 `pipe`: packets sent above the highest SACKed one, plus retransmissions
    /// still out. Every un-SACKed packet below the highest SACKed one is lost (no reordering).
    fn pipe(&self) -> u32 {
        let above = match self.high_sacked {
            Some(h) => self.snd_nxt.saturating_sub(h + 1),
            None => self.flight(),
        };
        above + self.retx_count
    }

    /// The lowest hole below the highest SACKed packet not yet retransmitted.
    fn next_hole(&mut self) -> Option<u32> {
        let hi = self.high_sacked?;
        let mut s = self.rexmit_next.max(self.snd_una);
        while s < hi && (self.sacked.get(s) || self.retx.get(s)) {
            s += 1;
        }
        self.rexmit_next = s;
        (s < hi).then_some(s)
    }

    fn room_for_new_data(&self) -> bool {
        self.snd_nxt - self.snd_una < self.max_window && self.snd_nxt < u32::MAX
    }

    /// Whether the sender has something it may send at `now`.
    pub fn can_send(&mut self, now: Nanos) -> bool {
        if now >= self.stop {
            return false;
        }
        if self.in_recovery {
            self.pipe() < self.cwnd && (self.next_hole().is_some() || self.room_for_new_data())
        } else {
            self.flight() < self.cwnd && self.room_for_new_data()
        }
    }

    /// Takes the next packet to send at `now` (call only when [`can_send`](Self::can_send)).
    pub fn send(&mut self, now: Nanos, stream: u16) -> Packet {
        let hole = if self.in_recovery {
            self.next_hole()
        } else {
            None
        };
        let seq = match hole {
            Some(h) => {
                self.retx.set(h);
                self.retx_count += 1;
                self.rexmit_next = h + 1;
                self.retx_sent.push_back((h, now));
                self.retransmits += 1;
                h
            }
            None => {
                // After a timeout, skip what the receiver is known to hold.
                while self.snd_nxt < self.snd_max && self.sacked.get(self.snd_nxt) {
                    self.snd_nxt += 1;
                }
                let s = self.snd_nxt;
                self.snd_nxt += 1;
                if s < self.snd_max {
                    self.retransmits += 1;
                } else {
                    self.snd_max = self.snd_nxt;
                }
                s
            }
        };
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now.saturating_add(self.rto));
        }
        Packet {
            seq,
            len: self.len,
            stream,
            ds: self.ds,
            queue: 0,
            ts_us: ts_us(now),
        }
    }

    /// The receiver gets packet `seq` stamped `ts`; returns whether it carried new data
    /// and the ACK to send back.
    pub fn receive(&mut self, seq: u32, ts: u32) -> (bool, Ack) {
        let w = self.max_window;
        if seq < self.rcv_nxt || seq - self.rcv_nxt >= w {
            // A duplicate (or, defensively, beyond the window the sender respects).
            return (false, self.ack(None));
        }
        if seq == self.rcv_nxt {
            self.ts_recent = ts;
            self.rcv_nxt += 1;
            while self.ooo.clear(self.rcv_nxt) {
                self.rcv_nxt += 1;
            }
            (true, self.ack(None))
        } else {
            let new = self.ooo.set(seq);
            (new, self.ack(Some(seq)))
        }
    }

    fn ack(&self, sack: Option<u32>) -> Ack {
        Ack {
            ack: self.rcv_nxt,
            echo: self.ts_recent,
            sack,
        }
    }

    /// The sender gets `ack` at `now`.
    pub fn on_ack(&mut self, now: Nanos, a: Ack) {
        if let Some(s) = a.sack {
            if s >= a.ack.max(self.snd_una) && s < self.snd_max && self.sacked.set(s) {
                self.sacked_count += 1;
                if self.retx.clear(s) {
                    self.retx_count -= 1;
                }
                self.high_sacked = Some(self.high_sacked.map_or(s, |h| h.max(s)));
            }
        }
        let ack = a.ack.min(self.snd_max);
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            for s in self.snd_una..ack {
                if self.sacked.clear(s) {
                    self.sacked_count -= 1;
                }
                if self.retx.clear(s) {
                    self.retx_count -= 1;
                }
            }
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack; // after a timeout rewound snd_nxt
            }
            if self.high_sacked.is_some_and(|h| h < ack) {
                self.high_sacked = None;
            }
            let rtt_us = ts_us(now).wrapping_sub(a.echo);
            let rtt = u64::from(rtt_us) * 1000;
            self.sample_rtt(rtt);
            self.dupacks = 0;
            if self.cc == Cc::Cubic {
                let mss = self.len.saturating_sub(HEADER_BYTES).max(1);
                let srtt = self.srtt.unwrap_or(rtt);
                self.cubic.on_rtt_sample(
                    now,
                    rtt,
                    self.cwnd,
                    &mut self.ssthresh,
                    self.snd_una,
                    self.snd_nxt,
                    mss,
                    srtt,
                );
            }
            if self.in_recovery {
                if self.recover.is_none_or(|r| ack > r) {
                    self.in_recovery = false;
                    self.cwnd = self.ssthresh;
                }
            } else {
                match self.cc {
                    Cc::Reno => self.reno_grow(acked),
                    Cc::Cubic => self.cubic_grow(now, acked),
                }
            }
            self.rto_deadline = (self.snd_una < self.snd_max).then(|| now.saturating_add(self.rto));
        } else if ack == self.snd_una && self.snd_una < self.snd_max {
            self.dupacks += 1;
            if !self.in_recovery
                && self.dupacks >= DUPACK_THRESHOLD
                && self.recover.is_none_or(|r| self.snd_una > r)
            {
                self.ssthresh = self.loss_ssthresh();
                self.cwnd = self.ssthresh;
                self.cwnd_cnt = 0;
                self.recover = Some(self.snd_nxt - 1);
                self.in_recovery = true;
                self.rexmit_next = self.snd_una;
            }
        }
        if self.in_recovery {
            self.detect_lost_retransmissions(now);
        }
    }

    /// RACK's time-based check on retransmissions: one still outstanding `srtt x 5/4`
    /// after it was sent is lost; clearing its mark makes it a hole to send again.
    fn detect_lost_retransmissions(&mut self, now: Nanos) {
        let Some(srtt) = self.srtt else {
            return;
        };
        let wait = srtt + srtt / 4;
        while let Some(&(seq, at)) = self.retx_sent.front() {
            if seq < self.snd_una || self.sacked.get(seq) || !self.retx.get(seq) {
                self.retx_sent.pop_front();
                continue;
            }
            if now.saturating_sub(at) < wait {
                break;
            }
            self.retx_sent.pop_front();
            self.retx.clear(seq);
            self.retx_count -= 1;
            self.rexmit_next = self.rexmit_next.min(seq);
        }
    }

    /// `ssthresh` after a loss: half the flight (Reno, RFC 5681), or CUBIC's
    /// `0.7 x cwnd`, which also remembers `W_max`.
    fn loss_ssthresh(&mut self) -> u32 {
        match self.cc {
            Cc::Reno => (self.flight() / 2).max(2),
            Cc::Cubic => self.cubic.on_loss(self.cwnd),
        }
    }

    /// Reno: slow start below `ssthresh`, then one packet per window acknowledged.
    fn reno_grow(&mut self, acked: u32) {
        if self.cwnd < self.ssthresh {
            self.cwnd = self.cwnd.saturating_add(acked).min(self.max_window);
        } else {
            self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
            while self.cwnd_cnt >= self.cwnd {
                self.cwnd_cnt -= self.cwnd;
                self.cwnd += 1;
            }
            self.cwnd = self.cwnd.min(self.max_window);
        }
    }

    /// CUBIC: Linux's `tcp_slow_start` (up to `ssthresh`, the rest of the ACK goes to
    /// congestion avoidance), then `tcp_cong_avoid_ai` with CUBIC's `cnt`.
    fn cubic_grow(&mut self, now: Nanos, mut acked: u32) {
        if self.cwnd < self.ssthresh {
            let grown = self.cwnd.saturating_add(acked).min(self.ssthresh);
            acked -= grown - self.cwnd;
            self.cwnd = grown;
        }
        if acked > 0 && self.cwnd < self.max_window {
            let w = self.cubic.update(now, self.cwnd, acked);
            if self.cwnd_cnt >= w {
                self.cwnd_cnt = 0;
                self.cwnd += 1;
            }
            self.cwnd_cnt += acked;
            if self.cwnd_cnt >= w {
                let delta = self.cwnd_cnt / w;
                self.cwnd_cnt -= delta * w;
                self.cwnd += delta;
            }
        }
        self.cwnd = self.cwnd.min(self.max_window);
    }

    fn sample_rtt(&mut self, r: Nanos) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        // Linux's `__tcp_set_rto`: the variance term is at least `TCP_RTO_MIN`, so
        // the timeout stays 200 ms above the smoothed RTT however steady it is.
        self.rto = (srtt + (4 * self.rttvar).max(RTO_MIN)).min(RTO_MAX);
    }

    /// The timer fired at `now`: if the deadline has passed, time out and return `true`.
    pub fn on_timer(&mut self, now: Nanos) -> bool {
        match self.rto_deadline {
            Some(d) if now >= d && self.snd_una < self.snd_max => {
                self.timeouts += 1;
                self.ssthresh = self.loss_ssthresh();
                if self.cc == Cc::Cubic {
                    self.cubic.on_timeout(now, self.snd_una);
                }
                self.cwnd = 1;
                self.cwnd_cnt = 0;
                self.dupacks = 0;
                self.in_recovery = false;
                self.recover = Some(self.snd_max - 1);
                self.snd_nxt = self.snd_una;
                self.retx.clear_all();
                self.retx_count = 0;
                self.retx_sent.clear();
                self.rto = (self.rto * 2).min(RTO_MAX);
                self.rto_deadline = Some(now.saturating_add(self.rto));
                true
            }
            _ => false,
        }
    }
}

/// A TCP timestamp: the time in microseconds, modulo 2^32 (RFC 7323 allows any clock
/// from 1 ms to 1 s per tick; 1 us keeps sub-millisecond RTTs and wraps after 71 minutes,
/// longer than any scenario).
pub fn ts_us(now: Nanos) -> u32 {
    (now / 1000) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_doubles_per_round_trip() {
        let mut f = TcpFlow::new(1500, 0, 1000, u64::MAX, Cc::Reno);
        let mut sent = Vec::new();
        while f.can_send(0) {
            sent.push(f.send(0, 0).seq);
        }
        assert_eq!(sent.len(), INITIAL_WINDOW as usize);
        for s in sent {
            let (new, ack) = f.receive(s, 0);
            assert!(new);
            f.on_ack(1_000_000, ack);
        }
        assert_eq!(f.cwnd(), 2 * INITIAL_WINDOW);
    }

    #[test]
    fn sack_recovery_repairs_every_hole_in_one_round_trip() {
        let mut f = TcpFlow::new(1500, 0, 1000, u64::MAX, Cc::Reno);
        let sent: Vec<u32> = (0..10).map(|_| f.send(0, 0).seq).collect();
        // Packets 0, 3 and 4 are lost; the other seven arrive, each SACKed.
        let acks: Vec<Ack> = sent
            .iter()
            .filter(|s| ![0, 3, 4].contains(*s))
            .map(|&s| {
                let (new, ack) = f.receive(s, 0);
                assert!(new);
                ack
            })
            .collect();
        assert!(acks.iter().all(|a| a.ack == 0 && a.sack.is_some()));
        for a in acks {
            f.on_ack(1, a);
        }
        assert!(f.in_recovery());
        // ssthresh = cwnd = 10 / 2; pipe = 0 (everything above the last SACK arrived).
        assert_eq!(f.cwnd(), 5);
        let mut resent = Vec::new();
        while f.can_send(1) {
            resent.push(f.send(1, 0).seq);
        }
        // All three holes first, then new data up to cwnd.
        assert_eq!(resent, [0, 3, 4, 10, 11]);
        for s in [0, 3, 4] {
            let (new, ack) = f.receive(s, 0);
            assert!(new);
            f.on_ack(2, ack);
        }
        assert_eq!(f.snd_una, 10);
        assert!(!f.in_recovery());
        assert_eq!(f.cwnd(), 5);
    }

    #[test]
    fn timeout_goes_back_to_one_packet() {
        let mut f = TcpFlow::new(1500, 0, 1000, u64::MAX, Cc::Reno);
        for _ in 0..10 {
            f.send(0, 0);
        }
        assert!(!f.on_timer(RTO_INITIAL - 1));
        assert!(f.on_timer(RTO_INITIAL));
        assert_eq!(f.cwnd(), 1);
        assert_eq!(f.send(RTO_INITIAL, 0).seq, 0);
        assert!(!f.can_send(RTO_INITIAL));
    }
}
