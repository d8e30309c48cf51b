//! The long-flow capture (`gen-capture`): many interleaved connections,
//! each with a whole life, at most `open` of them open at once.
//!
//! # Traffic model
//!
//! `open` slots each hold a connection ([`Connection::draw`]: family, DS
//! field, option layout and the rest, with the mixes listed in
//! [`crate::conn`]). Each step picks a slot uniformly at random and lets its
//! connection send its next segment; a connection that has closed is
//! replaced by a new one (the next index) and that step writes nothing. So
//! a capture ten times larger holds about ten times more connections but
//! never more than `open` open at the same time: the property an analyser's
//! memory should follow. Records are spaced 1 to 19 us apart (uniform);
//! the first is at [`crate::START_US`]. TSval is the side's base plus the
//! capture time in milliseconds (the time before the record's own step).
//!
//! A connection's life, segment by segment:
//!
//! 1. SYN (client, window 64800 or Windows' 64240) and SYN-ACK (server,
//!    window 65160), options in the connection's layout
//!    ([`Connection::syn_options`]): MSS, SACK-Permitted, timestamps and
//!    window scale 7 (Linux), MSS, window scale and SACK-Permitted without
//!    timestamps (Windows), or Linux's with the window scale stripped to
//!    NOPs by [`tcp_options::rewrite::remove_window_scale`] (10%, as a
//!    middlebox does; no scaling is then in effect).
//! 2. The client's ACK, window 64800 or 64240 scaled down by the shift
//!    (at least 1).
//! 3. `exchanges` (5..200) times: a data segment from the client (ACK|PSH,
//!    window 502), full-sized (MSS less 12 bytes when timestamps are on)
//!    with probability 0.7, else 1..1400 bytes; then the server's ACK
//!    (window 65160 * 48 scaled by the shift, at most 65535).
//!    - Loss: with probability 0.01, while fewer than 3 segments are
//!      missing, a data segment is "lost after the capture point": the
//!      server keeps acknowledging the first hole and SACKs, in up to three
//!      blocks, the data above each hole.
//!    - Repair: while holes remain, an exchange retransmits the oldest one
//!      instead (probability 0.3; the length drawn for the new segment is
//!      dropped and no server ACK follows that step).
//! 4. The remaining holes retransmitted (ACK), then FIN|ACK from the client
//!    (window 502), FIN|ACK from the server (window 509), the last ACK.
//!
//! Every segment after the SYNs carries timestamps unless the layout is
//! Windows'. These are the rules, probabilities and ranges of the Python
//! generator this module replaces, draw for draw; the counts follow from
//! them.
//!
//! One count differs on purpose: the sidecar's `connections` counts the
//! connections with at least one segment in the capture (as the
//! many-connections sidecar always did); the Python one counted those
//! created, which included up to `open` slots refilled and never stepped.

use std::collections::VecDeque;
use std::io::Write;

use rand::RngExt;
use tcp_options::{Flags, SackBlock};

use crate::conn::{Connection, Layout};
use crate::error::GenError;
use crate::frame::{self, Segment, MAX_FRAME_LEN};
use crate::record::{Pool, Recorder};
use crate::sink::CaptureSink;
use crate::Counts;

/// Probability that a data segment is full-sized.
pub const FULL_SIZED: f64 = 0.7;
/// Smallest and one past the largest length of a segment that is not
/// full-sized.
pub const SHORT_LEN: core::ops::Range<usize> = 1..1400;
/// Probability that a data segment is lost after the capture point.
pub const LOSS: f64 = 0.01;
/// Most holes at once.
pub const MAX_HOLES: usize = 3;
/// Probability that an exchange retransmits the oldest hole (when there is one).
pub const RETRANSMIT: f64 = 0.3;
/// Number of data/ACK exchanges of a connection, drawn uniformly.
pub const EXCHANGES: core::ops::Range<u32> = 5..200;
/// Gap between two records, microseconds, drawn uniformly.
pub const GAP_US: core::ops::Range<u64> = 1..20;
/// Timestamp option length counted against the MSS.
const TIMESTAMPS_LEN: u16 = 12;
/// Window of the client's segments after the handshake.
const CLIENT_WINDOW: u16 = 502;
/// Window of the server's FIN.
const SERVER_FIN_WINDOW: u16 = 509;
/// The server's receive window grows to 48 times its SYN-ACK window.
const SERVER_WINDOW_GROWTH: u32 = 48;

/// When to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// After this many segments.
    Segments(u64),
    /// Once the first sink holds at least this many bytes.
    Bytes(u64),
}

/// The generator's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// When to stop.
    pub limit: Limit,
    /// Connections open at once (slots), at least 1.
    pub open: usize,
    /// Seed of the generator.
    pub seed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Syn,
    SynAck,
    HandshakeAck,
    Data,
    ServerAck,
    Fin,
    ServerFin,
    LastAck,
    Closed,
}

/// A missing segment: its sequence number and length.
#[derive(Debug, Clone, Copy)]
struct Hole {
    seq: u32,
    len: u32,
}

/// One connection of the long-flow shape and where it is in its life.
#[derive(Debug)]
struct Flow {
    c: Connection,
    phase: Phase,
    /// Next sequence number of the client (the highest sent).
    cseq: u32,
    /// Next sequence number of the server.
    sseq: u32,
    /// Exchanges left before the close.
    left: u32,
    /// Segments lost after the capture point, oldest first.
    lost: VecDeque<Hole>,
    /// Whether a segment of it has been written.
    started: bool,
}

impl Flow {
    fn new(rng: &mut crate::Rng, index: u64) -> Self {
        let c = Connection::draw(rng, index);
        Flow {
            phase: Phase::Syn,
            cseq: c.client_isn,
            sseq: c.server_isn,
            left: c.exchanges,
            lost: VecDeque::with_capacity(MAX_HOLES),
            started: false,
            c,
        }
    }

    /// The server's ACK window: 48 times its SYN-ACK window, scaled down
    /// by the shift and at most 65535; the SYN-ACK window itself when no
    /// scaling is in effect.
    fn server_ack_window(&self) -> u16 {
        let w = u32::from(self.c.server_window);
        match self.c.window_scale {
            0 => self.c.server_window,
            shift => ((w * SERVER_WINDOW_GROWTH) >> shift).min(u32::from(u16::MAX)) as u16,
        }
    }

    /// The server's ACK of the data: the first hole, and a SACK block for
    /// the data above each of the first three holes.
    fn server_ack(&self) -> (u32, [SackBlock; MAX_HOLES], usize) {
        let mut blocks = [SackBlock { left: 0, right: 0 }; MAX_HOLES];
        let mut n = 0;
        let Some(first) = self.lost.front() else {
            return (self.cseq, blocks, 0);
        };
        for (i, h) in self.lost.iter().enumerate().take(MAX_HOLES) {
            let next = self.lost.get(i + 1).map_or(self.cseq, |h| h.seq);
            let end = h.seq.wrapping_add(h.len);
            if next != end {
                blocks[n] = SackBlock {
                    left: end,
                    right: next,
                };
                n += 1;
            }
        }
        (first.seq, blocks, n)
    }

    /// Write the next segment into `buf` and return its length, or `None`
    /// when the connection has closed.
    fn step(
        &mut self,
        rng: &mut crate::Rng,
        t_us: u64,
        buf: &mut [u8],
    ) -> Result<Option<usize>, GenError> {
        let ms = (t_us / 1000) as u32;
        let tsv_c = self.c.ts_client.wrapping_add(ms);
        let tsv_s = self.c.ts_server.wrapping_add(ms);
        let strip = self.c.layout == Layout::LinuxNoWindowScale;
        let client = |flags, seq, ack, window, payload_len| Plain {
            from_client: true,
            flags,
            seq,
            ack,
            window,
            payload_len,
        };
        let plain = match self.phase {
            Phase::Syn | Phase::SynAck => {
                let from_client = self.phase == Phase::Syn;
                let (seg, opts) = if from_client {
                    self.phase = Phase::SynAck;
                    let seg =
                        Segment::new(true, Flags::SYN, self.cseq, 0, self.c.client_window, &[]);
                    (seg, self.c.syn_options(tsv_c, 0)?)
                } else {
                    self.phase = Phase::HandshakeAck;
                    let ack = self.cseq.wrapping_add(1);
                    let flags = Flags::SYN | Flags::ACK;
                    let seg = Segment::new(false, flags, self.sseq, ack, self.c.server_window, &[]);
                    (seg, self.c.syn_options(tsv_s, tsv_c)?)
                };
                let seg = Segment {
                    options: opts.as_slice(),
                    strip_window_scale: strip,
                    ..seg
                };
                return frame::build(&mut self.c, &seg, buf).map(Some);
            }
            Phase::HandshakeAck => {
                self.phase = Phase::Data;
                self.cseq = self.cseq.wrapping_add(1);
                self.sseq = self.sseq.wrapping_add(1);
                let window = (u32::from(self.c.client_window) >> self.c.window_scale).max(1);
                client(Flags::ACK, self.cseq, self.sseq, window as u16, 0)
            }
            Phase::Data if self.left == 0 => {
                self.phase = Phase::Fin;
                return self.step(rng, t_us, buf);
            }
            Phase::Data => {
                self.left -= 1;
                let plen = if rng.random::<f64>() < FULL_SIZED {
                    let ts = if self.c.timestamps() {
                        TIMESTAMPS_LEN
                    } else {
                        0
                    };
                    usize::from(self.c.mss - ts)
                } else {
                    rng.random_range(SHORT_LEN)
                };
                let data = Flags::ACK | Flags::PSH;
                if !self.lost.is_empty() && rng.random::<f64>() < RETRANSMIT {
                    // The oldest hole again; the phase stays (no server ACK).
                    let h = self.lost.pop_front().unwrap_or(Hole { seq: 0, len: 0 });
                    client(data, h.seq, self.sseq, CLIENT_WINDOW, h.len as usize)
                } else {
                    let seq = self.cseq;
                    self.cseq = self.cseq.wrapping_add(plen as u32);
                    if rng.random::<f64>() < LOSS && self.lost.len() < MAX_HOLES {
                        self.lost.push_back(Hole {
                            seq,
                            len: plen as u32,
                        });
                    }
                    self.phase = Phase::ServerAck;
                    client(data, seq, self.sseq, CLIENT_WINDOW, plen)
                }
            }
            Phase::ServerAck => {
                self.phase = Phase::Data;
                let (ack, blocks, n) = self.server_ack();
                let opts = self.c.data_options(tsv_s, tsv_c, &blocks[..n])?;
                let window = self.server_ack_window();
                let seg = Segment::new(false, Flags::ACK, self.sseq, ack, window, opts.as_slice());
                return frame::build(&mut self.c, &seg, buf).map(Some);
            }
            Phase::Fin => match self.lost.pop_front() {
                // Holes repaired first.
                Some(h) => client(Flags::ACK, h.seq, self.sseq, CLIENT_WINDOW, h.len as usize),
                None => {
                    self.phase = Phase::ServerFin;
                    let seq = self.cseq;
                    self.cseq = self.cseq.wrapping_add(1);
                    client(Flags::FIN | Flags::ACK, seq, self.sseq, CLIENT_WINDOW, 0)
                }
            },
            Phase::ServerFin => {
                self.phase = Phase::LastAck;
                let seq = self.sseq;
                self.sseq = self.sseq.wrapping_add(1);
                Plain {
                    from_client: false,
                    ..client(
                        Flags::FIN | Flags::ACK,
                        seq,
                        self.cseq,
                        SERVER_FIN_WINDOW,
                        0,
                    )
                }
            }
            Phase::LastAck => {
                self.phase = Phase::Closed;
                client(Flags::ACK, self.cseq, self.sseq, CLIENT_WINDOW, 0)
            }
            Phase::Closed => return Ok(None),
        };
        let (tsval, tsecr) = if plain.from_client {
            (tsv_c, tsv_s)
        } else {
            (tsv_s, tsv_c)
        };
        let opts = self.c.data_options(tsval, tsecr, &[])?;
        let seg = Segment {
            payload_len: plain.payload_len,
            ..Segment::new(
                plain.from_client,
                plain.flags,
                plain.seq,
                plain.ack,
                plain.window,
                opts.as_slice(),
            )
        };
        frame::build(&mut self.c, &seg, buf).map(Some)
    }
}

/// A segment with only the timestamps option (when the layout has them).
struct Plain {
    from_client: bool,
    flags: Flags,
    seq: u32,
    ack: u32,
    window: u16,
    payload_len: usize,
}

/// Write the long-flow capture (module docs) to every sink; returns the
/// counts. The byte limit looks at the first sink.
pub fn generate<W: Write>(
    params: &Params,
    sinks: &mut [CaptureSink<W>],
) -> Result<Counts, GenError> {
    let mut rng = crate::rng(params.seed);
    let mut pool = Pool::new(&mut rng, params.open, Flow::new);
    let mut rec = Recorder::new(sinks, GAP_US);
    let mut buf = [0u8; MAX_FRAME_LEN];
    loop {
        let done = match params.limit {
            Limit::Segments(n) => rec.counts().segments >= n,
            Limit::Bytes(n) => rec.first_sink_bytes().is_none_or(|b| b >= n),
        };
        if done || pool.is_empty() {
            break;
        }
        let i = pool.pick(&mut rng);
        let flow = pool.get_mut(i);
        let Some(len) = flow.step(&mut rng, rec.t_us(), &mut buf)? else {
            pool.replace(i, &mut rng);
            continue;
        };
        if !flow.started {
            flow.started = true;
            rec.count_connection();
        }
        let ipv6 = flow.c.is_ipv6();
        rec.record(&mut rng, &buf[..len], ipv6)?;
    }
    Ok(rec.finish())
}
