//! The report of a finished connection: what each endpoint negotiated
//! ([`Negotiated`]), and per direction what the window allowed, what was
//! achieved and what limited the sender ([`DirectionReport`]).

use std::time::Duration;

use bdp::{BitsPerSecond, Bytes};
use serde::Serialize;
use tcp_options::kind::MAX_WINDOW_SCALE;

use crate::analysis::limit_log::LimitLog;
use crate::analysis::limits::{Limit, LimitKind, LimitTracker, NoLimitReason, ShiftRange};
use crate::conn::negotiation::{self, EcnMode, HandshakeKind, LinuxDrop};
pub use crate::conn::tracker::CarriedIn;
use crate::conn::tracker::Connection;
use crate::conn::{Direction, Endpoint};
use crate::finding::Confidence;

use super::limit_feed::{LimitPair, UNUSED_LIMITS};
use super::mismatch::{
    client_fields, client_unscaled_evidence, server_scaled_evidence, server_scales_anyway,
    ClientFields, MismatchEvidence, ScaledAfterAll,
};
use super::shift::{infer_shift, ShiftInterval};
use super::side::Side;
use super::state::{ConnState, SynAnswered};
use super::verdict::{verdict, Verdict};
use super::{RttSource, Settings};

/// Fraction (in percent) of the ceiling achieved that marks a flow window-limited.
const CEILING_PERCENT: u128 = 70;
/// Above this fraction (in percent) of the ceiling the capture contradicts
/// it: the largest window seen was not in force while the data was sent (or
/// the sender read a larger one), so the ceiling is not reported as the
/// limit and the text says what the capture shows instead. 100: a ceiling
/// is a limit only where the achieved throughput does not exceed it.
pub(crate) const CEILING_MAX_PERCENT: u128 = 100;

/// The per-direction part of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectionReport {
    /// Segments sent in this direction.
    pub packets: u64,
    /// Payload bytes sent (retransmissions included).
    pub bytes: u64,
    /// Data segments that did not advance the highest sequence number.
    pub retransmissions: u64,
    /// Payload bytes in those segments.
    pub retransmitted_bytes: u64,
    /// Bytes the receiver acknowledged that the capture never showed: the
    /// capture's loss, not the network's (at least this many; see
    /// [`crate::conn::missed`]). `bytes` and `packets` count what the capture
    /// shows; `throughput_bps` includes these.
    pub capture_missed_bytes: u64,
    /// The largest receive window the receiver advertised, as this
    /// direction's sender interprets it, but never more than the receiver
    /// means by it (the two differ when the endpoints disagree about scaling)
    /// (`null`: scale unknown or no window seen).
    pub max_window_bytes: Option<u64>,
    /// The raw largest window field the receiver sent after its SYN.
    pub max_window_field: Option<u16>,
    /// Throughput ceiling of `max_window_bytes` at the RTT, bit/s.
    pub ceiling_bps: Option<u64>,
    /// Achieved throughput (new data only), bit/s.
    pub throughput_bps: Option<u64>,
    /// Whether the receive window capped this direction (`null`: unknown):
    /// the limit is the receive window and the achieved throughput does not
    /// exceed the ceiling.
    pub window_limited: Option<bool>,
    /// How sure `window_limited` `true` is (`null` otherwise): the limit's
    /// confidence when the limit is the receive window; `medium` when it
    /// rests on a window's worth in flight or the throughput near the
    /// ceiling without the time split (a sender whose congestion window
    /// or send buffer happens to match the receive window looks the same).
    pub window_limited_confidence: Option<Confidence>,
    /// What limited the sender ([`crate::analysis::limits`]).
    pub limit: Limit,
    /// Bytes the sender put past the right edge of the window as the
    /// receiver meant it (`null`: the receiver's shift is unknown).
    pub beyond_window_bytes: Option<u64>,
    /// The receiver acknowledged the last of those bytes: it accepted data
    /// beyond the window it advertised (`null` when none was sent).
    pub beyond_window_accepted: Option<bool>,
    /// For a transfer limited by the receive window or the send buffer: the
    /// Linux settings that lift the limit for `--target-rate` at the RTT
    /// (`bdp::linux::advise`); empty otherwise.
    pub advice: Vec<AdviceItem>,
}

/// One Linux setting to change ([`DirectionReport::advice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdviceItem {
    /// The setting, its value and why (`bdp`'s Linux buffer model).
    pub advice: bdp::linux::Advice,
    /// The host to change.
    pub host: bdp::linux::Side,
}

/// Both directions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Directions {
    /// Client to server.
    pub client_to_server: DirectionReport,
    /// Server to client.
    pub server_to_client: DirectionReport,
}

impl Directions {
    /// The report of direction `d`.
    pub fn of(&self, d: Direction) -> &DirectionReport {
        match d {
            Direction::ClientToServer => &self.client_to_server,
            Direction::ServerToClient => &self.server_to_client,
        }
    }
}

/// A value per endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PerEndpoint<T> {
    /// The client's.
    pub client: T,
    /// The server's.
    pub server: T,
}

impl<T: Copy> PerEndpoint<T> {
    /// The value of `e`.
    pub fn of(&self, e: Endpoint) -> T {
        match e {
            Endpoint::Client => self.client,
            Endpoint::Server => self.server,
        }
    }
}

/// What was negotiated, as the endpoints believe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Negotiated {
    /// MSS each endpoint announced (`null`: none, or its segment unseen).
    pub mss: PerEndpoint<Option<u16>>,
    /// Shifts each endpoint announced for its own receive window, when
    /// scaling is on for both; `null` otherwise.
    pub wscale: Option<PerEndpoint<u8>>,
    /// Shift offered in each handshake segment as seen (`null`: no option).
    pub wscale_offered: PerEndpoint<Option<u8>>,
    /// A shift above 14 as it was on the wire (Linux uses 14), per endpoint.
    pub wscale_clamped_from: PerEndpoint<Option<u8>>,
    /// Window scaling on, as each endpoint believes (`null`: unknown).
    pub wscale_on: PerEndpoint<Option<bool>>,
    /// The endpoints disagree about window scaling (the broken state).
    pub wscale_mismatch: bool,
    /// What in the capture shows the mismatch (`null` without one).
    pub wscale_mismatch_evidence: Option<MismatchEvidence>,
    /// SACK on for both (each kernel's reading of the peer's handshake).
    pub sack: bool,
    /// Timestamps on for both.
    pub timestamps: bool,
    /// ECN the handshake set up: `classic` (RFC 3168), `accecn` (RFC 9768)
    /// or `null` (none, or a handshake segment unseen).
    pub ecn: Option<EcnMode>,
    /// Handshake segments a Linux kernel drops for their signature options.
    pub linux_drops: Vec<LinuxDrop>,
    /// Without a handshake: the interval each endpoint's window-scale
    /// shift must lie in, from the capture (`null` with a handshake).
    pub wscale_inferred: Option<PerEndpoint<Option<ShiftInterval>>>,
    /// The client's first window field, at least half its SYN window,
    /// would say it does not scale, but the capture shows its windows
    /// scaled: what shows it (`null` otherwise).
    pub wscale_unscaled_ruled_out: Option<ScaledAfterAll>,
    /// The client sent SYNs with different options: which one the SYN-ACK
    /// answers, and what shows it (`null`: one SYN, or all alike). The
    /// negotiation follows that SYN; when the capture cannot tell, window
    /// scaling is unknown for both ends (`wscale_on` `null`).
    pub syn_answered: Option<SynAnswered>,
}

/// The report of one connection.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionReport {
    /// The connection's number, from 1, in order of first appearance.
    pub id: u64,
    /// The SYN sender.
    pub client: std::net::SocketAddr,
    /// The other side.
    pub server: std::net::SocketAddr,
    /// False when no SYN or SYN-ACK told which side is the client (guessed by port).
    pub client_known: bool,
    /// SYN and SYN-ACK both seen.
    pub handshake_seen: bool,
    /// Pushed out of the full connection table (`--max-connections`)
    /// before it ended; its later segments are reported as a connection
    /// whose `continues` is this one's `id`.
    pub evicted: bool,
    /// The `id` of the evicted connection this one is the rest of (`null`
    /// otherwise).
    pub continues: Option<u64>,
    /// The shift assumed with `--assume-wscale` for a connection without handshake.
    pub assumed_wscale: Option<u8>,
    /// Frame of the first segment.
    pub first_frame: u64,
    /// Frame of the last segment.
    pub last_frame: u64,
    /// Negotiation.
    pub negotiated: Negotiated,
    /// RTT (`None`: not measurable and not given).
    pub rtt: Option<Duration>,
    /// Where the RTT comes from.
    pub rtt_source: Option<RttSource>,
    /// Per direction figures.
    pub directions: Directions,
    /// The verdict: what the figures mean, part by part.
    pub verdict: Verdict,
    /// The tunnels and encapsulations the connection was carried in
    /// (`None` on a plain link).
    pub tunnels: Option<CarriedIn>,
}

impl ConnectionReport {
    /// A broken negotiation, a handshake segment Linux drops, or a
    /// window-limited direction, each of [`Confidence::High`]: what makes
    /// `firewall-check analyze` exit with status 3. A `medium` one is a
    /// hint: reported, worded as one, and not counted.
    pub fn has_findings(&self) -> bool {
        let high = |c: Option<Confidence>| c == Some(Confidence::High);
        (self.negotiated.wscale_mismatch
            && high(
                self.negotiated
                    .wscale_mismatch_evidence
                    .as_ref()
                    .map(MismatchEvidence::confidence),
            ))
            || self
                .negotiated
                .linux_drops
                .iter()
                .any(|d| d.confidence() == Confidence::High)
            || high(self.directions.client_to_server.window_limited_confidence)
            || high(self.directions.server_to_client.window_limited_confidence)
    }

    /// The RTT in seconds (`rtt_s` in JSON).
    pub fn rtt_s(&self) -> Option<f64> {
        self.rtt.map(|d| d.as_secs_f64())
    }
}

/// The ceiling of `window` bytes at `rtt`, bit/s.
pub(crate) fn ceiling_of(window: u64, rtt: Option<Duration>) -> Option<u64> {
    bdp::ceiling(Bytes::new(window), rtt?)
        .ok()
        .map(BitsPerSecond::get)
}

/// What the report reads of the handshake, computed once.
struct Handshake {
    seen: bool,
    syn_ws: Option<u8>,
    synack_ws: Option<u8>,
    /// The broken state seen from the client's side ([`server_scales_anyway`]).
    server_scales_anyway: bool,
    /// Window scaling on as each end believes.
    client_on: Option<bool>,
    server_on: Option<bool>,
    /// Without the handshake: each endpoint's shift from the capture.
    inferred: Option<PerEndpoint<Option<ShiftInterval>>>,
    /// How sure the reading of the windows is where it rests on the
    /// capture showing the ends disagree about scaling (the mismatch's
    /// evidence): a direction's window limit is never surer than that
    /// reading. `None`: the handshake alone decides.
    reading_confidence: Option<Confidence>,
}

/// Builds the report of a finished connection.
pub fn report(conn: &Connection<ConnState>, settings: &Settings) -> ConnectionReport {
    let st = &conn.state;
    let (hs, negotiated) = negotiated(st);
    let (rtt, rtt_source) = match settings.rtt {
        Some(r) => (Some(r), Some(RttSource::Given)),
        None => st.measured_rtt().unzip(),
    };
    let assumed = if hs.seen {
        None
    } else {
        settings.assume_wscale
    };
    let reading = Reading {
        st,
        hs: &hs,
        rtt,
        assumed,
        settings,
    };
    let directions = Directions {
        client_to_server: reading.direction(Direction::ClientToServer),
        server_to_client: reading.direction(Direction::ServerToClient),
    };
    let mut r = ConnectionReport {
        id: conn.id + 1,
        client: conn.client,
        server: conn.server,
        client_known: conn.client_known,
        handshake_seen: hs.seen,
        evicted: conn.evicted,
        continues: conn.continues.map(|id| id + 1),
        assumed_wscale: assumed,
        first_frame: conn.first_frame,
        last_frame: conn.last_frame,
        negotiated,
        rtt,
        rtt_source,
        directions,
        verdict: Verdict::default(),
        tunnels: conn.carried_in(),
    };
    r.verdict = verdict(&r, st, settings);
    r
}

/// The handshake as the endpoints hold it, and what in the capture shows
/// they disagree about window scaling.
fn negotiated(st: &ConnState) -> (Handshake, Negotiated) {
    let seen = st.handshake_seen();
    let h = negotiation::held(st.syn.as_ref(), st.synack.as_ref());
    let syn_ws = h.syn.and_then(|r| r.window_scale);
    let synack_ws = h.synack.and_then(|r| r.window_scale);
    let server_scales_anyway = server_scales_anyway(st, syn_ws, synack_ws);
    // The broken state seen from the server's side: the SYN-ACK seen here
    // answered, yet the client's windows after the handshake are unscaled.
    let client_unscaled = client_unscaled_evidence(st, syn_ws, synack_ws);
    // Several SYNs with different options and nothing shows which one the
    // SYN-ACK answers: what each end holds is unknown.
    let unknown = matches!(st.syn_answered, Some(SynAnswered::Unknown { .. }));
    let client_on = if seen && !unknown {
        h.negotiation
            .client
            .map(|v| v.window_scaling && client_unscaled.is_none())
    } else {
        None
    };
    // One capture point: what the SYN-ACK carries is what the server did,
    // unless its windows show it scales anyway.
    let server_on = st
        .synack
        .filter(|_| !unknown)
        .map(|_| syn_ws.is_some() && (synack_ws.is_some() || server_scales_anyway));
    // Without the handshake: each endpoint's shift from the capture, and
    // what shows the two ends disagree.
    let (inferred, inferred_mismatch) = if seen {
        (None, None)
    } else {
        let (client, c_ev) = infer_shift(&st.c2s, Endpoint::Client);
        let (server, s_ev) = infer_shift(&st.s2c, Endpoint::Server);
        (Some(PerEndpoint { client, server }), c_ev.or(s_ev))
    };
    let wscale_mismatch = matches!((client_on, server_on), (Some(a), Some(b)) if a != b)
        || inferred_mismatch.is_some();
    let wscale = match (syn_ws, synack_ws) {
        (Some(c), Some(s)) if seen && !wscale_mismatch && !unknown => Some(PerEndpoint {
            client: c,
            server: s,
        }),
        _ => None,
    };
    let wscale_evidence = if server_scales_anyway {
        Some(server_scaled_evidence(st))
    } else {
        client_unscaled.or(inferred_mismatch)
    };
    let ecn = match (st.syn, st.synack) {
        (Some(a), Some(b)) => negotiation::ecn_mode(a.flags, b.flags),
        _ => None,
    };
    let linux_drops: Vec<LinuxDrop> = [
        st.syn
            .as_ref()
            .zip(h.syn.as_ref())
            .and_then(|(s, r)| negotiation::linux_drop_parsed(s, r, HandshakeKind::Syn)),
        st.synack
            .as_ref()
            .zip(h.synack.as_ref())
            .and_then(|(s, r)| negotiation::linux_drop_parsed(s, r, HandshakeKind::SynAck)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let negotiated = Negotiated {
        mss: PerEndpoint {
            client: h.syn.and_then(|r| r.mss),
            server: h.synack.and_then(|r| r.mss),
        },
        wscale,
        wscale_offered: PerEndpoint {
            client: syn_ws,
            server: synack_ws,
        },
        wscale_clamped_from: PerEndpoint {
            client: h.syn.and_then(|r| r.window_scale_clamped_from),
            server: h.synack.and_then(|r| r.window_scale_clamped_from),
        },
        wscale_on: PerEndpoint {
            client: client_on,
            server: server_on,
        },
        wscale_mismatch,
        wscale_mismatch_evidence: if wscale_mismatch {
            wscale_evidence
        } else {
            None
        },
        sack: h.syn.is_some_and(|r| r.sack_permitted) && h.synack.is_some_and(|r| r.sack_permitted),
        timestamps: h.syn.is_some_and(|r| r.timestamps.is_some())
            && h.synack.is_some_and(|r| r.timestamps.is_some()),
        ecn,
        linux_drops,
        wscale_inferred: inferred,
        syn_answered: st.syn_answered,
        wscale_unscaled_ruled_out: match client_fields(st, syn_ws, synack_ws) {
            ClientFields::ScaledAfterAll(r) if !unknown => Some(r),
            _ => None,
        },
    };
    let hs = Handshake {
        seen,
        syn_ws,
        synack_ws,
        server_scales_anyway,
        client_on,
        server_on,
        inferred,
        reading_confidence: negotiated
            .wscale_mismatch_evidence
            .as_ref()
            .map(MismatchEvidence::confidence),
    };
    (hs, negotiated)
}

/// How the report reads a direction's windows: the connection, its
/// handshake, the RTT and the settings.
struct Reading<'a> {
    st: &'a ConnState,
    hs: &'a Handshake,
    rtt: Option<Duration>,
    assumed: Option<u8>,
    settings: &'a Settings,
}

impl Reading<'_> {
    /// The shift direction `dir`'s sender applies to the receiver's window
    /// fields. A client shown not to scale reads the server's fields
    /// unscaled.
    fn shift_for(&self, dir: Direction) -> Option<u8> {
        match dir {
            Direction::ClientToServer if self.hs.seen && self.hs.client_on == Some(false) => {
                Some(0)
            }
            _ => self
                .st
                .sender_shift(dir, self.assumed, self.hs.server_scales_anyway),
        }
    }

    /// The shift the receiver of `dir` means its fields with (`u8::MAX`:
    /// scaling on, but the shift was removed before this point, so only the
    /// sender's reading is known).
    fn receiver_shift(&self, dir: Direction) -> Option<u8> {
        let (on, ws) = match dir {
            Direction::ClientToServer => (self.hs.server_on, self.hs.synack_ws),
            Direction::ServerToClient => (self.hs.client_on, self.hs.syn_ws),
        };
        on.map(|on| match (on, ws) {
            (true, Some(s)) => s,
            (true, None) => u8::MAX,
            (false, _) => 0,
        })
    }

    /// The report of direction `dir`.
    fn direction(&self, dir: Direction) -> DirectionReport {
        let (me, peer) = self.st.sides(dir);
        // The sender reads the receiver's fields with its own shift, but the
        // receiver accepts no more than it means: in the broken state the two
        // differ, and the smaller one is the window the flow can really use.
        let receiver_shift = self.receiver_shift(dir);
        let usable_shift = match (self.shift_for(dir), receiver_shift) {
            (Some(s), Some(r)) => Some(s.min(r)),
            (s, _) => s,
        };
        let max_window_bytes = match (peer.max_window_field, usable_shift) {
            (Some(w), Some(s)) => Some(u64::from(w) << s.min(MAX_WINDOW_SCALE)),
            _ => None,
        };
        let ceiling_bps = max_window_bytes.and_then(|w| ceiling_of(w, self.rtt));
        let missed = me.missed.as_ref().map_or(0, |m| m.bytes());
        let throughput_bps = self.throughput(me, missed);
        let pair = self
            .st
            .lim
            .as_ref()
            .map_or(&*UNUSED_LIMITS, |l| &l[dir.index()]);
        let replayed = self.replayed(dir, peer);
        let tracker = replayed
            .as_ref()
            .unwrap_or(pair.reading(self.shift_for(dir)));
        let limit = self.limit(dir, replayed.as_ref(), tracker);
        let beyond = receiver_shift
            .filter(|m| *m != u8::MAX)
            .and_then(|m| pair.exactly(m))
            .map(LimitTracker::beyond_window);
        let window_limited =
            window_limited(me, &limit, max_window_bytes, throughput_bps, ceiling_bps);
        // A window read through a mismatch the capture only suggests
        // (nDPI's ssh.pcap: a macOS client whose fields stay at 65,535 with
        // shift 3 in an interactive session, read as "does not scale" with
        // medium confidence) limits no surer than that reading.
        let window_limited_confidence = match (window_limited, limit.kind) {
            (Some(true), LimitKind::ReceiveWindow) => limit.confidence(),
            (Some(true), _) => Some(Confidence::Medium),
            _ => None,
        }
        .map(|c| self.hs.reading_confidence.map_or(c, |r| c.min(r)));
        DirectionReport {
            packets: me.packets,
            bytes: me.bytes,
            retransmissions: me.retransmissions,
            retransmitted_bytes: me.retransmitted_bytes,
            capture_missed_bytes: missed,
            max_window_bytes,
            max_window_field: peer.max_window_field,
            ceiling_bps,
            throughput_bps,
            window_limited,
            window_limited_confidence,
            advice: advice_for(&limit, tracker, max_window_bytes, self.rtt, self.settings),
            limit,
            beyond_window_bytes: beyond.map(|b| b.0),
            beyond_window_accepted: beyond.filter(|b| b.0 > 0).map(|b| b.1),
        }
    }

    /// New data (what the capture shows once, and what it missed of what
    /// the receiver acknowledged) over the transfer: from the first data
    /// segment to one RTT after the last, as the last flight needs one more
    /// round trip to be delivered and acknowledged (to the last, when the
    /// RTT is unknown).
    fn throughput(&self, me: &Side, missed: u64) -> Option<u64> {
        let new_bytes = (me.bytes - me.retransmitted_bytes.min(me.bytes)).saturating_add(missed);
        let rtt_ns = self.rtt_ns();
        match (me.first_data, me.last_data) {
            (Some(a), Some(b)) => b
                .nanos_since(&a)
                .map(|ns| ns.saturating_add(rtt_ns))
                .filter(|ns| *ns > 0)
                .map(|ns| {
                    let bps = u128::from(new_bytes) * 8 * 1_000_000_000 / u128::from(ns);
                    u64::try_from(bps).unwrap_or(u64::MAX)
                }),
            _ => None,
        }
    }

    fn rtt_ns(&self) -> u64 {
        self.rtt
            .map_or(0, |r| u64::try_from(r.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The receiver's `wscale_inferred` for direction `dir`.
    fn inferred(&self, dir: Direction) -> Option<ShiftInterval> {
        self.hs
            .inferred
            .as_ref()
            .and_then(|p| p.of(dir.receiving()))
    }

    /// The connection's log, where the report replays it: no handshake.
    fn log(&self) -> Option<&LimitLog> {
        self.st.limit_log.as_deref().filter(|_| !self.hs.seen)
    }

    /// Without the handshake the trackers' input was logged: replayed with
    /// the shift assumed or, failing that, the one the capture pins (the
    /// receiver's `wscale_inferred` as one value), and the RTT the capture
    /// shows.
    fn replayed(&self, dir: Direction, peer: &Side) -> Option<LimitTracker> {
        let pinned = self.inferred(dir).filter(|i| i.min == i.max).map(|i| i.min);
        self.log().filter(|l| l.dropped().is_none()).and_then(|l| {
            let shift = self.shift_for(dir).or(pinned)?;
            let mut t = LimitTracker::new(shift);
            // The loop to the sender and back: its echoes of the receiver's TSvals.
            t.configure(self.rtt_ns(), peer.min_echo_ns.unwrap_or(0), None);
            l.replay(dir == Direction::ServerToClient, &mut t);
            Some(t)
        })
    }

    /// What limited direction `dir`'s sender. Without the shift the sender
    /// reads the receiver's fields with, its receive window is unknown: the
    /// tracker (which reads them unscaled) would call a scaled window of a
    /// few units the limit.
    fn limit(
        &self,
        dir: Direction,
        replayed: Option<&LimitTracker>,
        tracker: &LimitTracker,
    ) -> Limit {
        let shift = self.shift_for(dir);
        match (shift, replayed, self.log().and_then(LimitLog::dropped)) {
            (_, Some(t), _) => {
                let mut l = t.limit();
                if shift.is_none() {
                    l.inferred_shift = Some(t.read_shift());
                }
                l
            }
            (Some(_), None, _) => tracker.limit(),
            (None, None, Some(why)) => Limit::none(NoLimitReason::LogDropped(why)),
            (None, None, None) => Limit::none(NoLimitReason::WindowScaleUnknown(
                self.inferred(dir).map(|i| ShiftRange {
                    sender: dir.sending(),
                    min: i.min,
                    max: i.max,
                }),
            )),
        }
    }
}

/// Whether the receive window capped a direction (`None`: unknown): the
/// limit is the receive window and the capture shows no more than the
/// ceiling achieved. With too little data for the time split: achieved
/// close to the ceiling (a window's worth each round trip). A flight that
/// reached the window's edge now and then is not enough: on loopback an
/// application writing 32 KB at a time fills a 48 KB window with one
/// segment, and a segment retransmitted again and again with nothing new
/// acknowledged fills nothing (Wireshark's gRPC and HTTP/2 samples, nDPI's
/// KakaoTalk captures: hints at 0.1% of the ceiling, or at 0 bit/s).
///
/// Fooled by (without the time split): a sender whose congestion window,
/// send buffer or application happens to send exactly the receive window's
/// worth each round trip; so that reading is `medium`
/// ([`DirectionReport::window_limited_confidence`]), a hint, never exit 3.
/// And the other way: a window that was small most of the transfer but
/// advertised large once is read against the large one's ceiling and not
/// called limiting.
fn window_limited(
    me: &Side,
    limit: &Limit,
    max_window_bytes: Option<u64>,
    throughput_bps: Option<u64>,
    ceiling_bps: Option<u64>,
) -> Option<bool> {
    // A ceiling limits only if the capture does not show more achieved.
    let within_ceiling = match (throughput_bps, ceiling_bps) {
        (Some(t), Some(c)) => u128::from(t) * 100 <= u128::from(c) * CEILING_MAX_PERCENT,
        _ => true,
    };
    if me.data_segments == 0 {
        Some(false)
    } else if max_window_bytes.is_none() {
        None
    } else if limit.kind != LimitKind::None {
        Some(limit.kind == LimitKind::ReceiveWindow && within_ceiling)
    } else {
        let near_ceiling = match (throughput_bps, ceiling_bps) {
            (Some(t), Some(c)) if c > 0 => u128::from(t) * 100 >= u128::from(c) * CEILING_PERCENT,
            _ => false,
        };
        Some(near_ceiling && within_ceiling)
    }
}

/// What to change for a direction limited by the receive window or the
/// send buffer, computed by `bdp`'s Linux buffer model for the target rate.
fn advice_for(
    limit: &Limit,
    tracker: &LimitTracker,
    window: Option<u64>,
    rtt: Option<Duration>,
    settings: &Settings,
) -> Vec<AdviceItem> {
    use bdp::linux::{advise, LinuxHost, Side as Host};
    let (host, limiting) = match limit.kind {
        // A window the sender read below the one advertised: no setting of
        // the receiver lifts it (the path rewrites it).
        LimitKind::ReceiveWindow
            if limit
                .receive_window_evidence
                .as_ref()
                .is_some_and(|e| e.is_plateau()) =>
        {
            return Vec::new()
        }
        LimitKind::ReceiveWindow => (Host::Receiver, window),
        LimitKind::Sender if limit.idle_fraction.is_none_or(|i| i <= 0.5) => {
            (Host::Sender, Some(tracker.max_flight()))
        }
        _ => return Vec::new(),
    };
    let (Some(rtt), Some(limiting)) = (rtt, limiting) else {
        return Vec::new();
    };
    match advise(
        host,
        settings.target_rate,
        rtt,
        Bytes::new(limiting),
        LinuxHost::default(),
    ) {
        Ok(list) => list
            .iter()
            .map(|a| AdviceItem { advice: *a, host })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The limit pair of a connection without data (see [`UNUSED_LIMITS`]).
#[allow(dead_code)]
fn unused() -> &'static LimitPair {
    &UNUSED_LIMITS
}
