//! What limited one direction of a transfer, from a capture alone.
//!
//! # The question
//!
//! Linux answers it for every connection it sends on. Its "chrono"
//! accounting (`tcp_chrono_start`/`tcp_chrono_stop`, reported in `TCP_INFO`
//! as `tcpi_busy_time`, `tcpi_rwnd_limited`, `tcpi_sndbuf_limited`) splits
//! the sender's *busy* time, the time it has data unacknowledged or waiting
//! to go, into: limited by the receive window (a transmit found the next
//! segment beyond the window's right edge), limited by the send buffer, and
//! the rest (the congestion window, pacing, the path). Time with nothing
//! outstanding is not busy time at all.
//!
//! This module rebuilds that split from the packets a capture shows, at any
//! point of the path, so that `analyze` can say what a sender's kernel would
//! sign.
//!
//! # The sender's view from elsewhere on the path
//!
//! A capture point sees the sender's data some time after it left and the
//! receiver's ACKs some time before the sender gets them. What the sender
//! knew when it sent the segment seen at time `t` is the ACK (and window)
//! the capture point saw at `t - loop`, where `loop` is the time from the
//! capture point to the sender and back: about zero next to the sender,
//! about one RTT next to the receiver. The handshake measures it for each
//! side: the server's loop is SYN to SYN-ACK as seen here, the client's is
//! SYN-ACK to its ACK; under a quarter of the RTT it is taken as zero (the
//! capture point is next to the sender). A small ring of the receiver's
//! recent (time, ACK, window) samples, at least 1/16 of the loop apart,
//! answers "what did the sender know at `t - loop`".
//!
//! # The phases
//!
//! Between two consecutive segments of the connection the sender is in one
//! phase, decided when the later of the two is seen:
//!
//! - **receive window**: the next full segment would pass the right edge of
//!   the window as the sender reads it (ACK plus the window field shifted by
//!   the sender's own idea of the receiver's shift), even with nothing
//!   outstanding: a window below one segment keeps a Linux sender waiting
//!   (it sends only window probes), and its kernel books that time so.
//! - **idle**: nothing outstanding and room for a full segment: the sender
//!   had nothing to send. Not busy time; counted apart.
//! - **other**: data outstanding, room in the window. This is either the
//!   congestion window (the network) or the sender holding back (its send
//!   buffer or application), told apart per round trip, below.
//!
//! # Network or sender, per round trip
//!
//! Time in the *other* phase is collected in rounds one RTT long. A round
//! is the network's when any of these holds: a retransmission was seen in
//! it (loss recovery); the most bytes in flight grew by more than one
//! segment or 10 % over the most of the last three rounds (slow start or
//! congestion avoidance still probing; a flight that rises and falls back,
//! as a writer pausing between chunks has one chunk or two in flight by
//! turns, is not growing);
//! or more was in flight than the receiver acknowledged during the round by
//! more than a quarter, at the round's most and on average over the round
//! (a queue is building at a bottleneck: the flight exceeds what the path
//! delivers per base RTT all the round long; a writer's burst of two chunks
//! is in flight a moment); or the sender's segments
//! reach the capture point later than its own timestamps say they should
//! (capture time minus TSval, in Linux's millisecond ticks) by more than a
//! fifth of the RTT (at least 2 ms) over the smallest such delay: a queue
//! between the sender and the capture point, which is how a bottleneck
//! looks from the receiver's side; or the round comes after a loss with
//! the flight still more than a segment below the flight at the loss (the
//! most of the loss's round and the round before it): the congestion
//! window was cut and is growing back, which Reno does by one segment a
//! round, not enough to count as growing (1% random loss in the lab's
//! matrix: CUBIC and Reno senders were called `sender` on 7 of 8 sides
//! without this). That lasts until the flight is back within a segment of
//! the loss's, or for as many rounds as the loss's flight has segments
//! (twice what Reno needs to win back half of it). Otherwise the flight is
//! flat, nothing is lost and nothing queues: the sender is holding back,
//! which is what a full send buffer looks like on the wire.
//!
//! The traffic that fools the loss rule: a sender held back by its send
//! buffer or its application at a flight below the one it had when a
//! segment was lost (a writer whose chunks shrink after a loss) is called
//! the network for up to that many rounds; a send buffer back at its
//! flight the round after the loss is not (tested).
//!
//! # The flight as the sender's echo dates it
//!
//! The loop delay is measured once and the path's delay varies, so next to
//! the receiver "what the sender knew" is blurred by a segment or two. With
//! timestamps the sender says it exactly: a data segment echoes (TSecr) the
//! TSval of the newest receiver segment it had processed, so the sender
//! knew no ACK the receiver sent under a later TSval. The highest ACK sent
//! under TSvals up to the echo (a ring of the receiver's last 32 TSval
//! ticks) bounds what it knew, and the flight above it is the least the
//! sender had in flight. A round's flight is this, when timestamps are on.
//!
//! # A window the capture does not show: the plateau
//!
//! A middlebox that rewrites the window field between the capture point
//! and the sender (the campus firewall's act) leaves the capture showing
//! the receiver's own, larger windows: the sender stops at an edge the
//! capture never saw. What it shows is the flight stopping at one value:
//! a Linux sender at the right edge sends full segments up to it, so with
//! the ACKs advancing by whole segments its flight tops out at the same
//! byte every round. When the rounds' flights are equal to the byte in
//! [`PLATEAU_ROUNDS`] consecutive rounds with no retransmission, ACKs
//! arriving and no queue of half an RTT building between the sender and
//! here (a bottleneck's queue; a smaller jitter, as the lab's delayer's on
//! a loaded host, leaves an edge where it is), and the
//! receiver advertised at least twice that flight throughout, and such
//! rounds cover more than half the busy time (a rewrite holds for the whole
//! transfer; a send buffer refilled in step can hold a flight for a while), the sender
//! read a window of that flight (less one segment at most) that it was not
//! sent: those rounds' time counts as receive-window time, reported as
//! `window_read_inferred_bytes` with `medium` confidence (a sender clamped
//! at one flight by something else would look the same). A send buffer
//! does not hold the flight to the byte: the application refills it in
//! writes of a third of the buffer or more, paced or not, so its rounds'
//! flights differ by segments; a congestion window still growing or after
//! a loss is not flat either.
//!
//! The plateau's flight must be whole segments (a multiple of the largest
//! payload seen): `tcp_mss_split_point` cuts what a window-limited Linux
//! sender sends at a multiple of the MSS. A writer pausing between chunks,
//! each acknowledged just before the next leaves, tops out at the same
//! byte every round too, but at its chunk's size, which ends where the
//! application's write did (in the lab, 20 KB every 11 ms at 10 ms read as
//! a window of 20,480 bytes from both sides before this). And a sender at
//! an edge always has the window's worth outstanding: a round in which it
//! had nothing outstanding (the idle phase) for more than an eighth of the
//! round is no plateau round, for it had nothing to send (a writer of
//! whole segments whose chunk is all acknowledged before the next leaves:
//! 16 segments every 12 ms at a 10 ms RTT, idle 1.7 ms a round, read as a
//! rewritten window from both sides before this). The eighth is twice the
//! ring's dating of the ACKs away from the sender (loop/16), and covers a
//! receiver that acknowledges a whole flight at once (GRO), after which an
//! edge sender too has nothing outstanding until its answer arrives.
//!
//! A sender at an edge answers the ACKs it reads: each that opens the
//! window lets the next segments go at once. With timestamps the capture
//! shows which ACK the sender had read when it sent a segment (the newest
//! the receiver sent under the TSval it echoes), so its *answer delay* is
//! the time from that ACK here to the segment here, less the loop; without
//! timestamps, the ACK the loop says it had read stands in (the ring dates
//! it to within loop/16, never later than it was seen). A round whose every
//! segment left more than a quarter of the round (at least 2 ms) after the
//! newest ACK its sender had read is late: the sender was not answering
//! ACKs but sending on its own clock, as a writer of chunks does (14,480
//! bytes with pauses of 8 ms at a 10 ms RTT, two chunks in flight by turns
//! and never idle: each chunk left about 8 ms after the ACK it echoed, and
//! the flight topped out at 28,960 bytes round after round, read as a
//! rewritten window from both sides before this). A run of rounds half or
//! more of which are late is no plateau; a late round now and then (a busy
//! host, a queue for a round) leaves one standing.
//!
//! The traffic that fools these rules: toward a window, a writer of whole
//! segments that is idle for less than an eighth of each round (its next
//! chunk leaves just after the last ACK) still reads as a plateau, a
//! medium-confidence hint whose words name the pausing writer (tested,
//! ignored, as the known gap: no capture point tells it from an edge sender
//! answering a whole-flight ACK late); toward the sender, an edge sender
//! whose answers to whole-flight ACKs come more than an eighth of a round
//! late (a host that busy), or whose answers all look late for half the
//! rounds (a path whose delay grew by a quarter of the RTT since the
//! handshake measured the loop, seen away from the sender), loses those
//! rounds' plateau (a rewritten window missed, never invented). A capture
//! of TSO/GRO super-packets (its largest payload is no MSS) never shows a
//! plateau. Without timestamps, next to the receiver, the flight as the
//! loop dates it is blurred by a segment or two and a rewritten window's
//! plateau seldom forms (the lab's `window_rewrite_no_timestamps4`, 40 ms:
//! the client's side found the window the server read in 1 run of 9, and
//! said `sender` in the others, where the kernel counted 0.98 of the busy
//! time receive-window limited): missed, never invented.
//!
//! # The answer
//!
//! The fractions are shares of the busy time, as Linux's are. The kind is
//! the largest share, except that a transfer idle for more than half of its
//! time (from the first data segment to the ACK of the last) is `sender`:
//! the application did not supply data. Fewer than [`MIN_DATA_SEGMENTS`]
//! data segments or fewer than [`MIN_ROUNDS`] round trips of transfer give
//! `none`: too little to tell.
//!
//! Memory: a fixed-size value per direction and reading of the window
//! (`analyze` keeps two readings when the capture cannot yet tell whether
//! the sender scales); work per segment: a few comparisons and, rarely, a
//! ring lookup.

use serde::Serialize;

use crate::analysis::limit_log::Dropped;
use crate::conn::Endpoint;
use crate::finding::Confidence;
use tcp_options::kind::MAX_WINDOW_SCALE;
use tcp_options::seq::seq_lt;

/// Fewest data segments for a verdict.
pub const MIN_DATA_SEGMENTS: u64 = 20;

/// Fewest round trips of transfer time for a verdict.
pub const MIN_ROUNDS: u64 = 3;
/// Fewest consecutive flat rounds for a plateau (module docs). 8 was too
/// few: a BBR sender held by an 8 KB send buffer (lab case sndbuf-small4)
/// once kept its flight at 8,688 bytes for 8 rounds and read as a plateau.
pub const PLATEAU_ROUNDS: u64 = 16;
/// Samples of the receiver's ACKs kept.
const RING: usize = 16;
/// Rounds before the current one that growth and queueing look back on.
const RECENT: usize = 3;
/// Receiver TSval ticks kept with the highest ACK sent under each.
const TS_ACKS: usize = 32;

/// One receiver segment as the capture point saw it.
#[derive(Debug, Clone, Copy, Default)]
struct AckSample {
    at_ns: u64,
    ack: u32,
    /// Window in bytes as the sender reads it: a field of at most 65,535
    /// shifted by at most 14 fits 32 bits (16-byte samples, not 24: the
    /// ring is most of a tracker's size).
    window: u32,
}

/// The phase of the sender between two segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Phase {
    #[default]
    NotStarted,
    Idle,
    ReceiveWindow,
    Other,
}

/// The phase as a time series labels it (`None` before the first data).
fn series_phase(p: Phase) -> Option<SenderPhase> {
    match p {
        Phase::NotStarted => None,
        Phase::Idle => Some(SenderPhase::Idle),
        Phase::ReceiveWindow => Some(SenderPhase::ReceiveWindow),
        Phase::Other => Some(SenderPhase::Busy),
    }
}

/// What a sender was doing between two segments, as a time series labels
/// it (`limit` of `firewall-check series`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SenderPhase {
    /// Held by the receive window (as it read it, or as a plateau of the
    /// flight showed).
    ReceiveWindow,
    /// Nothing outstanding.
    Idle,
    /// Held by the network (a round booked to the congestion window).
    Network,
    /// Held by itself (a round booked to the sender).
    Sender,
    /// Busy, its round not decided (network or sender).
    Busy,
}

impl SenderPhase {
    /// `receive_window`, `idle`, `network`, `sender` or `busy`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SenderPhase::ReceiveWindow => "receive_window",
            SenderPhase::Idle => "idle",
            SenderPhase::Network => "network",
            SenderPhase::Sender => "sender",
            SenderPhase::Busy => "busy",
        }
    }
}

impl From<RoundKind> for SenderPhase {
    fn from(k: RoundKind) -> Self {
        match k {
            RoundKind::Network => SenderPhase::Network,
            RoundKind::Sender => SenderPhase::Sender,
            RoundKind::ReceiveWindow => SenderPhase::ReceiveWindow,
        }
    }
}

/// Accumulated time, nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Times {
    rwnd: u64,
    network: u64,
    sender: u64,
    idle: u64,
}

/// The current round trip's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Round {
    start_ns: u64,
    max_flight: u64,
    acked: u64,
    retrans: u64,
    other_ns: u64,
    /// Largest one-way delay sample in the round, ns.
    owd_max: Option<i64>,
    /// Most bytes in flight as the sender's echoed timestamps date its
    /// knowledge of the ACKs (module docs), 0 without timestamps.
    max_echo_flight: u64,
    /// Smallest window (as read) the sender knew during the round.
    min_window: Option<u64>,
    /// Bytes in flight (as the sender knew its ACKs) times the time they
    /// were, byte-ns, and that time: the round's average flight.
    flight_time: u128,
    flight_ns: u64,
    /// Time in the round with nothing outstanding and room in the window
    /// (the idle phase), ns.
    idle_ns: u64,
    /// Shortest answer delay of the sender's segments in the round, ns
    /// (module docs, the plateau), when timestamps date them.
    min_answer_ns: Option<u64>,
}

/// One tick of the receiver's TSval clock: the highest ACK it sent under
/// it and when that ACK was seen here.
#[derive(Debug, Clone, Copy, Default)]
struct TsAck {
    tsval: u32,
    ack: u32,
    seen_ns: u64,
}

impl Round {
    /// Average bytes in flight over the round.
    fn avg_flight(&self) -> u64 {
        u64::try_from(self.flight_time / u128::from(self.flight_ns.max(1))).unwrap_or(u64::MAX)
    }
}

/// Tracks one direction's sender under one reading of the window fields
/// (module docs).
#[derive(Debug, Clone)]
pub struct LimitTracker {
    /// Shift the sender applies to the receiver's window fields.
    read_shift: u8,
    /// Capture point to sender and back, ns.
    loop_ns: u64,
    /// Round length (the RTT), ns; 0 until configured.
    round_ns: u64,
    ring: [AckSample; RING],
    ring_len: usize,
    ring_next: usize,
    snd_nxt: Option<u32>,
    mss: u64,
    data_segments: u64,
    first_data_ns: Option<u64>,
    last_ns: u64,
    phase: Phase,
    times: Times,
    round: Round,
    prev_max_flight: u64,
    /// Bytes in flight as the sender knew them at the last segment.
    known_flight: u64,
    /// The last [`RECENT`] rounds with data in flight, newest last: their
    /// most bytes in flight and bytes acknowledged (module docs: growing,
    /// queueing).
    recent: [(u64, u64); RECENT],
    recent_len: usize,
    rounds: u64,
    /// Times and rounds when the receiver last acknowledged everything sent.
    done: Option<(Times, u64, u64)>,
    /// Highest ACK the capture point saw from the receiver.
    seen_ack: Option<u32>,
    /// Bytes sent past that edge, and the end of the last such byte.
    beyond_bytes: u64,
    beyond_end: Option<u32>,
    /// When the sender learns of the last ACK seen here (ACK time + loop).
    pending_at: Option<u64>,
    /// Most bytes in flight at any time (as the sender knew its ACKs).
    max_flight: u64,
    /// First TSval of the sender, the origin of the delay samples.
    tsval0: Option<u32>,
    /// Smallest one-way delay sample (capture time minus TSval in ms), ns.
    owd_min: Option<i64>,
    /// The receiver's TSvals with the highest ACK it sent under each and
    /// the time that ACK was seen here, ns, oldest first in ring order.
    ts_acks: [TsAck; TS_ACKS],
    ts_len: usize,
    ts_next: usize,
    /// The flight when the last loss was seen (the most of the rounds
    /// before it and of its own), while the congestion window regrows
    /// toward it (module docs, after a loss); 0 when none.
    loss_peak: u64,
    /// Rounds the regrowth after that loss may still take.
    loss_rounds_left: u64,
    /// The current plateau of the flight (module docs).
    plateau: Plateau,
    /// Sender time of finished plateaus: the sender read a window smaller
    /// than the one advertised, ns.
    plateau_ns: u64,
    /// The part of `plateau_ns` first booked to the sender (the rest: the network).
    plateau_sender_ns: u64,
    /// The largest plateau flight found, bytes.
    plateau_flight: u64,
    /// What time series need besides the limit (`None` unless asked for
    /// with [`LimitTracker::keep_rounds`]: `analyze` does without it).
    series: Option<Box<SeriesRounds>>,
}

/// The part of a tracker only time series read: boxed, so that a tracker
/// for `analyze` does not carry it.
#[derive(Debug, Clone)]
struct SeriesRounds {
    /// The last rounds closed, newest last: number and kind.
    closed: [(u64, RoundKind); CLOSED],
    closed_len: usize,
    /// The rounds (first and last number) a plateau last moved to the
    /// receive window at once, when it qualified.
    plateau_moved: Option<(u64, u64)>,
    /// The last time the sender learned of an ACK between two segments
    /// (the ACK's time plus the loop), with the phase and round decided
    /// then.
    learned: Option<(u64, Phase, u64)>,
}

impl Default for SeriesRounds {
    fn default() -> Self {
        SeriesRounds {
            closed: [(0, RoundKind::Sender); CLOSED],
            closed_len: 0,
            plateau_moved: None,
            learned: None,
        }
    }
}

/// Where a closed round's time went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundKind {
    /// The network (the congestion window).
    Network,
    /// The sender itself.
    Sender,
    /// The receive window, as a plateau showed (module docs).
    ReceiveWindow,
}

/// Consecutive flat rounds at one flight (module docs).
#[derive(Debug, Clone, Copy, Default)]
struct Plateau {
    /// The round's most bytes in flight the run is flat at.
    flight: u64,
    rounds: u64,
    /// Time of the run's rounds booked to the sender and to the network, ns.
    sender_ns: u64,
    network_ns: u64,
    /// Smallest window (as read) known during the run.
    min_window: u64,
    /// Number of the run's first round.
    first_round: u64,
    /// The run's rounds whose every segment left late after the newest
    /// ACK its sender had read (module docs, the plateau).
    late_rounds: u64,
    /// Whether the run's time has begun to move to the receive window.
    moved: bool,
}

/// Closed rounds remembered for time series ([`LimitTracker::closed_rounds`]).
const CLOSED: usize = 4;

impl LimitTracker {
    /// A tracker reading the receiver's window fields with `read_shift`.
    pub fn new(read_shift: u8) -> Self {
        LimitTracker {
            read_shift: read_shift.min(MAX_WINDOW_SCALE),
            loop_ns: 0,
            round_ns: 0,
            ring: [AckSample::default(); RING],
            ring_len: 0,
            ring_next: 0,
            snd_nxt: None,
            mss: 536,
            data_segments: 0,
            first_data_ns: None,
            last_ns: 0,
            phase: Phase::NotStarted,
            times: Times::default(),
            round: Round::default(),
            prev_max_flight: 0,
            known_flight: 0,
            recent: [(0, 0); RECENT],
            recent_len: 0,
            rounds: 0,
            done: None,
            seen_ack: None,
            beyond_bytes: 0,
            beyond_end: None,
            pending_at: None,
            max_flight: 0,
            tsval0: None,
            owd_min: None,
            ts_acks: [TsAck::default(); TS_ACKS],
            ts_len: 0,
            ts_next: 0,
            loss_peak: 0,
            loss_rounds_left: 0,
            plateau: Plateau::default(),
            plateau_ns: 0,
            plateau_sender_ns: 0,
            plateau_flight: 0,
            series: None,
        }
    }

    /// From now on, also remember what time series read: the rounds as
    /// they close ([`LimitTracker::closed_rounds`]), the plateau's move
    /// ([`LimitTracker::plateau_moved`]) and when the sender learned of an
    /// ACK ([`LimitTracker::learned_at`]). Call before the first segment.
    pub fn keep_rounds(&mut self) {
        self.series.get_or_insert_with(Box::default);
    }

    /// The shift this tracker reads window fields with.
    pub fn read_shift(&self) -> u8 {
        self.read_shift
    }

    /// Most bytes the sender had in flight.
    pub fn max_flight(&self) -> u64 {
        self.max_flight
    }

    /// The last time the sender learned of an ACK between two segments of
    /// the connection (the ACK's time here plus the loop to the sender and
    /// back, ns), with its phase from then on ([`LimitTracker::phase_name`])
    /// and the round in progress then, for time series: the phase changes
    /// there, not at a segment.
    pub fn learned_at(&self) -> Option<(u64, Option<SenderPhase>, u64)> {
        self.series
            .as_ref()?
            .learned
            .map(|(t, phase, round)| (t, series_phase(phase), round))
    }

    /// The sender's phase since the last segment, for time series:
    /// `receive_window`, `idle`, `busy` (network or sender, decided per
    /// round afterwards) or `""` before the first data segment.
    pub fn phase_name(&self) -> Option<SenderPhase> {
        series_phase(self.phase)
    }

    /// The number of the round in progress (rounds are numbered from 0 as
    /// they close), for time series.
    pub fn round_no(&self) -> u64 {
        self.rounds
    }

    /// The last few rounds closed, oldest first, with where their *other*
    /// time went, for time series (a caller that asks after every segment
    /// sees every round: at most two close per segment).
    pub fn closed_rounds(&self) -> &[(u64, RoundKind)] {
        match self.series.as_deref() {
            Some(r) => &r.closed[..r.closed_len],
            None => &[],
        }
    }

    /// Where the round in progress would go if it closed now (what
    /// [`LimitTracker::limit`] books it to at the end).
    pub fn open_round_kind(&self) -> RoundKind {
        if self.round_is_network() {
            RoundKind::Network
        } else {
            RoundKind::Sender
        }
    }

    /// The rounds (first and last number) the latest qualifying plateau
    /// moved to the receive window at once (module docs).
    pub fn plateau_moved(&self) -> Option<(u64, u64)> {
        self.series.as_ref()?.plateau_moved
    }

    /// The receive window as the sender could know it at capture time `t`:
    /// its right edge (ACK plus window), for time series.
    pub fn known_edge(&self, t_ns: u64) -> Option<(u32, u64)> {
        self.known_at(t_ns).map(|k| (k.ack, u64::from(k.window)))
    }

    /// Sets the round length (RTT) and the capture point's loop delay to
    /// the sender; `initial` is the receiver's handshake segment (ACK
    /// number the sender will see, unscaled window field, time).
    pub fn configure(&mut self, rtt_ns: u64, loop_ns: u64, initial: Option<(u64, u32, u16)>) {
        if self.round_ns != 0 || rtt_ns == 0 {
            return;
        }
        self.round_ns = rtt_ns;
        // A loop under a quarter of the RTT is the sender's own reaction
        // time: the capture point is next to the sender, which knows every
        // ACK seen here (capture timestamps are often only microseconds).
        self.loop_ns = if loop_ns < rtt_ns / 4 {
            0
        } else {
            loop_ns.min(rtt_ns.saturating_mul(4))
        };
        if let Some((at_ns, ack, window)) = initial {
            // Handshake windows are never scaled.
            self.push_sample(AckSample {
                at_ns,
                ack,
                window: u32::from(window),
            });
        }
    }

    /// Whether [`LimitTracker::configure`] has run.
    pub fn is_configured(&self) -> bool {
        self.round_ns != 0
    }

    fn push_sample(&mut self, s: AckSample) {
        if self.ring_len > 0 {
            let newest = (self.ring_next + RING - 1) % RING;
            let last = self.ring[newest];
            // Keep samples at least loop/16 apart; update the newest in between.
            if s.at_ns.saturating_sub(last.at_ns) < self.loop_ns / 16 {
                self.ring[newest] = AckSample {
                    at_ns: last.at_ns,
                    ..s
                };
                return;
            }
        }
        self.ring[self.ring_next] = s;
        self.ring_next = (self.ring_next + 1) % RING;
        self.ring_len = (self.ring_len + 1).min(RING);
    }

    /// The newest sample the sender could know at capture time `t`.
    fn known_at(&self, t_ns: u64) -> Option<AckSample> {
        self.sample_at(t_ns.saturating_sub(self.loop_ns))
    }

    /// The newest sample seen at or before `target`.
    fn sample_at(&self, target: u64) -> Option<AckSample> {
        let mut best: Option<AckSample> = None;
        let mut oldest: Option<AckSample> = None;
        for i in 0..self.ring_len {
            let s = self.ring[(self.ring_next + RING - 1 - i) % RING];
            if s.at_ns <= target {
                best = Some(s);
                break;
            }
            oldest = Some(s);
        }
        // The ring does not reach back far enough: its oldest sample.
        best.or(oldest)
    }

    /// Accounts the time since the previous segment to the current phase;
    /// an ACK seen here reaches the sender `loop` later, when the phase is
    /// decided again.
    fn advance(&mut self, t_ns: u64) {
        if let Some(p) = self.pending_at {
            if p < t_ns && p > self.last_ns {
                self.pending_at = None;
                self.account(p);
                self.decide(p);
                if let Some(r) = self.series.as_mut() {
                    r.learned = Some((p, self.phase, self.rounds));
                }
            }
        }
        self.account(t_ns);
    }

    fn account(&mut self, t_ns: u64) {
        if self.phase != Phase::NotStarted {
            let dt = t_ns.saturating_sub(self.last_ns);
            self.round.flight_time += u128::from(self.known_flight) * u128::from(dt);
            self.round.flight_ns += dt;
            match self.phase {
                Phase::Idle => {
                    self.times.idle += dt;
                    self.round.idle_ns += dt;
                }
                Phase::ReceiveWindow => self.times.rwnd += dt,
                Phase::Other => self.round.other_ns += dt,
                Phase::NotStarted => {}
            }
            if self.round_ns > 0 && t_ns >= self.round.start_ns.saturating_add(self.round_ns) {
                self.close_round(t_ns);
            }
        }
        self.last_ns = self.last_ns.max(t_ns);
    }

    /// Whether the current round's *other* time is the network's (module
    /// docs) rather than the sender's.
    fn round_is_network(&self) -> bool {
        let r = self.round;
        let flight = self.round_flight();
        // Still growing: by more than one segment or 10 % over the most of
        // the last rounds (a flight that rises and falls back, as a writer
        // pausing between chunks has one or two of them in flight, is not).
        let top = self.recent[..self.recent_len]
            .iter()
            .map(|x| x.0)
            .max()
            .unwrap_or(0);
        let growing = flight > top + self.mss || flight * 10 > top * 11;
        // More in flight than acknowledged by a quarter: at its most, and
        // on average over the round (a writer's burst of chunks is in
        // flight a moment, a standing queue all the round).
        let queueing = flight * 4 > r.acked * 5 && r.avg_flight() * 4 > r.acked * 5;
        r.retrans > 0 || growing || queueing || self.queue_delay() || self.regrowing(flight)
    }

    /// Whether a round whose flight is `flight` comes after a loss, its
    /// congestion window not yet back (module docs, after a loss): more than
    /// a segment below the flight at the loss, within the rounds the
    /// regrowth may take.
    fn regrowing(&self, flight: u64) -> bool {
        self.loss_rounds_left > 0 && flight + self.mss < self.loss_peak
    }

    /// After a round closes: a loss in it starts (or extends) the regrowth
    /// its congestion window needs; a round back at the flight of the loss
    /// ends it, as does the time Reno's regrowth would take.
    fn follow_loss(&mut self, flight: u64) {
        if self.round.retrans > 0 {
            let active = if self.loss_rounds_left > 0 {
                self.loss_peak
            } else {
                0
            };
            self.loss_peak = active.max(self.prev_max_flight).max(flight);
            // Reno wins back a halved window at one segment per round:
            // peak / (2 MSS) rounds; twice that, for the slack of a round's
            // flight measured here.
            self.loss_rounds_left = (self.loss_peak / self.mss.max(1)).max(1);
        } else if self.loss_rounds_left > 0 {
            self.loss_rounds_left -= 1;
            if flight + self.mss >= self.loss_peak {
                self.loss_rounds_left = 0;
            }
        }
    }

    /// The sender's segments reach the capture point later than their
    /// timestamps say by more than a fifth of the RTT (at least 2 ms) over
    /// the smallest such delay: a queue between the sender and here.
    fn queue_delay(&self) -> bool {
        self.queue_delay_over(self.round_ns / 5)
    }

    /// The round's largest delay from the sender to here exceeds the
    /// smallest by more than `over` (at least 2 ms).
    fn queue_delay_over(&self, over: u64) -> bool {
        match (self.round.owd_max, self.owd_min) {
            (Some(max), Some(min)) => {
                max - min > i64::try_from(over.max(2_000_000)).unwrap_or(i64::MAX)
            }
            _ => false,
        }
    }

    /// The round's most bytes in flight: as the sender's echoes date its
    /// knowledge of the ACKs when it has timestamps, else as the loop
    /// delay does.
    fn round_flight(&self) -> u64 {
        if self.round.max_echo_flight > 0 {
            self.round.max_echo_flight
        } else {
            self.round.max_flight
        }
    }

    /// The times so far with the current round booked.
    fn times_closed(&self) -> Times {
        let mut t = self.times;
        if self.round_is_network() {
            t.network += self.round.other_ns;
        } else {
            t.sender += self.round.other_ns;
        }
        t
    }

    /// Follows the plateau of the flight over rounds booked to the sender
    /// (module docs); time in a long enough plateau far below the window
    /// moves from the sender to the receive window.
    /// Returns whether this round's time moved.
    fn follow_plateau(&mut self, network: bool) -> bool {
        let r = self.round;
        let flight = self.round_flight();
        // No loss, ACKs arriving, no queue: a flight that stops at the same
        // byte round after round stops at an edge.
        // (A queue's delay is not checked here: a delay that varies leaves
        // an edge where it is, and a bottleneck's flight is not flat.)
        // A Linux sender at the window's edge sends full segments only
        // (`tcp_mss_split_point` cuts at a multiple of the MSS), so its
        // flight there is whole segments; a writer's chunk ends where the
        // application's write did (module docs, the plateau). And it always
        // has the window's worth outstanding: a round with nothing
        // outstanding for more than an eighth of it had nothing to send (a
        // writer between chunks; the eighth is twice the ring's dating of
        // the ACKs away from the sender, loop/16, and covers a receiver
        // that acknowledges a whole flight at once).
        let flat = r.retrans == 0
            && !self.queue_delay_over(self.round_ns / 2)
            && r.other_ns > 0
            && r.acked > 0
            && flight > 0
            && flight.is_multiple_of(self.mss.max(1))
            && r.idle_ns <= self.round_ns / 8;
        let (sender_ns, network_ns) = if network {
            (0, r.other_ns)
        } else {
            (r.other_ns, 0)
        };
        // Every segment of the round left more than a quarter of the round
        // (at least 2 ms) after the newest ACK its sender had read: it was
        // not answering ACKs (module docs, the plateau).
        let late = r
            .min_answer_ns
            .is_some_and(|d| d > (self.round_ns / 4).max(2_000_000));
        let p = &mut self.plateau;
        if flat && p.rounds > 0 && flight == p.flight {
            p.rounds += 1;
            p.sender_ns += sender_ns;
            p.network_ns += network_ns;
            p.min_window = p.min_window.min(r.min_window.unwrap_or(u64::MAX));
            p.late_rounds += u64::from(late);
        } else if flat {
            *p = Plateau {
                flight,
                rounds: 1,
                sender_ns,
                network_ns,
                min_window: r.min_window.unwrap_or(u64::MAX),
                first_round: self.rounds,
                late_rounds: u64::from(late),
                moved: false,
            };
        } else {
            *p = Plateau::default();
        }
        // A run of late rounds is a writer's, however flat: half of them or
        // more late and no time moves.
        if p.rounds >= PLATEAU_ROUNDS
            && p.flight * 2 <= p.min_window
            && p.late_rounds * 2 < p.rounds
        {
            // From the run's first qualifying round on, each round's time
            // moves as it closes (the earlier ones all at once).
            let first = !p.moved;
            p.moved = true;
            let p = *p;
            let (s, n) = if first {
                (p.sender_ns, p.network_ns)
            } else {
                (sender_ns, network_ns)
            };
            let (s, n) = (s.min(self.times.sender), n.min(self.times.network));
            self.times.sender -= s;
            self.times.network -= n;
            let moved = s + n;
            self.times.rwnd += moved;
            self.plateau_ns += moved;
            self.plateau_sender_ns += s;
            self.plateau_flight = self.plateau_flight.max(p.flight);
            if first {
                if let Some(r) = self.series.as_mut() {
                    r.plateau_moved = Some((p.first_round, self.rounds));
                }
            }
            return true;
        }
        false
    }

    /// Books the round's *other* time to the network or the sender.
    fn close_round(&mut self, t_ns: u64) {
        let network = self.round_is_network();
        self.times = self.times_closed();
        let moved = self.follow_plateau(network);
        let kind = match (moved, network) {
            (true, _) => RoundKind::ReceiveWindow,
            (false, true) => RoundKind::Network,
            (false, false) => RoundKind::Sender,
        };
        if let Some(r) = self.series.as_mut() {
            if r.closed_len == CLOSED {
                r.closed.copy_within(1.., 0);
                r.closed_len -= 1;
            }
            r.closed[r.closed_len] = (self.rounds, kind);
            r.closed_len += 1;
        }
        let flight = self.round_flight();
        self.follow_loss(flight);
        if flight > 0 {
            self.prev_max_flight = flight;
            if self.recent_len == RECENT {
                self.recent.copy_within(1.., 0);
                self.recent_len -= 1;
            }
            self.recent[self.recent_len] = (flight, self.round.acked);
            self.recent_len += 1;
        }
        self.rounds += 1;
        self.round = Round {
            start_ns: t_ns,
            ..Round::default()
        };
    }

    /// Decides the phase after a segment at `t`; returns the ACK sample the
    /// sender knew then (`None` before any data or any ACK).
    fn decide(&mut self, t_ns: u64) -> Option<AckSample> {
        let nxt = self.snd_nxt?;
        let Some(known) = self.known_at(t_ns) else {
            self.phase = Phase::Other;
            return None;
        };
        let outstanding = nxt.wrapping_sub(known.ack) as i32;
        let flight = u64::try_from(outstanding.max(0)).unwrap_or(0);
        self.round.max_flight = self.round.max_flight.max(flight);
        self.known_flight = flight;
        self.round.min_window = Some(
            self.round
                .min_window
                .map_or(u64::from(known.window), |w| w.min(u64::from(known.window))),
        );
        self.max_flight = self.max_flight.max(flight);
        // The next full segment does not fit: window-limited, even with
        // nothing outstanding (a window below one segment: the sender waits
        // for it to open, sending only window probes).
        self.phase = if flight + self.mss > u64::from(known.window) {
            Phase::ReceiveWindow
        } else if outstanding <= 0 {
            Phase::Idle
        } else {
            Phase::Other
        };
        Some(known)
    }

    /// A segment of this direction's sender carrying `payload` bytes from
    /// `seq`, with its TSval when it has timestamps (read in milliseconds,
    /// Linux's clock, for delay samples).
    pub fn on_data(
        &mut self,
        t_ns: u64,
        seq: u32,
        payload: u32,
        retransmission: bool,
        ts: Option<(u32, u32)>,
    ) {
        if payload == 0 {
            return;
        }
        let tsval = ts.map(|t| t.0);
        self.advance(t_ns);
        if let Some(v) = tsval {
            let v0 = *self.tsval0.get_or_insert(v);
            let sent_ns = i64::from(v.wrapping_sub(v0) as i32) * 1_000_000;
            let owd = i64::try_from(t_ns).unwrap_or(i64::MAX) - sent_ns;
            self.owd_min = Some(self.owd_min.map_or(owd, |m| m.min(owd)));
            self.round.owd_max = Some(self.round.owd_max.map_or(owd, |m| m.max(owd)));
        }
        let end = seq.wrapping_add(payload);
        if self.first_data_ns.is_none() {
            self.first_data_ns = Some(t_ns);
            self.round.start_ns = t_ns;
        }
        self.data_segments += 1;
        self.mss = self.mss.max(u64::from(payload));
        if retransmission {
            self.round.retrans += 1;
        }
        if self.snd_nxt.is_none_or(|n| seq_lt(n, end)) {
            self.snd_nxt = Some(end);
        }
        // The flight as the sender's echo dates what it knew: it had the
        // receiver's ACKs up to the TSval it echoes, none later.
        if let (Some((_, tsecr)), Some(nxt)) = (ts, self.snd_nxt) {
            if let Some(known) = self.ts_ack_by_tsval(tsecr) {
                let f = nxt.wrapping_sub(known.ack) as i32;
                if f > 0 {
                    let f = u64::from(f.unsigned_abs());
                    self.round.max_echo_flight = self.round.max_echo_flight.max(f);
                }
                // How long after the newest ACK it had read the sender sent
                // this (its answer delay, the plateau's): the time from that
                // ACK here to this segment here, less the loop.
                let answer = t_ns
                    .saturating_sub(known.seen_ns)
                    .saturating_sub(self.loop_ns);
                self.note_answer(answer);
            }
        }
        // The edge as the sender could know it when it sent this segment,
        // giving the loop delay a quarter of slack (it was measured once,
        // on the handshake).
        let slack = self.loop_ns / 4;
        let known_edge = self
            .sample_at(t_ns.saturating_sub(self.loop_ns - slack))
            .map(|k| k.ack.wrapping_add(k.window));
        if let Some(edge) = known_edge {
            if seq_lt(edge, end) {
                let start = if seq_lt(seq, edge) { edge } else { seq };
                self.beyond_bytes += u64::from(end.wrapping_sub(start));
                self.beyond_end = Some(end);
            }
        }
        let known = self.decide(t_ns);
        if ts.is_none() {
            // Without timestamps, the ACK the loop says it had read (dated
            // to within loop/16 by the ring, never later than it was seen).
            if let Some(known) = known {
                let answer = t_ns
                    .saturating_sub(self.loop_ns)
                    .saturating_sub(known.at_ns);
                self.note_answer(answer);
            }
        }
    }

    /// A segment's answer delay (module docs, the plateau): the round's
    /// shortest so far.
    fn note_answer(&mut self, answer_ns: u64) {
        self.round.min_answer_ns = Some(
            self.round
                .min_answer_ns
                .map_or(answer_ns, |m| m.min(answer_ns)),
        );
    }

    /// The newest tick kept at or before `tsecr`, with its highest ACK and
    /// when that was seen (`None`: none of those kept).
    fn ts_ack_by_tsval(&self, tsecr: u32) -> Option<TsAck> {
        (0..self.ts_len)
            .map(|i| self.ts_acks[(self.ts_next + TS_ACKS - 1 - i) % TS_ACKS])
            .find(|a| !seq_lt(tsecr, a.tsval))
            .filter(|_| {
                // Older than everything kept: unknown.
                let oldest = self.ts_acks[(self.ts_next + TS_ACKS - self.ts_len) % TS_ACKS].tsval;
                !seq_lt(tsecr, oldest)
            })
    }

    /// A segment of the receiver with ACK set: `ack`, its raw window field
    /// and its TSval when it has timestamps.
    pub fn on_ack(&mut self, t_ns: u64, ack: u32, window_field: u16, tsval: Option<u32>) {
        if let Some(v) = tsval {
            let newest = (self.ts_next + TS_ACKS - 1) % TS_ACKS;
            let entry = TsAck {
                tsval: v,
                ack,
                seen_ns: t_ns,
            };
            if self.ts_len > 0 && self.ts_acks[newest].tsval == v {
                if seq_lt(self.ts_acks[newest].ack, ack) {
                    self.ts_acks[newest] = entry;
                }
            } else if self.ts_len == 0 || seq_lt(self.ts_acks[newest].tsval, v) {
                self.ts_acks[self.ts_next] = entry;
                self.ts_next = (self.ts_next + 1) % TS_ACKS;
                self.ts_len = (self.ts_len + 1).min(TS_ACKS);
            }
        }
        self.advance(t_ns);
        let window = u32::from(window_field) << self.read_shift;
        if let Some(prev) = self.seen_ack {
            if seq_lt(prev, ack) && self.first_data_ns.is_some() {
                self.round.acked += u64::from(ack.wrapping_sub(prev));
            }
        }
        if self.seen_ack.is_none_or(|p| seq_lt(p, ack)) {
            self.seen_ack = Some(ack);
        }
        self.push_sample(AckSample {
            at_ns: t_ns,
            ack,
            window,
        });
        if self.loop_ns > 0 {
            self.pending_at = Some(t_ns + self.loop_ns);
        }
        // Everything sent is acknowledged here: the transfer so far ends now.
        if let Some(nxt) = self.snd_nxt {
            if !seq_lt(ack, nxt) {
                self.done = Some((self.times_closed(), self.rounds + 1, t_ns));
            }
        }
        self.decide(t_ns);
    }

    /// Bytes the sender put past the right edge the receiver advertised
    /// (read with this tracker's shift), and whether the receiver
    /// acknowledged the last of them (it accepted data beyond its window).
    pub fn beyond_window(&self) -> (u64, bool) {
        let accepted = match (self.beyond_end, self.seen_ack) {
            (Some(end), Some(ack)) => !seq_lt(ack, end),
            _ => false,
        };
        (self.beyond_bytes, accepted)
    }

    /// The verdict (module docs).
    pub fn limit(&self) -> Limit {
        if self.data_segments == 0 {
            // The reason of every connection without data (a port scan's).
            return Limit::none(NoLimitReason::TooFewSegments(0));
        }
        if self.data_segments < MIN_DATA_SEGMENTS {
            return Limit::none(NoLimitReason::TooFewSegments(self.data_segments));
        }
        if self.round_ns == 0 {
            return Limit::none(NoLimitReason::RttUnknown);
        }
        let Some((mut t, rounds, _)) = self.done else {
            return Limit::none(NoLimitReason::NotAllAcknowledged);
        };
        if rounds < MIN_ROUNDS {
            return Limit::none(NoLimitReason::TooFewRounds(rounds));
        }
        let busy = t.rwnd + t.network + t.sender;
        // A window rewritten on the way holds the flight at its edge for the
        // whole transfer. Flat rounds covering less than half the busy time
        // have another cause (a send buffer refilled in step held a BBR
        // sender at one flight for 16 rounds in lab case sndbuf-small4): their
        // time goes back where it was booked.
        let mut plateau = self.plateau_ns.min(t.rwnd);
        if plateau > 0 && plateau * 2 <= busy {
            let to_sender = (u128::from(plateau) * u128::from(self.plateau_sender_ns)
                / u128::from(self.plateau_ns.max(1))) as u64;
            t.rwnd -= plateau;
            t.sender += to_sender;
            t.network += plateau - to_sender;
            plateau = 0;
        }
        let total = busy + t.idle;
        if busy == 0 {
            return Limit::none(NoLimitReason::NeverBusy);
        }
        let frac = |x: u64| x as f64 / busy as f64;
        let idle = t.idle as f64 / total as f64;
        let kind = if idle > 0.5 {
            LimitKind::Sender
        } else if t.rwnd >= t.network && t.rwnd >= t.sender {
            LimitKind::ReceiveWindow
        } else if t.sender > t.network {
            LimitKind::Sender
        } else {
            LimitKind::Network
        };
        // How the receive-window time was found: the flight's plateau (a
        // window the sender read that the capture does not show) or the
        // advertised window, whichever gave more of it.
        let receive_window_evidence = (t.rwnd > 0).then(|| {
            if plateau * 2 > t.rwnd {
                WindowEvidence::FlightPlateau {
                    flight: self.plateau_flight,
                    mss: self.mss,
                }
            } else {
                WindowEvidence::AdvertisedWindow
            }
        });
        Limit {
            kind,
            receive_window_fraction: Some(frac(t.rwnd)),
            sender_fraction: Some(frac(t.sender)),
            network_fraction: Some(frac(t.network)),
            idle_fraction: Some(idle),
            busy_s: Some(busy as f64 / 1e9),
            reason: None,
            window_read_inferred_bytes: (plateau > 0).then_some(self.plateau_flight),
            receive_window_evidence,
            inferred_shift: None,
        }
    }
}

/// What limited a direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// The receive window as the sender read it.
    ReceiveWindow,
    /// The sender: its send buffer, or its application not supplying data.
    Sender,
    /// The network: the congestion window after loss or at a bottleneck queue.
    Network,
    /// Too little data to tell.
    None,
}

/// The `limit` object of a direction (module docs; `docs/json.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// The largest share (or `sender` when mostly idle, `none`).
    pub kind: LimitKind,
    /// Share of the busy time limited by the receive window.
    pub receive_window_fraction: Option<f64>,
    /// Share of the busy time the sender held back (send buffer).
    pub sender_fraction: Option<f64>,
    /// Share of the busy time limited by the congestion window / path.
    pub network_fraction: Option<f64>,
    /// Share of the transfer time with nothing outstanding.
    pub idle_fraction: Option<f64>,
    /// The sender's busy time, seconds.
    pub busy_s: Option<f64>,
    /// Why the kind is `none`.
    pub reason: Option<NoLimitReason>,
    /// When the flight's plateau showed a window the capture does not (module
    /// docs): the plateau's bytes in flight, the least the window the sender
    /// read can be (it is below this plus one segment).
    pub window_read_inferred_bytes: Option<u64>,
    /// What the receive-window time rests on (`null` without any).
    pub receive_window_evidence: Option<WindowEvidence>,
    /// Without the handshake or `--assume-wscale`: the shift the window
    /// fields were read with, as the capture pins it (`wscale_inferred`).
    pub inferred_shift: Option<u8>,
}

impl Limit {
    /// True when a fraction or the busy time is given: the fields whose
    /// equal values can print differently (`0.0` and `-0.0`).
    pub fn has_float(&self) -> bool {
        self.receive_window_fraction.is_some()
            || self.sender_fraction.is_some()
            || self.network_fraction.is_some()
            || self.idle_fraction.is_some()
            || self.busy_s.is_some()
    }

    /// How sure the kind is ([`Confidence`]; `None` for kind `none`).
    ///
    /// - `receive_window`: its evidence's ([`WindowEvidence::confidence`]:
    ///   `high` from the advertised window, `medium` from a flight plateau).
    /// - `sender` and `network`: `medium`. One capture point does not see
    ///   the sender's socket: from the receiver's side a sender held back by
    ///   its send buffer sends the same flights as one held back by its
    ///   congestion window (issue 30: send-buffer-limited transfers called
    ///   `network` on 5 of 6 sides), and from the sender's side a
    ///   loss-limited sender can look held back (called `sender` 3 of 3
    ///   times); the sender's `TCP_INFO` decides, the capture cannot.
    pub fn confidence(&self) -> Option<Confidence> {
        match self.kind {
            LimitKind::None => None,
            LimitKind::ReceiveWindow => Some(
                self.receive_window_evidence
                    .map_or(Confidence::Medium, |e| e.confidence()),
            ),
            LimitKind::Sender | LimitKind::Network => Some(Confidence::Medium),
        }
    }

    /// Too little to tell: kind `none`, no shares, and why.
    pub fn none(reason: NoLimitReason) -> Limit {
        Limit {
            kind: LimitKind::None,
            receive_window_fraction: None,
            sender_fraction: None,
            network_fraction: None,
            idle_fraction: None,
            busy_s: None,
            reason: Some(reason),
            window_read_inferred_bytes: None,
            receive_window_evidence: None,
            inferred_shift: None,
        }
    }
}

/// What a direction's receive-window time rests on ([`Limit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowEvidence {
    /// The window fields seen here, read with the sender's shift: the next
    /// full segment would have passed the right edge the receiver
    /// advertised.
    AdvertisedWindow,
    /// The sender stopped at one flight, the same byte for
    /// [`PLATEAU_ROUNDS`] round trips or more at a time, with no loss, ACKs
    /// arriving and no queue, while the receiver advertised at least twice
    /// that: it read a smaller window (a window field rewritten on the way,
    /// or a clamp at the sender).
    FlightPlateau {
        /// The bytes in flight it stopped at.
        flight: u64,
        /// Its segment size: the window it read is below `flight + mss`.
        mss: u64,
    },
}

impl WindowEvidence {
    /// The name in JSON (`kind`): `advertised_window` or `flight_plateau`.
    pub fn kind(&self) -> &'static str {
        match self {
            WindowEvidence::AdvertisedWindow => "advertised_window",
            WindowEvidence::FlightPlateau { .. } => "flight_plateau",
        }
    }

    /// `high` for the advertised window, `medium` for the plateau. Fooled
    /// by: a sender clamped at one flight for another reason (a send
    /// buffer, or a congestion-control cap such as BBR's), which looks the
    /// same; so a plateau is a hint of a rewritten window field, never a
    /// finding.
    pub fn confidence(&self) -> Confidence {
        match self {
            WindowEvidence::AdvertisedWindow => Confidence::High,
            WindowEvidence::FlightPlateau { .. } => Confidence::Medium,
        }
    }

    /// Whether it is the flight's plateau.
    pub fn is_plateau(&self) -> bool {
        matches!(self, WindowEvidence::FlightPlateau { .. })
    }
}

/// Why a direction's limit is `none` ([`Limit::reason`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoLimitReason {
    /// This many data segments, fewer than [`MIN_DATA_SEGMENTS`].
    TooFewSegments(u64),
    /// No RTT: the rounds cannot be timed.
    RttUnknown,
    /// The receiver never acknowledged all the data in the capture.
    NotAllAcknowledged,
    /// The transfer lasted this many round trips, fewer than [`MIN_ROUNDS`].
    TooFewRounds(u64),
    /// The sender was never busy.
    NeverBusy,
    /// No handshake, and the input kept to read the windows once the
    /// capture shows the shift was dropped ([`crate::analysis::limit_log`]).
    LogDropped(Dropped),
    /// No handshake, no shift assumed or pinned: the window scale is
    /// unknown; with what the capture shows of the shift.
    WindowScaleUnknown(Option<ShiftRange>),
}

/// The shifts a sender may read its receiver's window fields with, as far
/// as the capture shows ([`NoLimitReason::WindowScaleUnknown`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShiftRange {
    /// The sending end.
    pub sender: Endpoint,
    /// Smallest shift.
    pub min: u8,
    /// Largest shift.
    pub max: u8,
}

#[cfg(test)]
mod tests;
