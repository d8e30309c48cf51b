//! What a connection's limit trackers are fed, kept for a capture without
//! the handshake until the shift and the RTT are known.
//!
//! The limit trackers ([`crate::analysis::limits`]) need, from the first data
//! segment on, the shift the sender reads the receiver's window fields with
//! and the round-trip time. With the handshake in the capture both are
//! known before the data starts. Without it they are not, yet the capture
//! itself may pin both by its end: the shift from the window edges and the
//! receiver's window growth (`wscale_inferred`), the RTT from the timestamp
//! echoes. So for such a connection `analyze` logs each segment's tracker
//! input (32 bytes: time, sequence numbers, lengths, window field, TSval
//! and TSecr) and, when the report is written, replays the log into a
//! tracker set up with what the capture showed.
//!
//! Bounded: at most [`LOG_EVENTS`] segments per connection and
//! [`LOG_BUDGET`] over all connections open at once (32 MiB). Past either
//! the connection's log is dropped, its limit is `none`, and the reason
//! says which bound and how to get the limit anyway (`--assume-wscale`
//! and `--rtt` run the trackers as the capture streams by).

use crate::analysis::limits::LimitTracker;

/// Most segments logged for one connection (8 MiB).
pub const LOG_EVENTS: usize = 1 << 18;

/// Most segments logged over all open connections (32 MiB).
pub const LOG_BUDGET: usize = 1 << 20;

const S2C: u8 = 1;
const DATA: u8 = 2;
const RETRANSMITTED: u8 = 4;
const ACK: u8 = 8;
const TIMESTAMPS: u8 = 16;

/// One segment as the trackers see it.
#[derive(Debug, Clone, Copy)]
struct Event {
    t_ns: u64,
    seq: u32,
    len: u32,
    ack: u32,
    tsval: u32,
    tsecr: u32,
    window: u16,
    flags: u8,
}

/// Why a connection's log was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// The connection had more than [`LOG_EVENTS`] segments.
    Connection,
    /// The open connections' logs together passed [`LOG_BUDGET`].
    Budget,
}

/// A connection's logged tracker input, in capture order.
#[derive(Debug, Clone, Default)]
pub struct LimitLog {
    events: Vec<Event>,
    dropped: Option<Dropped>,
}

/// A data segment as the trackers read it: sequence number, payload bytes,
/// and whether it repeats bytes sent before.
#[derive(Debug, Clone, Copy)]
pub struct Data {
    pub seq: u32,
    pub len: u32,
    pub retransmitted: bool,
}

impl LimitLog {
    /// Logs one segment: sent by the server (`s2c`) or the client, at
    /// `t_ns`, with its data and its ACK (number and window field) if any,
    /// and its timestamps (TSval, TSecr).
    pub fn record(
        &mut self,
        t_ns: u64,
        s2c: bool,
        data: Option<Data>,
        ack: Option<(u32, u16)>,
        ts: Option<(u32, u32)>,
    ) {
        if self.dropped.is_some() || (data.is_none() && ack.is_none()) {
            return;
        }
        if self.events.len() >= LOG_EVENTS {
            self.drop_events(Dropped::Connection);
            return;
        }
        let mut flags = if s2c { S2C } else { 0 };
        let (seq, len) = match data {
            Some(d) => {
                flags |= DATA;
                if d.retransmitted {
                    flags |= RETRANSMITTED;
                }
                (d.seq, d.len)
            }
            None => (0, 0),
        };
        let (ack, window) = match ack {
            Some(a) => {
                flags |= ACK;
                a
            }
            None => (0, 0),
        };
        let (tsval, tsecr) = match ts {
            Some(t) => {
                flags |= TIMESTAMPS;
                t
            }
            None => (0, 0),
        };
        self.events.push(Event {
            t_ns,
            seq,
            len,
            ack,
            tsval,
            tsecr,
            window,
            flags,
        });
    }

    /// Segments logged.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether nothing is logged.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Why the log was dropped, if it was.
    pub fn dropped(&self) -> Option<Dropped> {
        self.dropped
    }

    /// Drops the log (`why`), returning the segments it held.
    pub fn drop_events(&mut self, why: Dropped) -> usize {
        let n = self.events.len();
        self.events = Vec::new();
        self.dropped.get_or_insert(why);
        n
    }

    /// Feeds the log to `tracker`, the tracker of the server's data
    /// (`s2c`) or the client's: its data segments, and the other end's
    /// ACKs.
    pub fn replay(&self, s2c: bool, tracker: &mut LimitTracker) {
        for e in &self.events {
            let from_sender = (e.flags & S2C != 0) == s2c;
            let ts = (e.flags & TIMESTAMPS != 0).then_some((e.tsval, e.tsecr));
            if from_sender && e.flags & DATA != 0 {
                tracker.on_data(e.t_ns, e.seq, e.len, e.flags & RETRANSMITTED != 0, ts);
            }
            if !from_sender && e.flags & ACK != 0 {
                tracker.on_ack(e.t_ns, e.ack, e.window, ts.map(|t| t.0));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_32_bytes() {
        assert_eq!(core::mem::size_of::<Event>(), 32);
    }

    #[test]
    fn the_log_stops_at_its_bound_and_says_why() {
        let mut log = LimitLog::default();
        let ack = Some((1, 100));
        for i in 0..LOG_EVENTS as u64 {
            log.record(i, false, None, ack, None);
        }
        assert_eq!(log.len(), LOG_EVENTS);
        assert_eq!(log.dropped(), None);
        log.record(LOG_EVENTS as u64, false, None, ack, None);
        assert_eq!(log.len(), 0);
        assert_eq!(log.dropped(), Some(Dropped::Connection));
        log.record(0, false, None, ack, None);
        assert_eq!(log.len(), 0, "a dropped log stays empty");
    }

    #[test]
    fn a_segment_without_data_or_ack_is_not_logged() {
        let mut log = LimitLog::default();
        log.record(1, true, None, None, Some((1, 2)));
        assert!(log.is_empty());
    }
}
