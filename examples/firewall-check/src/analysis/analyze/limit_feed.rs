//! What limited each direction's sender: the limit trackers
//! ([`crate::analysis::limits`]) of a connection, set up once the RTT is
//! known and fed every segment (and, without the handshake, the log of
//! their input kept for a replay, [`crate::analysis::limit_log`]).

use capture::Timestamp;
use tcp_options::kind::MAX_WINDOW_SCALE;
use tcp_options::seq::seq_lt;
use tcp_options::{Flags, Timestamps};

use crate::analysis::limit_log;
use crate::analysis::limits::LimitTracker;
use crate::conn::Direction;
use crate::decode::TcpRecord;

use super::state::ConnState;
use super::Settings;

/// One direction's limit trackers: under the shift the handshake seen here
/// suggests, and (when it could be wrong) under the other reading.
#[derive(Debug, Clone)]
pub(crate) struct LimitPair {
    pub(crate) main: LimitTracker,
    /// Boxed: a tracker is most of a connection's size, and many
    /// connections have no other reading.
    pub(crate) alt: Option<Box<LimitTracker>>,
}

impl Default for LimitPair {
    fn default() -> Self {
        LimitPair {
            main: LimitTracker::new(0),
            alt: None,
        }
    }
}

impl LimitPair {
    pub(crate) fn each(&mut self, mut f: impl FnMut(&mut LimitTracker)) {
        f(&mut self.main);
        if let Some(a) = self.alt.as_mut() {
            f(a);
        }
    }
    /// The tracker reading with `shift`, else the main one.
    pub(crate) fn reading(&self, shift: Option<u8>) -> &LimitTracker {
        match (shift, self.alt.as_deref()) {
            (Some(s), Some(a))
                if a.read_shift() == s.min(MAX_WINDOW_SCALE)
                    && self.main.read_shift() != a.read_shift() =>
            {
                a
            }
            _ => &self.main,
        }
    }
    /// The tracker reading with exactly `shift`, if any.
    pub(crate) fn exactly(&self, shift: u8) -> Option<&LimitTracker> {
        if self.main.read_shift() == shift {
            Some(&self.main)
        } else {
            self.alt.as_deref().filter(|a| a.read_shift() == shift)
        }
    }
}

/// The trackers of a connection that carried no data, built once (a port
/// scan's connections have none; each report built two, 1.9 KB of state,
/// 5.2 M instructions of the many-connections benchmark run's 1.89 G,
/// callgrind).
pub(crate) static UNUSED_LIMITS: std::sync::LazyLock<LimitPair> =
    std::sync::LazyLock::new(LimitPair::default);

impl ConnState {
    /// Sets the limit trackers up once the handshake (or, without one, a
    /// given RTT) tells the round length, each sender's loop delay from the
    /// capture point and its reading of the window.
    pub(crate) fn configure_limits(&mut self, settings: &Settings) {
        let Some(rtt_ns) = settings
            .rtt
            .map(|r| u64::try_from(r.as_nanos()).unwrap_or(u64::MAX))
            .or(self.handshake_rtt_ns)
            .filter(|n| *n > 0)
        else {
            return;
        };
        let since = |a: Option<Timestamp>, b: Option<Timestamp>| match (a, b) {
            (Some(a), Some(b)) => b.nanos_since(&a),
            _ => None,
        };
        let rel = |t: Option<Timestamp>| since(self.base_ts, t).unwrap_or(0);
        let syn_ws = self.syn.and_then(|s| s.linux().window_scale);
        for dir in [Direction::ClientToServer, Direction::ServerToClient] {
            let main = self
                .sender_shift(dir, settings.assumed_shift(dir), false)
                .unwrap_or(0);
            // The other reading: unscaled, or (when the handshake seen here
            // says unscaled) the shift the receiver offered.
            let alt = match dir {
                _ if main != 0 => Some(0),
                Direction::ServerToClient => syn_ws,
                // The SYN-ACK seen here has no window scale: the client
                // certainly did not get one.
                Direction::ClientToServer => None,
            };
            let loop_ns = self.sender_loop_ns(dir);
            let initial = match dir {
                Direction::ServerToClient => self
                    .syn
                    .zip(self.synack_seq)
                    .map(|(s, isn)| (rel(self.syn_ts), isn.wrapping_add(1), s.window)),
                Direction::ClientToServer => self
                    .synack
                    .map(|s| (rel(self.synack_ts), self.c2s.snd_nxt.unwrap_or(0), s.window)),
            };
            let keep_rounds = settings.time_series;
            let pair = &mut self.lim.get_or_insert_with(Box::default)
                [usize::from(dir == Direction::ServerToClient)];
            pair.main = LimitTracker::new(main);
            pair.alt = alt
                .filter(|a| *a != main)
                .map(|a| Box::new(LimitTracker::new(a)));
            pair.each(|t| {
                if keep_rounds {
                    t.keep_rounds();
                }
                t.configure(rtt_ns, loop_ns.unwrap_or(0), initial)
            });
        }
    }

    /// Feeds one segment to the limit trackers: data to its direction's,
    /// an ACK to the other direction's; with `log`, also to the connection's
    /// [`LimitLog`] (started with its first data segment).
    pub(crate) fn feed_limits(
        &mut self,
        rec: &TcpRecord<'_>,
        dir: Direction,
        timestamps: Option<Timestamps>,
        log: bool,
    ) {
        let (Some(base), Some(ts)) = (self.base_ts, rec.ts) else {
            return;
        };
        let Some(t) = ts.nanos_since(&base) else {
            return;
        };
        let i = usize::from(dir == Direction::ServerToClient);
        if self.lim.is_none() {
            if rec.payload_len == 0 {
                return;
            }
            self.lim = Some(Box::default());
        }
        if log && self.limit_log.is_none() && rec.payload_len > 0 {
            self.limit_log = Some(Box::default());
        }
        let Some(lim) = self.lim.as_mut() else {
            return;
        };
        let ts = timestamps.map(|ts| (ts.tsval, ts.tsecr));
        let data = (rec.payload_len > 0 && !rec.flags.contains(Flags::SYN)).then(|| {
            let me = match dir {
                Direction::ClientToServer => &self.c2s,
                Direction::ServerToClient => &self.s2c,
            };
            let end = rec.seq.wrapping_add(rec.seq_len());
            limit_log::Data {
                seq: rec.seq,
                len: u32::try_from(rec.payload_len).unwrap_or(u32::MAX),
                retransmitted: me.snd_nxt.is_some_and(|nxt| !seq_lt(nxt, end)),
            }
        });
        let ack = (rec.flags.contains(Flags::ACK) && !rec.flags.contains(Flags::SYN))
            .then_some((rec.ack, rec.window));
        if let Some(log) = self.limit_log.as_mut() {
            log.record(t, dir == Direction::ServerToClient, data, ack, ts);
        }
        if let Some(d) = data {
            lim[i].each(|l| l.on_data(t, d.seq, d.len, d.retransmitted, ts));
        }
        if let Some((a, w)) = ack {
            let tsval = ts.map(|ts| ts.0);
            lim[1 - i].each(|l| l.on_ack(t, a, w, tsval));
        }
    }
}
