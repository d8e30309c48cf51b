//! A TCP bulk sender and its receiver, NewReno style, counted in whole packets.
//!
//! The sender starts in slow start with an initial window of `INITIAL_WINDOW` packets
//! (RFC 6928), grows the congestion window by one packet per packet acknowledged below
//! `ssthresh` and by one packet per window above it (AIMD, RFC 5681). Three duplicate
//! ACKs trigger fast retransmit and NewReno fast recovery (RFC 6582): `ssthresh` becomes
//! half the flight size, the window is inflated by each further duplicate, a partial ACK
//! retransmits the next hole, and a full ACK ends recovery at `ssthresh`. A retransmission
//! timeout (RFC 6298 estimator, 200 ms minimum as in Linux, doubled on each back-off)
//! resets the window to one packet and goes back to the first unacknowledged packet.
//!
//! The receiver acknowledges every packet with its cumulative next-expected sequence
//! number (no delayed ACKs, no SACK), echoes the timestamp (RFC 7323) of the last packet
//! that advanced it, from which the sender takes an RTT sample on every ACK of new data
//! (so a sample never spans a repaired hole), and remembers out-of-order packets in a bitmap the
//! size of the receive window, allocated once. Losses come only from the router: its tail
//! drops and the VC policer. ACKs travel back after the stream's base RTT and are never
//! lost, so they clock the sender exactly as the bottleneck delivers.

use super::packet::Packet;
use super::time::{Nanos, NS_PER_S};

/// Initial congestion window in packets (RFC 6928).
pub const INITIAL_WINDOW: u32 = 10;
/// Smallest retransmission timeout (Linux `TCP_RTO_MIN`).
pub const RTO_MIN: Nanos = 200_000_000;
/// Largest retransmission timeout (RFC 6298 allows a 60 s cap).
pub const RTO_MAX: Nanos = 60 * NS_PER_S;
/// Retransmission timeout before the first RTT sample (RFC 6298).
pub const RTO_INITIAL: Nanos = NS_PER_S;
/// Duplicate ACKs that trigger fast retransmit.
pub const DUPACK_THRESHOLD: u32 = 3;

/// One TCP connection: sender state, receiver state and the counters a report needs.
#[derive(Clone, Debug)]
pub struct TcpFlow {
    len: u32,
    ds: u8,
    max_window: u32,
    stop: Nanos,
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
    retransmit: Option<u32>,
    srtt: Option<Nanos>,
    rttvar: Nanos,
    rto: Nanos,
    /// When the retransmission timer expires (`None`: not armed).
    pub rto_deadline: Option<Nanos>,
    // Receiver.
    rcv_nxt: u32,
    ts_recent: u32,
    ooo: Vec<u64>,
    /// Retransmissions sent (fast and timeout).
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
}

impl TcpFlow {
    /// A flow of `len`-byte packets marked `ds`, with a receive window of `max_window`
    /// packets (at least 2), sending until `stop`.
    pub fn new(len: u32, ds: u8, max_window: u32, stop: Nanos) -> Self {
        let max_window = max_window.max(2);
        TcpFlow {
            len,
            ds,
            max_window,
            stop,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: INITIAL_WINDOW.min(max_window),
            cwnd_cnt: 0,
            ssthresh: max_window,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            retransmit: None,
            srtt: None,
            rttvar: 0,
            rto: RTO_INITIAL,
            rto_deadline: None,
            rcv_nxt: 0,
            ts_recent: 0,
            ooo: vec![0; (max_window as usize).div_ceil(64)],
            retransmits: 0,
            timeouts: 0,
        }
    }

    /// The congestion window in packets.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }

    fn flight(&self) -> u32 {
        self.snd_nxt - self.snd_una
    }

    /// Whether the sender has something it may send at `now`.
    pub fn can_send(&self, now: Nanos) -> bool {
        if now >= self.stop {
            return false;
        }
        if self.retransmit.is_some() {
            return true;
        }
        let flight = self.flight();
        flight < self.cwnd && flight < self.max_window && self.snd_nxt < u32::MAX
    }

    /// Takes the next packet to send at `now` (call only when [`can_send`](Self::can_send)).
    pub fn send(&mut self, now: Nanos, stream: u16) -> Packet {
        let seq = match self.retransmit.take() {
            Some(s) => {
                self.retransmits += 1;
                s
            }
            None => {
                let s = self.snd_nxt;
                self.snd_nxt += 1;
                if s < self.snd_max {
                    self.retransmits += 1; // going back after a timeout
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

    /// The receiver gets packet `seq` stamped `ts`; returns whether it carried new data,
    /// the cumulative ACK to send back and the timestamp it echoes.
    pub fn receive(&mut self, seq: u32, ts: u32) -> (bool, u32, u32) {
        if seq < self.rcv_nxt {
            return (false, self.rcv_nxt, self.ts_recent);
        }
        let w = self.max_window;
        if seq - self.rcv_nxt >= w {
            // Cannot happen while the sender respects the window; ignore defensively.
            return (false, self.rcv_nxt, self.ts_recent);
        }
        let new = if seq == self.rcv_nxt {
            self.ts_recent = ts;
            self.rcv_nxt += 1;
            loop {
                let i = (self.rcv_nxt % w) as usize;
                let (word, bit) = (i / 64, 1u64 << (i % 64));
                if self.ooo[word] & bit == 0 {
                    break;
                }
                self.ooo[word] &= !bit;
                self.rcv_nxt += 1;
            }
            true
        } else {
            let i = (seq % w) as usize;
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            let new = self.ooo[word] & bit == 0;
            self.ooo[word] |= bit;
            new
        };
        (new, self.rcv_nxt, self.ts_recent)
    }

    /// The sender gets cumulative ACK `ack` echoing timestamp `echo` at `now`.
    pub fn on_ack(&mut self, now: Nanos, ack: u32, echo: u32) {
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack; // after a timeout rewound snd_nxt
            }
            let rtt_us = ts_us(now).wrapping_sub(echo);
            self.sample_rtt(u64::from(rtt_us) * 1000);
            if self.in_recovery {
                if self.recover.is_none_or(|r| ack > r) {
                    self.in_recovery = false;
                    self.cwnd = self.ssthresh;
                    self.dupacks = 0;
                } else {
                    // Partial ACK: retransmit the next hole, deflate by what was acked.
                    self.retransmit = Some(self.snd_una);
                    self.cwnd = self.cwnd.saturating_sub(acked).saturating_add(1).max(1);
                }
            } else {
                self.dupacks = 0;
                if self.cwnd < self.ssthresh {
                    self.cwnd = self.cwnd.saturating_add(acked);
                } else {
                    self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
                    while self.cwnd_cnt >= self.cwnd {
                        self.cwnd_cnt -= self.cwnd;
                        self.cwnd += 1;
                    }
                }
                self.cwnd = self.cwnd.min(self.max_window);
            }
            self.rto_deadline = (self.snd_una < self.snd_max).then(|| now.saturating_add(self.rto));
        } else if ack == self.snd_una && self.snd_una < self.snd_max {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd = self.cwnd.saturating_add(1);
            } else if self.dupacks == DUPACK_THRESHOLD
                && self.recover.is_none_or(|r| self.snd_una > r)
            {
                self.ssthresh = (self.flight() / 2).max(2);
                self.cwnd = self.ssthresh + DUPACK_THRESHOLD;
                self.recover = Some(self.snd_nxt - 1);
                self.in_recovery = true;
                self.retransmit = Some(self.snd_una);
            }
        }
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
        self.rto = (srtt + 4 * self.rttvar).clamp(RTO_MIN, RTO_MAX);
    }

    /// The timer fired at `now`: if the deadline has passed, time out and return `true`.
    pub fn on_timer(&mut self, now: Nanos) -> bool {
        match self.rto_deadline {
            Some(d) if now >= d && self.snd_una < self.snd_max => {
                self.timeouts += 1;
                self.ssthresh = (self.flight() / 2).max(2);
                self.cwnd = 1;
                self.cwnd_cnt = 0;
                self.dupacks = 0;
                self.in_recovery = false;
                self.recover = Some(self.snd_max.saturating_sub(1));
                self.snd_nxt = self.snd_una;
                self.retransmit = None;
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
        let mut f = TcpFlow::new(1500, 0, 1000, u64::MAX);
        let mut sent = Vec::new();
        while f.can_send(0) {
            sent.push(f.send(0, 0).seq);
        }
        assert_eq!(sent.len(), INITIAL_WINDOW as usize);
        for s in sent {
            let (new, ack, echo) = f.receive(s, 0);
            assert!(new);
            f.on_ack(1_000_000, ack, echo);
        }
        assert_eq!(f.cwnd(), 2 * INITIAL_WINDOW);
    }

    #[test]
    fn three_dupacks_halve_the_window_and_retransmit_the_hole() {
        let mut f = TcpFlow::new(1500, 0, 1000, u64::MAX);
        let sent: Vec<u32> = (0..10).map(|_| f.send(0, 0).seq).collect();
        // Packet 0 is lost; 1..=9 arrive out of order.
        let mut acks = Vec::new();
        for &s in &sent[1..] {
            let (new, ack, _) = f.receive(s, 0);
            assert!(new);
            acks.push(ack);
        }
        assert!(acks.iter().all(|&a| a == 0));
        for a in acks {
            f.on_ack(1, a, 0);
        }
        // ssthresh = 10 / 2 = 5, inflated by 3 at entry and 6 further dupacks.
        assert_eq!(f.cwnd(), 5 + 3 + 6);
        assert!(f.can_send(1));
        assert_eq!(f.send(1, 0).seq, 0);
        let (new, ack, _) = f.receive(0, 0);
        assert!(new);
        assert_eq!(ack, 10); // the out-of-order bitmap fills the hole
        f.on_ack(2, ack, 0);
        assert_eq!(f.cwnd(), 5);
    }

    #[test]
    fn timeout_goes_back_to_one_packet() {
        let mut f = TcpFlow::new(1500, 0, 1000, u64::MAX);
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
